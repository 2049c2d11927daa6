/**
 * The data of the `GET /dcsa/v2/events` tests: organisations whose tradeflows carry milestones of
 * every status code (posted `events`, a second post moving an arrival, a deactivated tradeflow,
 * one tracked by a carrier in memory that names a vessel and a voyage), another organisation with
 * the same content, an empty one, and a UAT one; and the conformance scenarios of DCSA's tool for
 * a 2.2 publisher (`dcsaorg/Conformance-Gateway`, `tnt/.../v220/TntScenarioListBuilder`), with the
 * values of this data.
 */
import { assert } from "@effect/vitest"
import { Tracker, type TrackingEvent, type TrackingSource, Worker } from "@tradeflow/core"
import { Effect } from "effect"
import { newKey, production, type Received, send, uat } from "./Fixture.js"

const day = 86_400_000
const now = Date.now()
const at = (days: number) => new Date(now + days * day).toISOString()

export const booking = "ABC123123123"
export const bill = "reserved-HHL123"
export const container = "APZU4812090"
export const otherContainer = "MSCU1234565"
export const trackedContainer = "MSKU1234565"
export const imo = "9321483"
export const voyage = "2103S"

/** A carrier in memory that knows a departure and a loading of vessel 9321483 on voyage 2103S. */
export const carrier: TrackingSource.TrackingSource = {
  id: "maersk",
  carriers: ["MAEU"],
  container_prefixes: ["MSKU"],
  queries: ["equipment"],
  fetch: (request) => {
    const call = { mode: "VESSEL", vessel_name: "KING OF THE SEAS", vessel_imo: imo, voyage }
    const event = (
      id: string,
      fields:
        & Pick<
          TrackingEvent.TrackingEvent,
          "event_type" | "event_code" | "status_code" | "message" | "container_reference"
        >
        & Partial<TrackingEvent.TrackingEvent>
    ): TrackingEvent.TrackingEvent => ({
      source: "maersk",
      event_id: id,
      updated_at: now - 2 * day,
      retracted: false,
      classifier: "ACT" as const,
      location: "CNSHA",
      event_date: now - 3 * day,
      bookings: [],
      bills_of_lading: [],
      raw: null,
      transport_call: call,
      ...fields
    })
    return Effect.succeed({
      status: "found" as const,
      events: [
        event("load-1", {
          event_type: "EQUIPMENT",
          event_code: "LOAD",
          status_code: "AE",
          message: "Loaded on vessel",
          container_reference: request.query.equipment ?? null
        }),
        event("depa-1", {
          event_type: "TRANSPORT",
          event_code: "DEPA",
          status_code: "VD",
          message: "Vessel departure",
          container_reference: null,
          event_date: now - 2 * day - 3_600_000
        })
      ],
      malformed: [],
      high_water: now - 2 * day
    })
  }
}

/** The first post of TF-1: a milestone of each status code, and one unclassified. */
export const journey = (reference: string) => ({
  tradeflow_reference: reference,
  container_reference: container,
  booking_reference: booking,
  bill_of_lading_reference: bill,
  vessel: "EVER GIVEN",
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  events: [
    {
      message: "Gate out empty",
      container_reference: container,
      location_name: "CNSHA",
      event_date: at(-6),
      actual: true
    },
    {
      message: "Gate in full",
      container_reference: container,
      location_name: "CNSHA",
      event_date: at(-5),
      actual: true
    },
    {
      message: "Loaded on vessel",
      container_reference: container,
      location_name: "CNSHA",
      event_date: at(-4),
      actual: true
    },
    { message: "Vessel departure", location_name: "CNSHA", event_date: at(-3), actual: true },
    { message: "Vessel arrival", location_name: "NLRTM", event_date: at(20) },
    { message: "Discharge", container_reference: container, location_name: "NLRTM", event_date: at(21) },
    { message: "Gate out", container_reference: container, location_name: "NLRTM", event_date: at(22) },
    { message: "Empty returned", container_reference: container, location_name: "Rotterdam depot", event_date: at(27) },
    { message: "Customs hold", container_reference: container, location_name: "NLRTM", event_date: at(21) }
  ]
})

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

const post = (key: string, body: unknown, host = production, path = "/downstream/tradeflows") =>
  Effect.gen(function*() {
    const r = yield* send("POST", path, { host, auth: key, json: body })
    assert.strictEqual(r.status, 202, r.text)
    yield* drain
    yield* Effect.sleep("5 millis")
  })

/** A DCSA 2.2 event as the tests read it. */
export interface Event {
  readonly eventID: string
  readonly eventType: "TRANSPORT" | "EQUIPMENT"
  readonly eventCreatedDateTime: string
  readonly eventDateTime: string
  readonly eventClassifierCode: string
  readonly transportEventTypeCode?: string
  readonly equipmentEventTypeCode?: string
  readonly equipmentReference?: string
  readonly emptyIndicatorCode?: string
  readonly eventLocation?: { readonly UNLocationCode?: string; readonly locationName?: string }
  readonly transportCall?: {
    readonly transportCallID: string
    readonly UNLocationCode?: string
    readonly exportVoyageNumber?: string
    readonly carrierVoyageNumber?: string
    readonly vessel?: { readonly vesselIMONumber: string; readonly vesselName?: string }
  }
  readonly documentReferences?: ReadonlyArray<
    { readonly documentReferenceType: string; readonly documentReferenceValue: string }
  >
  readonly references?: ReadonlyArray<{ readonly referenceType: string; readonly referenceValue: string }>
}

/** What the tests need of the data: the keys, and the two instants the posts of TF-1 were recorded at. */
export interface Data {
  readonly key: string
  readonly otherKey: string
  readonly emptyKey: string
  readonly uatKey: string
  /** Every event of the organisation, in order (one request with the largest limit). */
  readonly all: ReadonlyArray<Event>
  readonly otherIds: ReadonlyArray<string>
  /** When the first post's readings were recorded, and when the second's. */
  readonly first: string
  readonly second: string
}

/** `GET /dcsa/v2/events?<query>` with a key (of the production host unless told). */
export const get = (key: string, query: string, options: { readonly host?: string; readonly path?: string } = {}) =>
  send("GET", `${options.path ?? "/dcsa/v2/events"}${query === "" ? "" : `?${query}`}`, {
    host: options.host ?? production,
    auth: key
  })

/** The events of a 200 answer. */
export const eventsOf = (r: Received): ReadonlyArray<Event> => {
  assert.strictEqual(r.status, 200, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/json/)
  assert.strictEqual(r.headers["api-version"], "2.2.0")
  assert.isArray(r.body)
  return r.body as ReadonlyArray<Event>
}

const everything = "limit=1000"

/** Posts the data once per app (the tests of a file share one). */
export const dataset = (() => {
  let built: Data | undefined
  return Effect.suspend(() =>
    built !== undefined ? Effect.succeed(built) : Effect.tap(build, (data) =>
      Effect.sync(() => {
        built = data
      }))
  )
})()

const build = Effect.gen(function*() {
  const a = yield* newKey("production")
  const b = yield* newKey("production")
  const c = yield* newKey("production")
  const u = yield* newKey("uat")
  yield* post(a.key, journey("TF-1"))
  yield* post(a.key, [
    {
      tradeflow_reference: "TF-1",
      container_reference: container,
      events: [{ message: "Vessel arrival", location_name: "NLRTM", event_date: at(22) }]
    },
    {
      tradeflow_reference: "TF-2",
      container_reference: otherContainer,
      booking_reference: "OTHER-BK",
      events: [
        {
          message: "Gate in",
          container_reference: otherContainer,
          location_name: "DEHAM",
          event_date: at(-1),
          actual: true
        },
        { message: "Vessel arrival", container_reference: otherContainer, location_name: "DEHAM", event_date: at(9) }
      ]
    },
    { tradeflow_reference: "TF-3", container_reference: trackedContainer, carrier_scac: "MAEU" }
  ])
  const deleted = yield* send("DELETE", "/downstream/tradeflows/TF-2", { auth: a.key })
  assert.strictEqual(deleted.status, 200, deleted.text)
  yield* drain
  const tracker = yield* Tracker.Tracker
  let all: ReadonlyArray<Event> = []
  for (let i = 0; i < 200 && !all.some((e) => e.transportCall?.exportVoyageNumber === voyage); i++) {
    yield* tracker.tick
    yield* drain
    all = eventsOf(yield* get(a.key, everything))
    if (i > 0) yield* Effect.sleep("20 millis")
  }
  yield* post(b.key, journey("TF-1"))
  yield* post(u.key, journey("TF-U"), uat, "/v3/downstream/tradeflows")
  const otherIds = eventsOf(yield* get(b.key, everything)).map((e) => e.eventID)
  const instants = [...new Set(all.map((e) => e.eventCreatedDateTime))]
  return {
    key: a.key,
    otherKey: b.key,
    emptyKey: c.key,
    uatKey: u.key,
    all,
    otherIds,
    first: instants[0]!,
    second: instants[1]!
  }
})

/** The ids of a list of events. */
export const ids = (events: ReadonlyArray<Event>) => events.map((e) => e.eventID)

/** The document references of a type. */
export const refs = (e: Event, type: "BKG" | "TRD") =>
  (e.documentReferences ?? []).filter((r) => r.documentReferenceType === type).map((r) => r.documentReferenceValue)

/** A filter scenario: its query, and which events of the whole answer it selects. */
export interface Scenario {
  readonly query: string
  readonly selects: (e: Event) => boolean
  /** Whether the data holds events it selects (DCSA's tool wants every answer not empty). */
  readonly found: boolean
}

/** The date of a `T…Z` instant at another offset (+01:00), as DCSA's scenarios write them. */
export const atOffset = (instant: string, hours: number): string => {
  const shifted = new Date(Date.parse(instant) + hours * 3_600_000).toISOString().replace(/Z$/, "")
  return `${shifted}${hours >= 0 ? "+" : "-"}${String(Math.abs(hours)).padStart(2, "0")}:00`
}

const q = encodeURIComponent

/**
 * The conformance scenarios of one event type (a transport call id of the data given), each with
 * `eventType=<type>` first, and combinations of filters.
 */
export const scenarios = (data: Data, type: "TRANSPORT" | "EQUIPMENT" | "SHIPMENT"): ReadonlyArray<Scenario> => {
  const created = (e: Event) => Date.parse(e.eventCreatedDateTime)
  const ofType = (e: Event) => e.eventType === type
  const call = data.all.find((e) => e.transportCall?.exportVoyageNumber === voyage)!.transportCall!.transportCallID
  const atLocation = (code: string) => (e: Event) =>
    e.transportCall?.UNLocationCode === code || e.eventLocation?.UNLocationCode === code
  const ofContainer = (reference: string) => (e: Event) =>
    e.equipmentReference === reference ||
    (e.references ?? []).some((r) => r.referenceType === "EQ" && r.referenceValue === reference)
  const first = Date.parse(data.first)
  const second = Date.parse(data.second)
  const common: ReadonlyArray<readonly [string, (e: Event) => boolean]> = [
    [`eventCreatedDateTime:eq=${q(data.first)}`, (e) => created(e) === first],
    [`eventCreatedDateTime=${q(atOffset(data.second, 1))}`, (e) => created(e) === second],
    [
      `eventCreatedDateTime:gt=${q("2001-01-01T14:00:56+01:00")}&eventCreatedDateTime:lt=${
        q("2050-01-30T14:01:56+01:00")
      }`,
      () => true
    ],
    [
      `eventCreatedDateTime:gt=${q(data.first)}&eventCreatedDateTime:lte=${q(data.second)}`,
      (e) => created(e) > first && created(e) <= second
    ],
    [
      `eventCreatedDateTime:gte=${q(atOffset(data.first, -2))}&eventCreatedDateTime:lt=${q(data.second)}`,
      (e) => created(e) >= first && created(e) < second
    ],
    [
      `eventCreatedDateTime:gte=${q(data.first)}&eventCreatedDateTime:lte=${q(data.first)}`,
      (e) => created(e) === first
    ],
    [`carrierBookingReference=${booking}`, (e) => refs(e, "BKG").includes(booking)],
    [`transportDocumentReference=${bill}`, (e) => refs(e, "TRD").includes(bill)],
    [`equipmentReference=${container}`, ofContainer(container)],
    [`equipmentReference=${otherContainer}`, ofContainer(otherContainer)]
  ]
  const atCalls: ReadonlyArray<readonly [string, (e: Event) => boolean]> = [
    [`transportCallID=${call}`, (e) => e.transportCall?.transportCallID === call],
    [`vesselIMONumber=${imo}`, (e) => e.transportCall?.vessel?.vesselIMONumber === imo],
    [`exportVoyageNumber=${voyage}`, (e) => e.transportCall?.exportVoyageNumber === voyage],
    [`carrierVoyageNumber=${voyage}`, (e) => e.transportCall?.carrierVoyageNumber === voyage],
    ["carrierServiceCode=FE1", () => false],
    ["UNLocationCode=NLRTM", atLocation("NLRTM")],
    ["UNLocationCode=CNSHA", atLocation("CNSHA")]
  ]
  const own: ReadonlyArray<readonly [string, (e: Event) => boolean]> = type === "TRANSPORT"
    ? [
      ["transportEventTypeCode=ARRI", (e) => e.transportEventTypeCode === "ARRI"],
      ["transportEventTypeCode=ARRI,DEPA", () => true],
      [
        `transportEventTypeCode=DEPA&UNLocationCode=CNSHA&vesselIMONumber=${imo}`,
        (e) =>
          e.transportEventTypeCode === "DEPA" && atLocation("CNSHA")(e) &&
          e.transportCall?.vessel?.vesselIMONumber === imo
      ]
    ]
    : type === "EQUIPMENT"
    ? [
      ["equipmentEventTypeCode=LOAD", (e) => e.equipmentEventTypeCode === "LOAD"],
      ["equipmentEventTypeCode=GTIN,GTOT", (e) => ["GTIN", "GTOT"].includes(e.equipmentEventTypeCode ?? "")],
      [
        `equipmentEventTypeCode=GTIN&equipmentReference=${container}&carrierBookingReference=${booking}`,
        (e) =>
          e.equipmentEventTypeCode === "GTIN" && e.equipmentReference === container && refs(e, "BKG").includes(booking)
      ]
    ]
    : [
      ["shipmentEventTypeCode=DRFT", () => false],
      ["documentTypeCode=SHI", () => false]
    ]
  return [...common, ...(type === "SHIPMENT" ? [] : atCalls), ...own].map(([query, selects]) => {
    const matches = (e: Event) => ofType(e) && selects(e)
    return { query: `eventType=${type}&${query}`, selects: matches, found: data.all.some(matches) }
  })
}

/** The invalid requests of DCSA's scenarios and more, each with the parameter its 400 names. */
export const badRequests: ReadonlyArray<readonly [query: string, parameter: string]> = [
  ["eventType=INVALID_SHIPMENT_EVENT", "eventType"],
  ["eventType=INVALID_TRANSPORT_EVENT", "eventType"],
  ["eventType=INVALID_EQUIPMENT_EVENT", "eventType"],
  ["shipmentEventTypeCode=INVALID_SHIPMENT_EVENT_TYPE_CODE", "shipmentEventTypeCode"],
  ["documentTypeCode=INVALID_DOCUMENT_TYPE_CODE", "documentTypeCode"],
  ["eventType=SHIPMENT&transportEventTypeCode=ARRV", "transportEventTypeCode"],
  ["eventType=SHIPMENT&transportEventTypeCode=ARRI", "transportEventTypeCode"],
  ["eventType=TRANSPORT&shipmentEventTypeCode=DRFT", "shipmentEventTypeCode"],
  ["eventType=EQUIPMENT&shipmentEventTypeCode=DRFT", "shipmentEventTypeCode"],
  ["equipmentEventTypeCode=INVALID_EQUIPMENT_TYPE_CODE", "equipmentEventTypeCode"],
  ["eventCreatedDateTime:gte=yesterday", "eventCreatedDateTime:gte"],
  ["eventCreatedDateTime=2021-04-01", "eventCreatedDateTime"],
  ["eventCreatedDateTime:lt=2021-04-01T14:12:56", "eventCreatedDateTime:lt"],
  ["eventCreatedDateTime:eq=2021-13-01T14:12:56Z", "eventCreatedDateTime:eq"],
  ["limit=0", "limit"],
  ["limit=1001", "limit"],
  ["limit=ten", "limit"],
  ["vesselIMONumber=93214", "vesselIMONumber"],
  ["UNLocationCode=Rotterdam", "UNLocationCode"],
  ["sort=eventCreatedDateTime:DESC", "sort"],
  ["bookingReference=ABC123123123", "bookingReference"],
  ["transportDocumentID=85943567-eedb-98d3-f4ed-aed697474ed4", "transportDocumentID"],
  ["scheduleID=9679a405-3316-42a5-8533-aba000f5689c", "scheduleID"],
  ["cursor=nonsense", "cursor"]
]
