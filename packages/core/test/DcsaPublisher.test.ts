import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer, Schema } from "effect"
import * as Cursor from "../src/Cursor.js"
import * as DcsaPublisher from "../src/DcsaPublisher.js"
import * as DcsaTnt22 from "../src/DcsaTnt22.js"
import { vesselNamed } from "../src/internal/vessel.js"
import { JobQueue } from "../src/JobQueue.js"
import * as Storage from "../src/Storage.js"
import type { Prediction, TrackedEvent, Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import { commitOf, freshId } from "../test-kit/index.js"

const secret = Cursor.layerSecret("dcsa-publisher-test-secret")
const publisherLayer = DcsaPublisher.layer.pipe(Layer.provide(secret), Layer.provideMerge(Storage.layerMemory))

const day = 86_400_000
const T0 = Date.UTC(2026, 2, 1)

/** A milestone with these readings (oldest first); its current reading is the last one that counts. */
const milestone = (
  fields: {
    readonly status: string | null
    readonly container?: string | null
    readonly location?: string | null
    readonly voyage?: string
    readonly vessel?: string
    readonly vessel_imo?: string
    readonly source?: string
    readonly message?: string
    readonly key?: string
  },
  history: ReadonlyArray<Partial<Prediction> & Pick<Prediction, "event_date" | "predicted_at">>
): TrackedEvent => {
  const readings = history.map((h): Prediction => ({ actual: false, source: fields.source ?? "import", ...h }))
  const current = TradeflowMerge.currentReading(readings) ?? readings[readings.length - 1]!
  const base = {
    message: fields.message ?? fields.status ?? "Stuffed",
    status_code: fields.status,
    container_reference: fields.container === undefined ? "MSCU1234565" : fields.container,
    location: fields.location === undefined ? "NLRTM" : fields.location,
    source: fields.source ?? "import",
    ...(fields.voyage === undefined ? {} : { voyage: fields.voyage })
  }
  return {
    key: fields.key ?? TradeflowMerge.eventKey(base),
    ...base,
    event_date: current.event_date,
    actual: current.actual,
    predicted_at: current.predicted_at,
    history: readings,
    ...(fields.vessel === undefined ? {} : { vessel: fields.vessel }),
    ...(fields.vessel_imo === undefined ? {} : { vessel_imo: fields.vessel_imo })
  }
}

const tradeflow = (organisation_id: string, reference: string, fields: Partial<Tradeflow> = {}): Tradeflow => ({
  ...TradeflowMerge.empty(organisation_id, reference, T0),
  booking_references: ["BK-1"],
  bill_of_lading_references: ["BL-1"],
  ...fields
})

/** Stores the tradeflows (one commit of a job that changes nothing else). */
const save = (...tradeflows: ReadonlyArray<Tradeflow>) =>
  Effect.gen(function*() {
    const organisation_id = tradeflows[0]!.organisation_id
    const queue = yield* JobQueue
    const outcome = yield* queue.enqueue({
      organisation_id,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: T0
    })
    if (outcome._tag !== "Enqueued") return assert.fail("not enqueued")
    const store = yield* TradeflowStore
    assert.isTrue(yield* store.commit(commitOf(outcome.id, organisation_id, { upserts: tradeflows })))
  })

const events = (query: DcsaPublisher.EventQuery) => Effect.flatMap(DcsaPublisher.DcsaPublisher, (p) => p.events(query))

const all = (organisation_id: string, filters: DcsaPublisher.EventFilters = {}) =>
  Effect.map(events({ organisation_id, ...filters, limit: DcsaPublisher.maxLimit }), (page) => {
    assert.isUndefined(page.next_cursor)
    return page.events
  })

/** Every page from the first with `limit`, following next_cursor; answers the events in order and the page count. */
const walk = (organisation_id: string, limit: number, filters: DcsaPublisher.EventFilters = {}) =>
  Effect.gen(function*() {
    const out: Array<DcsaPublisher.Event> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page: DcsaPublisher.EventPage = yield* events({ organisation_id, ...filters, limit, cursor })
      pages++
      assert.isAtMost(page.events.length, limit)
      if (page.next_cursor !== undefined) assert.strictEqual(page.events.length, limit)
      out.push(...page.events)
      cursor = page.next_cursor
    } while (cursor !== undefined)
    return { events: out, pages }
  })

const json = <A>(value: A): A => JSON.parse(JSON.stringify(value))

/** When the journey's readings were recorded: after its actual events happened. */
const R0 = T0 + 4 * day

/** One milestone of each status code at its place, one reading each (actual at the port of loading). */
const journey = (organisation_id: string, reference: string) =>
  tradeflow(organisation_id, reference, {
    details: { vessel: "EVER GIVEN" },
    events: [
      milestone({ status: "GE", location: "CNSHA" }, [{ event_date: T0, predicted_at: R0 + 1, actual: true }]),
      milestone({ status: "GN", location: "CNSHA" }, [{ event_date: T0 + day, predicted_at: R0 + 2, actual: true }]),
      milestone({ status: "AE", location: "CNSHA", voyage: "012W" }, [{
        event_date: T0 + 2 * day,
        predicted_at: R0 + 3,
        actual: true
      }]),
      milestone({ status: "VD", container: null, location: "CNSHA", voyage: "012W" }, [{
        event_date: T0 + 3 * day,
        predicted_at: R0 + 4,
        actual: true
      }]),
      milestone({ status: "VA", container: null, location: "NLRTM", voyage: "012W" }, [{
        event_date: T0 + 30 * day,
        predicted_at: R0 + 5
      }]),
      milestone({ status: "UV", location: "NLRTM", voyage: "012W" }, [{
        event_date: T0 + 31 * day,
        predicted_at: R0 + 6
      }]),
      milestone({ status: "GT", location: "NLRTM" }, [{ event_date: T0 + 32 * day, predicted_at: R0 + 7 }]),
      milestone({ status: "GR", location: "Rotterdam depot" }, [{ event_date: T0 + 37 * day, predicted_at: R0 + 8 }]),
      milestone({ status: null, message: "Customs hold" }, [{ event_date: T0 + 33 * day, predicted_at: R0 + 9 }])
    ]
  })

layer(publisherLayer)("DcsaPublisher", (it) => {
  it.effect("each status code as its 2.2 event; unclassified milestones are left out", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* save(journey(org, "PO-1"))
      const published = yield* all(org)
      const codeOf = (e: DcsaPublisher.Event) =>
        e.eventType === "TRANSPORT" ? e.transportEventTypeCode : `${e.equipmentEventTypeCode} ${e.emptyIndicatorCode}`
      assert.deepStrictEqual(published.map(codeOf), [
        "GTOT EMPTY",
        "GTIN LADEN",
        "LOAD LADEN",
        "DEPA",
        "ARRI",
        "DISC LADEN",
        "GTOT LADEN",
        "GTIN EMPTY"
      ])
      assert.deepStrictEqual(published.map((e) => e.eventClassifierCode), [
        "ACT",
        "ACT",
        "ACT",
        "ACT",
        "EST",
        "EST",
        "EST",
        "EST"
      ])
      const vessel = vesselNamed("EVER GIVEN")
      const [ge, , load, depa, arri, , , gr] = published
      assert.deepStrictEqual(json(ge), {
        eventID: ge!.eventID,
        eventType: "EQUIPMENT",
        eventCreatedDateTime: new Date(R0 + 1).toISOString(),
        eventDateTime: new Date(T0).toISOString(),
        eventClassifierCode: "ACT",
        equipmentEventTypeCode: "GTOT",
        equipmentReference: "MSCU1234565",
        emptyIndicatorCode: "EMPTY",
        eventLocation: { UNLocationCode: "CNSHA" },
        documentReferences: [
          { documentReferenceType: "BKG", documentReferenceValue: "BK-1" },
          { documentReferenceType: "TRD", documentReferenceValue: "BL-1" }
        ]
      })
      const call = {
        modeOfTransport: "VESSEL" as const,
        UNLocationCode: "CNSHA",
        carrierVoyageNumber: "012W",
        exportVoyageNumber: "012W",
        vessel: { vesselIMONumber: vessel.imo_number, vesselName: "EVER GIVEN" }
      }
      assert.deepInclude(load!.transportCall!, call)
      assert.deepInclude(depa!.transportCall!, call)
      assert.strictEqual(depa!.transportCall!.transportCallID, load!.transportCall!.transportCallID)
      assert.notStrictEqual(arri!.transportCall!.transportCallID, depa!.transportCall!.transportCallID)
      assert.isUndefined((depa as DcsaPublisher.TransportEvent).references)
      assert.isUndefined(ge!.transportCall)
      assert.deepStrictEqual((gr as DcsaPublisher.EquipmentEvent).eventLocation, { locationName: "Rotterdam depot" })
      for (const e of published) assert.isTrue(Schema.is(DcsaPublisher.Event)(e), JSON.stringify(e))
    }))

  it.effect("every visible reading of every milestone of every tradeflow, active or not, is one event", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const vd = milestone({ status: "VD", container: null, source: "carrier" }, [
        { event_date: T0 + day, predicted_at: T0 + 10, event_id: "e1", updated_at: 1 },
        { event_date: T0 + day, predicted_at: T0 + 11, event_id: "e1", updated_at: 2 },
        { event_date: T0 + 2 * day, predicted_at: T0 + 12, event_id: "e1", updated_at: 3, retracted: true },
        { event_date: T0 + 3 * day, predicted_at: T0 + 13, event_id: "e1", updated_at: 4, actual: true }
      ])
      const withdrawn = milestone({ status: "VA", container: null }, [{ event_date: T0, predicted_at: T0 + 14 }])
      const load = milestone({ status: "AE", container: "TGHU1234563" }, [
        { event_date: T0, predicted_at: T0 + 20 },
        { event_date: T0 + day, predicted_at: T0 + 21 }
      ])
      yield* save(
        tradeflow(org, "PO-A", { events: [vd], retracted_events: [withdrawn] }),
        tradeflow(org, "PO-B", { active: false, events: [load] })
      )
      const published = yield* all(org)
      assert.deepStrictEqual(
        published.map((e) => [e.eventCreatedDateTime, e.eventDateTime, e.eventClassifierCode]),
        [
          [T0 + 10, T0 + day, "EST"],
          [T0 + 13, T0 + 3 * day, "ACT"],
          [T0 + 20, T0, "EST"],
          [T0 + 21, T0 + day, "EST"]
        ].map(([created, at, classifier]) => [
          new Date(created as number).toISOString(),
          new Date(at as number).toISOString(),
          classifier
        ])
      )
      assert.strictEqual(new Set(published.map((e) => e.eventID)).size, 4)
    }))

  it.effect("an event's id is the same on every read, new in another organisation, kept when readings follow", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const other = freshId("org")
      const first = journey(org, "PO-1")
      yield* save(first)
      yield* save(journey(other, "PO-1"))
      const once = yield* all(org)
      const again = yield* all(org)
      assert.deepStrictEqual(again, once)
      const ids = once.map((e) => e.eventID)
      for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      const elsewhere = (yield* all(other)).map((e) => e.eventID)
      assert.strictEqual(elsewhere.length, ids.length)
      assert.deepStrictEqual(elsewhere.filter((id) => ids.includes(id)), [])
      const va = first.events[4]!
      const later = {
        ...va,
        history: [...va.history, { actual: true, source: "import", event_date: T0 + 29 * day, predicted_at: R0 + 50 }]
      }
      yield* save({ ...first, events: first.events.map((e) => e === va ? later : e) })
      const grown = yield* all(org)
      assert.deepStrictEqual(grown.slice(0, ids.length), once)
      assert.strictEqual(grown.length, ids.length + 1)
      assert.deepStrictEqual(grown[ids.length]!.eventClassifierCode, "ACT")
    }))

  it.effect("identical readings of one milestone (one post sending a date, another, the first again) get distinct ids", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const same = { event_date: T0, predicted_at: T0 + 1 }
      yield* save(tradeflow(org, "PO-1", {
        events: [milestone({ status: "GT" }, [same, { event_date: T0 + day, predicted_at: T0 + 1 }, same])]
      }))
      assert.strictEqual(new Set((yield* all(org)).map((e) => e.eventID)).size, 3)
    }))

  it.effect("DCSA 2.2's own reader (DcsaTnt22.decodeEvents) reads every published event back as its milestone", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const t = journey(org, "PO-1")
      yield* save(t)
      const published = json(yield* all(org))
      const read = DcsaTnt22.decodeEvents(published, { source: "us" })
      assert.deepStrictEqual(read.malformed, [])
      const classified = t.events.filter((e) => e.status_code !== null)
      assert.deepStrictEqual(
        read.events.map((e) => [e.status_code, e.container_reference, e.location, e.bookings, e.bills_of_lading]),
        classified.map((e) => [
          e.status_code,
          e.status_code === "VD" || e.status_code === "VA" ? null : e.container_reference,
          e.location,
          ["BK-1"],
          ["BL-1"]
        ])
      )
      assert.deepStrictEqual(read.events.map((e) => e.event_id), published.map((e) => e.eventID))
    }))

  it.effect("an organisation without tradeflows has no events", () =>
    Effect.map(events({ organisation_id: freshId("org") }), (page) => {
      assert.deepStrictEqual(page, { events: [], next_cursor: undefined })
    }))

  it.effect("a cursor is refused when altered, for other filters or for another organisation; limit may change", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* save(journey(org, "PO-1"))
      const first = yield* events({ organisation_id: org, eventTypes: ["EQUIPMENT"], limit: 2 })
      const cursor = first.next_cursor!
      const refused = (query: Partial<DcsaPublisher.EventQuery>) =>
        Effect.map(
          Effect.flip(events({ organisation_id: org, eventTypes: ["EQUIPMENT"], cursor, ...query })),
          (error) => assert.strictEqual(error._tag, "InvalidCursor")
        )
      const [id, ...signed] = cursor.split(".")
      yield* refused({ cursor: `${id!.replace(/^./, (c) => c === "0" ? "1" : "0")}.${signed.join(".")}` })
      yield* refused({ cursor: cursor.slice(0, -2) })
      yield* refused({ cursor: "nonsense" })
      yield* refused({ eventTypes: ["TRANSPORT", "EQUIPMENT"] })
      yield* refused({ eventTypes: ["EQUIPMENT"], equipmentReference: "MSCU1234565" })
      yield* refused({ organisation_id: freshId("org") })
      const rest = yield* events({ organisation_id: org, eventTypes: ["EQUIPMENT"], cursor, limit: 100 })
      const whole = yield* all(org, { eventTypes: ["EQUIPMENT"] })
      assert.deepStrictEqual([...first.events, ...rest.events], whole)
    }))

  it.effect("cursors signed with the stored secret hold across publishers sharing the database", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* save(journey(org, "PO-1"))
      const stored = yield* Layer.build(DcsaPublisher.layer)
      const again = yield* Layer.build(DcsaPublisher.layer)
      const first = yield* Effect.flatMap(
        DcsaPublisher.DcsaPublisher,
        (p) => p.events({ organisation_id: org, limit: 3 })
      )
        .pipe(Effect.provide(stored))
      const rest = yield* Effect.flatMap(
        DcsaPublisher.DcsaPublisher,
        (p) => p.events({ organisation_id: org, limit: 100, cursor: first.next_cursor })
      ).pipe(Effect.provide(again))
      assert.deepStrictEqual([...first.events, ...rest.events], yield* all(org))
      const configured = yield* Effect.flip(events({ organisation_id: org, cursor: first.next_cursor }))
      assert.strictEqual(configured._tag, "InvalidCursor")
    }).pipe(Effect.scoped))

  const codes = ["GE", "GN", "AE", "VD", "VA", "UV", "GT", "GR", null] as const
  const arbitraryReading = fc.record({
    event_date: fc.integer({ min: 0, max: 5 }).map((d) => T0 + d * day),
    predicted_at: fc.integer({ min: 0, max: 4 }).map((t) => T0 + t),
    actual: fc.boolean(),
    retracted: fc.constantFrom(undefined, undefined, undefined, true)
  }).map(({ retracted, ...r }) => retracted === undefined ? r : { ...r, retracted })
  const arbitraryMilestone = fc.record({
    status: fc.constantFrom(...codes),
    container: fc.constantFrom("MSCU1234565", "TGHU1234563", null),
    location: fc.constantFrom("NLRTM", "CNSHA", "Port of Somewhere", null),
    voyage: fc.constantFrom(undefined, "012W", "013E"),
    vessel: fc.constantFrom(undefined, "MAERSK ESSEX"),
    vessel_imo: fc.constantFrom(undefined, "9321483"),
    history: fc.array(arbitraryReading, { minLength: 1, maxLength: 3 })
  })
  const arbitraryTradeflows = fc.array(
    fc.record({
      bookings: fc.subarray(["BK-1", "BK-2"]),
      bills: fc.subarray(["BL-1"]),
      vessel: fc.constantFrom(undefined, "EVER GIVEN"),
      active: fc.boolean(),
      milestones: fc.array(arbitraryMilestone, { maxLength: 5 })
    }),
    { minLength: 1, maxLength: 4 }
  )
  const build = (org: string, flows: typeof arbitraryTradeflows extends fc.Arbitrary<infer A> ? A : never) =>
    flows.map((f, i) =>
      tradeflow(org, `PO-${i}`, {
        active: f.active,
        booking_references: f.bookings,
        bill_of_lading_references: f.bills,
        details: f.vessel === undefined ? {} : { vessel: f.vessel },
        events: f.milestones.map((m, k) => {
          const { history, vessel, vessel_imo, voyage, ...fields } = m
          return milestone({
            ...fields,
            key: `m${k}`,
            ...(voyage === undefined ? {} : { voyage }),
            ...(vessel === undefined ? {} : { vessel }),
            ...(vessel_imo === undefined ? {} : { vessel_imo })
          }, history)
        })
      })
    )

  it.effect.prop(
    "walking the pages with any limit gives the unpaged answer exactly, in eventCreatedDateTime then eventID order",
    [arbitraryTradeflows, fc.integer({ min: 1, max: 7 }), fc.subarray(["TRANSPORT", "EQUIPMENT"], { minLength: 1 })],
    ([flows, limit, eventTypes]) =>
      Effect.gen(function*() {
        const org = freshId("org")
        yield* save(...build(org, flows))
        const whole = yield* all(org, { eventTypes })
        const walked = yield* walk(org, limit, { eventTypes })
        assert.deepStrictEqual(walked.events, whole)
        assert.strictEqual(walked.pages, Math.max(1, Math.ceil(whole.length / limit)))
        const ids = whole.map((e) => e.eventID)
        assert.strictEqual(new Set(ids).size, ids.length)
        const positions = whole.map((e) => [Date.parse(e.eventCreatedDateTime), e.eventID] as const)
        const sorted = [...positions].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
        assert.deepStrictEqual(positions, sorted)
      }),
    { fastCheck: { numRuns: 60 } }
  )

  /** What each filter means over a published event, as DCSA's conformance tool reads an answer. */
  type Model = (e: DcsaPublisher.Event) => boolean
  const call = (e: DcsaPublisher.Event) => e.transportCall
  const filterModels: ReadonlyArray<
    readonly [fc.Arbitrary<DcsaPublisher.EventFilters>, (f: DcsaPublisher.EventFilters) => Model]
  > = [
    [
      fc.subarray(["TRANSPORT", "EQUIPMENT", "SHIPMENT"], { minLength: 1 }).map((eventTypes) => ({ eventTypes })),
      (f) => (e) => f.eventTypes!.includes(e.eventType)
    ],
    [
      fc.subarray(["ARRI", "DEPA"], { minLength: 1 }).map((transportEventTypeCodes) => ({ transportEventTypeCodes })),
      (f) => (e) => e.eventType === "TRANSPORT" && f.transportEventTypeCodes!.includes(e.transportEventTypeCode)
    ],
    [
      fc.subarray(["LOAD", "DISC", "GTIN", "GTOT", "STUF"], { minLength: 1 }).map((equipmentEventTypeCodes) => ({
        equipmentEventTypeCodes
      })),
      (f) => (e) => e.eventType === "EQUIPMENT" && f.equipmentEventTypeCodes!.includes(e.equipmentEventTypeCode)
    ],
    [fc.constant({ shipmentEventTypeCodes: ["DRFT"] }), () => () => false],
    [fc.constant({ documentTypeCodes: ["BKG"] }), () => () => false],
    [fc.constant({ carrierServiceCode: "FE1" }), () => () => false],
    [
      fc.constantFrom("BK-1", "BK-2", "BK-3", "bk-1").map((carrierBookingReference) => ({ carrierBookingReference })),
      (f) => (e) =>
        (e.documentReferences ?? []).some((r) =>
          r.documentReferenceType === "BKG" && r.documentReferenceValue === f.carrierBookingReference
        )
    ],
    [
      fc.constantFrom("BL-1", "BL-2", "bl-1").map((transportDocumentReference) => ({ transportDocumentReference })),
      (f) => (e) =>
        (e.documentReferences ?? []).some((r) =>
          r.documentReferenceType === "TRD" && r.documentReferenceValue === f.transportDocumentReference
        )
    ],
    [
      fc.constantFrom(vesselNamed("EVER GIVEN").imo_number, vesselNamed("MAERSK ESSEX").imo_number, "9321483").map(
        (vesselIMONumber) => ({ vesselIMONumber })
      ),
      (f) => (e) => call(e)?.vessel?.vesselIMONumber === f.vesselIMONumber
    ],
    [
      fc.constantFrom("012W", "013E").map((exportVoyageNumber) => ({ exportVoyageNumber })),
      (f) => (e) => call(e)?.exportVoyageNumber === f.exportVoyageNumber
    ],
    [
      fc.constantFrom("012W", "099X").map((carrierVoyageNumber) => ({ carrierVoyageNumber })),
      (f) => (e) => call(e)?.carrierVoyageNumber === f.carrierVoyageNumber
    ],
    [
      fc.constantFrom("NLRTM", "CNSHA", "DEHAM").map((UNLocationCode) => ({ UNLocationCode })),
      (f) => (e) =>
        call(e)?.UNLocationCode === f.UNLocationCode ||
        (e.eventType === "EQUIPMENT" && e.eventLocation?.UNLocationCode === f.UNLocationCode)
    ],
    [
      fc.constantFrom("MSCU1234565", "TGHU1234563", "APZU4812090").map((equipmentReference) => ({
        equipmentReference
      })),
      (f) => (e) =>
        e.eventType === "EQUIPMENT"
          ? e.equipmentReference === f.equipmentReference
          : (e.references ?? []).some((r) => r.referenceType === "EQ" && r.referenceValue === f.equipmentReference)
    ],
    [
      fc.array(
        fc.record({
          operator: fc.constantFrom(...DcsaPublisher.dateOperators),
          at: fc.integer({ min: -1, max: 5 }).map((t) => T0 + t)
        }),
        { minLength: 1, maxLength: 2 }
      ).map((eventCreatedDateTime) => ({ eventCreatedDateTime })),
      (f) => (e) =>
        f.eventCreatedDateTime!.every(({ at, operator }) => {
          const created = Date.parse(e.eventCreatedDateTime)
          return {
            gte: created >= at,
            gt: created > at,
            lte: created <= at,
            lt: created < at,
            eq: created === at
          }[operator]
        })
    ]
  ]
  const arbitraryFilters = fc.subarray(filterModels.map((_, i) => i), { minLength: 1, maxLength: 3 }).chain((chosen) =>
    fc.tuple(...chosen.map((i) => filterModels[i]![0].map((f) => [f, filterModels[i]![1](f)] as const)))
  )

  it.effect.prop(
    "each filter, alone and combined, selects exactly the events the filter names in the unfiltered answer",
    [arbitraryTradeflows, arbitraryFilters],
    ([flows, chosen]) =>
      Effect.gen(function*() {
        const org = freshId("org")
        yield* save(...build(org, flows))
        const filters = Object.assign({}, ...chosen.map(([f]) => f)) as DcsaPublisher.EventFilters
        const expected = (yield* all(org)).filter((e) => chosen.every(([, model]) => model(e)))
        assert.deepStrictEqual(yield* all(org, filters), expected)
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect("a vessel's IMO number is the one its carrier named, else the one the service renders for its name", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const named = { event_date: T0, predicted_at: T0 + 1, actual: true }
      yield* save(tradeflow(org, "PO-1", {
        details: { vessel: "EVER GIVEN" },
        events: [
          milestone({ status: "VD", container: null, vessel: "KING OF THE SEAS", vessel_imo: "9321483" }, [named]),
          milestone({ status: "VA", container: null }, [{ event_date: T0 + day, predicted_at: T0 + 2 }]),
          milestone({ status: "GN" }, [{ event_date: T0 - day, predicted_at: T0 + 3 }])
        ]
      }))
      const vessels = (yield* all(org)).map((e) => e.transportCall?.vessel)
      assert.deepStrictEqual(vessels, [
        { vesselIMONumber: "9321483", vesselName: "KING OF THE SEAS" },
        { vesselIMONumber: vesselNamed("EVER GIVEN").imo_number, vesselName: "EVER GIVEN" },
        undefined
      ])
      assert.strictEqual((yield* all(org, { vesselIMONumber: "9321483" })).length, 1)
    }))

  it.effect("a transportCallID selects the events at that call", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* save(journey(org, "PO-1"))
      const published = yield* all(org)
      const departure = published.find((e) => e.eventType === "TRANSPORT" && e.transportEventTypeCode === "DEPA")!
      const atCall = yield* all(org, { transportCallID: departure.transportCall!.transportCallID })
      assert.deepStrictEqual(
        atCall.map((e) => e.eventType === "TRANSPORT" ? e.transportEventTypeCode : e.equipmentEventTypeCode),
        [
          "LOAD",
          "DEPA"
        ]
      )
    }))
})

describe("DcsaPublisher.parse", () => {
  const parse = (params: DcsaPublisher.Parameters) => DcsaPublisher.parse("org", params)
  const problems = (params: DcsaPublisher.Parameters) =>
    Either.match(parse(params), {
      onLeft: (e) => e.errors.map((i) => i.path),
      onRight: () => []
    })

  it("reads lists as sets, date operators, the container in ISO 6346 form, and + sent as a space", () => {
    const query = Either.getOrThrow(parse({
      eventType: "TRANSPORT,EQUIPMENT,TRANSPORT",
      equipmentEventTypeCode: "LOAD, DISC",
      equipmentReference: "mscu 123456-5",
      eventCreatedDateTime: "2021-04-01T14:12:56Z",
      "eventCreatedDateTime:gte": "2021-04-01T14:12:56 01:00",
      "eventCreatedDateTime:lt": "2021-04-01T14:12:56.5-02:00",
      limit: "7"
    }))
    assert.deepStrictEqual(query.eventTypes, ["EQUIPMENT", "TRANSPORT"])
    assert.deepStrictEqual(query.equipmentEventTypeCodes, ["DISC", "LOAD"])
    assert.strictEqual(query.equipmentReference, "MSCU1234565")
    assert.deepStrictEqual(query.eventCreatedDateTime, [
      { operator: "gte", at: Date.parse("2021-04-01T13:12:56Z") },
      { operator: "lt", at: Date.parse("2021-04-01T16:12:56.5Z") },
      { operator: "eq", at: Date.parse("2021-04-01T14:12:56Z") }
    ])
    assert.strictEqual(query.limit, 7)
  })

  it("names every invalid parameter", () => {
    assert.deepStrictEqual(
      problems({
        eventType: "INVALID_TRANSPORT_EVENT",
        shipmentEventTypeCode: "INVALID_SHIPMENT_EVENT_TYPE_CODE",
        documentTypeCode: "XYZ",
        transportEventTypeCode: "ARRV",
        equipmentEventTypeCode: "INVALID_EQUIPMENT_TYPE_CODE",
        vesselIMONumber: "93214",
        UNLocationCode: "nlrtm",
        equipmentReference: "APZU48120901234567",
        carrierBookingReference: "x".repeat(36),
        transportDocumentReference: "x".repeat(21),
        "eventCreatedDateTime:gte": "2021-04-01",
        "eventCreatedDateTime:lt": "2021-04-01T14:12:56",
        eventCreatedDateTime: "yesterday",
        limit: "0",
        sort: "eventCreatedDateTime:DESC",
        cursor: ""
      }),
      [
        "eventType",
        "shipmentEventTypeCode",
        "documentTypeCode",
        "carrierBookingReference",
        "transportDocumentReference",
        "transportEventTypeCode",
        "vesselIMONumber",
        "UNLocationCode",
        "equipmentEventTypeCode",
        "equipmentReference",
        "eventCreatedDateTime",
        "eventCreatedDateTime:gte",
        "eventCreatedDateTime:lt",
        "limit",
        "cursor",
        "sort"
      ]
    )
    for (const limit of ["0", "1001", "-1", "1.5", "abc", "99999", ""]) {
      assert.deepStrictEqual(problems({ limit }), ["limit"])
    }
    for (const limit of ["1", "100", "1000", "0001"]) assert.deepStrictEqual(problems({ limit }), [])
  })

  it("refuses a parameter of other event types than eventType names, as DCSA's conformance tool expects", () => {
    assert.deepStrictEqual(problems({ eventType: "SHIPMENT", transportEventTypeCode: "ARRI" }), [
      "transportEventTypeCode"
    ])
    assert.deepStrictEqual(problems({ eventType: "TRANSPORT", shipmentEventTypeCode: "DRFT" }), [
      "shipmentEventTypeCode"
    ])
    assert.deepStrictEqual(problems({ eventType: "EQUIPMENT", shipmentEventTypeCode: "DRFT" }), [
      "shipmentEventTypeCode"
    ])
    assert.deepStrictEqual(problems({ eventType: "TRANSPORT", equipmentEventTypeCode: "LOAD" }), [
      "equipmentEventTypeCode"
    ])
    assert.deepStrictEqual(problems({ eventType: "SHIPMENT", vesselIMONumber: "9321483" }), ["vesselIMONumber"])
    assert.deepStrictEqual(problems({ eventType: "TRANSPORT,EQUIPMENT", equipmentEventTypeCode: "LOAD" }), [])
    assert.deepStrictEqual(problems({ eventType: "SHIPMENT", carrierBookingReference: "ABC123123123" }), [])
    assert.deepStrictEqual(problems({ transportEventTypeCode: "ARRI", shipmentEventTypeCode: "DRFT" }), [])
  })
})
