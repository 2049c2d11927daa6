import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as DcsaTnt22 from "../src/DcsaTnt22.js"
import type { PushedEvents } from "../src/TrackingSource.js"
import { corruptions, trackingEvent, withBroken } from "./fixtures/dcsa/arbitraries.js"

const fixture: Array<unknown> = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures", "schemes", "dcsa-tnt-2.2-events.json"), "utf8")
)

const read = (body: unknown, options: Partial<DcsaTnt22.DecodeOptions> = {}): PushedEvents => {
  const result = DcsaTnt22.decode(body, { source: "carrier", ...options })
  if (Either.isLeft(result)) return assert.fail(result.left)
  return result.right
}

/** As JSON gives it: a key set to undefined is left out. */
const json = <A>(value: A): A => JSON.parse(JSON.stringify(value))

const equipment = (extra: Record<string, unknown> = {}) =>
  json({
    eventID: "5e51e72c-d872-11ea-811c-0242ac130003",
    eventCreatedDateTime: "2024-03-05T10:00:00+01:00",
    eventType: "EQUIPMENT",
    eventClassifierCode: "ACT",
    eventDateTime: "2024-03-05T09:40:00+01:00",
    equipmentEventTypeCode: "GTIN",
    equipmentReference: "CSQU3054383",
    emptyIndicatorCode: "LADEN",
    eventLocation: { UNLocationCode: "NLRTM" },
    documentReferences: [{ documentReferenceType: "BKG", documentReferenceValue: "ABC709951" }],
    ...extra
  })

const transport = (extra: Record<string, unknown> = {}) =>
  json({
    eventID: "8e51e72c-d872-11ea-811c-0242ac130003",
    eventCreatedDateTime: "2024-03-07T12:00:00+01:00",
    eventType: "TRANSPORT",
    eventClassifierCode: "EST",
    eventDateTime: "2024-04-02T06:00:00+08:00",
    transportEventTypeCode: "ARRI",
    transportCall: {
      transportCallID: "TC-1",
      modeOfTransport: "VESSEL",
      UNLocationCode: "CNSHA",
      exportVoyageNumber: "2103S",
      importVoyageNumber: "2103N",
      vessel: { vesselIMONumber: "9811000", vesselName: "EVER GIVEN" }
    },
    documentReferences: [{ documentReferenceType: "TRD", documentReferenceValue: "ABCU12345678" }],
    ...extra
  })

const messages = (out: PushedEvents) => out.malformed.map((m) => [m.index, m.event_id, m.message] as const)

describe("DcsaTnt22.decode", () => {
  it("reads our 2.2 fixture: every event, with the status codes, locations and references of the documented table", () => {
    const out = read(fixture)
    assert.deepStrictEqual(out.malformed, [])
    assert.deepStrictEqual(
      out.events.map((
        e
      ) => [e.event_type, e.event_code, e.classifier, e.status_code, e.location, e.container_reference]),
      [
        ["SHIPMENT", "CONF", "ACT", null, null, null],
        ["EQUIPMENT", "GTOT", "ACT", "GE", "NLRTM", "CSQU3054383"],
        ["EQUIPMENT", "GTIN", "ACT", "GN", "NLRTM", "CSQU3054383"],
        ["EQUIPMENT", "LOAD", "ACT", "AE", "NLRTM", "CSQU3054383"],
        ["TRANSPORT", "DEPA", "ACT", "VD", "NLRTM", null],
        ["TRANSPORT", "ARRI", "EST", "VA", "CNSHA", null],
        ["EQUIPMENT", "DISC", "PLN", "UV", "CNSHA", "CSQU3054383"],
        ["EQUIPMENT", "STUF", "ACT", null, "Shipper warehouse Venlo", "MSKU9070323"]
      ]
    )
    const [shipment, , gateIn, load] = out.events
    assert.deepStrictEqual([shipment!.message, shipment!.bookings, shipment!.bills_of_lading], [
      "Booking confirmed (CONF)",
      ["ABC709951"],
      []
    ])
    assert.deepStrictEqual([gateIn!.bookings, gateIn!.bills_of_lading], [["ABC709951"], ["ABCU12345678"]])
    assert.deepStrictEqual(load!.transport_call, {
      mode: "VESSEL",
      vessel_name: "EVER GIVEN",
      vessel_imo: "9811000",
      voyage: "2103S"
    })
    assert.strictEqual(out.events[7]!.message, "Stuffed (STUF)")
  })

  it("an event's fields: id, versions by eventCreatedDateTime, dates in epoch ms, normalised container, raw as received", () => {
    const raw = equipment({ equipmentReference: "cSqu 305438-3" })
    const [event] = read([raw]).events
    assert.deepStrictEqual(event, {
      source: "carrier",
      event_id: "5e51e72c-d872-11ea-811c-0242ac130003",
      updated_at: Date.parse("2024-03-05T09:00:00Z"),
      retracted: false,
      event_type: "EQUIPMENT",
      classifier: "ACT",
      event_date: Date.parse("2024-03-05T08:40:00Z"),
      event_code: "GTIN",
      status_code: "GN",
      message: "Gate in full",
      container_reference: "CSQU3054383",
      location: "NLRTM",
      bookings: ["ABC709951"],
      bills_of_lading: [],
      raw: JSON.stringify(raw)
    })
    const [arrival] = read([transport()]).events
    assert.deepStrictEqual([arrival!.location, arrival!.transport_call, arrival!.bills_of_lading], [
      "CNSHA",
      { mode: "VESSEL", vessel_name: "EVER GIVEN", vessel_imo: "9811000", voyage: "2103S" },
      ["ABCU12345678"]
    ])
  })

  it("an event without eventID gets the digest of what was received, the same each time it is answered", () => {
    const { eventID: _, ...raw } = equipment()
    const [a] = read([raw]).events
    const [b] = read([raw]).events
    assert.strictEqual(a!.event_id, DcsaTnt22.derivedId(JSON.stringify(raw)))
    assert.strictEqual(a!.event_id, b!.event_id)
    assert.match(a!.event_id, /^sha256:[0-9a-f]{64}$/)
  })

  it("one malformed event fails alone: its index, its eventID when readable, the field named", () => {
    const out = read([
      equipment(),
      transport({ eventDateTime: "2024-04-02 06:00" }),
      7,
      equipment({ eventID: "6e51e72c-d872-11ea-811c-0242ac130003", emptyIndicatorCode: undefined }),
      transport({ eventID: "9e51e72c-d872-11ea-811c-0242ac130003", transportCall: { modeOfTransport: "SHIP" } }),
      { eventType: "REEFER" },
      equipment({ eventID: "be51e72c-d872-11ea-811c-0242ac130003" })
    ])
    assert.deepStrictEqual(out.events.map((e) => e.event_id), [
      "5e51e72c-d872-11ea-811c-0242ac130003",
      "be51e72c-d872-11ea-811c-0242ac130003"
    ])
    assert.deepStrictEqual(messages(out), [
      [
        1,
        "8e51e72c-d872-11ea-811c-0242ac130003",
        "/1/eventDateTime: eventDateTime must be an RFC 3339 date-time with an offset, for example 2021-01-09T14:12:56+01:00"
      ],
      [2, null, "/2: must be a JSON object, got a number"],
      [3, "6e51e72c-d872-11ea-811c-0242ac130003", "/3/emptyIndicatorCode: emptyIndicatorCode is required"],
      [
        4,
        "9e51e72c-d872-11ea-811c-0242ac130003",
        "/4/transportCall/modeOfTransport: transportCall.modeOfTransport must be one of \"VESSEL\" or one of \"RAIL\" " +
        "or one of \"TRUCK\" or one of \"BARGE\", got a string"
      ],
      [5, null, "/5/eventType: eventType must be one of \"TRANSPORT\", \"EQUIPMENT\", \"SHIPMENT\", got \"REEFER\""]
    ])
  })

  it("an event no storage could keep fails alone: U+0000 in a value or key, or nesting deeper than 32 levels", () => {
    let deep: unknown = "bottom"
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const out = read([
      equipment({ equipmentReference: "CSQU\u00003054383" }),
      transport({ ["note\u0000"]: 1 }),
      { ...equipment({ eventID: "6e51e72c-d872-11ea-811c-0242ac130003" }), carrierNote: deep },
      equipment({ eventID: "be51e72c-d872-11ea-811c-0242ac130003" })
    ])
    assert.deepStrictEqual(out.events.map((e) => e.event_id), ["be51e72c-d872-11ea-811c-0242ac130003"])
    assert.deepStrictEqual(messages(out).map(([index, , message]) => [index, message.slice(0, 40)]), [
      [0, "/0/equipmentReference: must not contain "],
      [1, "/1/note\u0000: must not contain the NUL chara"],
      [2, "/2/carrierNote/0/0/0/0/0/0/0/0/0/0/0/0/0"]
    ])
    assert.match(messages(out)[2]![2], /is nested too deeply \(more than 32 levels/)
  })

  it("typed as the 2.2 document says: codes, eventID, date-times, lengths, document types", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [equipment({ eventID: "incorrect" }), "/0/eventID: eventID must be a UUID"],
      [equipment({ eventCreatedDateTime: undefined }), "/0/eventCreatedDateTime: eventCreatedDateTime is required"],
      [equipment({ eventDateTime: "2024-03-05" }), "/0/eventDateTime: eventDateTime must be an RFC 3339"],
      [equipment({ eventDateTime: "2024-02-30T10:00:00Z" }), "/0/eventDateTime: eventDateTime must be an RFC 3339"],
      [equipment({ equipmentEventTypeCode: "WASH" }), "/0/equipmentEventTypeCode: "],
      [
        equipment({ equipmentReference: "CSQU3054383CSQU3" }),
        "/0/equipmentReference: equipmentReference must be at most 15"
      ],
      [
        equipment({ documentReferences: [{ documentReferenceType: "BOL", documentReferenceValue: "X" }] }),
        "/0/documentReferences/0/documentReferenceType: "
      ],
      [
        transport({ transportCall: { modeOfTransport: "VESSEL", vessel: { vesselName: "X" } } }),
        "/0/transportCall/vessel/vesselIMONumber: "
      ],
      [
        {
          ...transport(),
          eventType: "SHIPMENT",
          shipmentEventTypeCode: "DRFT",
          documentTypeCode: "XYZ",
          documentID: "1"
        },
        "/0/documentTypeCode: "
      ]
    ]
    for (const [event, message] of cases) {
      const out = read([event])
      assert.deepStrictEqual(out.events, [], JSON.stringify(event))
      assert.isTrue(out.malformed[0]!.message.startsWith(message), `${out.malformed[0]!.message} / ${message}`)
    }
  })

  it("an actual event created more than a day before it happened is malformed; an estimate is not", () => {
    const out = read([
      equipment({ eventCreatedDateTime: "1999-01-01T14:12:56Z" }),
      equipment({ eventID: undefined, eventClassifierCode: "EST", eventCreatedDateTime: "1999-01-01T14:12:56Z" }),
      equipment({ eventID: undefined, eventCreatedDateTime: "2024-03-04T10:00:00+01:00" })
    ])
    assert.deepStrictEqual(messages(out), [[
      0,
      "5e51e72c-d872-11ea-811c-0242ac130003",
      "/0/eventDateTime: eventDateTime 2024-03-05T09:40:00+01:00 lies more than a day after eventCreatedDateTime " +
      "1999-01-01T14:12:56Z, but an actual event is created once it has happened"
    ]])
    assert.strictEqual(out.events.length, 2)
  })

  it("with now: an event created more than a day in the future is malformed", () => {
    const now = Date.parse("2024-03-05T12:00:00Z")
    const events = [
      equipment({ eventCreatedDateTime: "2099-01-01T14:12:56Z" }),
      equipment({ eventID: undefined, eventCreatedDateTime: "2024-03-06T11:00:00Z" })
    ]
    assert.deepStrictEqual(messages(read(events, { now })), [[
      0,
      "5e51e72c-d872-11ea-811c-0242ac130003",
      "/0/eventCreatedDateTime: eventCreatedDateTime 2099-01-01T14:12:56Z lies in the future"
    ]])
    assert.deepStrictEqual(read(events).malformed, [])
  })

  it("an eventID repeated in one answer: the first event is kept, the repeat is malformed", () => {
    const out = read([equipment(), transport(), equipment({ eventClassifierCode: "EST" })])
    assert.deepStrictEqual(out.events.map((e) => e.event_type), ["EQUIPMENT", "TRANSPORT"])
    assert.deepStrictEqual(messages(out), [[
      2,
      "5e51e72c-d872-11ea-811c-0242ac130003",
      "/2/eventID: eventID 5e51e72c-d872-11ea-811c-0242ac130003 repeats event 0's, but an eventID names one event"
    ]])
  })

  it("classifier aliases of a carrier's profile: PLAN read as PLN, else malformed", () => {
    const quirky = equipment({ eventClassifierCode: "PLAN" })
    assert.deepStrictEqual(read([quirky], { classifierAliases: { PLAN: "PLN" } }).events.map((e) => e.classifier), [
      "PLN"
    ])
    assert.deepStrictEqual(
      read([quirky], { classifierAliases: { PLAN: "PLN" } }).events[0]!.raw,
      JSON.stringify(quirky)
    )
    assert.match(read([quirky]).malformed[0]!.message, /^\/0\/eventClassifierCode: /)
  })

  it("an event naming another container, booking or bill of lading than asked is malformed", () => {
    const other = equipment({ eventID: undefined, equipmentReference: "MSKU9070323" })
    const out = read([equipment(), other, transport()], { query: { equipment: "csqu 3054383" } })
    assert.deepStrictEqual(out.events.map((e) => e.event_type), ["EQUIPMENT", "TRANSPORT"])
    assert.deepStrictEqual(messages(out), [[
      1,
      null,
      "/1/equipmentReference: names container MSKU9070323, not the container asked for (csqu 3054383)"
    ]])
    const byBooking = read([equipment(), transport()], { query: { booking: "BK-OTHER" } })
    assert.deepStrictEqual(byBooking.events.map((e) => e.event_type), ["TRANSPORT"])
    assert.match(byBooking.malformed[0]!.message, /^\/0\/documentReferences: names booking ABC709951, not the booking/)
    const byBill = read([equipment(), transport()], { query: { bill_of_lading: "ABCU12345678" } })
    assert.deepStrictEqual([byBill.events.length, byBill.malformed], [2, []])
  })

  it("a body that is not an array is unreadable as a whole; an empty one has no events", () => {
    assert.deepStrictEqual(
      DcsaTnt22.decode({ events: [] }, { source: "carrier" }),
      Either.left("the answer must be a JSON array of DCSA Track & Trace 2.2 events, got an object")
    )
    assert.deepStrictEqual(read([]), { events: [], malformed: [] })
  })
})

describe("DcsaTnt22: properties", () => {
  it.prop("decode(encode(event)) is the event, and raw is the encoded event", [trackingEvent("2.2")], ([event]) => {
    const encoded = DcsaTnt22.encode(event)
    const out = read([encoded])
    assert.deepStrictEqual(out.malformed, [])
    assert.deepStrictEqual(out.events, [{ ...event, raw: JSON.stringify(encoded) }])
  }, { fastCheck: { numRuns: 300 } })

  it.prop(
    "a malformed event never removes a good one: the good events in order, the broken ones at their indices",
    [
      fc.uniqueArray(trackingEvent("2.2"), { selector: (e) => e.event_id, minLength: 1, maxLength: 8 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...corruptions("2.2"))), { maxLength: 5 })
    ],
    ([events, breaks]) => {
      const { broken, elements } = withBroken(events.map(DcsaTnt22.encode), breaks)
      const out = read(elements)
      assert.deepStrictEqual(out.events.map((e) => e.event_id), events.map((e) => e.event_id))
      assert.deepStrictEqual(out.malformed.map((m) => m.index), broken)
    },
    { fastCheck: { numRuns: 200 } }
  )
})
