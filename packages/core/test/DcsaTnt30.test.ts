import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import * as DcsaTnt30 from "../src/DcsaTnt30.js"
import type { PushedEvents } from "../src/TrackingSource.js"
import { corruptions, trackingEvent, withBroken } from "./fixtures/dcsa/arbitraries.js"

const read = (body: unknown, options: Partial<DcsaTnt30.DecodeOptions> = {}): PushedEvents => {
  const result = DcsaTnt30.decode(body, { source: "carrier", ...options })
  if (Either.isLeft(result)) return assert.fail(result.left)
  return result.right
}

/** As JSON gives it: a key set to undefined is left out. */
const json = <A>(value: A): A => JSON.parse(JSON.stringify(value))

const routing = { originatingParty: { partyCode: "EXCO", codeListProvider: "SMDG", codeListName: "LCL" } }

const transport = (extra: Record<string, unknown> = {}) =>
  json({
    eventRouting: routing,
    eventID: "evt-trans-1",
    eventDateTime: "2026-01-16T11:30:00Z",
    eventUpdatedDateTime: "2026-01-16T11:45:00Z",
    eventLocation: { locationName: "Terminal", UNLocationCode: "GBSOU", facilityTypeCode: "POTE" },
    eventClassification: { eventTypeCode: "TRANSPORT", eventClassifierCode: "ACT", transportEventTypeCode: "DEPA" },
    shipmentDetails: {
      documentReference: { typeCode: "BKG", reference: "ABC709951" },
      additionalDocumentReferences: [{ typeCode: "TRD", reference: "HHL71800000" }, {
        typeCode: "INV",
        reference: "I-1"
      }]
    },
    transportDetails: {
      transportCall: {
        modeOfTransport: "VESSEL",
        exportVoyageNumberOrReference: { carrierVoyageNumber: "V002E" },
        importVoyageNumberOrReference: { carrierVoyageNumber: "V002N" },
        vesselTransport: { vesselIMONumber: "7654321", vesselName: "Example Vessel Beta", vesselFlag: "GB" }
      }
    },
    ...extra
  })

const equipment = (extra: Record<string, unknown> = {}) =>
  json({
    eventID: "evt-equip-1",
    eventDateTime: "2026-01-17T13:45:00Z",
    eventUpdatedDateTime: "2026-01-17T14:00:00Z",
    eventLocation: { UNLocationCode: "FRPAR" },
    eventClassification: { eventTypeCode: "EQUIPMENT", eventClassifierCode: "ACT", equipmentEventTypeCode: "GTIN" },
    equipmentDetails: { equipmentReference: "APZU4812090", emptyIndicatorCode: "EMPTY", movementType: "IMPORT" },
    ...extra
  })

const messages = (out: PushedEvents) => out.malformed.map((m) => [m.index, m.event_id, m.message] as const)

describe("DcsaTnt30.decode", () => {
  it("reads an answer: each tracked event mapped as the documented table says, IoT and reefer events skipped", () => {
    const out = read({
      events: [
        transport(),
        { ...equipment(), eventClassification: { eventTypeCode: "IOT", eventClassifierCode: "ACT" } },
        equipment(),
        {
          eventID: "evt-reefer",
          eventClassification: { eventTypeCode: "REEFER" },
          reeferDetails: { temperatureUnit: "CEL" }
        },
        json({
          eventID: "evt-ship-1",
          eventDateTime: "2026-01-15T09:00:00Z",
          eventUpdatedDateTime: "2026-01-15T09:00:00Z",
          eventClassification: { eventTypeCode: "SHIPMENT", eventClassifierCode: "ACT", shipmentEventTypeCode: "CONF" },
          shipmentDetails: { documentReference: { typeCode: "BKG", reference: "ABC709951" } }
        })
      ]
    })
    assert.deepStrictEqual(out.malformed, [])
    const [departure, gateIn, shipment] = out.events
    assert.deepStrictEqual(departure, {
      source: "carrier",
      event_id: "evt-trans-1",
      updated_at: Date.parse("2026-01-16T11:45:00Z"),
      retracted: false,
      event_type: "TRANSPORT",
      event_code: "DEPA",
      classifier: "ACT",
      status_code: "VD",
      message: "Vessel departure",
      container_reference: null,
      location: "GBSOU",
      event_date: Date.parse("2026-01-16T11:30:00Z"),
      transport_call: { mode: "VESSEL", vessel_name: "Example Vessel Beta", vessel_imo: "7654321", voyage: "V002E" },
      bookings: ["ABC709951"],
      bills_of_lading: ["HHL71800000"],
      raw: JSON.stringify(transport())
    })
    assert.deepStrictEqual(
      [gateIn!.event_code, gateIn!.status_code, gateIn!.message, gateIn!.container_reference, gateIn!.location],
      ["GTIN", "GR", "Empty equipment returned", "APZU4812090", "FRPAR"]
    )
    assert.deepStrictEqual([shipment!.event_type, shipment!.status_code, shipment!.message, shipment!.bookings], [
      "SHIPMENT",
      null,
      "Booking confirmed (CONF)",
      ["ABC709951"]
    ])
    assert.strictEqual(out.events.length, 3)
  })

  it("3.0 codes beyond 2.2's and other modes are unclassified events", () => {
    const out = read({
      events: [
        equipment({
          eventClassification: {
            eventTypeCode: "EQUIPMENT",
            eventClassifierCode: "EST",
            equipmentEventTypeCode: "CUSR"
          }
        }),
        transport({ transportDetails: { transportCall: { modeOfTransport: "MULTIMODAL" } } })
      ]
    })
    assert.deepStrictEqual(out.events.map((e) => [e.status_code, e.message]), [
      [null, "Released by customs (CUSR)"],
      [null, "Multimodal departure (DEPA)"]
    ])
  })

  it("a retraction may carry only its eventID and update: the rest is empty", () => {
    const [bare, full] = read({
      events: [
        { eventID: "evt-equip-1", isRetracted: true, eventUpdatedDateTime: "2026-01-18T08:00:00Z" },
        equipment({ isRetracted: true, eventID: "evt-equip-2" })
      ]
    }).events
    assert.deepStrictEqual(bare, {
      source: "carrier",
      event_id: "evt-equip-1",
      updated_at: Date.parse("2026-01-18T08:00:00Z"),
      retracted: true,
      event_type: "SHIPMENT",
      event_code: "",
      classifier: "ACT",
      status_code: null,
      message: "Retracted",
      container_reference: null,
      location: null,
      event_date: Date.parse("2026-01-18T08:00:00Z"),
      bookings: [],
      bills_of_lading: [],
      raw: JSON.stringify({ eventID: "evt-equip-1", isRetracted: true, eventUpdatedDateTime: "2026-01-18T08:00:00Z" })
    })
    assert.deepStrictEqual([full!.retracted, full!.event_code, full!.container_reference], [
      true,
      "GTIN",
      "APZU4812090"
    ])
  })

  it("one malformed event fails alone, the field named: what a live event needs, and the document's types", () => {
    const out = read({
      events: [
        equipment({ eventDateTime: undefined }),
        equipment({ eventID: "evt-2", eventClassification: undefined }),
        equipment({
          eventID: "evt-3",
          eventClassification: { eventTypeCode: "EQUIPMENT", eventClassifierCode: "ACT" }
        }),
        equipment({ eventID: "evt-4", eventUpdatedDateTime: undefined }),
        equipment({ eventID: "evt-5", eventClassification: { eventTypeCode: "PARTY", eventClassifierCode: "ACT" } }),
        equipment({ eventID: "evt-6", equipmentDetails: { equipmentReference: "APZU48120901" } }),
        { eventUpdatedDateTime: "2026-01-18T08:00:00Z", isRetracted: true },
        equipment({ eventID: "evt-ok" })
      ]
    })
    assert.deepStrictEqual(out.events.map((e) => e.event_id), ["evt-ok"])
    assert.deepStrictEqual(messages(out), [
      [0, "evt-equip-1", "/0/eventDateTime: eventDateTime is required"],
      [1, "evt-2", "/1/eventClassification: eventClassification is required"],
      [
        2,
        "evt-3",
        "/2/eventClassification/equipmentEventTypeCode: eventClassification.equipmentEventTypeCode is required " +
        "for an event of type EQUIPMENT"
      ],
      [3, "evt-4", "/3/eventUpdatedDateTime: eventUpdatedDateTime is required"],
      [
        4,
        "evt-5",
        "/4/eventClassification/eventTypeCode: eventClassification.eventTypeCode must be one of \"SHIPMENT\", \"TRANSPORT\", " +
        "\"EQUIPMENT\", \"IOT\", \"REEFER\", got \"PARTY\""
      ],
      [
        5,
        "evt-6",
        "/5/equipmentDetails/equipmentReference: equipmentDetails.equipmentReference must be at most 11 characters long"
      ],
      [6, null, "/6/eventID: eventID is required"]
    ])
  })

  it("at most 100 additional document references an event, refused before any is read", () => {
    const references = (n: number) => Array.from({ length: n }, (_, i) => ({ typeCode: "BKG", reference: `B-${i}` }))
    const out = read({
      events: [
        transport({ shipmentDetails: { additionalDocumentReferences: references(100) } }),
        transport({ eventID: "evt-2", shipmentDetails: { additionalDocumentReferences: references(130_000) } })
      ]
    })
    assert.deepStrictEqual(out.events.map((e) => [e.event_id, e.bookings.length]), [["evt-trans-1", 100]])
    assert.deepStrictEqual(messages(out).map(([index, id]) => [index, id]), [[1, "evt-2"]])
    assert.match(messages(out)[0]![2], /^\/1\/shipmentDetails\/additionalDocumentReferences: .*100/)
  })

  it("versions of an event in one answer are kept; the same version twice is malformed", () => {
    const out = read({
      events: [
        equipment(),
        equipment({ eventUpdatedDateTime: "2026-01-17T15:00:00Z" }),
        equipment({ eventLocation: { UNLocationCode: "DEHAM" } })
      ]
    })
    assert.deepStrictEqual(out.events.map((e) => e.updated_at), [
      Date.parse("2026-01-17T14:00:00Z"),
      Date.parse("2026-01-17T15:00:00Z")
    ])
    assert.deepStrictEqual(messages(out), [[
      2,
      "evt-equip-1",
      "/2/eventID: eventID evt-equip-1 repeats event 0's with the same eventUpdatedDateTime"
    ]])
  })

  it("the clock, the aliases and the query, as for 2.2", () => {
    const future = equipment({ eventUpdatedDateTime: "2099-01-01T00:00:00Z" })
    assert.deepStrictEqual(messages(read({ events: [future] }, { now: Date.parse("2026-01-18T00:00:00Z") })), [[
      0,
      "evt-equip-1",
      "/0/eventUpdatedDateTime: eventUpdatedDateTime 2099-01-01T00:00:00Z lies in the future"
    ]])
    assert.strictEqual(read({ events: [future] }).events.length, 1)
    const quirky = equipment({
      eventClassification: { eventTypeCode: "EQUIPMENT", eventClassifierCode: "PLAN", equipmentEventTypeCode: "GTIN" }
    })
    assert.deepStrictEqual(
      read({ events: [quirky] }, { classifierAliases: { PLAN: "PLN" } }).events.map((e) => e.classifier),
      ["PLN"]
    )
    assert.match(read({ events: [quirky] }).malformed[0]!.message, /^\/0\/eventClassification\/eventClassifierCode: /)
    const asked = read({ events: [equipment(), transport()] }, {
      query: { equipment: "MSKU9070323", booking: "ABC709951" }
    })
    assert.deepStrictEqual(messages(asked), [[
      0,
      "evt-equip-1",
      "/0/equipmentDetails/equipmentReference: names container APZU4812090, not the container asked for (MSKU9070323)"
    ]])
  })

  it("a body that is not an object with an events array is unreadable as a whole", () => {
    assert.deepStrictEqual(
      DcsaTnt30.decode([equipment()], { source: "carrier" }),
      Either.left("the body must be a JSON object with an \"events\" array, got an array")
    )
    assert.deepStrictEqual(
      DcsaTnt30.decode({ events: "none" }, { source: "carrier" }),
      Either.left("\"events\" must be an array, got a string")
    )
    assert.deepStrictEqual(read({ feedbackElements: [] }), { events: [], malformed: [] })
  })

  it("the feedback a consumer answers a push with: an ERROR at each malformed event", () => {
    const out = read({ events: [equipment(), 5, equipment({ eventID: "evt-2", eventDateTime: "soon" })] })
    assert.deepStrictEqual(DcsaTnt30.postEventsResponse(out.malformed), {
      feedbackElements: [
        { severity: "ERROR", message: "/1: must be a JSON object, got a number", propertyPath: "$.events[1]" },
        {
          severity: "ERROR",
          message:
            "/2/eventDateTime: eventDateTime must be an RFC 3339 date-time with an offset, for example 2021-01-09T14:12:56+01:00",
          propertyPath: "$.events[2]"
        }
      ]
    })
  })
})

describe("DcsaTnt30: properties", () => {
  it.prop("decode(encode(event)) is the event, and raw is the encoded event", [trackingEvent("3.0")], ([event]) => {
    const encoded = DcsaTnt30.encode(event)
    const out = read({ events: [encoded] })
    assert.deepStrictEqual(out.malformed, [])
    assert.deepStrictEqual(out.events, [{ ...event, raw: JSON.stringify(encoded) }])
  }, { fastCheck: { numRuns: 300 } })

  it.prop(
    "a malformed event never removes a good one: the good events in order, the broken ones at their indices",
    [
      fc.uniqueArray(trackingEvent("3.0"), { selector: (e) => e.event_id, minLength: 1, maxLength: 8 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...corruptions("3.0"))), { maxLength: 5 })
    ],
    ([events, breaks]) => {
      const { broken, elements } = withBroken(events.map(DcsaTnt30.encode), breaks)
      const out = read({ events: elements })
      assert.deepStrictEqual(out.events.map((e) => e.event_id), events.map((e) => e.event_id))
      assert.deepStrictEqual(out.malformed.map((m) => m.index), broken)
    },
    { fastCheck: { numRuns: 200 } }
  )
})
