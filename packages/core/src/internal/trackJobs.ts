import { Effect, Option } from "effect"
import type { Environment } from "../Environment.js"
import type { NewJob, TrackJob } from "../Job.js"
import type { OrganisationStore } from "../OrganisationStore.js"
import type { StorageError } from "../StorageError.js"

/**
 * The environments of organisations, each read once per lookup table: production for an
 * organisation that is not (or no longer) stored, as tracked tradeflows are production's unless
 * their organisation says otherwise.
 */
const environments = (organisations: OrganisationStore["Type"]) => {
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

/**
 * A builder of the `Track` jobs of tracked tradeflows, each in its organisation's environment (read
 * once per builder, as {@link environments} reads it), queued at the time it was checked.
 */
export const trackJobs = (organisations: OrganisationStore["Type"]) => {
  const environmentOf = environments(organisations)
  return (
    organisation_id: string,
    payload: Omit<TrackJob, "_tag">
  ): Effect.Effect<NewJob, StorageError> =>
    Effect.map(environmentOf(organisation_id), (environment) => ({
      organisation_id,
      environment,
      payload: { _tag: "Track" as const, ...payload },
      received_at: payload.checked_at
    }))
}
