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
 * @since 0.1.0
 */
import type { ContainerEntry as ContainerEntrySchema, EventInput, TradeflowRecord } from "./TradeflowRecord.js"
import { normaliseContainerNumber, parseIsoDateTime } from "./TradeflowRecord.js"
import { fromMessage } from "./StatusCode.js"
import type { MockEvent, PartnerLink, TrackedEvent, Tradeflow, TradeflowDetails } from "./Tradeflow.js"

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

/** Unions two lists of strings, first-seen order, no duplicates. */
export const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  if (b === undefined || b.length === 0) return a
  const seen = new Set(a)
  const out = [...a]
  for (const x of b) if (!seen.has(x)) (seen.add(x), out.push(x))
  return out
}

/** Unions container entries by reference, merging `custom_properties`. */
export const unionContainers = (
  a: ReadonlyArray<ContainerEntry>,
  b: ReadonlyArray<ContainerEntry> | undefined
): ReadonlyArray<ContainerEntry> => {
  if (b === undefined || b.length === 0) return a
  const out = [...a]
  for (const entry of b) {
    const i = out.findIndex((c) => c.reference === entry.reference)
    if (i < 0) out.push(entry)
    else if (entry.custom_properties !== undefined) {
      const old = out[i]!
      out[i] = { reference: old.reference, custom_properties: { ...old.custom_properties, ...entry.custom_properties } }
    }
  }
  return out
}

const unlocodePattern = /^[A-Z]{2}[A-Z2-9]{3}$/

/** The stored form of an event location: a UN/LOCODE upper-cased, other text as sent (trimmed). */
export const eventLocation = (text: string | undefined): string | null => {
  if (text === undefined || text.trim() === "") return null
  const t = text.trim()
  return unlocodePattern.test(t.toUpperCase()) ? t.toUpperCase() : t
}

/** The identity of an event: container, status code (or normalised message), location, source. */
export const eventKey = (e: {
  readonly container_reference: string | null
  readonly status_code: string | null
  readonly message: string
  readonly location: string | null
  readonly source: "import" | "mock"
}): string =>
  JSON.stringify([
    e.container_reference,
    e.status_code ?? e.message.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim(),
    e.location,
    e.source
  ])

/** An event as it arrives, before it is merged. `event_date` undefined: not given. */
export interface IncomingEvent {
  readonly message: string
  readonly status_code: string | null
  readonly container_reference: string | null
  readonly location: string | null
  readonly event_date: number | undefined
  readonly actual: boolean
  readonly source: "import" | "mock"
  /** The vessel of a mock event that names one. */
  readonly vessel?: string | undefined
}

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

/**
 * Merges one event into a list. A new key is appended (an undated one is dated `fallbackDate`);
 * a known key with another date, actual flag or vessel becomes a new prediction; otherwise the
 * list is returned as it was.
 */
export const mergeEvent = (
  events: ReadonlyArray<TrackedEvent>,
  incoming: IncomingEvent,
  now: number,
  fallbackDate: number
): ReadonlyArray<TrackedEvent> => {
  const key = eventKey(incoming)
  const i = events.findIndex((e) => e.key === key)
  const existing = events[i]
  if (existing === undefined) {
    const date = incoming.event_date ?? fallbackDate
    return [...events, withVessel({
      key,
      message: incoming.message,
      status_code: incoming.status_code,
      container_reference: incoming.container_reference,
      location: incoming.location,
      event_date: date,
      actual: incoming.actual,
      source: incoming.source,
      predicted_at: now,
      history: [{ actual: incoming.actual, source: incoming.source, event_date: date, predicted_at: now }]
    }, incoming.vessel)]
  }
  const date = incoming.event_date ?? existing.event_date ?? fallbackDate
  if (date === existing.event_date && incoming.actual === existing.actual && incoming.vessel === existing.vessel) {
    return events
  }
  const out = [...events]
  const { vessel: _vessel, ...rest } = existing
  out[i] = withVessel({
    ...rest,
    message: incoming.message,
    event_date: date,
    actual: incoming.actual,
    predicted_at: now,
    history: [...existing.history, { actual: incoming.actual, source: incoming.source, event_date: date, predicted_at: now }]
  }, incoming.vessel)
  return out
}

/** Keeps imported events before mock events (stable). */
export const orderEvents = (events: ReadonlyArray<TrackedEvent>): ReadonlyArray<TrackedEvent> => [
  ...events.filter((e) => e.source === "import"),
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

const sameLink = (a: PartnerLink, b: PartnerLink): boolean => a.name === b.name && a.role === b.role

/**
 * Merges links into a list keyed by (name, role): a new key is appended, a known one takes the
 * incoming reference when it is not null; no link is ever removed.
 */
export const mergeLinks = (
  links: ReadonlyArray<PartnerLink>,
  incoming: ReadonlyArray<PartnerLink>
): ReadonlyArray<PartnerLink> => {
  if (incoming.length === 0) return links
  const out = [...links]
  for (const link of incoming) {
    const i = out.findIndex((l) => sameLink(l, link))
    if (i < 0) out.push(link)
    else if (link.reference !== null) out[i] = { ...out[i]!, reference: link.reference }
  }
  return out
}

/** Folds the fields of one record into the state (not its events: see {@link applyRecords}). */
export const applyRecord = (t: Tradeflow, r: TradeflowRecord, options: ApplyOptions): Tradeflow => {
  const details: Mutable<TradeflowDetails> = { ...t.details }
  for (const key of scalarKeys) {
    const value = r[key]
    if (value === undefined) continue
    if (key === "customer_name" && !options.keepCustomerName) continue
    ;(details as Record<string, unknown>)[key] = value
  }
  if (r.configuration !== undefined) details.configuration = { ...details.configuration, ...r.configuration }
  if (r.references !== undefined) details.references = { ...details.references, ...r.references }
  return {
    ...t,
    active: r.active !== false,
    containers: unionContainers(t.containers, r.container_reference),
    bill_of_lading_references: union(t.bill_of_lading_references, r.bill_of_lading_reference),
    booking_references: union(t.booking_references, r.booking_reference),
    details,
    partners: options.keepCustomerName ? mergeLinks(t.partners, recordLinks(r)) : t.partners
  }
}

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
export const applyRecords = (t: Tradeflow, records: ReadonlyArray<TradeflowRecord>, options: ApplyOptions): Tradeflow => {
  const folded = records.reduce((state, r) => applyRecord(state, r, options), t)
  let events = folded.events
  for (const e of collectEvents(records)) events = mergeEvent(events, e, options.now, options.receivedAt)
  return { ...folded, events: orderEvents(events) }
}

/**
 * Releases mock events into the state, in order: each is merged into the mock sequence (a new key
 * appended, a known key with a new date, actual flag or vessel a new prediction).
 */
export const releaseMockEvents = (t: Tradeflow, events: ReadonlyArray<MockEvent>, now: number): Tradeflow => {
  let mock: ReadonlyArray<TrackedEvent> = t.events.filter((e) => e.source === "mock")
  for (const e of events) mock = mergeEvent(mock, fromMock(e), now, now)
  return { ...t, events: [...t.events.filter((e) => e.source === "import"), ...mock] }
}

/**
 * Starts a newly generated mock sequence whose events will have these keys (in this order): mock
 * events of other keys are dropped, those of these keys keep their history and take this order.
 * The journey's containers join the tradeflow.
 */
export const restartMock = (t: Tradeflow, containers: ReadonlyArray<string>, keys: ReadonlyArray<string>): Tradeflow => {
  const rank = new Map<string, number>()
  keys.forEach((k, i) => rank.has(k) || rank.set(k, i))
  const mock = t.events
    .filter((e) => e.source === "mock" && rank.has(e.key))
    .sort((a, b) => rank.get(a.key)! - rank.get(b.key)!)
  return {
    ...t,
    containers: unionContainers(t.containers, containers.map((reference) => ({ reference }))),
    events: [...t.events.filter((e) => e.source === "import"), ...mock]
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
  const added = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => b.filter((x) => !a.includes(x))
  const containers = added(before.containers.map((c) => c.reference), after.containers.map((c) => c.reference))
  if (containers.length > 0) parts.push(`containers added ${containers.join(", ")}`)
  const bls = added(before.bill_of_lading_references, after.bill_of_lading_references)
  if (bls.length > 0) parts.push(`bills of lading added ${bls.join(", ")}`)
  const bookings = added(before.booking_references, after.booking_references)
  if (bookings.length > 0) parts.push(`bookings added ${bookings.join(", ")}`)
  const keys = [...new Set([...Object.keys(before.details), ...Object.keys(after.details)])].sort().filter((k) =>
    JSON.stringify((before.details as Record<string, unknown>)[k]) !== JSON.stringify((after.details as Record<string, unknown>)[k])
  )
  if (keys.length > 0) parts.push(`changed ${keys.join(", ")}`)
  const label = (l: PartnerLink) => l.role === null ? l.name : `${l.name} (${l.role})`
  const linked = after.partners.filter((l) => !before.partners.some((b) => sameLink(b, l)))
  if (linked.length > 0) parts.push(`partners linked ${linked.map(label).join(", ")}`)
  const referenced = after.partners.filter((l) => before.partners.some((b) => sameLink(b, l) && b.reference !== l.reference))
  if (referenced.length > 0) parts.push(`partner references changed ${referenced.map(label).join(", ")}`)
  const beforeEvents = new Map(before.events.map((e) => [e.key, e.history.length] as const))
  const events = after.events.filter((e) => beforeEvents.get(e.key) !== e.history.length).length
  if (events > 0) parts.push(`${events} event${events === 1 ? "" : "s"} new or changed`)
  return parts.join("; ")
}
