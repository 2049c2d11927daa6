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
 * Mock tracking (UAT only): the last `mock_tracking` of a group runs its scenario when its inputs
 * (scenario, ports, the four dates as sent, containers, and the speed unless `instant`) differ from
 * those of the journey last generated (`mock_signature`). `instant` applies the whole journey at
 * once, rendered in as few renders as keep every prediction (a render ends before an event whose
 * key it already has, so a postponed arrival renders each of its dates). The other speeds apply
 * the steps due now (step 0 at once) and keep the rest in `mock_release`; each step renders on its
 * own. A journey re-generated at the same speed keeps its start, so the replay keeps its pace;
 * one generated at another speed starts now.
 *
 * Delete: `hard: false` deactivates (TRADEFLOW_DEACTIVATED for each active one); `result.count`
 * is the number deactivated now, or 1 for a single existing reference. `hard: true` lists the
 * existing references in `deletes` (count = how many existed) and renders nothing.
 *
 * Positions (LOCATION_UPDATE, see `Positions`): whenever an upsert changes a tradeflow, its mock
 * voyage moves on to now. A new, reactivated or re-generated journey renders every position
 * elapsed so far (positions already sent have the same hash and are not stored twice); otherwise
 * rendering continues at `next_location_at`. Each time at most `Positions.maxPositionsPerJob`
 * positions are rendered, and `next_location_at` is set to the next position's instant (null
 * without a voyage, once it is over, or when the tradeflow is deactivated).
 *
 * Due: `next_position_at` is the earlier of `next_location_at` and the next mock release (null
 * when the tradeflow is deactivated). Advance, queued by the `Scheduler` for a tradeflow whose
 * `next_position_at` has passed, releases the mock steps due (each rendered on its own), then
 * renders the positions due (from the first one again when the releases changed the voyage);
 * `result.count` is the number of messages rendered, and a duplicate renders nothing.
 *
 * Budget: a job renders within one `RenderBudget.Budget` (its messages, and its webhook documents):
 * past a cap the job dies with `RenderBudget.RenderCapExceeded` before anything of it is committed, and
 * positions only take what room is left (the rest stay due for the next Advance). The merges and
 * renders of a group let the event loop turn every 2 ms, as the loop over groups does.
 *
 * @module
 */
import { Clock, Effect, Option, Random, Schema } from "effect"
import { TradeflowDocument } from "./ApiMessage.js"
import { AutomationStore } from "./AutomationStore.js"
import type { Outbox } from "./Delivery.js"
import { drive } from "./internal/eventLoop.js"
import type { Job } from "./Job.js"
import type { Locations } from "./Locations.js"
import * as MessageHash from "./MessageHash.js"
import * as MockJourneys from "./MockJourneys.js"
import * as Positions from "./Positions.js"
import * as RenderBudget from "./RenderBudget.js"
import * as RenderDocument from "./RenderDocument.js"
import * as RenderMessages from "./RenderMessages.js"
import type { StorageError } from "./StorageError.js"
import type { NewMessage } from "./StoredMessage.js"
import { TrackingConfig } from "./TrackingConfig.js"
import * as TrackingSource from "./TrackingSource.js"
import * as TrackingUpdate from "./TrackingUpdate.js"
import type { MockEvent, Tradeflow } from "./Tradeflow.js"
import * as TradeflowMerge from "./TradeflowMerge.js"
import type { MockSpeed, MockTracking, RecordGroup } from "./TradeflowRecord.js"
import { type Commit, TradeflowStore } from "./TradeflowStore.js"
import * as VesselPositions from "./VesselPositions.js"

/** @inline */
type Requirements = TradeflowStore | Locations | TrackingConfig

const encodeDocument = Schema.encode(Schema.parseJson(TradeflowDocument))

/** The body of a `tradeflow` webhook delivery: the V3 document of the state, without `vessels`, as JSON text. */
export const deliveryDocument = (
  t: Tradeflow,
  spend: RenderBudget.Budget = RenderBudget.budget()
): Effect.Effect<string, StorageError, Locations | TrackingConfig> =>
  RenderDocument.tradeflowDocument(t, { vessels: false }).pipe(
    Effect.flatMap((document) => Effect.orDie(encodeDocument(document))),
    Effect.tap((text) => spend.take(text, 0))
  )

/**
 * The outbox of a commit: the organisation's automations enabled now (when the job is processed)
 * and, for `tradeflow` automations, the V3 document (without `vessels`) of each upserted
 * tradeflow that has messages.
 */
export const outboxOf = (
  commit: Commit,
  spend: RenderBudget.Budget = RenderBudget.budget()
): Effect.Effect<Outbox | undefined, StorageError, Requirements | AutomationStore> =>
  Effect.gen(function*() {
    if (commit.messages.length === 0) return undefined
    const automations = yield* (yield* AutomationStore).enabled(commit.organisation_id)
    if (automations.length === 0) return undefined
    const documents = new Map<string, string>()
    if (automations.some((a) => a.format === "tradeflow")) {
      const changed = new Set(commit.messages.map((m) => m.tradeflow_reference))
      for (const t of commit.upserts) {
        if (!changed.has(t.reference)) continue
        documents.set(t.reference, yield* deliveryDocument(t, spend))
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

/**
 * Whether two JSON-like values have the same JSON form (keys in any order, undefined members left
 * out), comparing by identity first: a merge keeps what it does not change, so comparing a state
 * with its successor only walks what changed.
 */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b)
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined)
  const xs = keys(x)
  if (xs.length !== keys(y).length) return false
  for (const k of xs) if (!sameJson(x[k], y[k])) return false
  return true
}

/** Whether two states differ in more than `active`, their timestamps and their tracking's schedule. */
const contentChanged = (a: Tradeflow, b: Tradeflow): boolean => {
  const { active: _a, created_at: _c, tracking: _t, updated_at: _u, ...x } = a
  const { active: _b, created_at: _d, tracking: _s, updated_at: _v, ...y } = b
  return !sameJson(x, y)
}

/** The tracking sources of the process: none when it has no `TrackingSources`. */
const trackingSources: Effect.Effect<ReadonlyArray<TrackingSource.TrackingSource>> = Effect.map(
  Effect.serviceOption(TrackingSource.TrackingSources),
  Option.match({ onNone: () => [], onSome: (sources) => sources.all })
)

/** The digest of the inputs of a mock journey (the speed only when it is not `instant`). */
export const mockSignature = (scenario: string, t: Tradeflow, speed: MockSpeed = "instant"): Effect.Effect<string> =>
  MessageHash.sha256Hex(MessageHash.canonicalJson([
    scenario,
    t.details.port_of_loading ?? null,
    t.details.port_of_discharge ?? null,
    t.details.estimated_time_of_departure ?? null,
    t.details.actual_time_of_departure ?? null,
    t.details.estimated_time_of_arrival ?? null,
    t.details.actual_time_of_arrival ?? null,
    t.containers.map((c) => c.reference),
    ...(speed === "instant" ? [] : [speed])
  ]))

/** Splits events into as few runs as possible with no key twice in a run, in order. */
export const withoutRepeats = (events: ReadonlyArray<MockEvent>): ReadonlyArray<ReadonlyArray<MockEvent>> => {
  const runs: Array<Array<MockEvent>> = []
  let keys = new Set<string>()
  for (const e of events) {
    const key = TradeflowMerge.mockKey(e)
    const run = runs.at(-1)
    if (run === undefined || keys.has(key)) {
      runs.push([e])
      keys = new Set([key])
    } else {
      run.push(e)
      keys.add(key)
    }
  }
  return runs
}

/** The states after releasing each group of mock events in turn; the state itself when there is none. */
function* stagesOf(
  t: Tradeflow,
  groups: ReadonlyArray<ReadonlyArray<MockEvent>>,
  now: number
): TradeflowMerge.Steps<ReadonlyArray<Tradeflow>> {
  const stages: Array<Tradeflow> = []
  let state = t
  for (const group of groups) {
    state = yield* TradeflowMerge.releaseMockEventsSteps(state, group, now)
    stages.push(state)
  }
  return stages.length === 0 ? [t] : stages
}

/**
 * Runs the named scenario on the state unless the same inputs generated the current journey (see
 * the module notes): the states after each render, the last one the new state.
 */
export const applyMock = (
  t: Tradeflow,
  scenarioName: string,
  speed: MockSpeed,
  now: number,
  pause: Effect.Effect<void> = Effect.void
): Effect.Effect<ReadonlyArray<Tradeflow>, StorageError, TradeflowStore | Locations> =>
  Effect.gen(function*() {
    const scenario = MockJourneys.lookup(scenarioName)
    if (Option.isNone(scenario)) return [t]
    if ((yield* mockSignature(scenarioName, t, speed)) === t.mock_signature) return [t]
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
    const previous = t.mock_release
    const startedAt = speed !== "instant" && previous !== null && previous.speed === speed ? previous.started_at : now
    const count = speed === "instant"
      ? journey.events.length
      : MockJourneys.releasedCount(journey.events, speed, startedAt, now)
    const released = journey.events.slice(0, count)
    const restarted = TradeflowMerge.restartMock(t, journey.containers, released.map(TradeflowMerge.mockKey))
    const mock_signature = yield* mockSignature(scenarioName, restarted, speed)
    const mock_release = speed === "instant"
      ? null
      : { speed, started_at: startedAt, pending: journey.events.slice(count) }
    const groups = speed === "instant" ? withoutRepeats(released) : MockJourneys.steps(released)
    const stages = yield* drive(stagesOf(restarted, groups, now), pause)
    return stages.map((s) => ({ ...s, mock_signature, mock_release }))
  })

/** When the next step of the tradeflow's mock journey is due; null when none is pending or it is deactivated. */
export const nextReleaseAt = (t: Tradeflow): number | null => {
  const release = t.mock_release
  const next = release?.pending[0]
  return !t.active || release == null || next === undefined
    ? null
    : MockJourneys.releaseAt(release.speed, release.started_at, next.step)
}

/**
 * Releases the steps of the tradeflow's mock journey due at `now`: the states after each step,
 * none when nothing is due.
 */
export function* releaseDue(t: Tradeflow, now: number): TradeflowMerge.Steps<ReadonlyArray<Tradeflow>> {
  const release = t.mock_release
  if (!t.active || release === null) return []
  const count = MockJourneys.releasedCount(release.pending, release.speed, release.started_at, now)
  if (count === 0) return []
  const rest = { ...release, pending: release.pending.slice(count) }
  const stages = yield* stagesOf(t, MockJourneys.steps(release.pending.slice(0, count)), now)
  return stages.map((s) => ({ ...s, mock_release: rest, updated_at: now }))
}

/** Where position rendering continues: `next_location_at` (`next_position_at` in documents stored before it). */
export const locationCursor = (t: Tradeflow): number | null =>
  t.next_location_at === undefined ? t.next_position_at : t.next_location_at

/** Sets the next position and the due instant: the earlier of it and the next mock release. */
export const schedule = (t: Tradeflow, nextLocation: number | null): Tradeflow => {
  const release = nextReleaseAt(t)
  const due = nextLocation === null ? release : release === null ? nextLocation : Math.min(nextLocation, release)
  return { ...t, next_location_at: nextLocation, next_position_at: due }
}

/**
 * Renders successive states: the first against `previous` with the lifecycle and tracking changes,
 * each next against the one before.
 */
const renderStages = (
  previous: Tradeflow | undefined,
  stages: ReadonlyArray<Tradeflow>,
  lifecycle: ReadonlyArray<RenderMessages.Lifecycle>,
  updateSummary: string | undefined,
  now: number,
  budget: RenderBudget.Budget,
  tracking: ReadonlyArray<RenderMessages.TrackingStatus> = []
): Effect.Effect<ReadonlyArray<NewMessage>, StorageError, Locations | TrackingConfig> =>
  Effect.gen(function*() {
    const out: Array<NewMessage> = []
    let before = previous
    for (const [i, next] of stages.entries()) {
      out.push(
        ...yield* RenderMessages.render(
          i === 0
            ? { previous: before, next, lifecycle, updateSummary, tracking, now, budget }
            : { previous: before, next, lifecycle: [], now, budget }
        )
      )
      before = next
    }
    return out
  })

/** Folds a group of records into a tradeflow's state and renders what changed, within the job's budget. */
export const processGroup = (
  job: Job,
  group: RecordGroup,
  previous: Option.Option<Tradeflow>,
  budget: RenderBudget.Budget = RenderBudget.budget()
): Effect.Effect<Outcome, StorageError, Requirements> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const uat = job.environment === "uat"
    const start = Option.getOrElse(previous, () =>
      TradeflowMerge.empty(job.organisation_id, group.tradeflow_reference, now))
    const options = { now, receivedAt: job.received_at, keepCustomerName: !uat }
    const merged = yield* drive(TradeflowMerge.applyRecordsSteps(start, group.records, options), budget.pause)
    const tracking = uat
      ? group.records.reduce<MockTracking | undefined>((m, r) =>
        r.mock_tracking ?? m, undefined)
      : undefined
    let stages = tracking === undefined
      ? [merged]
      : yield* applyMock(merged, tracking.scenario, tracking.speed ?? "instant", now, budget.pause)
    const untracked = stages[stages.length - 1]!
    const tracked = TrackingUpdate.track(untracked, job.environment, yield* trackingSources, now)
    stages = [...stages.slice(0, -1), tracked.next]
    let next = tracked.next

    const lifecycle: Array<RenderMessages.Lifecycle> = []
    let summary: string | undefined
    if (Option.isNone(previous)) {
      lifecycle.push("TRADEFLOW_CREATED")
      if (!next.active) lifecycle.push("TRADEFLOW_DEACTIVATED")
    } else {
      const before = previous.value
      const changed = contentChanged(before, next)
      if (!before.active && next.active) lifecycle.push("TRADEFLOW_REACTIVATED")
      if (changed) {
        lifecycle.push("TRADEFLOW_UPDATED")
        summary = TradeflowMerge.describeChanges(before, next)
      }
      if (before.active && !next.active) lifecycle.push("TRADEFLOW_DEACTIVATED")
      if (lifecycle.length === 0 && tracked.next === untracked) return { upsert: Option.none(), messages: [] }
      stages = stages.map((s) => ({ ...s, updated_at: now }))
      next = stages[stages.length - 1]!
    }
    const messages = yield* renderStages(
      Option.getOrUndefined(previous),
      stages,
      lifecycle,
      summary,
      now,
      budget,
      tracked.statuses
    )
    const fresh = Option.isNone(previous) || !previous.value.active ||
      previous.value.mock_signature !== next.mock_signature
    const moved = yield* advancePositions(
      next,
      next.active ? fresh ? "start" : locationCursor(next) : null,
      now,
      budget
    )
    return { upsert: Option.some(moved.next), messages: [...messages, ...moved.messages] }
  })

/**
 * Renders the positions of a tradeflow's voyage from `from` (`"start"`: the first one; null: none)
 * up to `now`, and sets its `next_location_at` and `next_position_at` (see {@link schedule}).
 */
export const advancePositions = (
  t: Tradeflow,
  from: number | "start" | null,
  now: number,
  budget: RenderBudget.Budget = RenderBudget.budget()
): Effect.Effect<
  { readonly next: Tradeflow; readonly messages: ReadonlyArray<NewMessage> },
  StorageError,
  Requirements
> =>
  from === null
    ? Effect.succeed({ next: schedule(t, null), messages: [] })
    : Effect.map(RenderMessages.positionUpdates(t, from, now, Positions.maxPositionsPerJob, budget), (p) => ({
      next: schedule(t, p.next_position_at),
      messages: p.messages
    }))

const sameVoyage = (a: Tradeflow, b: Tradeflow): boolean =>
  a === b || JSON.stringify(Positions.voyagesOf(a)) === JSON.stringify(Positions.voyagesOf(b))

/**
 * The AIS side of a tracked tradeflow (not a mock journey's): while its carriers' events say its
 * vessel is under way, it is looked at every `LOCATION_INTERVAL_MINUTES` (`next_location_at`);
 * the vessel's latest AIS position (`VesselPositions`, by the MMSI or IMO number its carrier
 * names) renders a LOCATION_UPDATE dated with its observation time, when it was observed at least
 * an interval after the last one rendered. `render` false only schedules (after a merge).
 */
const aisPositions = (
  t: Tradeflow,
  now: number,
  render: boolean,
  budget: RenderBudget.Budget
): Effect.Effect<{ readonly next: Tradeflow; readonly messages: ReadonlyArray<NewMessage> }, never, TrackingConfig> =>
  Effect.gen(function*() {
    const vessel = t.active ? TrackingUpdate.underWay(t) : undefined
    if (vessel === undefined) {
      return { next: schedule(t, null), messages: [] }
    }
    const intervalMs = (yield* TrackingConfig).locationIntervalMinutes * 60_000
    if (!render) return { next: schedule(t, t.next_location_at ?? now), messages: [] }
    const positions = yield* Effect.serviceOption(VesselPositions.VesselPositions)
    const latest = Option.isNone(positions) || (vessel.imo === undefined && vessel.mmsi === undefined)
      ? Option.none()
      : yield* positions.value.latest({ imo: vessel.imo, mmsi: vessel.mmsi })
    const next = schedule(t, now + intervalMs)
    if (Option.isNone(latest)) return { next, messages: [] }
    const position = latest.value
    if (t.ais_position_at !== undefined && position.observed_at < t.ais_position_at + intervalMs) {
      return { next, messages: [] }
    }
    const message = yield* RenderMessages.aisUpdate(t, position, vessel.name ?? "", now)
    yield* budget.take(message.body, 1)
    return { next: { ...next, ais_position_at: position.observed_at }, messages: [message] }
  })

/**
 * Advances a tradeflow to `now`: releases the mock steps due, each rendered on its own, then
 * renders the positions due (from the first one again when the releases changed the voyage); a
 * tracked tradeflow's vessel under way takes its real position (AIS) instead.
 */
export const advance = (
  t: Tradeflow,
  now: number,
  budget: RenderBudget.Budget = RenderBudget.budget()
): Effect.Effect<
  { readonly next: Tradeflow; readonly messages: ReadonlyArray<NewMessage> },
  StorageError,
  Requirements
> =>
  Effect.gen(function*() {
    if (t.mock_signature === null && t.tracking !== null) return yield* aisPositions(t, now, true, budget)
    const stages = yield* drive(releaseDue(t, now), budget.pause)
    const released = stages[stages.length - 1] ?? t
    const messages = yield* renderStages(t, stages, [], undefined, now, budget)
    const from = !released.active ? null : sameVoyage(t, released) ? locationCursor(t) : "start"
    const moved = yield* advancePositions(released, from, now, budget)
    return { next: moved.next, messages: [...messages, ...moved.messages] }
  })

const deactivate = (t: Tradeflow, budget: RenderBudget.Budget): Effect.Effect<Outcome, StorageError, Requirements> =>
  Effect.gen(function*() {
    if (!t.active) return { upsert: Option.none(), messages: [] }
    const now = yield* Clock.currentTimeMillis
    const inactive = { ...t, active: false, next_position_at: null, next_location_at: null, updated_at: now }
    const next = TrackingUpdate.track(inactive, "production", [], now).next
    const messages = yield* RenderMessages.render({
      previous: t,
      next,
      lifecycle: ["TRADEFLOW_DEACTIVATED"],
      now,
      budget
    })
    return { upsert: Option.some(next), messages }
  })

/**
 * Computes everything a job changes, with the webhook deliveries of its messages (see
 * {@link outboxOf}); the caller commits it with `TradeflowStore.commit`.
 */
export const processJob: (
  job: Job,
  budget?: RenderBudget.Budget
) => Effect.Effect<Commit, StorageError, Requirements | AutomationStore> = Effect.fnUntraced(function*(
  job: Job,
  budget: RenderBudget.Budget = RenderBudget.budget()
) {
  const commit = yield* computeCommit(job, budget)
  const outbox = yield* outboxOf(commit, budget)
  return outbox === undefined ? commit : { ...commit, outbox }
})

const computeCommit: (job: Job, budget: RenderBudget.Budget) => Effect.Effect<Commit, StorageError, Requirements> =
  Effect
    .fnUntraced(
      function*(job: Job, budget: RenderBudget.Budget) {
        const store = yield* TradeflowStore
        const payload = job.payload
        const base = { job_id: job.id, organisation_id: job.organisation_id }
        if (payload._tag === "Upsert") {
          const states = new Map<string, Tradeflow>()
          const messages: Array<NewMessage> = []
          const stored = yield* store.getMany(job.organisation_id, payload.groups.map((g) => g.tradeflow_reference))
          for (const group of payload.groups) {
            yield* budget.pause
            const previous = Option.fromNullable(
              states.get(group.tradeflow_reference) ?? stored.get(group.tradeflow_reference)
            )
            const outcome = yield* processGroup(job, group, previous, budget)
            if (Option.isSome(outcome.upsert)) states.set(group.tradeflow_reference, outcome.upsert.value)
            messages.push(...outcome.messages)
          }
          return {
            ...base,
            upserts: [...states.values()],
            deletes: [],
            messages,
            result: { count: payload.groups.length }
          }
        }
        if (payload._tag === "Track") {
          const found = yield* store.get(job.organisation_id, payload.reference)
          const empty = { ...base, upserts: [], deletes: [], messages: [], result: { count: 0 } }
          if (Option.isNone(found)) return empty
          const t = found.value
          const now = yield* Clock.currentTimeMillis
          const { cadence } = yield* TrackingConfig
          const applied = TrackingUpdate.apply(t, payload, { now, cadence, jitter: yield* Random.next })
          if (applied.next === t) return empty
          const scheduled = (yield* aisPositions(applied.next, now, false, budget)).next
          const next = applied.journeyChanged ? { ...scheduled, updated_at: now } : scheduled
          const messages = yield* renderStages(t, [next], [], undefined, now, budget, applied.statuses)
          return {
            ...base,
            upserts: [next],
            deletes: [],
            messages,
            result: { count: messages.length },
            ...(applied.rawEvents.length === 0 ? {} : { raw_events: applied.rawEvents })
          }
        }
        if (payload._tag === "Advance") {
          const found = yield* store.get(job.organisation_id, payload.reference)
          const t = Option.getOrUndefined(found)
          const now = yield* Clock.currentTimeMillis
          if (t === undefined || t.next_position_at === null || t.next_position_at > now) {
            return { ...base, upserts: [], deletes: [], messages: [], result: { count: 0 } }
          }
          const moved = yield* advance(t, now, budget)
          return {
            ...base,
            upserts: [moved.next],
            deletes: [],
            messages: moved.messages,
            result: { count: moved.messages.length }
          }
        }
        const targets = payload.reference === null
          ? yield* store.list(job.organisation_id)
          : Option.toArray(yield* store.get(job.organisation_id, payload.reference))
        if (payload.hard) {
          return {
            ...base,
            upserts: [],
            deletes: targets.map((t) => t.reference),
            messages: [],
            result: { count: targets.length }
          }
        }
        const upserts: Array<Tradeflow> = []
        const messages: Array<NewMessage> = []
        for (const t of targets) {
          yield* budget.pause
          const outcome = yield* deactivate(t, budget)
          if (Option.isSome(outcome.upsert)) upserts.push(outcome.upsert.value)
          messages.push(...outcome.messages)
        }
        const count = payload.reference === null ? upserts.length : targets.length
        return { ...base, upserts, deletes: [], messages, result: { count } }
      }
    )
