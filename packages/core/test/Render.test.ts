import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema } from "effect"
import { ApiMessage, LocationUpdate } from "../src/ApiMessage.js"
import { sha256HexPortable, sha256HexSync } from "../src/internal/crypto.js"
import * as Projection from "../src/internal/projection.js"
import * as MessageHash from "../src/MessageHash.js"
import * as RenderMessages from "../src/RenderMessages.js"
import * as StatusCode from "../src/StatusCode.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"

describe("StatusCode", () => {
  it("maps DCSA names and English phrases onto the eight codes", () => {
    const cases: Array<[string, StatusCode.StatusCode]> = [
      ["GATE_OUT_EMPTY", "GE"],
      ["Gate out empty", "GE"],
      ["Empty equipment dispatched", "GE"],
      ["GTIN", "GN"],
      ["Gate in full", "GN"],
      ["LOAD", "AE"],
      ["Loaded on vessel", "AE"],
      ["DEPA", "VD"],
      ["Vessel departure", "VD"],
      ["ARRI", "VA"],
      ["vessel-arrival", "VA"],
      ["DISC", "UV"],
      ["Discharged", "UV"],
      ["Unloaded from vessel", "UV"],
      ["GTOT", "GT"],
      ["Gate out full", "GT"],
      ["Empty returned", "GR"],
      ["EMPTY_EQUIPMENT_RETURNED", "GR"],
      ["ge", "GE"],
      ["VA", "VA"]
    ]
    for (const [message, code] of cases) assert.strictEqual(StatusCode.fromMessage(message), code, message)
    assert.strictEqual(StatusCode.fromMessage("Customs released"), undefined)
  })

  it.prop(
    "every code's own description maps back to it",
    [fc.constantFrom(...StatusCode.StatusCode.literals)],
    ([code]) => {
      assert.strictEqual(StatusCode.fromMessage(StatusCode.descriptions[code]), code)
    }
  )
})

describe("Projection.container", () => {
  it("reads ISO size-type codes and common forms, defaults to 45G1 / 40 ft / dry", () => {
    const c = (container_type?: string) =>
      Projection.container(
        container_type === undefined ? { reference: "X" } : { reference: "X", custom_properties: { container_type } }
      )
    assert.deepStrictEqual(c(), {
      reference: "X",
      container_type: "45G1",
      container_length: 40,
      container_is_reefer: false
    })
    assert.deepStrictEqual(c("22G1"), {
      reference: "X",
      container_type: "22G1",
      container_length: 20,
      container_is_reefer: false
    })
    assert.deepStrictEqual(c("45r1"), {
      reference: "X",
      container_type: "45R1",
      container_length: 40,
      container_is_reefer: true
    })
    assert.deepStrictEqual(c("L5G1"), {
      reference: "X",
      container_type: "L5G1",
      container_length: 45,
      container_is_reefer: false
    })
    assert.deepStrictEqual(c("40HC"), {
      reference: "X",
      container_type: "40HC",
      container_length: 40,
      container_is_reefer: false
    })
    assert.deepStrictEqual(c("20RF"), {
      reference: "X",
      container_type: "20RF",
      container_length: 20,
      container_is_reefer: true
    })
    assert.deepStrictEqual(c("odd"), {
      reference: "X",
      container_type: "ODD",
      container_length: 40,
      container_is_reefer: false
    })
  })

  it("renders an unknown location from its code without failing", () => {
    assert.deepStrictEqual(Projection.unknownLocation("XXABC"), {
      name: "XXABC",
      country: { name: "", iso_a2: "XX" },
      timezone: "UTC",
      unlocode: "XXABC",
      coordinates: { lat: 0, lng: 0 }
    })
    assert.strictEqual(Projection.unknownLocation("Some depot").unlocode, "")
  })
})

const readingsArb = fc.array(
  fc.record({
    actual: fc.boolean(),
    event_date: fc.integer({ min: 0, max: 4_000_000_000_000 }),
    predicted_at: fc.integer({ min: 0, max: 4_000_000_000_000 })
  }),
  { maxLength: 8 }
)

describe("Projection.readingSummary", () => {
  it.prop("the summary readings agree with the reading log", [readingsArb], ([readings]) => {
    const s = Projection.readingSummary(readings)
    const log = s.reading_log
    assert.strictEqual(log.length, readings.length)
    assert.strictEqual(log.filter((r) => r.is_latest).length, readings.length === 0 ? 0 : 1)
    assert.strictEqual(s.latest_reading, log.at(-1)?.reading ?? null)
    assert.strictEqual(s.first_known_reading, log[0]?.reading ?? null)
    const confirmed = log.filter((r) => r.actual)
    const provisional = log.filter((r) => r.is_provisional)
    assert.strictEqual(s.first_confirmed_reading, confirmed[0]?.reading ?? null)
    assert.strictEqual(s.latest_confirmed_reading, confirmed.at(-1)?.reading ?? null)
    assert.strictEqual(s.latest_provisional_reading, provisional.at(-1)?.reading ?? null)
    assert.strictEqual(log.filter((r) => r.is_latest_provisional).length, provisional.length === 0 ? 0 : 1)
    assert.isTrue(
      log.every((r, i) =>
        r.is_provisional === !r.actual && r.reading === new Date(readings[i]!.event_date).toISOString()
      )
    )
    assert.strictEqual(s.actual, log.at(-1)?.actual ?? false)
  })
})

const jsonArb = fc.jsonValue({ maxDepth: 3 })

describe("MessageHash", () => {
  it.prop("canonical JSON does not depend on key order", [fc.dictionary(fc.string(), jsonArb)], ([obj]) => {
    const reversed = Object.fromEntries(Object.entries(obj).reverse())
    assert.strictEqual(MessageHash.canonicalJson(obj), MessageHash.canonicalJson(reversed))
  })

  it.effect.prop(
    "the hash ignores the volatile parts and nothing else",
    [fc.string(), fc.string(), jsonArb, fc.string(), fc.string()],
    ([when1, when2, shipment, eventDate, otherDate]) =>
      Effect.gen(function*() {
        const message = (generated: string, predicted: string, ship: unknown, date: string) => ({
          hash: "",
          message_generated_event_date: generated,
          type: "BASIC_STATUS",
          tradeflow_reference: "R",
          payload: {
            event_date: date,
            predicted_at: predicted,
            shipment: ship,
            history: [{ predicted_at: predicted, event_date: date }]
          }
        })
        const a = yield* MessageHash.hashMessage(message(when1, when1, shipment, eventDate))
        const b = yield* MessageHash.hashMessage(message(when2, when2, null, eventDate))
        assert.strictEqual(a, b)
        assert.match(a, /^[0-9a-f]{64}$/)
        const c = yield* MessageHash.hashMessage(message(when1, when1, shipment, otherDate))
        assert.strictEqual(a === c, eventDate === otherDate)
      })
  )

  it.prop(
    "the native digest and the portable one agree on every text",
    [fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "grapheme", maxLength: 2_000 }))],
    ([text]) => {
      assert.strictEqual(sha256HexSync(text), sha256HexPortable(text))
      assert.match(sha256HexSync(text), /^[0-9a-f]{64}$/)
    }
  )

  it.effect.prop("hashMessageSync is hashMessage", [jsonArb], ([payload]) =>
    Effect.gen(function*() {
      const message = { type: "BASIC_STATUS", payload }
      assert.strictEqual(MessageHash.hashMessageSync(message), yield* MessageHash.hashMessage(message))
    }))

  it.effect("is the SHA-256 of the canonical content", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* MessageHash.sha256Hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
    }))
})

describe("ApiMessage", () => {
  it("LOCATION_UPDATE dates have microseconds and no offset", () => {
    const ok = { type: "LOCATION_UPDATE", lat: 1, lng: 2, event_date: "2026-01-01 10:00:00.123456", vessel_name: "V" }
    assert.deepStrictEqual(Schema.decodeUnknownSync(LocationUpdate)(ok), ok)
    assert.throws(() => Schema.decodeUnknownSync(LocationUpdate)({ ...ok, event_date: "2026-01-01T10:00:00Z" }))
    const message = {
      hash: "h",
      message_generated_event_date: "2026-01-01T00:00:00.000Z",
      type: "LOCATION_UPDATE",
      tradeflow_reference: "R",
      payload: ok
    }
    assert.deepStrictEqual<unknown>(Schema.decodeUnknownSync(ApiMessage)(message), message)
    assert.throws(() => Schema.decodeUnknownSync(ApiMessage)({ ...message, type: "SHIPMENT_CHANGE" }))
  })
})

describe("TradeflowMerge", () => {
  const base = TradeflowMerge.empty("o", "R", 0)
  const incoming = (date: number | undefined, actual = false): TradeflowMerge.IncomingEvent => ({
    message: "LOAD",
    status_code: "AE",
    container_reference: "C",
    location: "NLRTM",
    event_date: date,
    actual,
    source: "import"
  })

  it.prop(
    "merging the same event again changes nothing; a new date or flag appends one prediction",
    [fc.array(fc.tuple(fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }), fc.boolean()), {
      minLength: 1,
      maxLength: 8
    })],
    ([inputs]) => {
      let events = base.events
      let expectedHistory = 0
      let last: { date: number; actual: boolean } | undefined
      for (const [date, actual] of inputs) {
        const before = events
        events = TradeflowMerge.mergeEvent(events, incoming(date, actual), 1, 99)
        const d = date ?? last?.date ?? 99
        if (last === undefined || last.date !== d || last.actual !== actual) expectedHistory++
        else assert.strictEqual(events, before)
        last = { date: d, actual }
        assert.strictEqual(TradeflowMerge.mergeEvent(events, incoming(date, actual), 2, 99), events)
      }
      assert.strictEqual(events.length, 1)
      assert.strictEqual(events[0]!.history.length, expectedHistory)
      assert.strictEqual(events[0]!.event_date, last!.date)
    }
  )

  it("changedEvents lists new and re-predicted events in event-date order", () => {
    const e1 = TradeflowMerge.mergeEvent([], incoming(5), 1, 0)
    const e2 = TradeflowMerge.mergeEvent(e1, { ...incoming(3), status_code: "GE", message: "GE" }, 1, 0)
    const before = { ...base, events: e2 }
    assert.deepStrictEqual(RenderMessages.changedEvents(undefined, before).map((e) => e.status_code), ["GE", "AE"])
    assert.deepStrictEqual(RenderMessages.changedEvents(before, before), [])
    const after = { ...base, events: TradeflowMerge.mergeEvent(e2, incoming(7), 2, 0) }
    assert.deepStrictEqual(RenderMessages.changedEvents(before, after).map((e) => [e.status_code, e.event_date]), [[
      "AE",
      7
    ]])
  })
})
