import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Random, Schema, TestClock } from "effect"
import { ApiMessage, type ContainerMilestone, WidgetSearchResult } from "../src/ApiMessage.js"
import * as Projection from "../src/internal/projection.js"
import * as Iso6346 from "../src/Iso6346.js"
import type { JobPayload } from "../src/Job.js"
import * as MessageHash from "../src/MessageHash.js"
import * as Processor from "../src/Processor.js"
import * as RenderWidget from "../src/RenderWidget.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import { C1, C2, groups, layer, messages, org, post, recordArb, run, statuses, tradeflow } from "./ProcessorKit.js"

const day = 86_400_000
const now0 = Date.UTC(2026, 10, 22, 10)

const oceanBasic = {
  tradeflow_reference: "PO-1",
  container_reference: C1,
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  mock_tracking: { scenario: "ocean_basic" }
}

const milestones = (ms: ReadonlyArray<{ readonly message: ApiMessage }>): ReadonlyArray<ContainerMilestone> =>
  ms.flatMap(({ message: m }) => m.type === "CONTAINER_MILESTONE" ? [m.payload] : [])

describe("Processor: lifecycle", () => {
  it.effect("created, unchanged, updated, deactivated, reactivated", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const first = yield* post([{ tradeflow_reference: "PO-1", container_reference: C1 }], "production")
      assert.deepStrictEqual(first.result, { count: 1 })
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED"])

      yield* TestClock.adjust("5 minutes")
      const again = yield* post([{ tradeflow_reference: "PO-1", container_reference: C1 }], "production")
      assert.deepStrictEqual([again.upserts, again.messages], [[], []])

      yield* TestClock.adjust("5 minutes")
      yield* post([{ tradeflow_reference: "PO-1", container_reference: C2, booking_reference: "BK1" }], "production")
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t.containers.map((c) => c.reference), [C1, C2])
      assert.deepStrictEqual(t.booking_references, ["BK1"])
      assert.strictEqual(t.updated_at, now0 + 10 * 60_000)
      assert.strictEqual(t.created_at, now0)
      const updated = (yield* messages()).at(-1)!.message
      assert.strictEqual(updated.type, "BASIC_STATUS")
      if (updated.type === "BASIC_STATUS") assert.include(updated.payload.message, C2)

      yield* TestClock.adjust("5 minutes")
      yield* post([{ tradeflow_reference: "PO-1", container_reference: C1, active: false }], "production")
      assert.isFalse((yield* tradeflow("PO-1")).active)
      const deactivatedAgain = yield* post(
        [{ tradeflow_reference: "PO-1", container_reference: C1, active: false }],
        "production"
      )
      assert.deepStrictEqual(deactivatedAgain.messages, [])

      yield* TestClock.adjust("5 minutes")
      yield* post([{ tradeflow_reference: "PO-1", container_reference: C1 }], "production")
      assert.isTrue((yield* tradeflow("PO-1")).active)
      assert.deepStrictEqual(statuses(yield* messages()), [
        "TRADEFLOW_CREATED",
        "TRADEFLOW_UPDATED",
        "TRADEFLOW_DEACTIVATED",
        "TRADEFLOW_REACTIVATED"
      ])
    }).pipe(Effect.provide(layer())))

  it.effect("a new tradeflow posted inactive is created and deactivated", () =>
    Effect.gen(function*() {
      yield* post([{ tradeflow_reference: "X", booking_reference: "B", active: false }])
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED", "TRADEFLOW_DEACTIVATED"])
      assert.isFalse((yield* tradeflow("X")).active)
    }).pipe(Effect.provide(layer())))

  it.effect("records of one group merge: unions in first-seen order, scalars last-wins, custom properties merged", () =>
    Effect.gen(function*() {
      const commit = yield* post([
        {
          tradeflow_reference: "PO-2",
          container_reference: [C1, { reference: C2, custom_properties: { a: 1 } }],
          port_of_loading: "NLRTM",
          bill_of_lading_reference: "BL1"
        },
        { tradeflow_reference: "OTHER", booking_reference: "B9" },
        {
          tradeflow_reference: "PO-2",
          container_reference: [{ reference: C2, custom_properties: { b: 2 } }, C1],
          port_of_loading: "DEHAM",
          bill_of_lading_reference: ["BL2", "BL1"],
          booking_reference: "BK"
        }
      ], "production")
      assert.deepStrictEqual(commit.result, { count: 2 })
      const t = yield* tradeflow("PO-2")
      assert.deepStrictEqual(t.containers, [{ reference: C1 }, { reference: C2, custom_properties: { a: 1, b: 2 } }])
      assert.deepStrictEqual(t.bill_of_lading_references, ["BL1", "BL2"])
      assert.deepStrictEqual(t.booking_references, ["BK"])
      assert.strictEqual(t.details.port_of_loading, "DEHAM")
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED", "TRADEFLOW_CREATED"])
    }).pipe(Effect.provide(layer())))
})

describe("Processor: mock tracking", () => {
  it.effect("ocean_basic renders milestones, shipment changes and basic statuses, once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([oceanBasic])
      const ms = yield* messages()
      const types = ms.map((m) => m.message.type)
      assert.strictEqual(types[0], "BASIC_STATUS")
      assert.strictEqual(types.filter((t) => t === "CONTAINER_MILESTONE").length, 7)
      assert.strictEqual(types.filter((t) => t === "SHIPMENT_CHANGE").length, 2)
      assert.strictEqual(types.filter((t) => t === "BASIC_STATUS").length, 1 + 9)
      const cm = milestones(ms)
      assert.deepStrictEqual(cm.map((m) => m.status_code), ["GE", "GN", "AE", "VA", "UV", "GT", "GR"])
      assert.deepStrictEqual(cm.map((m) => m.actual), [true, true, true, false, false, false, false])
      const D = now0 - day
      const A = now0 + 30 * day
      assert.deepStrictEqual(cm.map((m) => Date.parse(m.event_date)), [
        D - 3 * day,
        D - 2 * day,
        D - day,
        A,
        A + day,
        A + 2 * day,
        A + 7 * day
      ])
      const ge = cm[0]!
      assert.strictEqual(ge.location?.name, "Rotterdam")
      assert.strictEqual(ge.transport_unit_reference, C1)
      assert.deepStrictEqual(ge.container_details, {
        reference: C1,
        container_type: "45G1",
        container_length: 40,
        container_is_reefer: false
      })
      assert.strictEqual(
        ge.shipment?.transport_plan_legs[0]?.sea_shipment_legs[0]?.departure.location.unlocode,
        "NLRTM"
      )
      assert.strictEqual(cm[3]!.location?.name, "Shanghai")
      assert.deepStrictEqual(ge.dwell_details, {
        demurrage_free_time_expires: new Date(A + day + 5 * day).toISOString(),
        detention_free_time_expires: new Date(A + 2 * day + 7 * day).toISOString()
      })
      const changes = ms.flatMap(({ message: m }) => m.type === "SHIPMENT_CHANGE" ? [m] : [])
      assert.deepStrictEqual(
        changes.map((
          c
        ) => [
          c.payload.change.move_type,
          c.payload.change.actual,
          c.payload.change.is_pol,
          c.payload.change.is_final_pod
        ]),
        [
          ["departure", true, true, false],
          ["arrival", false, false, true]
        ]
      )
      assert.isTrue(changes.every((c) => c.payload.change.vessel.name.startsWith("MOCK ")))
      assert.isTrue(
        ms.filter((m) => m.message.type === "SHIPMENT_CHANGE").every((m) => m.stored.container_reference === null)
      )
      assert.isTrue(
        ms.filter((m) => m.message.type === "CONTAINER_MILESTONE").every((m) => m.stored.container_reference === C1)
      )
      const leg = changes[1]!.payload.shipment!.transport_plan_legs[0]!.sea_shipment_legs[0]!
      assert.strictEqual(leg.departure.latest_confirmed_reading, new Date(D).toISOString())
      assert.strictEqual(leg.arrival.latest_provisional_reading, new Date(A).toISOString())
      assert.strictEqual(leg.arrival.latest_confirmed_reading, null)

      yield* TestClock.adjust("5 minutes")
      const again = yield* post([oceanBasic])
      assert.deepStrictEqual([again.upserts, again.messages], [[], []])
      assert.strictEqual((yield* messages()).length, ms.length)
    }).pipe(Effect.provide(layer())))

  it.effect("dwell details follow the configured free days", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{ ...oceanBasic, estimated_time_of_arrival: "2026-03-01T00:00:00Z" }])
      const uv = milestones(yield* messages()).find((m) => m.status_code === "UV")!
      assert.deepStrictEqual(uv.dwell_details, {
        demurrage_free_time_expires: "2026-03-05T00:00:00.000Z",
        detention_free_time_expires: "2026-03-13T00:00:00.000Z"
      })
    }).pipe(Effect.provide(layer({ demurrageFreeDays: 3, detentionFreeDays: 10 }))))

  it.effect("a changed arrival regenerates the journey as new predictions with history", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{ ...oceanBasic, estimated_time_of_arrival: "2026-03-01T00:00:00Z" }])
      const before = (yield* messages()).length
      const commit = yield* post([{ ...oceanBasic, estimated_time_of_arrival: "2026-03-04T00:00:00Z" }])
      const fresh = (yield* messages()).slice(before)
      assert.deepStrictEqual(statuses(fresh)[0], "TRADEFLOW_UPDATED")
      const cm = milestones(fresh)
      assert.deepStrictEqual(cm.map((m) => m.status_code), ["VA", "UV", "GT", "GR"])
      assert.deepStrictEqual(cm[0]!.history.map((h) => h.event_date), [
        "2026-03-01T00:00:00.000Z",
        "2026-03-04T00:00:00.000Z"
      ])
      assert.strictEqual(commit.upserts.length, 1)
    }).pipe(Effect.provide(layer())))

  it.effect("without a container, a container of the organisation is picked and joins the tradeflow", () =>
    Effect.gen(function*() {
      yield* post([{ tradeflow_reference: "OTHER", container_reference: C2 }])
      yield* post([{
        tradeflow_reference: "PO-9",
        booking_reference: "BK",
        port_of_loading: "NLRTM",
        mock_tracking: { scenario: "ocean_basic" }
      }])
      const t = yield* tradeflow("PO-9")
      assert.deepStrictEqual(t.containers.map((c) => c.reference), [C2])
      assert.deepStrictEqual(t.events.filter((e) => e.container_reference === C2).map((e) => e.status_code), [
        "GE",
        "GN",
        "AE"
      ])
      const again = yield* post([{
        tradeflow_reference: "PO-9",
        booking_reference: "BK",
        port_of_loading: "NLRTM",
        mock_tracking: { scenario: "ocean_basic" }
      }])
      assert.deepStrictEqual(again.messages, [])
    }).pipe(Effect.provide(layer())))

  it.effect("without any container in the organisation, a valid one is generated", () =>
    Effect.gen(function*() {
      yield* post([{
        tradeflow_reference: "PO-9",
        booking_reference: "BK",
        port_of_discharge: "CNSHA",
        mock_tracking: { scenario: "ocean_basic" }
      }])
      const t = yield* tradeflow("PO-9")
      assert.strictEqual(t.containers.length, 1)
      assert.isTrue(Iso6346.isValid(t.containers[0]!.reference))
    }).pipe(Effect.provide(layer())))

  it.effect("supplied events are kept before the mock sequence", () =>
    Effect.gen(function*() {
      yield* post([{
        ...oceanBasic,
        events: [{
          message: "Customs released",
          container_reference: C1,
          location_name: "cnsha",
          event_date: "2027-01-01T00:00:00Z"
        }]
      }])
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t.events.map((e) => e.source), ["import", ...Array(9).fill("mock")])
      assert.strictEqual(t.events[0]!.location, "CNSHA")
      yield* post([{ ...oceanBasic, events: [{ message: "Customs hold", container_reference: C1 }] }])
      const t2 = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t2.events.map((e) => e.source), ["import", "import", ...Array(9).fill("mock")])
    }).pipe(Effect.provide(layer())))

  it.effect("an unknown scenario adds no events; production ignores mock_tracking", () =>
    Effect.gen(function*() {
      yield* post([{ ...oceanBasic, mock_tracking: { scenario: "ocean_fancy" } }])
      yield* post([{ ...oceanBasic, tradeflow_reference: "PO-P" }], "production")
      assert.deepStrictEqual((yield* tradeflow("PO-1")).events, [])
      assert.deepStrictEqual((yield* tradeflow("PO-P")).events, [])
      assert.strictEqual((yield* tradeflow("PO-P")).mock_signature, null)
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED", "TRADEFLOW_CREATED"])
    }).pipe(Effect.provide(layer())))
})

describe("Processor: mock scenarios", () => {
  const legsOf = (m: ApiMessage) =>
    m.type === "SHIPMENT_CHANGE"
      ? m.payload.shipment!.transport_plan_legs[0]!.sea_shipment_legs.map((l) => [
        l.departure.location.unlocode,
        l.arrival.location.unlocode,
        l.carrier_transport_unit.name,
        l.departure.is_pol,
        l.arrival.is_final_pod,
        l.departure.is_transshipment_location,
        l.arrival.is_transshipment_location
      ])
      : []
  const changes = (ms: ReadonlyArray<{ readonly message: ApiMessage }>) =>
    ms.flatMap(({ message: m }) => m.type === "SHIPMENT_CHANGE" ? [m] : [])
  const full = { ...oceanBasic, port_of_discharge: "USNYC", mock_tracking: { scenario: "ocean_full" } }

  it.effect("ocean_full: departure, transshipment to a second vessel, arrival; two sea legs; positions named after each leg's vessel", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([full])
      const ms = yield* messages()
      const D = now0 - day
      const A = now0 + 30 * day
      const M = D + (A - D) / 2
      const first = Projection.vesselOf(yield* tradeflow("PO-1")).name
      const cs = changes(ms)
      const ts = cs[1]!.payload.change.location!.unlocode
      assert.notInclude(["NLRTM", "USNYC"], ts)
      const second = cs[2]!.payload.change.vessel.name
      assert.notStrictEqual(second, first)
      assert.match(second, /^MOCK /)
      assert.deepStrictEqual(
        cs.map(({ payload: { change: c } }) => [
          c.move_type,
          c.location?.unlocode,
          c.reading,
          c.actual,
          c.vessel.name,
          c.is_pol,
          c.is_transshipment_location,
          c.is_final_pod
        ]),
        [
          ["departure", "NLRTM", new Date(D).toISOString(), true, first, true, false, false],
          ["arrival", ts, new Date(M - 2 * day).toISOString(), false, first, false, true, false],
          ["departure", ts, new Date(M + 2 * day).toISOString(), false, second, false, true, false],
          ["arrival", "USNYC", new Date(A).toISOString(), false, second, false, false, true]
        ]
      )
      assert.deepStrictEqual(legsOf(cs[3]!), [
        ["NLRTM", ts, first, true, false, false, true],
        [ts, "USNYC", second, false, true, true, false]
      ])
      assert.deepStrictEqual(milestones(ms).map((m) => [m.status_code, m.location?.unlocode]), [
        ["GE", "NLRTM"],
        ["GN", "NLRTM"],
        ["AE", "NLRTM"],
        ["UV", ts],
        ["AE", ts],
        ["VA", "USNYC"],
        ["UV", "USNYC"],
        ["GT", "USNYC"],
        ["GR", "USNYC"]
      ])
      const vessels = (from: number) =>
        Effect.map(
          messages(),
          (all) =>
            all.slice(from).flatMap(({ message: m }) => m.type === "LOCATION_UPDATE" ? [m.payload.vessel_name] : [])
        )
      const before = ms.length
      assert.deepStrictEqual(new Set(yield* vessels(0)), new Set([first]))
      yield* TestClock.adjust(10 * day)
      yield* run({ _tag: "Advance", reference: "PO-1" })
      yield* TestClock.adjust(10 * day)
      yield* run({ _tag: "Advance", reference: "PO-1" })
      const later = yield* vessels(before)
      assert.isAbove(later.length, 0)
      assert.deepStrictEqual(new Set(later), new Set([first, second]))
      assert.strictEqual(later.at(-1), second)
    }).pipe(Effect.provide(layer())))

  it.effect("rolled_shipment: the departure and the arrival are predicted twice, the history shows both vessels' dates", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{ ...oceanBasic, mock_tracking: { scenario: "rolled_shipment" } }])
      const ms = yield* messages()
      const D = now0 - day
      const A = now0 + 30 * day
      const own = Projection.vesselOf(yield* tradeflow("PO-1")).name
      const cs = changes(ms).map(({ payload: { change: c } }) => [c.move_type, c.reading, c.actual, c.vessel.name])
      const booked = cs[0]![3] as string
      assert.notStrictEqual(booked, own)
      assert.deepStrictEqual(cs, [
        ["departure", new Date(D - 7 * day).toISOString(), false, booked],
        ["arrival", new Date(A - 7 * day).toISOString(), false, booked],
        ["departure", new Date(D).toISOString(), false, own],
        ["arrival", new Date(A).toISOString(), false, own],
        ["departure", new Date(D).toISOString(), true, own]
      ])
      const t = yield* tradeflow("PO-1")
      const move = (code: string) => t.events.find((e) => e.container_reference === null && e.status_code === code)!
      assert.deepStrictEqual(move("VD").history.map((h) => [h.event_date, h.actual]), [
        [D - 7 * day, false],
        [D, false],
        [D, true]
      ])
      assert.deepStrictEqual(move("VA").history.map((h) => [h.event_date, h.actual]), [[A - 7 * day, false], [
        A,
        false
      ]])
      const va = milestones(ms).filter((m) => m.status_code === "VA")
      assert.deepStrictEqual(va.at(-1)!.history.map((h) => h.event_date), [
        new Date(A - 7 * day).toISOString(),
        new Date(A).toISOString()
      ])
      const leg = changes(ms).at(-1)!.payload.shipment!.transport_plan_legs[0]!.sea_shipment_legs[0]!
      assert.deepStrictEqual(leg.departure.reading_log.map((r) => [r.reading, r.actual]), [
        [new Date(D - 7 * day).toISOString(), false],
        [new Date(D).toISOString(), false],
        [new Date(D).toISOString(), true]
      ])
      assert.strictEqual(leg.carrier_transport_unit.name, own)
    }).pipe(Effect.provide(layer())))

  it.effect("delayed_eta: each postponement is a SHIPMENT_CHANGE and one more history entry", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{ ...oceanBasic, mock_tracking: { scenario: "delayed_eta" } }])
      const ms = yield* messages()
      const A = now0 + 30 * day
      const etas = [A - 5 * day, A - 2 * day, A].map((ms) => new Date(ms).toISOString())
      const arrivals = changes(ms).filter((c) => c.payload.change.move_type === "arrival")
      assert.deepStrictEqual(arrivals.map((c) => c.payload.change.reading), etas)
      assert.deepStrictEqual(
        arrivals.map((c) =>
          c.payload.shipment!.transport_plan_legs[0]!.sea_shipment_legs[0]!.arrival.reading_log.length
        ),
        [1, 2, 3]
      )
      const va = milestones(ms).filter((m) => m.status_code === "VA")
      assert.deepStrictEqual(va.map((m) => m.history.map((h) => h.event_date)), [
        etas.slice(0, 1),
        etas.slice(0, 2),
        etas
      ])
    }).pipe(Effect.provide(layer())))

  it.effect("empty: the tradeflow is created without events", () =>
    Effect.gen(function*() {
      yield* post([{ ...oceanBasic, mock_tracking: { scenario: "empty" } }])
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED"])
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual([t.events, t.next_position_at], [[], null])
      assert.notStrictEqual(t.mock_signature, null)
    }).pipe(Effect.provide(layer())))
})

describe("RenderWidget.widgetSearchResult", () => {
  it.effect("summarises a processed ocean_basic tradeflow", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{
        ...oceanBasic,
        carrier_name: "Maersk",
        booking_reference: "BK",
        container_reference: [{ reference: C1, custom_properties: { container_type: "45R1" } }]
      }])
      const w = yield* RenderWidget.widgetSearchResult(yield* tradeflow("PO-1"))
      assert.deepStrictEqual(Schema.decodeUnknownSync(WidgetSearchResult)(w), w)
      assert.strictEqual(w.carrier, "Maersk")
      assert.strictEqual(w.booking_reference, "BK")
      assert.strictEqual(w.bill_of_lading_reference, null)
      assert.deepStrictEqual(
        w.departure &&
          [w.departure.event_date, w.departure.actual, w.departure.location.name, w.departure.location.country],
        [
          new Date(now0 - day).toISOString(),
          true,
          "Rotterdam",
          "Netherlands"
        ]
      )
      assert.deepStrictEqual(w.arrival && [w.arrival.event_date, w.arrival.actual], [
        new Date(now0 + 30 * day).toISOString(),
        false
      ])
      assert.deepStrictEqual(w.containers[0]?.details, {
        type_code: "45R1",
        type_group: "RE",
        type_reefer: true,
        length: 40
      })
      assert.deepStrictEqual(w.containers[0]?.latest_actual_milestone?.status_code, "AE")
      assert.strictEqual(w.containers[0]?.latest_actual_milestone?.vessel?.name, w.departure?.vessel.name)
    }).pipe(Effect.provide(layer())))
})

describe("Processor: imported events", () => {
  it.effect("status codes are mapped, a new date is a new prediction, an unchanged event is silent", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const events = [
        {
          message: "GATE_OUT_EMPTY",
          container_reference: C1,
          location_name: "NLRTM",
          event_date: "2026-01-01T00:00:00Z",
          actual: true
        },
        { message: "DEPA", location_name: "NLRTM", event_date: "2026-01-03T00:00:00Z" },
        {
          message: "Container weighed",
          container_reference: C1,
          location_name: "Somewhere",
          event_date: "2026-01-02T00:00:00Z"
        }
      ]
      yield* post(
        [{ tradeflow_reference: "PO-1", container_reference: C1, port_of_loading: "NLRTM", events }],
        "production"
      )
      const ms = yield* messages()
      assert.deepStrictEqual(milestones(ms).map((m) => [m.status_code, m.location?.name, m.location?.unlocode]), [
        ["GE", "Rotterdam", "NLRTM"],
        ["ZZ", "Somewhere", ""]
      ])
      const change = ms.find((m) => m.message.type === "SHIPMENT_CHANGE")!.message
      assert.strictEqual(change.type === "SHIPMENT_CHANGE" && change.payload.change.move_type, "departure")

      yield* TestClock.adjust("1 hour")
      const same = yield* post([{ tradeflow_reference: "PO-1", container_reference: C1, events }], "production")
      assert.deepStrictEqual(same.messages, [])

      yield* TestClock.adjust("1 hour")
      yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: C1,
        events: [{
          message: "Gate out empty",
          container_reference: C1,
          location_name: "NLRTM",
          event_date: "2026-01-01T06:00:00Z",
          actual: true
        }]
      }], "production")
      const fresh = (yield* messages()).slice(ms.length)
      const ge = milestones(fresh)
      assert.strictEqual(ge.length, 1)
      assert.deepStrictEqual(ge[0]!.history.map((h) => [h.event_date, h.predicted_at]), [
        ["2026-01-01T00:00:00.000Z", new Date(now0).toISOString()],
        ["2026-01-01T06:00:00.000Z", new Date(now0 + 2 * 3_600_000).toISOString()]
      ])
      assert.deepStrictEqual(statuses(fresh), ["TRADEFLOW_UPDATED", "EVENT"])
    }).pipe(Effect.provide(layer())))
})

describe("Processor: imported events within one request", () => {
  it.effect("the last date of an event in a request wins, so the same request again is silent", () =>
    Effect.gen(function*() {
      const records = [
        {
          tradeflow_reference: "PO-1",
          container_reference: C1,
          events: [{ message: "LOAD", container_reference: C1, event_date: "2026-01-01T00:00:00Z" }]
        },
        {
          tradeflow_reference: "PO-1",
          container_reference: C1,
          events: [{ message: "Loaded on vessel", container_reference: C1, event_date: "2026-01-02T00:00:00Z" }]
        }
      ]
      yield* post(records, "production")
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t.events.map((e) => [e.status_code, e.message, e.event_date, e.history.length]), [
        ["AE", "Loaded on vessel", Date.UTC(2026, 0, 2), 1]
      ])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual((yield* post(records, "production")).messages, [])
    }).pipe(Effect.provide(layer())))
})

describe("Processor: delete", () => {
  const three = [
    { tradeflow_reference: "A", booking_reference: "1" },
    { tradeflow_reference: "B", booking_reference: "2" },
    { tradeflow_reference: "C", booking_reference: "3", active: false }
  ]

  it.effect("soft: deactivates the active ones and counts them", () =>
    Effect.gen(function*() {
      yield* post(three)
      yield* post([{ tradeflow_reference: "Z", booking_reference: "9" }], "uat", "another-org")
      const before = (yield* messages()).length
      const all = yield* run({ _tag: "Delete", reference: null, hard: false })
      assert.deepStrictEqual(all.result, { count: 2 })
      assert.deepStrictEqual(all.upserts.map((t) => [t.reference, t.active]), [["A", false], ["B", false]])
      assert.deepStrictEqual(statuses((yield* messages()).slice(before)), [
        "TRADEFLOW_DEACTIVATED",
        "TRADEFLOW_DEACTIVATED"
      ])
      assert.deepStrictEqual((yield* run({ _tag: "Delete", reference: null, hard: false })).result, { count: 0 })
      assert.deepStrictEqual((yield* run({ _tag: "Delete", reference: "A", hard: false })).result, { count: 1 })
      assert.deepStrictEqual((yield* run({ _tag: "Delete", reference: "nope", hard: false })).result, { count: 0 })
      assert.isTrue((yield* tradeflow("Z", "another-org")).active)
    }).pipe(Effect.provide(layer())))

  it.effect("hard: deletes every tradeflow permanently, without messages", () =>
    Effect.gen(function*() {
      yield* post(three)
      const one = yield* run({ _tag: "Delete", reference: "B", hard: true })
      assert.deepStrictEqual([one.deletes, one.result, one.messages], [["B"], { count: 1 }, []])
      const all = yield* run({ _tag: "Delete", reference: null, hard: true })
      assert.deepStrictEqual([all.deletes, all.result], [["A", "C"], { count: 2 }])
      assert.deepStrictEqual(yield* Effect.flatMap(TradeflowStore, (s) => s.list(org)), [])
      assert.deepStrictEqual(yield* messages(), [])
      assert.deepStrictEqual((yield* run({ _tag: "Delete", reference: "A", hard: true })).result, { count: 0 })
    }).pipe(Effect.provide(layer())))
})

describe("Processor: rendering properties", () => {
  it.effect.prop(
    "every body decodes as an APIMessage, re-encodes to itself and carries its content hash; a repeat renders nothing",
    [fc.array(recordArb, { minLength: 1, maxLength: 4 }), fc.constantFrom("uat" as const, "production" as const)],
    ([records, environment]) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now0)
        const first = yield* post(records, environment)
        for (const m of first.messages) {
          const decoded = Schema.decodeUnknownSync(Schema.parseJson(ApiMessage))(m.body)
          assert.strictEqual(JSON.stringify(Schema.encodeSync(ApiMessage)(decoded)), m.body)
          assert.strictEqual(decoded.hash, m.hash)
          assert.strictEqual(yield* MessageHash.hashMessage(decoded), m.hash)
          assert.strictEqual(decoded.type, m.type)
          assert.strictEqual(m.generated_at, now0)
        }
        yield* TestClock.adjust("7 minutes")
        const second = yield* post(records, environment)
        assert.deepStrictEqual(second.messages, [])
        assert.deepStrictEqual(second.upserts, [])
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "hashes are deterministic: the same jobs in two fresh stores give the same hashes",
    [fc.array(recordArb, { minLength: 1, maxLength: 3 }), fc.integer()],
    ([records, seed]) =>
      Effect.gen(function*() {
        const once = Effect.suspend(() =>
          Effect.gen(function*() {
            yield* TestClock.setTime(now0)
            yield* post(records)
            return (yield* messages()).map((m) => m.stored.hash)
          }).pipe(Effect.withRandom(Random.make(seed)))
        )
        const a = yield* Effect.provide(once, layer())
        const b = yield* Effect.provide(once, layer())
        assert.deepStrictEqual(a, b)
        assert.isTrue(a.length > 0)
      }),
    { fastCheck: { numRuns: 30 } }
  )
})

describe("Processor: a long job", () => {
  const timerFiresDuring = <A, E, R>(work: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      let ran = false
      const timer = setTimeout(() => ran = true, 0)
      const result = yield* work
      clearTimeout(timer)
      return [result, ran] as const
    })
  const job = (payload: JobPayload) => ({
    id: 1,
    organisation_id: org,
    environment: "production" as const,
    payload,
    received_at: now0
  })
  const records = Array.from({ length: 1_000 }, (_, i) => ({ tradeflow_reference: `PO-${i}`, container_reference: C1 }))

  it.effect("lets the host's timers and I/O run while it is processed (an HTTP server sharing the thread answers meanwhile)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const [commit, ran] = yield* timerFiresDuring(
        Processor.processJob(job({ _tag: "Upsert", groups: groups(records) }))
      )
      assert.strictEqual(commit.messages.length, 1_000)
      assert.isTrue(ran)
    }).pipe(Effect.provide(layer())))

  it.effect("so does deactivating every tradeflow of an organisation", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post(records, "production")
      const [commit, ran] = yield* timerFiresDuring(
        Processor.processJob(job({ _tag: "Delete", reference: null, hard: false }))
      )
      assert.strictEqual(commit.upserts.length, 1_000)
      assert.isTrue(ran)
    }).pipe(Effect.provide(layer())))
})
