/**
 * Validation of downstream requests (placeholder signature; the validation work replaces the body).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { ValidationError } from "./DownstreamError.js"
import type { Environment } from "./Environment.js"
import type { Locations } from "./Locations.js"
import type { StorageError } from "./StorageError.js"
import type { RecordGroup } from "./TradeflowRecord.js"

/** A valid request: its records grouped by reference (first-appearance order), warnings per group. */
export interface ValidatedRequest {
  readonly groups: ReadonlyArray<RecordGroup>
  readonly warnings: ReadonlyArray<ReadonlyArray<string>>
}

/** Validates a whole request body. */
export const validateRequest = (
  _body: unknown,
  _options: { readonly environment: Environment; readonly form: "array" | "any" }
): Effect.Effect<ValidatedRequest, ValidationError | StorageError, Locations> => Effect.dieMessage("pending")
