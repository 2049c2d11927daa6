import { Effect, Option } from "effect"
import type { Environment } from "../Environment.js"
import type { OrganisationStore } from "../OrganisationStore.js"
import type { StorageError } from "../StorageError.js"

/**
 * The environments of organisations, each read once per lookup table: production for an
 * organisation that is not (or no longer) stored, as tracked tradeflows are production's unless
 * their organisation says otherwise.
 */
export const environments = (organisations: OrganisationStore["Type"]) => {
  const known = new Map<string, Environment>()
  return (organisationId: string): Effect.Effect<Environment, StorageError> => {
    const environment = known.get(organisationId)
    return environment !== undefined ? Effect.succeed(environment) : Effect.map(
      organisations.get(organisationId),
      (found) => {
        const read = Option.match(found, { onNone: () => "production" as const, onSome: (o) => o.environment })
        known.set(organisationId, read)
        return read
      }
    )
  }
}
