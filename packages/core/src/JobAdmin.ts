/**
 * Service: the administration of the job queue (`JobQueue`, of `Job`s). It lists an organisation's pending or dead jobs
 * (what each is and how it fared, never its payload) and retries a dead one. A job is dead when
 * its processing raised a defect, or when it was claimed the worker's attempt limit of times
 * without finishing (see `Worker`); it no longer holds up its organisation's later jobs.
 *
 * @module
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { OrganisationNotFound } from "./AccountError.js"
import { Environment } from "./Environment.js"
import { type JobBacklog, JobQueue, type JobState } from "./JobQueue.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StorageError } from "./StorageError.js"

/** No job with this id. */
export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  id: Schema.Number
}) {}

/** Only a dead job can be retried. */
export class JobNotDead extends Schema.TaggedError<JobNotDead>()("JobNotDead", {
  id: Schema.Number
}) {}

/** A job as the console lists it (never its payload). */
export const JobInfo = Schema.Struct({
  id: Schema.Int.annotations({ description: "The job (what retry takes)" }),
  environment: Environment,
  kind: Schema.String.annotations({
    description: "upsert (a downstream post), delete, or advance (the position scheduler)"
  }),
  payload_bytes: Schema.Int.annotations({
    description: "The size of the job's stored payload, in bytes (the payload is not shown)"
  }),
  created_at: Schema.String.annotations({ description: "When the request was accepted (ISO 8601)" }),
  attempts: Schema.Int.annotations({
    description: "How often a worker took the job up; a crash, a lost lease or a failure each count"
  }),
  last_error: Schema.NullOr(Schema.String).annotations({
    description: "Why the last attempt failed, or why the job is dead; null when nothing was recorded"
  })
}).annotations({ identifier: "Job" })
export type JobInfo = typeof JobInfo.Type

/** The longest list the console returns. */
export const maxListed = 1000

export class JobAdmin extends Context.Tag("@tradeflow/core/JobAdmin")<JobAdmin, {
  /** The organisation's jobs in this state, oldest first, at most `limit` (default 100, at most {@link maxListed}). */
  readonly list: (organisationId: string, state: JobState, limit?: number) => Effect.Effect<
    ReadonlyArray<JobInfo>,
    OrganisationNotFound | StorageError
  >
  /**
   * Makes a dead job pending again, its attempts reset. It keeps its place in its organisation's
   * queue: it runs before the organisation's later jobs that are still pending (after the one
   * running now, if any), and it applies what it carries as if it were posted again.
   */
  readonly retry: (jobId: number) => Effect.Effect<void, JobNotFound | JobNotDead | StorageError>
  /** The organisation of a job (what a permission check needs). */
  readonly organisationOf: (jobId: number) => Effect.Effect<string, JobNotFound | StorageError>
  /** The queue's backlog across organisations (what metrics show). */
  readonly backlog: Effect.Effect<JobBacklog, StorageError>
}>() {}

/** The job administration over the {@link JobQueue} and {@link OrganisationStore} ports. */
export const layer: Layer.Layer<JobAdmin, never, JobQueue | OrganisationStore> = Layer.effect(
  JobAdmin,
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const organisations = yield* OrganisationStore
    return JobAdmin.of({
      list: Effect.fn("JobAdmin.list")(function*(organisationId: string, state: JobState, limit: number = 100) {
        if (Option.isNone(yield* organisations.get(organisationId))) {
          return yield* new OrganisationNotFound({ id: organisationId })
        }
        const jobs = yield* queue.list({
          organisation_id: organisationId,
          state,
          limit: Math.min(Math.max(1, Math.floor(limit)), maxListed)
        })
        return jobs.map((j) => ({
          id: j.id,
          environment: j.environment,
          kind: j.kind.toLowerCase(),
          payload_bytes: j.payload_bytes,
          created_at: new Date(j.received_at).toISOString(),
          attempts: j.attempt,
          last_error: j.error
        }))
      }),
      retry: Effect.fn("JobAdmin.retry")(function*(jobId: number) {
        const outcome = yield* queue.retry(jobId)
        if (outcome === "not-found") return yield* new JobNotFound({ id: jobId })
        if (outcome === "not-dead") return yield* new JobNotDead({ id: jobId })
      }),
      backlog: queue.backlog,
      organisationOf: (jobId) =>
        Effect.flatMap(
          queue.organisationOf(jobId),
          Option.match({ onNone: () => Effect.fail(new JobNotFound({ id: jobId })), onSome: Effect.succeed })
        )
    })
  })
)
