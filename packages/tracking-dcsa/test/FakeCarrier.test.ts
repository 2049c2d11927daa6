import { assert, describe, it } from "@effect/vitest"
import { DcsaTnt22, DcsaTnt30, type TrackingEvent } from "@tradeflow/core"
import { Effect, Either, TestClock } from "effect"
import { FakeCarrierJourney } from "../test-kit/index.js"
import { day, FakeCarrier, hour, shipment, T0 } from "./Fixture.js"

/** A GET to the fake: status, headers and parsed body. */
const get = (fake: FakeCarrier.FakeCarrier, path: string) =>
  Effect.promise(async () => {
    const r = await fetch(`${fake.url}${path}`)
    const text = await r.text()
    return { status: r.status, headers: r.headers, body: text === "" ? undefined : JSON.parse(text) as unknown }
  })

const decoded22 = (body: unknown): ReadonlyArray<TrackingEvent.TrackingEvent> =>
  Either.getOrThrow(DcsaTnt22.decode(body, { source: "fake" })).events

const decoded30 = (body: unknown): ReadonlyArray<TrackingEvent.TrackingEvent> =>
  Either.getOrThrow(DcsaTnt30.decode(body, { source: "fake" })).events

const start = (options: FakeCarrier.FakeCarrierOptions = { shipments: [shipment] }) =>
  Effect.flatMap(TestClock.setTime(T0), () => FakeCarrier.make(options))

describe("FakeCarrier: 2.2 GET /v2/events", () => {
  it.effect("filters: a container's events (its equipment events, the shipment's others), event types, creation operators", () =>
    Effect.gen(function*() {
      const fake = yield* start()
      yield* TestClock.adjust(4 * day)
      const all = decoded22((yield* get(fake, "/v2/events?equipmentReference=MSKU9070323")).body)
      assert.isTrue(all.every((e) => e.container_reference === null || e.container_reference === "MSKU9070323"))
      assert.deepStrictEqual(new Set(all.map((e) => e.event_type)), new Set(["SHIPMENT", "EQUIPMENT", "TRANSPORT"]))
      const transport = decoded22(
        (yield* get(fake, "/v2/events?carrierBookingReference=ABC709951&eventType=TRANSPORT,SHIPMENT")).body
      )
      assert.isTrue(transport.length > 0 && transport.every((e) => e.event_type !== "EQUIPMENT"))
      const at = new Date(T0 + 2 * day + 15 * 60_000).toISOString()
      for (
        const [op, test] of [
          ["gte", (t: number) => t >= Date.parse(at)],
          ["gt", (t: number) => t > Date.parse(at)],
          ["lte", (t: number) => t <= Date.parse(at)],
          ["lt", (t: number) => t < Date.parse(at)],
          ["eq", (t: number) => t === Date.parse(at)]
        ] as const
      ) {
        const some = decoded22(
          (yield* get(fake, `/v2/events?transportDocumentReference=HHL71800000&eventCreatedDateTime:${op}=${at}`)).body
        )
        const expected = decoded22((yield* get(fake, "/v2/events?transportDocumentReference=HHL71800000")).body).filter(
          (e) => test(e.updated_at)
        )
        assert.deepStrictEqual(some.map((e) => e.event_id), expected.map((e) => e.event_id), op)
        assert.isAbove(expected.length, 0, op)
      }
    }).pipe(Effect.scoped))

  it.effect("refuses what it cannot answer: 400 for a bad limit, date or cursor and a page without its original parameters; 404 for an unknown reference", () =>
    Effect.gen(function*() {
      const fake = yield* start({ shipments: [shipment], maxPageSize: 2 })
      for (
        const path of [
          "/v2/events?limit=0",
          "/v2/events?eventCreatedDateTime:gte=yesterday",
          "/v2/events?cursor=nope",
          "/v2/events?eventType=IOT"
        ]
      ) {
        const r = yield* get(fake, path)
        assert.strictEqual(r.status, 400, path)
      }
      const first = yield* get(fake, "/v2/events?equipmentReference=MSKU9070323&limit=50")
      assert.strictEqual((first.body as Array<unknown>).length, 2)
      const cursor = first.headers.get("next-page-cursor")!
      assert.strictEqual((yield* get(fake, `/v2/events?cursor=${cursor}`)).status, 400)
      const next = yield* get(fake, `/v2/events?equipmentReference=MSKU9070323&limit=50&cursor=${cursor}`)
      assert.deepStrictEqual([next.status, (next.body as Array<unknown>).length], [200, 2])
      assert.strictEqual((yield* get(fake, "/v2/events?equipmentReference=APZU4812090")).status, 404)
    }).pipe(Effect.scoped))
})

describe("FakeCarrier: 3.0 GET /events", () => {
  it.effect("the mandatory filter combinations, else 400 with feedback", () =>
    Effect.gen(function*() {
      const fake = yield* start()
      for (
        const [query, status] of [
          ["carrierBookingReference=ABC709951", 200],
          ["carrierBookingReference=ABC709951&equipmentReference=MSKU9070323", 200],
          ["transportDocumentReference=HHL71800000", 200],
          ["transportDocumentReference=HHL71800000&equipmentReference=MSKU9070323", 200],
          ["equipmentReference=MSKU9070323", 200],
          ["eventTypes=EQUIPMENT", 400],
          ["carrierBookingReference=ABC709951&transportDocumentReference=HHL71800000", 400]
        ] as const
      ) {
        const r = yield* get(fake, `/events?${query}`)
        assert.strictEqual(r.status, status, query)
        if (status === 400) {
          assert.strictEqual(
            (r.body as { feedbackElements: Array<{ severity: string }> }).feedbackElements[0]!.severity,
            "ERROR"
          )
        }
      }
      const unknown = yield* get(fake, "/events?equipmentReference=APZU4812090")
      assert.deepStrictEqual([unknown.status, unknown.body], [200, { events: [] }])
    }).pipe(Effect.scoped))

  it.effect("an event in its latest version; a moved ETA as estimates; updated-time bounds", () =>
    Effect.gen(function*() {
      const fake = yield* start({ shipments: [{ ...shipment, scenario: "delayed_eta" }] })
      const arrival = () =>
        Effect.map(
          get(fake, "/events?carrierBookingReference=ABC709951&eventTypes=TRANSPORT"),
          (r) => decoded30(r.body).filter((e) => e.event_code === "ARRI").map((e) => [e.classifier, e.event_date - T0])
        )
      assert.deepStrictEqual(yield* arrival(), [["PLN", 20 * day]])
      yield* TestClock.adjust(5 * hour)
      assert.deepStrictEqual(yield* arrival(), [["EST", 23 * day]])
      yield* TestClock.adjust(hour)
      assert.deepStrictEqual(yield* arrival(), [["EST", 25 * day]])
      const window = `eventUpdatedDateTimeMin=${new Date(T0 + hour).toISOString()}&eventUpdatedDateTimeMax=${
        new Date(T0 + 6 * hour).toISOString()
      }`
      const bounded = decoded30((yield* get(fake, `/events?carrierBookingReference=ABC709951&${window}`)).body)
      assert.isTrue(
        bounded.length > 0 && bounded.every((e) => e.updated_at >= T0 + hour && e.updated_at <= T0 + 6 * hour)
      )
      yield* TestClock.adjust(25 * day)
      assert.deepStrictEqual(yield* arrival(), [["ACT", 25 * day]])
    }).pipe(Effect.scoped))
})

describe("FakeCarrierJourney: what a carrier publishes", () => {
  const release = { stepMillis: hour, reportDelayMillis: 15 * 60_000, lateMillis: 0, duplicates: false }
  const versions = (input: FakeCarrierJourney.ShipmentInput, options = release) =>
    FakeCarrierJourney.versionsOf(input, T0, options)

  it("planned at booking, actual once it happened and was reported; milestones already past only actual", () => {
    const past = versions({ ...shipment, departure: T0 - day, arrival: T0 + 20 * day })
    const gateOut = past.filter((v) => v.id30.endsWith("MSKU9070323-GE-NLRTM"))
    assert.deepStrictEqual(gateOut.map((v) => [v.event.classifier, v.released_at - T0]), [["ACT", 0]])
    const future = versions(shipment).filter((v) => v.id30.endsWith("MSKU9070323-GT-SGSIN"))
    assert.deepStrictEqual(future.map((v) => [v.event.classifier, v.released_at - T0]), [
      ["PLN", 0],
      ["ACT", 27 * day + 15 * 60_000]
    ])
  })

  it("a rolled shipment: the departure planned on another vessel, then estimated a week later on its own", () => {
    const departure = versions({ ...shipment, scenario: "rolled_shipment" }).filter((v) =>
      v.id30.endsWith("vessel-VD-NLRTM")
    )
    assert.deepStrictEqual(departure.map((v) => v.event.classifier), ["PLN", "EST", "ACT"])
    const [planned, estimated] = departure
    assert.notStrictEqual(planned!.event.transport_call?.vessel_name, estimated!.event.transport_call?.vessel_name)
    assert.strictEqual(estimated!.event.event_date - planned!.event.event_date, 7 * day)
  })

  it("duplicates, late gate events, a retracted mistake", () => {
    const doubled = versions(shipment, { ...release, duplicates: true }).filter((v) =>
      v.event.classifier === "ACT" && v.event.event_type !== "SHIPMENT"
    )
    const ids = doubled.map((v) => v.id30)
    assert.isTrue(ids.every((id) => ids.filter((x) => x === id).length === 2))
    assert.isTrue(new Set(doubled.map((v) => v.id22)).size === doubled.length)
    const late = versions(shipment, { ...release, lateMillis: 30 * hour })
    const gateIn = late.find((v) => v.id30.endsWith("MSKU9070323-GN-NLRTM") && v.event.classifier === "ACT")!
    const loaded = late.find((v) => v.id30.endsWith("MSKU9070323-AE-NLRTM") && v.event.classifier === "ACT")!
    assert.isTrue(gateIn.event.event_date < loaded.event.event_date && gateIn.released_at > loaded.released_at)
    const mistake = versions({ ...shipment, mistake: true }).filter((v) => v.id30.endsWith("-mistake"))
    assert.deepStrictEqual(mistake.map((v) => [v.event.retracted, v.released_at - T0]), [[false, hour], [
      true,
      2 * hour
    ]])
  })

  it("the scenarios are core's mock journeys", () => {
    for (const scenario of ["ocean_basic", "ocean_full", "rolled_shipment", "delayed_eta", "empty"]) {
      assert.isTrue(FakeCarrierJourney.isScenario(scenario), scenario)
      const published = versions({ ...shipment, scenario })
      assert.strictEqual(
        published.filter((v) => v.event.event_type !== "SHIPMENT").length > 0,
        scenario !== "empty",
        scenario
      )
    }
    const full = versions({ ...shipment, scenario: "ocean_full" })
    assert.isTrue(full.some((v) => v.id30.includes("-UV-MYTPP")))
  })
})
