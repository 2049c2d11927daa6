/**
 * Service: the downstream operations. Accepted work is committed to the {@link JobQueue} before
 * the call returns; the {@link Worker} processes it afterwards. Concurrent calls share commits
 * (see {@link maxGroup}).
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer } from "effect"
import {
  ConfirmationRequired,
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  TooManyRecords,
  TradeflowNotFound,
  type ValidationError
} from "./DownstreamError.js"
import type { Environment } from "./Environment.js"
import { sha256Hex } from "./internal/crypto.js"
import * as GroupCommit from "./internal/groupCommit.js"
import type { Enqueue, NewJob } from "./Job.js"
import { JobQueue } from "./JobQueue.js"
import { Locations } from "./Locations.js"
import type { StorageError } from "./StorageError.js"
import { validateRequest } from "./Validation.js"
import { Worker } from "./Worker.js"

/** The 202 answer of a downstream post. */
export interface Accepted {
  readonly status: "queued"
  readonly tradeflows: ReadonlyArray<{ readonly tradeflow_reference: string; readonly warnings: ReadonlyArray<string> }>
}

/** A downstream post. */
export interface Submission {
  readonly organisation_id: string
  readonly environment: Environment
  /** The parsed JSON body. */
  readonly body: unknown
  /** `array`: `POST /downstream` (an array is required); `any`: an object or an array. */
  readonly form: "array" | "any"
  readonly idempotency_key?: string
}

/** A downstream delete: one reference, or every tradeflow (`reference: null`). */
export interface Removal {
  readonly organisation_id: string
  readonly environment: Environment
  readonly reference: string | null
  readonly hard: boolean
  readonly confirm?: string
}

/** @since 0.1.0 */
export class Ingest extends Context.Tag("@tradeflow/core/Ingest")<Ingest, {
  readonly submit: (submission: Submission) => Effect.Effect<
    Accepted,
    ValidationError | TooManyRecords | IdempotencyKeyReused | IdempotencyKeyInFlight | StorageError
  >
  /** Runs after every job queued before it, and answers what it changed. */
  readonly remove: (removal: Removal) => Effect.Effect<
    { readonly status: "deactivated" | "deleted"; readonly count: number },
    ConfirmationRequired | TradeflowNotFound | StorageError
  >
}>() {}

/** At most this many records per request (DECISIONS.md §2). */
export const maxRecords = 10_000

/**
 * At most this many requests share one commit. Requests that arrive while the queue commits are
 * committed together by the next commit (a group commit), and each is answered once it is durable.
 */
export const maxGroup = 256

/** The downstream operations over the queue and the worker. */
export const layer: Layer.Layer<Ingest, never, JobQueue | Worker | Locations> = Layer.scoped(Ingest, Effect.gen(function*() {
  const queue = yield* JobQueue
  const group = yield* GroupCommit.make(queue.enqueueAll, { maxGroup, maxTurns: 16 })
  const worker = yield* Worker
  const locations = yield* Locations
  const inFlight = new Set<string>()

  const guardKey = <A, E, R>(
    organisationId: string,
    key: string | undefined,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | IdempotencyKeyInFlight, R> => {
    if (key === undefined) return effect
    const slot = JSON.stringify([organisationId, key])
    return Effect.suspend((): Effect.Effect<A, E | IdempotencyKeyInFlight, R> => {
      if (inFlight.has(slot)) return Effect.fail(new IdempotencyKeyInFlight({ key }))
      inFlight.add(slot)
      return Effect.ensuring(effect, Effect.sync(() => inFlight.delete(slot)))
    })
  }

  const prepare = (submission: Submission) => Effect.gen(function*() {
    const { body } = submission
    if (Array.isArray(body) && body.length > maxRecords) {
      return yield* new TooManyRecords({ limit: maxRecords, count: body.length })
    }
    const validated = yield* validateRequest(body, { environment: submission.environment, form: submission.form }).pipe(
      Effect.provideService(Locations, locations)
    )
    const accepted: Accepted = {
      status: "queued",
      tradeflows: validated.groups.map((g, i) => ({
        tradeflow_reference: g.tradeflow_reference,
        warnings: validated.warnings[i] ?? []
      }))
    }
    const idempotency = submission.idempotency_key === undefined ? undefined : {
      key: submission.idempotency_key,
      request_hash: yield* sha256Hex(JSON.stringify(body) ?? ""),
      response: JSON.stringify(accepted)
    }
    const job: NewJob = {
      organisation_id: submission.organisation_id,
      environment: submission.environment,
      payload: { _tag: "Upsert", groups: validated.groups },
      received_at: yield* Clock.currentTimeMillis
    }
    const entry: Enqueue = idempotency === undefined ? { job } : { job, idempotency }
    return [entry, accepted] as const
  })

  const submit = Effect.fn("Ingest.submit")(function*(submission: Submission) {
    const [outcome, accepted] = yield* group.submit(prepare(submission))
    switch (outcome._tag) {
      case "Enqueued":
        yield* worker.wake
        return accepted
      case "Replayed":
        return JSON.parse(outcome.response) as Accepted
      case "KeyReused":
        return yield* new IdempotencyKeyReused({ key: submission.idempotency_key ?? "" })
    }
  })

  return Ingest.of({
    submit: (submission) => guardKey(submission.organisation_id, submission.idempotency_key, submit(submission)),
    remove: Effect.fn("Ingest.remove")(function*(removal: Removal) {
      if (removal.reference === null && removal.environment === "production" && removal.confirm !== "PRODUCTION") {
        return yield* new ConfirmationRequired({ parameter: "confirm" })
      }
      const job: NewJob = {
        organisation_id: removal.organisation_id,
        environment: removal.environment,
        payload: { _tag: "Delete", reference: removal.reference, hard: removal.hard },
        received_at: yield* Clock.currentTimeMillis
      }
      const [outcome] = yield* group.submit(Effect.succeed([{ job }, undefined] as const))
      if (outcome._tag !== "Enqueued") return yield* Effect.dieMessage("a delete is never replayed")
      yield* worker.wake
      const ended = yield* worker.await(outcome.id)
      if (ended._tag === "Failed") return yield* Effect.dieMessage(`delete failed: ${ended.error}`)
      if (removal.reference !== null && ended.result.count === 0) {
        return yield* new TradeflowNotFound({ reference: removal.reference })
      }
      return { status: removal.hard ? "deleted" as const : "deactivated" as const, count: ended.result.count }
    })
  })
}))
