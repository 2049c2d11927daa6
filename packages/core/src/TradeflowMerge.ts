/**
 * Folding posted records into the stored tradeflow state (DECISIONS.md §3), pure functions.
 *
 * - Scalar fields: the last value sent wins; `configuration` and `references` merge key by key.
 * - Containers, bills of lading and bookings: unions in first-seen order; a container's
 *   `custom_properties` merge key by key.
 * - `active`: each record sets it (absent means true).
 * - Events are identified by {@link eventKey}; a new date or actual flag (or vessel, for a mock
 *   event) for a known key is a new prediction, appended to the event's history. Imported events
 *   are kept before mock events.
 * - Partner links (production only): `customer_name` links its partner with role `customer` and
 *   reference `customer_reference`, each `partners[]` entry links its partner; a link is keyed by
 *   (name, role), a known link takes a new reference only when one is sent, and links are never
 *   removed (see {@link mergeLinks}).
 *
 * Every merge is linear: lists are indexed by identity (reference, event key, partner name and
 * role) once, never searched per item. The merges of whole records and mock releases are
 * {@link Steps}: they pause every {@link pauseEvery} items, so that a caller can let the event
 * loop turn inside one large group.
 *
 * @module
 */
import { complete } from "./internal/eventLoop.js"
import { fromMessage } from "./StatusCode.js"
import type { TrackingEvent } from "./TrackingEvent.js"
import type { MockEvent, PartnerLink, Prediction, TrackedEvent, Tradeflow, TradeflowDetails } from "./Tradeflow.js"
import type { ContainerEntry as ContainerEntrySchema, EventInput, TradeflowRecord } from "./TradeflowRecord.js"
import { normaliseContainerNumber, parseIsoDateTime } from "./TradeflowRecord.js"

type ContainerEntry = typeof ContainerEntrySchema.Type

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A new, empty, active tradeflow. */
export const empty = (organisationId: string, reference: string, now: number): Tradeflow => ({
  organisation_id: organisationId,
  reference,
  active: true,
  containers: [],
  bill_of_lading_references: [],
  booking_references: [],
  details: {},
  events: [],
  retracted_events: [],
  retractions: [],
  tracking: null,
  partners: [],
  mock_signature: null,
  mock_release: null,
  next_position_at: null,
  next_location_at: null,
  created_at: now,
  updated_at: now
})

const scalarKeys = [
  "port_of_loading",
  "port_of_discharge",
  "estimated_time_of_departure",
  "explicit_departure_confirmation",
  "estimated_time_of_arrival",
  "explicit_arrival_confirmation",
  "actual_time_of_departure",
  "actual_time_of_arrival",
  "vessel",
  "customer_name",
  "customer_reference",
  "carrier_name",
  "carrier_scac",
  "lead_contact",
  "incoterms"
] as const satisfies ReadonlyArray<keyof TradeflowDetails & keyof TradeflowRecord>

/**
 * A merge that pauses (yields) every {@link pauseEvery} items it handles; {@link run} completes it
 * at once.
 */
export type Steps<A> = Generator<void, A, undefined>

/** How many items a {@link Steps} merge handles between two pauses. */
export const pauseEvery = 256

/** Completes a {@link Steps} merge without pausing. */
export const run: <A>(steps: Steps<A>) => A = complete

/** A counter of handled items that tells when to pause. */
const pacer = () => {
  let handled = 0
  return (): boolean => ++handled % pauseEvery === 0
}

/** The position of each identity in a list: its first occurrence. */
const indexBy = <A>(items: ReadonlyArray<A>, identity: (a: A) => string): Map<string, number> => {
  const at = new Map<string, number>()
  items.forEach((item, i) => {
    const key = identity(item)
    if (!at.has(key)) at.set(key, i)
  })
  return at
}

/**
 * A list keyed by identity, the initial list as it is, copied only at its first change: an item of
 * a new identity is appended, one of a known identity replaces the item there with
 * `update(old, incoming)`, unless that answers undefined (nothing changes).
 */
const keyedUnion = <A>(
  initial: ReadonlyArray<A>,
  identity: (a: A) => string,
  update: (old: A, incoming: A) => A | undefined
) => {
  const at = indexBy(initial, identity)
  let out: Array<A> | undefined
  return {
    add: (item: A) => {
      const key = identity(item)
      const i = at.get(key)
      if (i === undefined) {
        out ??= [...initial]
        at.set(key, out.length)
        out.push(item)
      } else {
        const next = update((out ?? initial)[i]!, item)
        if (next !== undefined) (out ??= [...initial])[i] = next
      }
    },
    result: (): ReadonlyArray<A> => out ?? initial
  }
}

/** A union of strings in first-seen order: the initial list as it is, then each new string once. */
const stringUnion = (initial: ReadonlyArray<string>) => keyedUnion(initial, (x) => x, () => undefined)

/** Unions two lists of strings, first-seen order, no duplicates. */
export const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  const u = stringUnion(a)
  for (const x of b ?? []) u.add(x)
  return u.result()
}

/** A union of container entries by reference; a known one takes the incoming `custom_properties` key by key. */
const containerUnion = (initial: ReadonlyArray<ContainerEntry>) =>
  keyedUnion(initial, (c) => c.reference, (old, entry) =>
    entry.custom_properties === undefined
      ? undefined
      : { reference: old.reference, custom_properties: { ...old.custom_properties, ...entry.custom_properties } })

/** Unions container entries by reference, merging `custom_properties`. */
export const unionContainers = (
  a: ReadonlyArray<ContainerEntry>,
  b: ReadonlyArray<ContainerEntry> | undefined
): ReadonlyArray<ContainerEntry> => {
  const u = containerUnion(a)
  for (const entry of b ?? []) u.add(entry)
  return u.result()
}

const unlocodePattern = /^[A-Z]{2}[A-Z2-9]{3}$/

/** The stored form of an event location: a UN/LOCODE upper-cased, other text as sent (trimmed). */
export const eventLocation = (text: string | undefined): string | null => {
  if (text === undefined || text.trim() === "") return null
  const t = text.trim()
  return unlocodePattern.test(t.toUpperCase()) ? t.toUpperCase() : t
}

/**
 * The identity of a milestone: container, status code (or normalised message), location, source,
 * and the voyage when the event names one.
 */
export const eventKey = (e: {
  readonly container_reference: string | null
  readonly status_code: string | null
  readonly message: string
  readonly location: string | null
  readonly source: string
  readonly voyage?: string | undefined
}): string => {
  const identity = [
    e.container_reference,
    e.status_code ?? e.message.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim(),
    e.location,
    e.source
  ]
  return JSON.stringify(e.voyage === undefined ? identity : [...identity, e.voyage])
}

/** The id and version of an event of a source that names its events (see `TrackingEvent`). */
export interface Version {
  readonly event_id: string
  readonly updated_at: number
}

/** An event as it arrives, before it is merged. `event_date` undefined: not given. */
export interface IncomingEvent {
  readonly message: string
  readonly status_code: string | null
  readonly container_reference: string | null
  readonly location: string | null
  readonly event_date: number | undefined
  readonly actual: boolean
  /** `import`, `mock`, or a `TrackingSource` id. */
  readonly source: string
  /** The vessel the event names (a mock event's other vessel, a carrier's transport call). */
  readonly vessel?: string | undefined
  /** The carrier's voyage number, as the event names it: part of the milestone's identity. */
  readonly voyage?: string | undefined
  /** The vessel's IMO number and MMSI, as a carrier names them. */
  readonly vessel_imo?: string | undefined
  readonly vessel_mmsi?: string | undefined
  /**
   * The version, for an event of a source that names its events: an exact duplicate (same id and
   * update time) is ignored, versions are ordered by update time, and an actual reading wins over
   * estimated and planned ones. Events posted by the client and mock events have none: the last
   * one merged is the current reading.
   */
  readonly version?: Version | undefined
}

/** A tracking event of a source as an incoming event (its retraction is merged by {@link mergeTrackingSteps}). */
export const fromTracking = (e: TrackingEvent): IncomingEvent => ({
  message: e.message,
  status_code: e.status_code,
  container_reference: e.container_reference,
  location: e.location,
  event_date: e.event_date,
  actual: e.classifier === "ACT",
  source: e.source,
  vessel: e.transport_call?.vessel_name,
  voyage: e.transport_call?.voyage,
  vessel_imo: e.transport_call?.vessel_imo,
  vessel_mmsi: e.transport_call?.vessel_mmsi,
  version: { event_id: e.event_id, updated_at: e.updated_at }
})

/** An imported event input as an incoming event. */
export const fromInput = (e: EventInput): IncomingEvent => ({
  message: e.message,
  status_code: fromMessage(e.message) ?? null,
  container_reference: e.container_reference === undefined || e.container_reference === ""
    ? null
    : normaliseContainerNumber(e.container_reference),
  location: eventLocation(e.location_name),
  event_date: e.event_date === undefined ? undefined : parseIsoDateTime(e.event_date),
  actual: e.actual,
  source: "import"
})

/** A generated mock event as an incoming event. */
export const fromMock = (e: MockEvent): IncomingEvent => ({
  message: e.message,
  status_code: e.status_code,
  container_reference: e.container_reference,
  location: e.location,
  event_date: e.event_date,
  actual: e.actual,
  source: "mock",
  vessel: e.vessel
})

/** The key of a generated mock event (see {@link eventKey}). */
export const mockKey = (e: MockEvent): string => eventKey(fromMock(e))

const withVessel = <A extends object>(a: A, vessel: string | undefined): A & { readonly vessel?: string } =>
  vessel === undefined ? a : { ...a, vessel }

/** The vessel's IMO number and MMSI of an event, those it names. */
const vesselIds = (e: IncomingEvent): { readonly vessel_imo?: string; readonly vessel_mmsi?: string } => ({
  ...(e.vessel_imo === undefined ? {} : { vessel_imo: e.vessel_imo }),
  ...(e.vessel_mmsi === undefined ? {} : { vessel_mmsi: e.vessel_mmsi })
})

/** The entries of a history that count (not retracted). */
const live = (history: ReadonlyArray<Prediction>): ReadonlyArray<Prediction> =>
  history.filter((h) => h.retracted !== true)

/**
 * The current reading of a history: the last one, or, among versioned readings (see
 * {@link IncomingEvent}), the last actual one when there is one. Undefined when every reading is retracted.
 */
export const currentReading = (history: ReadonlyArray<Prediction>): Prediction | undefined => {
  const counted = live(history)
  const last = counted.at(-1)
  if (last?.updated_at === undefined) return last
  for (let i = counted.length - 1; i >= 0; i--) if (counted[i]!.actual) return counted[i]
  return last
}

/**
 * The predictions a history shows: the readings that count, where a versioned reading that
 * repeats the date and flag of the one before it (a source publishing the same estimate again)
 * is left out.
 */
export const visibleHistory = (history: ReadonlyArray<Prediction>): ReadonlyArray<Prediction> => {
  const out: Array<Prediction> = []
  for (const h of history) {
    if (h.retracted === true) continue
    const before = out.at(-1)
    if (
      h.updated_at !== undefined && before !== undefined && before.event_date === h.event_date &&
      before.actual === h.actual
    ) continue
    out.push(h)
  }
  return out
}

/** Whether a reading is of a later version than `v`: a later update time, or the same one and a greater event id. */
const laterVersion = (h: Prediction, v: Version): boolean => {
  const updated = h.updated_at ?? -Infinity
  return updated > v.updated_at || (updated === v.updated_at && (h.event_id ?? "") > v.event_id)
}

/**
 * A versioned reading merged into a known milestone: it joins the history in update order (every
 * version is kept, so the result does not depend on the order versions arrive in), and the
 * milestone takes it as its current reading when it is (see {@link currentReading}). Undefined for
 * an exact duplicate (same id and update time).
 */
const mergeVersion = (
  existing: TrackedEvent,
  e: IncomingEvent & { readonly version: Version },
  date: number,
  now: number
): TrackedEvent | undefined => {
  const { event_id, updated_at } = e.version
  const history = existing.history
  if (history.some((h) => h.event_id === event_id && h.updated_at === updated_at)) return undefined
  let at = history.length
  while (at > 0 && laterVersion(history[at - 1]!, e.version)) at--
  const entry: Prediction = {
    actual: e.actual,
    source: e.source,
    event_date: date,
    predicted_at: now,
    event_id,
    updated_at
  }
  const next = [...history.slice(0, at), entry, ...history.slice(at)]
  if (currentReading(next) !== entry) return { ...existing, history: next }
  const { vessel: _vessel, vessel_imo: _imo, vessel_mmsi: _mmsi, ...rest } = existing
  return withVessel({
    ...rest,
    message: e.message,
    event_date: date,
    actual: e.actual,
    predicted_at: now,
    history: next,
    ...vesselIds(e)
  }, e.vessel)
}

/**
 * Merges events into a list, in order: a new key is appended (an undated one is dated
 * `fallbackDate`); a known key with another date, actual flag or vessel becomes a new prediction;
 * otherwise the event changes nothing. A versioned event (see {@link IncomingEvent}) joins the
 * history in update order unless it is an exact duplicate, and becomes current unless an actual
 * reading is. The list itself comes back when nothing changed.
 */
export function* mergeEvents(
  events: ReadonlyArray<TrackedEvent>,
  incoming: Iterable<IncomingEvent>,
  now: number,
  fallbackDate: number
): Steps<ReadonlyArray<TrackedEvent>> {
  const at = indexBy(events, (e) => e.key)
  const pause = pacer()
  let out: Array<TrackedEvent> | undefined
  for (const e of incoming) {
    const key = eventKey(e)
    const i = at.get(key)
    const existing = i === undefined ? undefined : (out ?? events)[i]
    const version = e.version === undefined ? {} : { event_id: e.version.event_id, updated_at: e.version.updated_at }
    if (existing === undefined) {
      const date = e.event_date ?? fallbackDate
      out ??= [...events]
      at.set(key, out.length)
      out.push(withVessel({
        key,
        message: e.message,
        status_code: e.status_code,
        container_reference: e.container_reference,
        location: e.location,
        event_date: date,
        actual: e.actual,
        source: e.source,
        predicted_at: now,
        history: [{ actual: e.actual, source: e.source, event_date: date, predicted_at: now, ...version }],
        ...(e.voyage === undefined ? {} : { voyage: e.voyage }),
        ...vesselIds(e)
      }, e.vessel))
    } else if (e.version !== undefined) {
      const merged = mergeVersion(
        existing,
        { ...e, version: e.version },
        e.event_date ?? existing.event_date ?? fallbackDate,
        now
      )
      if (merged !== undefined) (out ??= [...events])[i!] = merged
    } else {
      const date = e.event_date ?? existing.event_date ?? fallbackDate
      if (date !== existing.event_date || e.actual !== existing.actual || e.vessel !== existing.vessel) {
        const { vessel: _vessel, ...rest } = existing
        out ??= [...events]
        out[i!] = withVessel({
          ...rest,
          message: e.message,
          event_date: date,
          actual: e.actual,
          predicted_at: now,
          history: [...existing.history, { actual: e.actual, source: e.source, event_date: date, predicted_at: now }]
        }, e.vessel)
      }
    }
    if (pause()) yield
  }
  return out ?? events
}

/** Merges one event into a list (see {@link mergeEvents}). */
export const mergeEvent = (
  events: ReadonlyArray<TrackedEvent>,
  incoming: IncomingEvent,
  now: number,
  fallbackDate: number
): ReadonlyArray<TrackedEvent> => run(mergeEvents(events, [incoming], now, fallbackDate))

/** Keeps imported events first, then those of tracking sources, then mock events (stable). */
export const orderEvents = (events: ReadonlyArray<TrackedEvent>): ReadonlyArray<TrackedEvent> => [
  ...events.filter((e) => e.source === "import"),
  ...events.filter((e) => e.source !== "import" && e.source !== "mock"),
  ...events.filter((e) => e.source === "mock")
]

/** How a record is applied. */
export interface ApplyOptions {
  readonly now: number
  /** The date of imported events sent without one (the job's reception time). */
  readonly receivedAt: number
  /** False in UAT: `customer_name` and `partners` are ignored there (nothing is linked). */
  readonly keepCustomerName: boolean
}

/**
 * The partner links a record asks for, in order: its `customer_name` (trimmed; none when blank)
 * with role `customer` and reference `customer_reference`, then each `partners[]` entry.
 */
export const recordLinks = (r: TradeflowRecord): ReadonlyArray<PartnerLink> => {
  const customer = r.customer_name?.trim() ?? ""
  return [
    ...(customer === "" ? [] : [{ name: customer, role: "customer", reference: r.customer_reference ?? null }]),
    ...(r.partners ?? []).map((p) => ({ name: p.name, role: p.role ?? null, reference: p.reference ?? null }))
  ]
}

const linkIdentity = (l: PartnerLink): string => JSON.stringify([l.name, l.role])

/** A list of links keyed by (name, role) (see {@link mergeLinks}). */
const linkUnion = (initial: ReadonlyArray<PartnerLink>) =>
  keyedUnion(
    initial,
    linkIdentity,
    (old, link) => link.reference === null ? undefined : { ...old, reference: link.reference }
  )

/**
 * Merges links into a list keyed by (name, role): a new key is appended, a known one takes the
 * incoming reference when it is not null; no link is ever removed.
 */
export const mergeLinks = (
  links: ReadonlyArray<PartnerLink>,
  incoming: ReadonlyArray<PartnerLink>
): ReadonlyArray<PartnerLink> => {
  const u = linkUnion(links)
  for (const link of incoming) u.add(link)
  return u.result()
}

/** Folds the fields of records into the state, in order (not their events: see {@link applyRecords}). */
function* foldFields(t: Tradeflow, records: ReadonlyArray<TradeflowRecord>, options: ApplyOptions): Steps<Tradeflow> {
  const details: Mutable<TradeflowDetails> = { ...t.details }
  const containers = containerUnion(t.containers)
  const bills = stringUnion(t.bill_of_lading_references)
  const bookings = stringUnion(t.booking_references)
  const partners = linkUnion(t.partners)
  const pause = pacer()
  let active = t.active
  for (const r of records) {
    for (const key of scalarKeys) {
      const value = r[key]
      if (value === undefined) continue
      if (key === "customer_name" && !options.keepCustomerName) continue
      ;(details as Record<string, unknown>)[key] = value
    }
    if (r.configuration !== undefined) details.configuration = { ...details.configuration, ...r.configuration }
    if (r.references !== undefined) details.references = { ...details.references, ...r.references }
    active = r.active !== false
    for (const entry of r.container_reference ?? []) {
      containers.add(entry)
      if (pause()) yield
    }
    for (const x of r.bill_of_lading_reference ?? []) {
      bills.add(x)
      if (pause()) yield
    }
    for (const x of r.booking_reference ?? []) {
      bookings.add(x)
      if (pause()) yield
    }
    if (options.keepCustomerName) {
      for (const link of recordLinks(r)) {
        partners.add(link)
        if (pause()) yield
      }
    }
    if (pause()) yield
  }
  return {
    ...t,
    active,
    containers: containers.result(),
    bill_of_lading_references: bills.result(),
    booking_references: bookings.result(),
    details,
    partners: partners.result()
  }
}

/** Folds the fields of one record into the state (not its events: see {@link applyRecords}). */
export const applyRecord = (t: Tradeflow, r: TradeflowRecord, options: ApplyOptions): Tradeflow =>
  run(foldFields(t, [r], options))

/**
 * The imported events of several records, one per key in first-seen order: a later input of the
 * same key wins (keeping the earlier date when it has none), so a request is applied as its final
 * word and re-posting it changes nothing.
 */
export const collectEvents = (records: ReadonlyArray<TradeflowRecord>): ReadonlyArray<IncomingEvent> => {
  const byKey = new Map<string, IncomingEvent>()
  for (const r of records) {
    for (const input of r.events ?? []) {
      const e = fromInput(input)
      const key = eventKey(e)
      const earlier = byKey.get(key)
      byKey.set(key, earlier === undefined ? e : { ...e, event_date: e.event_date ?? earlier.event_date })
    }
  }
  return [...byKey.values()]
}

/** Folds the records of one group into the state: every record's fields in order, then their events. */
export function* applyRecordsSteps(
  t: Tradeflow,
  records: ReadonlyArray<TradeflowRecord>,
  options: ApplyOptions
): Steps<Tradeflow> {
  const folded = yield* foldFields(t, records, options)
  const events = yield* mergeEvents(folded.events, collectEvents(records), options.now, options.receivedAt)
  return { ...folded, events: orderEvents(events) }
}

/** {@link applyRecordsSteps} at once. */
export const applyRecords = (t: Tradeflow, records: ReadonlyArray<TradeflowRecord>, options: ApplyOptions): Tradeflow =>
  run(applyRecordsSteps(t, records, options))

/**
 * Releases mock events into the state, in order: each is merged into the mock sequence (a new key
 * appended, a known key with a new date, actual flag or vessel a new prediction).
 */
export function* releaseMockEventsSteps(t: Tradeflow, events: ReadonlyArray<MockEvent>, now: number): Steps<Tradeflow> {
  const mock = yield* mergeEvents(t.events.filter((e) => e.source === "mock"), events.map(fromMock), now, now)
  return { ...t, events: [...t.events.filter((e) => e.source !== "mock"), ...mock] }
}

/** {@link releaseMockEventsSteps} at once. */
export const releaseMockEvents = (t: Tradeflow, events: ReadonlyArray<MockEvent>, now: number): Tradeflow =>
  run(releaseMockEventsSteps(t, events, now))

/**
 * Marks every reading of the event up to version `upTo` retracted; a milestone left with no reading
 * moves to `retracted_events`.
 */
const retractReadings = (
  t: Tradeflow,
  retraction: { readonly source: string; readonly event_id: string; readonly updated_at: number },
  now: number
): Tradeflow => {
  const covers = (h: Prediction) =>
    h.event_id === retraction.event_id && h.retracted !== true && (h.updated_at ?? 0) <= retraction.updated_at
  if (!t.events.some((e) => e.source === retraction.source && e.history.some(covers))) return t
  const kept: Array<TrackedEvent> = []
  const gone: Array<TrackedEvent> = []
  for (const event of t.events) {
    if (event.source !== retraction.source || !event.history.some(covers)) {
      kept.push(event)
      continue
    }
    const history = event.history.map((h) => covers(h) ? { ...h, retracted: true } : h)
    const current = currentReading(history)
    if (current !== undefined) {
      kept.push({ ...event, history, event_date: current.event_date, actual: current.actual, predicted_at: now })
      continue
    }
    const last = currentReading(history.map(({ retracted: _, ...h }) => h))!
    gone.push({ ...event, history, event_date: last.event_date, actual: last.actual, predicted_at: now })
  }
  return { ...t, events: kept, retracted_events: [...t.retracted_events, ...gone] }
}

/**
 * Merges the events of a tracking source into the state, in update order (then event id, then
 * as given): a retraction marks every reading of its event up to its version retracted (a
 * milestone left with no reading leaves the journey for `retracted_events`: nothing is deleted)
 * and is remembered, so a version it covers that arrives late is kept retracted too; every other
 * event is merged as a versioned reading (see {@link mergeEvents}), bringing a retracted milestone
 * back when it counts. So the same versions give the same journey in whatever order they arrive.
 * The state itself comes back when nothing changed.
 */
export function* mergeTrackingSteps(
  t: Tradeflow,
  incoming: ReadonlyArray<TrackingEvent>,
  now: number
): Steps<Tradeflow> {
  const ordered = incoming.map((e, i) => [e, i] as const)
    .sort(([a, i], [b, j]) =>
      a.updated_at - b.updated_at || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0) || i - j
    )
    .map(([e]) => e)
  const retractedId = (source: string, eventId: string) => JSON.stringify([source, eventId])
  const retractions = new Map(t.retractions.map((r) => [retractedId(r.source, r.event_id), r] as const))
  let state = t
  let batch: Array<IncomingEvent> = []
  const flush = function*(): Steps<void> {
    if (batch.length === 0) return
    const events = yield* mergeEvents(state.events, batch, now, now)
    batch = []
    if (events !== state.events) state = { ...state, events: orderEvents(events) }
  }
  for (const e of ordered) {
    const id = retractedId(e.source, e.event_id)
    const retraction = retractions.get(id)
    if (e.retracted) {
      if (retraction !== undefined && retraction.updated_at >= e.updated_at) continue
      yield* flush()
      const mark = { source: e.source, event_id: e.event_id, updated_at: e.updated_at }
      retractions.set(id, mark)
      state = { ...retractReadings(state, mark, now), retractions: [...retractions.values()] }
      continue
    }
    const incomingEvent = fromTracking(e)
    const key = eventKey(incomingEvent)
    const revived = state.retracted_events.find((r) => r.key === key)
    const covered = retraction !== undefined && retraction.updated_at >= e.updated_at
    if (revived === undefined && !covered) {
      batch.push(incomingEvent)
      continue
    }
    yield* flush()
    if (revived !== undefined) {
      state = {
        ...state,
        events: [...state.events, revived],
        retracted_events: state.retracted_events.filter((r) => r !== revived)
      }
    }
    batch.push(incomingEvent)
    yield* flush()
    if (covered) state = retractReadings(state, retraction, now)
    const settled = state.events.find((x) => x.key === key)
    if (settled !== undefined && currentReading(settled.history) === undefined) {
      state = {
        ...state,
        events: state.events.filter((x) => x !== settled),
        retracted_events: [...state.retracted_events, settled]
      }
    }
  }
  yield* flush()
  return state
}

/** {@link mergeTrackingSteps} at once. */
export const mergeTracking = (t: Tradeflow, incoming: ReadonlyArray<TrackingEvent>, now: number): Tradeflow =>
  run(mergeTrackingSteps(t, incoming, now))

/**
 * Starts a newly generated mock sequence whose events will have these keys (in this order): mock
 * events of other keys are dropped, those of these keys keep their history and take this order.
 * The journey's containers join the tradeflow.
 */
export const restartMock = (
  t: Tradeflow,
  containers: ReadonlyArray<string>,
  keys: ReadonlyArray<string>
): Tradeflow => {
  const rank = new Map<string, number>()
  keys.forEach((k, i) => rank.has(k) || rank.set(k, i))
  const mock = t.events
    .filter((e) => e.source === "mock" && rank.has(e.key))
    .sort((a, b) => rank.get(a.key)! - rank.get(b.key)!)
  return {
    ...t,
    containers: unionContainers(t.containers, containers.map((reference) => ({ reference }))),
    events: [...t.events.filter((e) => e.source !== "mock"), ...mock]
  }
}

/**
 * Replaces the mock sequence by a newly generated one: events of the same key keep their history
 * (a new date is a new prediction), mock events the new journey no longer has are dropped.
 */
export const applyMockJourney = (
  t: Tradeflow,
  journey: { readonly containers: ReadonlyArray<string>; readonly events: ReadonlyArray<MockEvent> },
  now: number
): Tradeflow => releaseMockEvents(restartMock(t, journey.containers, journey.events.map(mockKey)), journey.events, now)

/** A short description of what changed between two states (for TRADEFLOW_UPDATED), empty if nothing. */
export const describeChanges = (before: Tradeflow, after: Tradeflow): string => {
  const parts: Array<string> = []
  const added = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
    const known = new Set(a)
    return b.filter((x) => !known.has(x))
  }
  const containers = added(before.containers.map((c) => c.reference), after.containers.map((c) => c.reference))
  if (containers.length > 0) parts.push(`containers added ${containers.join(", ")}`)
  const bls = added(before.bill_of_lading_references, after.bill_of_lading_references)
  if (bls.length > 0) parts.push(`bills of lading added ${bls.join(", ")}`)
  const bookings = added(before.booking_references, after.booking_references)
  if (bookings.length > 0) parts.push(`bookings added ${bookings.join(", ")}`)
  const keys = [...new Set([...Object.keys(before.details), ...Object.keys(after.details)])].sort().filter((k) =>
    JSON.stringify((before.details as Record<string, unknown>)[k]) !==
      JSON.stringify((after.details as Record<string, unknown>)[k])
  )
  if (keys.length > 0) parts.push(`changed ${keys.join(", ")}`)
  const label = (l: PartnerLink) => l.role === null ? l.name : `${l.name} (${l.role})`
  const beforeLinks = new Map<string, Array<PartnerLink>>()
  for (const b of before.partners) {
    const same = beforeLinks.get(linkIdentity(b))
    if (same === undefined) beforeLinks.set(linkIdentity(b), [b])
    else same.push(b)
  }
  const linked = after.partners.filter((l) => !beforeLinks.has(linkIdentity(l)))
  if (linked.length > 0) parts.push(`partners linked ${linked.map(label).join(", ")}`)
  const referenced = after.partners.filter((l) =>
    (beforeLinks.get(linkIdentity(l)) ?? []).some((b) => b.reference !== l.reference)
  )
  if (referenced.length > 0) parts.push(`partner references changed ${referenced.map(label).join(", ")}`)
  const beforeEvents = new Map(before.events.map((e) => [e.key, e.history.length] as const))
  const events = after.events.filter((e) => beforeEvents.get(e.key) !== e.history.length).length
  if (events > 0) parts.push(`${events} event${events === 1 ? "" : "s"} new or changed`)
  return parts.join("; ")
}
