import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import type { MockEvent, PartnerLink, TrackedEvent, Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowRecord } from "../src/TradeflowRecord.js"

type Entry = Tradeflow["containers"][number]

/**
 * The reference model: the merge as it was first written, searching the list once per item
 * (`findIndex`, `includes`, `some`). Quadratic, but plainly what DECISIONS.md §3 says.
 */
const Reference = {
  union: (a: ReadonlyArray<string>, b: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
    const out = [...a]
    for (const x of b ?? []) if (!out.includes(x)) out.push(x)
    return out
  },
  unionContainers: (a: ReadonlyArray<Entry>, b: ReadonlyArray<Entry> | undefined): ReadonlyArray<Entry> => {
    const out = [...a]
    for (const entry of b ?? []) {
      const i = out.findIndex((c) => c.reference === entry.reference)
      if (i < 0) out.push(entry)
      else if (entry.custom_properties !== undefined) {
        const old = out[i]!
        out[i] = {
          reference: old.reference,
          custom_properties: { ...old.custom_properties, ...entry.custom_properties }
        }
      }
    }
    return out
  },
  mergeLinks: (links: ReadonlyArray<PartnerLink>, incoming: ReadonlyArray<PartnerLink>): ReadonlyArray<PartnerLink> => {
    const out = [...links]
    for (const link of incoming) {
      const i = out.findIndex((l) => l.name === link.name && l.role === link.role)
      if (i < 0) out.push(link)
      else if (link.reference !== null) out[i] = { ...out[i]!, reference: link.reference }
    }
    return out
  },
  mergeEvent: (
    events: ReadonlyArray<TrackedEvent>,
    e: TradeflowMerge.IncomingEvent,
    now: number,
    fallbackDate: number
  ): ReadonlyArray<TrackedEvent> => {
    const key = TradeflowMerge.eventKey(e)
    const i = events.findIndex((x) => x.key === key)
    const existing = events[i]
    const vessel = <A extends object>(a: A) => e.vessel === undefined ? a : { ...a, vessel: e.vessel }
    if (existing === undefined) {
      const date = e.event_date ?? fallbackDate
      return [
        ...events,
        vessel({
          key,
          message: e.message,
          status_code: e.status_code,
          container_reference: e.container_reference,
          location: e.location,
          event_date: date,
          actual: e.actual,
          source: e.source,
          predicted_at: now,
          history: [{ actual: e.actual, source: e.source, event_date: date, predicted_at: now }]
        })
      ]
    }
    const date = e.event_date ?? existing.event_date ?? fallbackDate
    if (date === existing.event_date && e.actual === existing.actual && e.vessel === existing.vessel) return events
    const out = [...events]
    const { vessel: _vessel, ...rest } = existing
    out[i] = vessel({
      ...rest,
      message: e.message,
      event_date: date,
      actual: e.actual,
      predicted_at: now,
      history: [...existing.history, { actual: e.actual, source: e.source, event_date: date, predicted_at: now }]
    })
    return out
  },
  applyRecords: (
    t: Tradeflow,
    records: ReadonlyArray<TradeflowRecord>,
    options: TradeflowMerge.ApplyOptions
  ): Tradeflow => {
    let state = t
    for (const r of records) {
      const details: Record<string, unknown> = { ...state.details }
      for (const key of scalarKeys) {
        if (r[key] === undefined) continue
        if (key === "customer_name" && !options.keepCustomerName) continue
        details[key] = r[key]
      }
      if (r.configuration !== undefined) {
        details["configuration"] = { ...state.details.configuration, ...r.configuration }
      }
      if (r.references !== undefined) details["references"] = { ...state.details.references, ...r.references }
      state = {
        ...state,
        active: r.active !== false,
        containers: Reference.unionContainers(state.containers, r.container_reference),
        bill_of_lading_references: Reference.union(state.bill_of_lading_references, r.bill_of_lading_reference),
        booking_references: Reference.union(state.booking_references, r.booking_reference),
        details,
        partners: options.keepCustomerName
          ? Reference.mergeLinks(state.partners, TradeflowMerge.recordLinks(r))
          : state.partners
      }
    }
    let events = state.events
    for (const e of TradeflowMerge.collectEvents(records)) {
      events = Reference.mergeEvent(events, e, options.now, options.receivedAt)
    }
    return {
      ...state,
      events: [...events.filter((e) => e.source === "import"), ...events.filter((e) => e.source === "mock")]
    }
  },
  describeChanges: (before: Tradeflow, after: Tradeflow): string => {
    const parts: Array<string> = []
    const added = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => b.filter((x) => !a.includes(x))
    const containers = added(before.containers.map((c) => c.reference), after.containers.map((c) => c.reference))
    if (containers.length > 0) parts.push(`containers added ${containers.join(", ")}`)
    const bls = added(before.bill_of_lading_references, after.bill_of_lading_references)
    if (bls.length > 0) parts.push(`bills of lading added ${bls.join(", ")}`)
    const bookings = added(before.booking_references, after.booking_references)
    if (bookings.length > 0) parts.push(`bookings added ${bookings.join(", ")}`)
    const detail = (t: Tradeflow, k: string) => JSON.stringify((t.details as Record<string, unknown>)[k])
    const keys = [...new Set([...Object.keys(before.details), ...Object.keys(after.details)])].sort()
      .filter((k) => detail(before, k) !== detail(after, k))
    if (keys.length > 0) parts.push(`changed ${keys.join(", ")}`)
    const label = (l: PartnerLink) => l.role === null ? l.name : `${l.name} (${l.role})`
    const same = (a: PartnerLink, b: PartnerLink) => a.name === b.name && a.role === b.role
    const linked = after.partners.filter((l) => !before.partners.some((b) => same(b, l)))
    if (linked.length > 0) parts.push(`partners linked ${linked.map(label).join(", ")}`)
    const referenced = after.partners.filter((l) =>
      before.partners.some((b) => same(b, l) && b.reference !== l.reference)
    )
    if (referenced.length > 0) parts.push(`partner references changed ${referenced.map(label).join(", ")}`)
    const beforeEvents = new Map(before.events.map((e) => [e.key, e.history.length] as const))
    const events = after.events.filter((e) => beforeEvents.get(e.key) !== e.history.length).length
    if (events > 0) parts.push(`${events} event${events === 1 ? "" : "s"} new or changed`)
    return parts.join("; ")
  },
  releaseMockEvents: (t: Tradeflow, events: ReadonlyArray<MockEvent>, now: number): Tradeflow => {
    let mock: ReadonlyArray<TrackedEvent> = t.events.filter((e) => e.source === "mock")
    for (const e of events) mock = Reference.mergeEvent(mock, TradeflowMerge.fromMock(e), now, now)
    return { ...t, events: [...t.events.filter((e) => e.source === "import"), ...mock] }
  }
}

const scalarKeys: ReadonlyArray<keyof TradeflowRecord> = [
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
]

const decodeRecord = Schema.decodeUnknownSync(TradeflowRecord)
const containers = ["CSQU3054383", "MSKU9070323", "TGHU8512390", "MSCU1234565"]
const locations = ["NLRTM", "CNSHA", "Some depot", "nlrtm"]

const event = fc.record({
  message: fc.constantFrom("LOAD", "Vessel arrival", "Vessel departure", "gate out", "Gate Out!", "Weird thing"),
  container_reference: fc.constantFrom(...containers, ""),
  location_name: fc.constantFrom(...locations),
  event_date: fc.constantFrom("2026-01-01T00:00:00Z", "2026-01-02T10:00:00+02:00", "2026-01-03"),
  actual: fc.boolean()
}, { requiredKeys: ["message"] })

const entry = fc.oneof(
  fc.constantFrom(...containers),
  fc.record({
    reference: fc.constantFrom(...containers),
    custom_properties: fc.dictionary(
      fc.constantFrom("container_type", "seal", "weight"),
      fc.constantFrom("22G1", "x", 1)
    )
  }, { requiredKeys: ["reference"] })
)

const record = fc.record({
  container_reference: fc.array(entry, { maxLength: 5 }),
  bill_of_lading_reference: fc.array(fc.constantFrom("BL1", "BL2", "BL3"), { maxLength: 3 }),
  booking_reference: fc.array(fc.constantFrom("BK1", "BK2", "BK3"), { minLength: 1, maxLength: 3 }),
  vessel: fc.constantFrom("EVER GIVEN", "MSC OSCAR"),
  carrier_name: fc.constantFrom("Maersk", "MSC"),
  customer_name: fc.constantFrom("Acme", " ", "Globex"),
  customer_reference: fc.constantFrom("C1", "C2"),
  partners: fc.array(
    fc.record({
      name: fc.constantFrom("Acme", "Initech"),
      role: fc.constantFrom("customer", "supplier"),
      reference: fc.constantFrom("P1", "P2")
    }, { requiredKeys: ["name"] }),
    { maxLength: 3 }
  ),
  configuration: fc.dictionary(fc.constantFrom("a", "b"), fc.integer({ min: 0, max: 3 })),
  references: fc.dictionary(fc.constantFrom("po", "so"), fc.constantFrom("1", "2")),
  active: fc.boolean(),
  events: fc.array(event, { maxLength: 6 })
}, { requiredKeys: [] }).map((r) => decodeRecord({ tradeflow_reference: "TF-1", booking_reference: "BK0", ...r }))

const mockEvent: fc.Arbitrary<MockEvent> = fc.record({
  step: fc.nat(5),
  status_code: fc.constantFrom("GE" as const, "AE" as const, "VD" as const, "VA" as const),
  message: fc.constantFrom("Gate out empty", "Loaded", "Vessel departure", "Vessel arrival"),
  container_reference: fc.constantFrom(null, ...containers),
  location: fc.constantFrom("NLRTM", "CNSHA", "SGSIN"),
  event_date: fc.integer({ min: 0, max: 5 }),
  actual: fc.boolean(),
  vessel: fc.constantFrom("EVER GIVEN", "MSC OSCAR")
}, { requiredKeys: ["step", "status_code", "message", "container_reference", "location", "event_date", "actual"] })

const options = fc.record({
  now: fc.integer({ min: 10, max: 20 }),
  receivedAt: fc.integer({ min: 0, max: 3 }),
  keepCustomerName: fc.boolean()
})

/** A stored state built by the reference model from earlier posts and mock releases. */
const stored: fc.Arbitrary<Tradeflow> = fc.array(
  fc.oneof(
    fc.tuple(fc.constant("post" as const), fc.array(record, { maxLength: 3 }), options),
    fc.tuple(fc.constant("mock" as const), fc.array(mockEvent, { maxLength: 6 }), options)
  ),
  { maxLength: 4 }
).map((steps) =>
  steps.reduce(
    (t, [kind, items, o]) =>
      kind === "post"
        ? Reference.applyRecords(t, items as ReadonlyArray<TradeflowRecord>, o)
        : Reference.releaseMockEvents(t, items as ReadonlyArray<MockEvent>, o.now),
    TradeflowMerge.empty("org", "TF-1", 0)
  )
)

describe("TradeflowMerge equals the reference model", () => {
  it.prop("applyRecords", [stored, fc.array(record, { maxLength: 6 }), options], ([t, records, o]) => {
    assert.deepStrictEqual(TradeflowMerge.applyRecords(t, records, o), Reference.applyRecords(t, records, o))
  }, { fastCheck: { numRuns: 300 } })

  it.prop(
    "releaseMockEvents",
    [stored, fc.array(mockEvent, { maxLength: 10 }), fc.integer({ min: 10, max: 20 })],
    ([t, events, now]) => {
      assert.deepStrictEqual(
        TradeflowMerge.releaseMockEvents(t, events, now),
        Reference.releaseMockEvents(t, events, now)
      )
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop("describeChanges", [stored, fc.array(record, { maxLength: 6 }), options], ([t, records, o]) => {
    const after = Reference.applyRecords(t, records, o)
    assert.strictEqual(TradeflowMerge.describeChanges(t, after), Reference.describeChanges(t, after))
  }, { fastCheck: { numRuns: 300 } })

  it.prop("mergeEvent answers the list itself when nothing changes", [stored, event], ([t, input]) => {
    const e = TradeflowMerge.fromInput(
      decodeRecord({ tradeflow_reference: "TF-1", booking_reference: "B", events: [input] }).events![0]!
    )
    const once = TradeflowMerge.mergeEvent(t.events, e, 1, 0)
    assert.deepStrictEqual(once, Reference.mergeEvent(t.events, e, 1, 0))
    assert.strictEqual(TradeflowMerge.mergeEvent(once, e, 2, 0), once)
  })

  it.prop("a Steps merge pauses every pauseEvery items and ends as run does", [
    stored,
    fc.array(record, { maxLength: 6 }),
    options
  ], ([t, records, o]) => {
    const steps = TradeflowMerge.applyRecordsSteps(t, records, o)
    let next = steps.next()
    while (next.done !== true) next = steps.next()
    assert.deepStrictEqual(next.value, TradeflowMerge.applyRecords(t, records, o))
  })
})

/** An object whose `field` counts its reads in `reads`. */
const counted = <A extends object>(value: A, field: keyof A, reads: { n: number }): A => {
  const { [field]: v, ...rest } = value
  return Object.defineProperty(rest, field, { get: () => (reads.n++, v), enumerable: true }) as A
}

const containerNumber = (i: number) => `ABCU${String(i).padStart(7, "0")}`

describe("TradeflowMerge work is linear", () => {
  const n = 4_000

  it("containers, links, bills of lading and events: identities read O(n) times, not once per pair", () => {
    const reads = { n: 0 }
    const storedEvents = TradeflowMerge.run(TradeflowMerge.mergeEvents(
      [],
      Array.from({ length: n }, (_, i) => ({
        message: "Gate out empty",
        status_code: "GE",
        container_reference: containerNumber(i),
        location: "NLRTM",
        event_date: 5,
        actual: true,
        source: "import" as const
      })),
      1,
      0
    ))
    const t: Tradeflow = {
      ...TradeflowMerge.empty("org", "TF-1", 0),
      containers: Array.from({ length: n }, (_, i) => counted({ reference: containerNumber(i) }, "reference", reads)),
      partners: Array.from(
        { length: n },
        (_, i) => counted({ name: `P${i}`, role: "customer", reference: null }, "name", reads)
      ),
      events: storedEvents.map((e) => counted(e, "key", reads))
    }
    const r = decodeRecord({
      tradeflow_reference: "TF-1",
      container_reference: Array.from({ length: n }, (_, i) => containerNumber(i + n / 2)),
      bill_of_lading_reference: Array.from({ length: n }, (_, i) => `BL${i % (n / 2)}`),
      partners: Array.from({ length: n }, (_, i) => ({ name: `P${i + n / 2}`, role: "customer" })),
      events: Array.from({ length: n }, (_, i) => ({
        message: "Gate out empty",
        container_reference: containerNumber(i + n / 2),
        location_name: "NLRTM",
        event_date: "2026-01-01T00:00:00Z",
        actual: true
      }))
    })
    const merged = TradeflowMerge.applyRecords(t, [r], { now: 2, receivedAt: 0, keepCustomerName: true })
    assert.strictEqual(merged.containers.length, n * 1.5)
    assert.strictEqual(merged.partners.length, n * 1.5)
    assert.strictEqual(merged.events.length, n * 1.5)
    assert.strictEqual(merged.bill_of_lading_references.length, n / 2)
    assert.isAtMost(reads.n, 3 * 3 * n)
  })

  it("mock releases and change descriptions: O(n) reads of the stored identities", () => {
    const reads = { n: 0 }
    const journey: ReadonlyArray<MockEvent> = Array.from({ length: n }, (_, i) => ({
      step: 0,
      status_code: "GE",
      message: "Gate out empty",
      container_reference: containerNumber(i),
      location: "NLRTM",
      event_date: 5,
      actual: true
    }))
    const released = TradeflowMerge.releaseMockEvents(
      TradeflowMerge.empty("org", "TF-1", 0),
      journey.slice(0, n / 2),
      1
    )
    const before: Tradeflow = {
      ...released,
      events: released.events.map((e) => counted(e, "key", reads)),
      partners: Array.from(
        { length: n },
        (_, i) => counted({ name: `P${i}`, role: "customer", reference: null }, "name", reads)
      )
    }
    const again = TradeflowMerge.releaseMockEvents(before, journey.map((e) => ({ ...e, event_date: 6 })).reverse(), 2)
    assert.strictEqual(again.events.length, n)
    assert.strictEqual(again.events.filter((e) => e.history.length === 2).length, n / 2)
    const after: Tradeflow = {
      ...again,
      partners: [
        ...before.partners,
        ...Array.from({ length: n / 2 }, (_, i) => ({ name: `P${n + i}`, role: "customer", reference: null }))
      ]
    }
    assert.match(
      TradeflowMerge.describeChanges(before, after),
      new RegExp(`^partners linked .*; ${n} events new or changed$`)
    )
    assert.isAtMost(reads.n, 3 * 3 * n)
  })
})
