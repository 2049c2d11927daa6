/**
 * Service: the downstream operations. Accepted work is committed to the {@link JobQueue} before
 * the call returns; the {@link Worker} processes it afterwards. Concurrent calls share commits
 * (see {@link maxGroup}) and the reads of the stored sizes their caps are checked against.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { AutomationStore } from "./AutomationStore.js"
import {
  ConfirmationRequired,
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  listIssues,
  TooManyRecords,
  TradeflowNotFound,
  ValidationError
} from "./DownstreamError.js"
import type { Issue } from "./DownstreamError.js"
import type { Environment } from "./Environment.js"
import * as IngestLimits from "./IngestLimits.js"
import { sha256Hex } from "./internal/crypto.js"
import { timeSlice } from "./internal/eventLoop.js"
import * as GroupCommit from "./internal/groupCommit.js"
import type { Enqueue, NewJob } from "./Job.js"
import { JobQueue } from "./JobQueue.js"
import { Locations } from "./Locations.js"
import * as RenderBudget from "./RenderBudget.js"
import type { StorageError } from "./StorageError.js"
import { ownerCode, route, type TrackingSource, TrackingSources } from "./TrackingSource.js"
import type { RecordGroup } from "./TradeflowRecord.js"
import { type TradeflowSize, TradeflowStore } from "./TradeflowStore.js"
import { type ValidatedRequest, validateRequest } from "./Validation.js"
import { Worker } from "./Worker.js"

/** The 202 answer of a downstream post: the tradeflows it touches, each with the warnings of its records. */
export const Accepted = Schema.Struct({
  status: Schema.Literal("queued"),
  tradeflows: Schema.Array(Schema.Struct({
    tradeflow_reference: Schema.String,
    warnings: Schema.Array(Schema.String)
  }))
}).annotations({ identifier: "Accepted" })
export type Accepted = typeof Accepted.Type

/** The answer of a downstream delete: what it did and to how many tradeflows. */
export const Removed = Schema.Struct({
  status: Schema.Literal("deactivated", "deleted"),
  count: Schema.Int
}).annotations({ identifier: "Removed" })
export type Removed = typeof Removed.Type

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

export class Ingest extends Context.Tag("@tradeflow/core/Ingest")<Ingest, {
  readonly submit: (submission: Submission) => Effect.Effect<
    Accepted,
    ValidationError | TooManyRecords | IdempotencyKeyReused | IdempotencyKeyInFlight | StorageError
  >
  /** Runs after every job queued before it, and answers what it changed. */
  readonly remove: (removal: Removal) => Effect.Effect<
    Removed,
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

/**
 * At most this many stored tradeflows of one request are read whole to count its caps exactly
 * (see `IngestLimits`); past them the bounds from the stored sizes stand.
 */
export const maxExactReads = 16

/** The tradeflows whose stored sizes one request's caps are checked against. */
interface SizeRead {
  readonly organisationId: string
  readonly references: ReadonlyArray<string>
}

/**
 * The stored sizes of the reads of concurrent requests, one statement per organisation (up to four
 * at once, for a pool of connections): each read answers its organisation's sizes (a superset of its
 * own references).
 */
const readSizes = (store: TradeflowStore["Type"]) =>
(
  reads: ReadonlyArray<SizeRead>
): Effect.Effect<ReadonlyArray<ReadonlyMap<string, TradeflowSize>>, StorageError> => {
  const byOrganisation = new Map<string, Set<string>>()
  for (const { organisationId, references } of reads) {
    const set = byOrganisation.get(organisationId) ?? new Set<string>()
    for (const reference of references) set.add(reference)
    byOrganisation.set(organisationId, set)
  }
  return Effect.map(
    Effect.forEach(
      byOrganisation,
      ([organisationId, references]) =>
        Effect.map(store.sizes(organisationId, [...references]), (sizes) => [organisationId, sizes] as const),
      { concurrency: 4 }
    ),
    (answers) => {
      const sizes = new Map(answers)
      return reads.map((read) => sizes.get(read.organisationId)!)
    }
  )
}

/**
 * The warning that a group will not be tracked: when the process has tracking sources, the group is
 * tracked like production (production, or UAT without `mock_tracking`), names a carrier or
 * containers, and no source serves them (see `TrackingSource.route`).
 */
const untrackedWarning = (
  sources: ReadonlyArray<TrackingSource>,
  environment: Environment,
  group: RecordGroup
): string | undefined => {
  if (sources.length === 0) return undefined
  if (environment === "uat" && group.records.some((r) => r.mock_tracking !== undefined)) return undefined
  const carrier = group.records.reduce<string | undefined>((c, r) => r.carrier_scac ?? c, undefined)
  const containers = group.records.flatMap((r) => (r.container_reference ?? []).map((c) => c.reference))
  if (carrier === undefined && containers.length === 0) return undefined
  if (Option.isSome(route(sources, { carrier_scac: carrier, containers }))) return undefined
  const owners = [...new Set(containers.map(ownerCode))]
  const asked = [
    ...(carrier === undefined ? [] : [`carrier_scac ${JSON.stringify(carrier)}`]),
    ...(owners.length === 0 ? [] : [`container owner code${owners.length === 1 ? "" : "s"} ${owners.join(", ")}`])
  ]
  return `not tracked: no tracking source serves ${asked.join(" or ")}`
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** The downstream operations over the queue and the worker. */
export const layer: Layer.Layer<
  Ingest,
  never,
  JobQueue | Worker | Locations | TradeflowStore | AutomationStore
> = Layer.scoped(
  Ingest,
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const group = yield* GroupCommit.make(queue.enqueueAll, { maxGroup, maxTurns: 16 })
    const worker = yield* Worker
    const locations = yield* Locations
    const store = yield* TradeflowStore
    const automations = yield* AutomationStore
    const inFlight = new Set<string>()
    const sizeReads = yield* GroupCommit.make(readSizes(store), { maxGroup, maxTurns: 1 })
    const sources = Option.match(yield* Effect.serviceOption(TrackingSources), {
      onNone: () => [],
      onSome: (registry) => registry.all
    })

    /**
     * Refuses (422) a request that would take a stored tradeflow past its caps or one job past the
     * render caps. Whether the organisation renders `tradeflow` documents only adds to the render
     * estimate, so it is asked only when the request is not within the caps even with them.
     */
    const checkCaps = Effect.fnUntraced(function*(submission: Submission, validated: ValidatedRequest) {
      const organisationId = submission.organisation_id
      const [sizes] = yield* sizeReads.submit(
        Effect.succeed([{ organisationId, references: validated.groups.map((g) => g.tradeflow_reference) }, 0] as const)
      )
      const uat = submission.environment === "uat"
      const withDocuments = yield* capIssues(organisationId, validated, sizes, { uat, documents: true })
      const { errors } = withDocuments.renderChecked
        ? yield* capIssues(organisationId, validated, sizes, {
          uat,
          documents: (yield* automations.enabled(organisationId)).some((a) => a.format === "tradeflow")
        })
        : withDocuments
      if (errors.length > 0) return yield* new ValidationError({ errors: listIssues(errors) })
    })

    /**
     * The cap issues of a request under `options`, and whether the render caps were looked at
     * (without that, `documents` changed nothing).
     */
    const capIssues = (
      organisationId: string,
      validated: ValidatedRequest,
      sizes: ReadonlyMap<string, TradeflowSize>,
      options: { readonly uat: boolean; readonly documents: boolean }
    ) =>
      Effect.gen(function*() {
        const { groups, pointers } = validated
        let renderChecked = false
        const storedOf = (g: RecordGroup) => {
          const size = sizes.get(g.tradeflow_reference)
          return size === undefined ? undefined : { size }
        }
        const estimates = groups.map((g) => IngestLimits.estimateGroup(g, storedOf(g), options))
        const read = new Set<number>()
        const exactly = (i: number) =>
          Effect.gen(function*() {
            const g = groups[i]!
            const size = sizes.get(g.tradeflow_reference)
            if (read.size >= maxExactReads || read.has(i) || size === undefined) return
            read.add(i)
            const held = yield* store.held(organisationId, g.tradeflow_reference, IngestLimits.identities(g))
            estimates[i] = IngestLimits.estimateGroup(g, { size, held }, options)
          })
        for (const [i, e] of estimates.entries()) {
          if (e.containersOver !== undefined || e.eventsOver !== undefined) yield* exactly(i)
        }
        const total = () =>
          estimates.reduce((sum, e) => ({ messages: sum.messages + e.messages, bytes: sum.bytes + e.bytes }), {
            messages: 0,
            bytes: 0
          })
        if (!IngestLimits.withinRenderCaps(total())) {
          renderChecked = true
          const largest = [...estimates.keys()].sort((a, b) => estimates[b]!.bytes - estimates[a]!.bytes)
          for (const i of largest) {
            if (read.size >= maxExactReads || IngestLimits.withinRenderCaps(total())) break
            yield* exactly(i)
          }
        }
        const errors: Array<Issue> = []
        for (const [i, e] of estimates.entries()) {
          const reference = groups[i]!.tradeflow_reference
          const at = pointers[i] ?? []
          const held = sizes.get(reference)
          const holds = (n: number | undefined) => n === undefined ? "" : ` (it holds ${n.toLocaleString("en")})`
          if (e.containersOver !== undefined) {
            errors.push({
              path: `${at[e.containersOver] ?? ""}/container_reference`,
              message:
                `tradeflow ${JSON.stringify(reference)} would hold ${e.containers.toLocaleString("en")} containers; ` +
                `at most ${IngestLimits.maxStoredContainers.toLocaleString("en")} per tradeflow${
                  holds(held?.containers)
                }`
            })
          }
          if (e.eventsOver !== undefined) {
            const mock = e.mockEvents > 0
              ? `, about ${e.mockEvents.toLocaleString("en")} of them its mock journey's`
              : ""
            errors.push({
              path: `${at[e.eventsOver] ?? ""}/events`,
              message:
                `tradeflow ${JSON.stringify(reference)} would hold ${e.events.toLocaleString("en")} events${mock}; ` +
                `at most ${IngestLimits.maxStoredEvents.toLocaleString("en")} per tradeflow${holds(held?.events)}`
            })
          }
        }
        if (errors.length === 0 && !IngestLimits.withinRenderCaps(total())) {
          let sum = { messages: 0, bytes: 0 }
          for (const [i, e] of estimates.entries()) {
            sum = { messages: sum.messages + e.messages, bytes: sum.bytes + e.bytes }
            if (IngestLimits.withinRenderCaps(sum)) continue
            const whole = total()
            errors.push({
              path: pointers[i]?.[0] ?? "",
              message:
                `this request would render about ${whole.messages.toLocaleString("en")} messages and ${
                  mib(whole.bytes)
                } ` +
                `in one job, from tradeflow ${JSON.stringify(groups[i]!.tradeflow_reference)} on (it alone about ` +
                `${e.messages.toLocaleString("en")} messages, ${mib(e.bytes)}); a job renders at most ` +
                `${RenderBudget.maxMessagesPerJob.toLocaleString("en")} messages and ${
                  mib(RenderBudget.maxBytesPerJob)
                }: ` +
                "send fewer tradeflows per request, or fewer containers or events per tradeflow"
            })
            break
          }
        }
        return { errors, renderChecked }
      })

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

    const prepare = (submission: Submission) =>
      Effect.gen(function*() {
        const { body } = submission
        if (Array.isArray(body) && body.length > maxRecords) {
          return yield* new TooManyRecords({ limit: maxRecords, count: body.length })
        }
        const validated = yield* validateRequest(body, {
          environment: submission.environment,
          form: submission.form,
          pause: timeSlice(),
          pauseEveryMillis: 0.5
        }).pipe(
          Effect.provideService(Locations, locations)
        )
        yield* checkCaps(submission, validated)
        const accepted: Accepted = {
          status: "queued",
          tradeflows: validated.groups.map((g, i) => {
            const untracked = untrackedWarning(sources, submission.environment, g)
            const warnings = validated.warnings[i] ?? []
            return {
              tradeflow_reference: g.tradeflow_reference,
              warnings: untracked ? [...warnings, untracked] : warnings
            }
          })
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
  })
)
