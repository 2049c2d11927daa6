/**
 * Processing of queued jobs: the tradeflow merge and lifecycle, mock journeys (UAT) and the
 * messages they produce. Processing computes a {@link Commit}; the caller applies it with
 * `TradeflowStore.commit`.
 *
 * Upsert: each group folds its records into the stored state (see `TradeflowMerge`). A new
 * reference reports TRADEFLOW_CREATED; a deactivated one posted again TRADEFLOW_REACTIVATED; a
 * changed one TRADEFLOW_UPDATED; `active: false` TRADEFLOW_DEACTIVATED. Identical content for an
 * unchanged tradeflow produces neither an upsert nor a message. `result.count` is the number of groups.
 *
 * Mock tracking (UAT only): the last `mock_tracking.scenario` of a group runs when its inputs
 * (scenario, ports, the four dates as sent, containers) differ from those of the journey last
 * generated (`mock_signature`).
 *
 * Delete: `hard: false` deactivates (TRADEFLOW_DEACTIVATED for each active one); `result.count`
 * is the number deactivated now, or 1 for a single existing reference. `hard: true` lists the
 * existing references in `deletes` (count = how many existed) and renders nothing.
 *
 * Positions (LOCATION_UPDATE, see `Positions`): whenever an upsert changes a tradeflow, its mock
 * voyage moves on to now. A new, reactivated or re-generated journey renders every position
 * elapsed so far (positions already sent have the same hash and are not stored twice); otherwise
 * rendering continues at `next_position_at`. Each time at most `Positions.maxPositionsPerJob`
 * positions are rendered, and `next_position_at` is set to the next position's instant (null
 * without a voyage, once it is over, or when the tradeflow is deactivated). Advance: the same for
 * a tradeflow whose `next_position_at` has passed, queued by the `Scheduler`; `result.count` is
 * the number of positions rendered, and a duplicate renders nothing.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Option, Schema } from "effect"
import { TradeflowDocument } from "./ApiMessage.js"
import { AutomationStore } from "./AutomationStore.js"
import type { Outbox } from "./Delivery.js"
import type { Job } from "./Job.js"
import type { Locations } from "./Locations.js"
import * as MessageHash from "./MessageHash.js"
import * as Render from "./Render.js"
import * as Scenarios from "./Scenarios.js"
import type { StorageError } from "./StorageError.js"
import type { NewMessage } from "./StoredMessage.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import type { Tradeflow } from "./Tradeflow.js"
import * as TradeflowMerge from "./TradeflowMerge.js"
import type { RecordGroup } from "./TradeflowRecord.js"
import { type Commit, TradeflowStore } from "./TradeflowStore.js"

type Requirements = TradeflowStore | Locations | TrackingConfig

const encodeDocument = Schema.encode(Schema.parseJson(TradeflowDocument))

/** The body of a `tradeflow` webhook delivery: the V3 document of the state, without `vessels`, as JSON text. */
export const deliveryDocument = (t: Tradeflow): Effect.Effect<string, StorageError, Locations | TrackingConfig> =>
  Effect.flatMap(Render.tradeflowDocument(t, { vessels: false }), (document) => Effect.orDie(encodeDocument(document)))

/**
 * The outbox of a commit: the organisation's automations enabled now (when the job is processed)
 * and, for `tradeflow` automations, the V3 document (without `vessels`) of each upserted
 * tradeflow that has messages.
 */
export const outboxOf = (
  commit: Commit
): Effect.Effect<Outbox | undefined, StorageError, Requirements | AutomationStore> =>
  Effect.gen(function* () {
    if (commit.messages.length === 0) return undefined
    const automations = yield* (yield* AutomationStore).enabled(commit.organisation_id)
    if (automations.length === 0) return undefined
    const documents = new Map<string, string>()
    if (automations.some((a) => a.format === "tradeflow")) {
      const changed = new Set(commit.messages.map((m) => m.tradeflow_reference))
      for (const t of commit.upserts) {
        if (!changed.has(t.reference)) continue
        documents.set(t.reference, yield* deliveryDocument(t))
      }
    }
    return {
      automations: automations.map((a) => ({ id: a.id, format: a.format, types: a.types })),
      documents,
      at: yield* Clock.currentTimeMillis
    }
  })

/** The result of processing one tradeflow. */
export interface Outcome {
  /** The new state, or none when nothing changed. */
  readonly upsert: Option.Option<Tradeflow>
  readonly messages: ReadonlyArray<NewMessage>
}

const withoutVolatile = (t: Tradeflow) => {
  const { active: _active, created_at: _created, updated_at: _updated, ...content } = t
  return MessageHash.canonicalJson(content)
}

/** The digest of the inputs of a mock journey. */
export const mockSignature = (scenario: string, t: Tradeflow): Effect.Effect<string> =>
  MessageHash.sha256Hex(MessageHash.canonicalJson([
    scenario,
    t.details.port_of_loading ?? null,
    t.details.port_of_discharge ?? null,
    t.details.estimated_time_of_departure ?? null,
    t.details.actual_time_of_departure ?? null,
    t.details.estimated_time_of_arrival ?? null,
    t.details.actual_time_of_arrival ?? null,
    t.containers.map((c) => c.reference)
  ]))

/** Runs the named scenario on the state unless the same inputs generated the current journey. */
export const applyMock = (t: Tradeflow, scenarioName: string, now: number): Effect.Effect<Tradeflow, StorageError, TradeflowStore> =>
  Effect.gen(function* () {
    const scenario = Scenarios.lookup(scenarioName)
    if (Option.isNone(scenario)) return t
    if ((yield* mockSignature(scenarioName, t)) === t.mock_signature) return t
    const d = t.details
    const journey = yield* scenario.value({
      organisation_id: t.organisation_id,
      reference: t.reference,
      containers: t.containers.map((c) => c.reference),
      port_of_loading: d.port_of_loading,
      port_of_discharge: d.port_of_discharge,
      estimated_time_of_departure: d.estimated_time_of_departure,
      actual_time_of_departure: d.actual_time_of_departure,
      estimated_time_of_arrival: d.estimated_time_of_arrival,
      actual_time_of_arrival: d.actual_time_of_arrival
    })
    const next = TradeflowMerge.applyMockJourney(t, journey, now)
    return { ...next, mock_signature: yield* mockSignature(scenarioName, next) }
  })

/** Folds a group of records into a tradeflow's state and renders what changed. */
export const processGroup = (
  job: Job,
  group: RecordGroup,
  previous: Option.Option<Tradeflow>
): Effect.Effect<Outcome, StorageError, Requirements> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const uat = job.environment === "uat"
    const start = Option.getOrElse(previous, () => TradeflowMerge.empty(job.organisation_id, group.tradeflow_reference, now))
    const options = { now, receivedAt: job.received_at, keepCustomerName: !uat }
    let next = TradeflowMerge.applyRecords(start, group.records, options)
    const scenario = uat
      ? group.records.reduce<string | undefined>((s, r) => r.mock_tracking?.scenario ?? s, undefined)
      : undefined
    if (scenario !== undefined) next = yield* applyMock(next, scenario, now)

    const lifecycle: Array<Render.Lifecycle> = []
    let summary: string | undefined
    if (Option.isNone(previous)) {
      lifecycle.push("TRADEFLOW_CREATED")
      if (!next.active) lifecycle.push("TRADEFLOW_DEACTIVATED")
    } else {
      const before = previous.value
      const changed = withoutVolatile(before) !== withoutVolatile(next)
      if (!before.active && next.active) lifecycle.push("TRADEFLOW_REACTIVATED")
      if (changed) {
        lifecycle.push("TRADEFLOW_UPDATED")
        summary = TradeflowMerge.describeChanges(before, next)
      }
      if (before.active && !next.active) lifecycle.push("TRADEFLOW_DEACTIVATED")
      if (lifecycle.length === 0) return { upsert: Option.none(), messages: [] }
      next = { ...next, updated_at: now }
    }
    const messages = yield* Render.render({
      previous: Option.getOrUndefined(previous),
      next,
      lifecycle,
      updateSummary: summary,
      now
    })
    const fresh = Option.isNone(previous) || !previous.value.active || previous.value.mock_signature !== next.mock_signature
    const moved = yield* advancePositions(next, fresh ? "start" : next.next_position_at, now)
    return { upsert: Option.some(moved.next), messages: [...messages, ...moved.messages] }
  })

/**
 * Renders the positions of a tradeflow's voyage from `from` (`"start"`: the first one; null: none)
 * up to `now`, and sets its `next_position_at`.
 */
export const advancePositions = (
  t: Tradeflow,
  from: number | "start" | null,
  now: number
): Effect.Effect<{ readonly next: Tradeflow; readonly messages: ReadonlyArray<NewMessage> }, StorageError, Requirements> =>
  from === null
    ? Effect.succeed({ next: t.next_position_at === null ? t : { ...t, next_position_at: null }, messages: [] })
    : Effect.map(Render.positionUpdates(t, from, now), (p) => ({
      next: { ...t, next_position_at: p.next_position_at },
      messages: p.messages
    }))

const deactivate = (t: Tradeflow): Effect.Effect<Outcome, StorageError, Requirements> =>
  Effect.gen(function* () {
    if (!t.active) return { upsert: Option.none(), messages: [] }
    const now = yield* Clock.currentTimeMillis
    const next = { ...t, active: false, next_position_at: null, updated_at: now }
    const messages = yield* Render.render({ previous: t, next, lifecycle: ["TRADEFLOW_DEACTIVATED"], now })
    return { upsert: Option.some(next), messages }
  })

/**
 * Computes everything a job changes, with the webhook deliveries of its messages (see
 * {@link outboxOf}); the caller commits it with `TradeflowStore.commit`.
 */
export const processJob: (job: Job) => Effect.Effect<Commit, StorageError, Requirements | AutomationStore> = Effect.fn(
  "Processor.processJob"
)(function* (job: Job) {
  const commit = yield* computeCommit(job)
  const outbox = yield* outboxOf(commit)
  return outbox === undefined ? commit : { ...commit, outbox }
})

const computeCommit: (job: Job) => Effect.Effect<Commit, StorageError, Requirements> = Effect.fnUntraced(
  function* (job: Job) {
    const store = yield* TradeflowStore
    const payload = job.payload
    const base = { job_id: job.id, organisation_id: job.organisation_id }
    if (payload._tag === "Upsert") {
      const states = new Map<string, Tradeflow>()
      const messages: Array<NewMessage> = []
      for (const group of payload.groups) {
        const known = states.get(group.tradeflow_reference)
        const previous = known !== undefined
          ? Option.some(known)
          : yield* store.get(job.organisation_id, group.tradeflow_reference)
        const outcome = yield* processGroup(job, group, previous)
        if (Option.isSome(outcome.upsert)) states.set(group.tradeflow_reference, outcome.upsert.value)
        messages.push(...outcome.messages)
      }
      return { ...base, upserts: [...states.values()], deletes: [], messages, result: { count: payload.groups.length } }
    }
    if (payload._tag === "Advance") {
      const found = yield* store.get(job.organisation_id, payload.reference)
      const t = Option.getOrUndefined(found)
      const now = yield* Clock.currentTimeMillis
      if (t === undefined || t.next_position_at === null || t.next_position_at > now) {
        return { ...base, upserts: [], deletes: [], messages: [], result: { count: 0 } }
      }
      const moved = yield* advancePositions(t, t.active ? t.next_position_at : null, now)
      return { ...base, upserts: [moved.next], deletes: [], messages: moved.messages, result: { count: moved.messages.length } }
    }
    const targets = payload.reference === null
      ? yield* store.list(job.organisation_id)
      : Option.toArray(yield* store.get(job.organisation_id, payload.reference))
    if (payload.hard) {
      return { ...base, upserts: [], deletes: targets.map((t) => t.reference), messages: [], result: { count: targets.length } }
    }
    const upserts: Array<Tradeflow> = []
    const messages: Array<NewMessage> = []
    for (const t of targets) {
      const outcome = yield* deactivate(t)
      if (Option.isSome(outcome.upsert)) upserts.push(outcome.upsert.value)
      messages.push(...outcome.messages)
    }
    const count = payload.reference === null ? upserts.length : targets.length
    return { ...base, upserts, deletes: [], messages, result: { count } }
  }
)
