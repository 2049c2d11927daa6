/**
 * The mock tracking scenarios of the UAT sandbox.
 *
 * @since 0.1.0
 */

/** Names of the scenarios the sandbox generates; any other name is ignored with a warning. */
export const scenarioNames: ReadonlyArray<string> = ["ocean_basic"]
