import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as DcsaTntScheme from "../src/DcsaTntScheme.js"
import * as Locations from "../src/Locations.js"
import type { SchemeError } from "../src/Schemes.js"
import { fromMessage } from "../src/StatusCode.js"
import { validateRequest } from "../src/Validation.js"

const fixture = readFileSync(join(import.meta.dirname, "fixtures", "schemes", "dcsa-tnt-2.2-events.json"))

/** Decodes in one go: the event loop "turns" without leaving the fiber, so that runSync can run it. */
const run = (body: unknown, query: Record<string, string> = {}, contentType = "application/json") =>
  Effect.runSync(Effect.either(DcsaTntScheme.decode({
    contentType,
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
    query
  }, { turn: Effect.void })))

const records = (body: unknown, query?: Record<string, string>) => {
  const result = run(body, query)
  if (Either.isLeft(result)) return assert.fail(`expected records, got ${JSON.stringify(result.left.errors)}`)
  return result.right
}

const failure = (body: unknown, query?: Record<string, string>, contentType?: string): SchemeError => {
  const result = run(body, query, contentType)
  if (Either.isRight(result)) return assert.fail(`expected a SchemeError, got ${JSON.stringify(result.right)}`)
  return result.left
}

const validate = (body: unknown) =>
  Effect.runSync(Effect.either(
    validateRequest(body, { environment: "production", form: "array" }).pipe(Effect.provide(Locations.layerBuiltin))
  ))

const bkg = (value: string) => ({ documentReferenceType: "BKG", documentReferenceValue: value })
const trd = (value: string) => ({ documentReferenceType: "TRD", documentReferenceValue: value })
const transport = (code: "ARRI" | "DEPA", extra: Record<string, unknown> = {}) => ({
  eventType: "TRANSPORT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-07T11:30:00+01:00",
  transportEventTypeCode: code,
  transportCall: { UNLocationCode: "NLRTM", modeOfTransport: "VESSEL" },
  documentReferences: [bkg("BK1")],
  ...extra
})
const equipment = (code: string, extra: Record<string, unknown> = {}) => ({
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-05T09:40:00+01:00",
  equipmentEventTypeCode: code,
  equipmentReference: "CSQU3054383",
  eventLocation: { UNLocationCode: "NLRTM" },
  documentReferences: [bkg("BK1")],
  ...extra
})

describe("DcsaTntScheme.decode", () => {
  it("imports the fixture: one record per booking, events mapped, SHIPMENT events only add references", () => {
    const [first, second, ...rest] = records(fixture)
    const box = { container_reference: "CSQU3054383" }
    assert.deepStrictEqual(rest, [])
    assert.deepStrictEqual(first, {
      tradeflow_reference: "ABC709951",
      container_reference: ["CSQU3054383"],
      booking_reference: ["ABC709951"],
      bill_of_lading_reference: ["ABCU12345678"],
      port_of_loading: "NLRTM",
      port_of_discharge: "CNSHA",
      vessel: "EVER GIVEN",
      events: [
        {
          ...box,
          message: "Gate out empty",
          location_name: "NLRTM",
          event_date: "2024-03-03T08:55:00+01:00",
          actual: true
        },
        {
          ...box,
          message: "Gate in full",
          location_name: "NLRTM",
          event_date: "2024-03-05T09:40:00+01:00",
          actual: true
        },
        {
          ...box,
          message: "Loaded on vessel",
          location_name: "NLRTM",
          event_date: "2024-03-07T02:15:00+01:00",
          actual: true
        },
        { message: "Vessel departure", location_name: "NLRTM", event_date: "2024-03-07T11:30:00+01:00", actual: true },
        { message: "Vessel arrival", location_name: "CNSHA", event_date: "2024-04-02T06:00:00+08:00", actual: false },
        {
          ...box,
          message: "Unloaded from vessel",
          location_name: "CNSHA",
          event_date: "2024-04-03T10:00:00+08:00",
          actual: false
        }
      ]
    })
    assert.deepStrictEqual(second, {
      tradeflow_reference: "XYZ000042",
      container_reference: ["MSKU9070323"],
      booking_reference: ["XYZ000042"],
      events: [{
        message: "Stuffed (STUF)",
        container_reference: "MSKU9070323",
        location_name: "Shipper warehouse Venlo",
        event_date: "2024-03-08T09:00:00+01:00",
        actual: true
      }]
    })
    assert.isTrue(Either.isRight(validate([first, second])))
  })

  it("the reference query parameter puts every event into one record", () => {
    const out = records(fixture, { reference: " PO-4711 " })
    assert.deepStrictEqual(
      out.map((r) => [r["tradeflow_reference"], r["booking_reference"], r["container_reference"]]),
      [
        ["PO-4711", ["ABC709951", "XYZ000042"], ["CSQU3054383", "MSKU9070323"]]
      ]
    )
    assert.strictEqual((out[0]!["events"] as Array<unknown>).length, 7)
  })

  it("status codes per DCSA event (the documented table)", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string | undefined]> = [
      [transport("DEPA"), "VD"],
      [transport("ARRI"), "VA"],
      [transport("DEPA", { transportCall: { modeOfTransport: "BARGE" } }), "VD"],
      [transport("DEPA", { transportCall: {} }), "VD"],
      [transport("DEPA", { transportCall: { modeOfTransport: "RAIL" } }), undefined],
      [transport("ARRI", { transportCall: { modeOfTransport: "TRUCK" } }), undefined],
      [equipment("LOAD"), "AE"],
      [equipment("DISC"), "UV"],
      [equipment("GTIN"), "GN"],
      [equipment("GTIN", { emptyIndicatorCode: "LADEN" }), "GN"],
      [equipment("GTIN", { emptyIndicatorCode: "EMPTY" }), "GR"],
      [equipment("GTOT"), "GT"],
      [equipment("GTOT", { emptyIndicatorCode: "LADEN" }), "GT"],
      [equipment("GTOT", { emptyIndicatorCode: "EMPTY" }), "GE"],
      [equipment("PICK"), "GE"],
      [equipment("PICK", { emptyIndicatorCode: "LADEN" }), "GT"],
      [equipment("DROP"), "GR"],
      [equipment("DROP", { emptyIndicatorCode: "LADEN" }), "GN"],
      ...["STUF", "STRP", "INSP", "RSEA", "RMVD"].map((c) => [equipment(c), undefined] as const)
    ]
    for (const [event, code] of cases) {
      const [record] = records([event])
      const [mapped] = record!["events"] as Array<{ message: string }>
      assert.strictEqual(fromMessage(mapped!.message), code, JSON.stringify(event))
    }
    const [rail] = records([transport("DEPA", { transportCall: { modeOfTransport: "RAIL" } })])
    assert.deepStrictEqual((rail!["events"] as Array<{ message: string }>).map((e) => e.message), [
      "Rail departure (DEPA)"
    ])
  })

  it("actual only for ACT", () => {
    const actual = ["PLN", "EST", "ACT"].map((c) =>
      (records([equipment("LOAD", { eventClassifierCode: c })])[0]!["events"] as Array<{ actual: boolean }>)[0]!.actual
    )
    assert.deepStrictEqual(actual, [false, false, true])
  })

  it("location: the event's UN/LOCODE first, then the transport call's, then a location name", () => {
    const locationOf = (event: Record<string, unknown>) =>
      (records([event])[0]!["events"] as Array<{ location_name?: string }>)[0]!.location_name
    assert.strictEqual(
      locationOf(
        equipment("LOAD", { eventLocation: { UNLocationCode: " deham " }, transportCall: { UNLocationCode: "NLRTM" } })
      ),
      "DEHAM"
    )
    assert.strictEqual(
      locationOf(
        equipment("LOAD", { eventLocation: { locationName: "Depot" }, transportCall: { UNLocationCode: "NLRTM" } })
      ),
      "NLRTM"
    )
    assert.strictEqual(locationOf(equipment("LOAD", { eventLocation: { locationName: "Depot" } })), "Depot")
    assert.strictEqual(
      locationOf(transport("ARRI", { transportCall: { location: { UNLocationCode: "SGSIN", locationName: "PSA" } } })),
      "SGSIN"
    )
    assert.strictEqual(locationOf(equipment("LOAD", { eventLocation: undefined })), undefined)
  })

  it("groups by booking; an event naming only a bill of lading joins the booking it is listed with elsewhere", () => {
    const out = records([
      equipment("GTIN", { documentReferences: [trd("TD1")] }),
      transport("DEPA", { documentReferences: [bkg("BK2")] }),
      equipment("LOAD", { documentReferences: [trd("TD1"), bkg("BK1")] }),
      equipment("DISC", { equipmentReference: "MSKU9070323", documentReferences: [trd("TD9")] }),
      {
        eventType: "SHIPMENT",
        eventClassifierCode: "ACT",
        documentTypeCode: "TRD",
        documentID: "TD2",
        documentReferences: [bkg("BK2")]
      }
    ])
    const summary = out.map((
      r
    ) => [
      r["tradeflow_reference"],
      r["booking_reference"],
      r["bill_of_lading_reference"],
      (r["events"] as Array<unknown>).length
    ])
    assert.deepStrictEqual(summary, [
      ["BK1", ["BK1"], ["TD1"], 2],
      ["BK2", ["BK2"], ["TD2"], 1],
      ["TD9", undefined, ["TD9"], 1]
    ])
  })

  it("port of loading, port of discharge and vessel come from the vessel moves", () => {
    const [record] = records([
      transport("ARRI", {
        eventDateTime: "2024-04-20T00:00:00Z",
        transportCall: { UNLocationCode: "USNYC", vessel: { vesselName: "FEEDER" } }
      }),
      transport("DEPA", {
        eventDateTime: "2024-03-20T00:00:00Z",
        transportCall: { UNLocationCode: "SGSIN", vessel: { vesselName: "FEEDER" } }
      }),
      transport("DEPA", {
        eventDateTime: "2024-03-01T00:00:00Z",
        transportCall: { UNLocationCode: "CNSHA", vessel: { vesselName: "MOTHER" } }
      }),
      transport("ARRI", { eventDateTime: "2024-03-15T00:00:00Z", transportCall: { UNLocationCode: "SGSIN" } }),
      transport("ARRI", {
        eventDateTime: "2024-05-01T00:00:00Z",
        transportCall: { UNLocationCode: "USCHI", modeOfTransport: "RAIL" }
      })
    ])
    assert.deepStrictEqual([record!["port_of_loading"], record!["port_of_discharge"], record!["vessel"]], [
      "CNSHA",
      "USNYC",
      "MOTHER"
    ])
  })
})

describe("DcsaTntScheme.decode: errors point into the array", () => {
  it("shape of the body", () => {
    assert.deepStrictEqual(failure({ eventType: "TRANSPORT" }).errors, [{
      path: "",
      message: "the body must be a JSON array of DCSA Track & Trace 2.2 events, got an object"
    }])
    assert.deepStrictEqual(failure([]).errors.map((e) => e.path), [""])
    assert.strictEqual(failure("[{").reason, "malformed")
    assert.strictEqual(failure([], {}, "text/csv").reason, "unsupported_media_type")
    assert.isTrue(Either.isRight(run([equipment("LOAD")], {}, "application/vnd.dcsa+json; charset=utf-8")))
    const tooMany = failure(Array.from({ length: DcsaTntScheme.maxEvents + 1 }, () => 0))
    assert.deepStrictEqual([tooMany.reason, tooMany.errors.map((e) => e.path)], ["too_large", [""]])
  })

  it("each broken event at its pointer", () => {
    const error = failure([
      equipment("LOAD"),
      5,
      { eventType: "PARTY" },
      transport("DEPA", { eventClassifierCode: "REQ", eventDateTime: "soon", transportCall: { UNLocationCode: "NL" } }),
      equipment("WASH"),
      transport("ARRI", { transportCall: undefined }),
      equipment("LOAD", { documentReferences: [] })
    ])
    assert.strictEqual(error.reason, "invalid")
    assert.deepStrictEqual(error.errors.map((e) => e.path), [
      "/1",
      "/2/eventType",
      "/3/eventClassifierCode",
      "/3/eventDateTime",
      "/3/transportCall/UNLocationCode",
      "/4/equipmentEventTypeCode",
      "/5/transportCall"
    ])
    assert.deepStrictEqual(error.errors.slice(0, 2).map((e) => e.message), [
      "event 1: must be a JSON object, got a number",
      "event 2: eventType must be one of \"TRANSPORT\", \"EQUIPMENT\", \"SHIPMENT\", got \"PARTY\""
    ])
    assert.match(error.errors[4]!.message, /^event 3: transportCall\.UNLocationCode must be a 5-character UN\/LOCODE/)
  })

  it("an equipmentReference of only spaces and hyphens is no container number (found by the property below)", () => {
    assert.deepStrictEqual(failure([equipment("LOAD"), equipment("LOAD", { equipmentReference: " - " })]).errors, [
      { path: "/1/equipmentReference", message: "event 1: equipmentReference must be a container number" }
    ])
  })

  it("an event without a booking or bill of lading reference needs the reference parameter", () => {
    const other = [{ documentReferenceType: "XYZ", documentReferenceValue: "1" }]
    assert.deepStrictEqual(failure([equipment("LOAD"), equipment("DISC", { documentReferences: other })]).errors, [{
      path: "/1/documentReferences",
      message: "event 1: no BKG or TRD document reference to find its tradeflow by; " +
        "add one, or send the tradeflow reference as the query parameter reference"
    }])
    assert.strictEqual(records([equipment("DISC", { documentReferences: undefined })], { reference: "PO-1" }).length, 1)
  })

  it("a tradeflow needs a container or a document reference; the reference parameter must not be empty", () => {
    assert.deepStrictEqual(
      failure([transport("DEPA", { documentReferences: undefined })], { reference: "PO-1" }).errors.map((e) => e.path),
      [""]
    )
    assert.deepStrictEqual(failure([equipment("LOAD")], { reference: " " }).errors, [{
      path: "reference",
      message: "reference must not be empty"
    }])
  })
})

const locode = fc.constantFrom("NLRTM", "CNSHA", "SGSIN", "DEHAM", "XXABC", " usnyc ")
const date = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).chain((ms) =>
  fc.constantFrom(new Date(ms).toISOString(), new Date(ms).toISOString().slice(0, 19) + "-05:00")
)
const classifier = fc.constantFrom("PLN", "EST", "ACT")
const name = fc.string({ maxLength: 10 })
const container = fc.constantFrom("CSQU3054383", "MSKU9070323", "msku 907032-3", "ABCD1234567", "X")
const docRef = fc.record({
  documentReferenceType: fc.constantFrom("BKG", "TRD", "BOL", "CBR"),
  documentReferenceValue: fc.constantFrom("BK1", "BK2", " TD1 ", "TD2")
})
const location = fc.record({ UNLocationCode: locode, locationName: name }, { requiredKeys: [] })
const transportCall = fc.record({
  transportCallID: fc.uuid(),
  UNLocationCode: locode,
  modeOfTransport: fc.constantFrom("VESSEL", "BARGE", "RAIL", "TRUCK"),
  location,
  vessel: fc.record({ vesselName: name, vesselIMONumber: fc.constant("9811000") }, { requiredKeys: [] })
}, { requiredKeys: ["transportCallID"] })
const common = (refs: fc.Arbitrary<Array<unknown>>) => ({
  eventID: fc.uuid(),
  eventCreatedDateTime: date,
  eventClassifierCode: classifier,
  eventDateTime: date,
  documentReferences: refs
})
const event = (refs: fc.Arbitrary<Array<unknown>>) =>
  fc.oneof(
    fc.record({
      eventType: fc.constant("TRANSPORT"),
      ...common(refs),
      transportEventTypeCode: fc.constantFrom("ARRI", "DEPA"),
      transportCall
    }),
    fc.record({
      eventType: fc.constant("EQUIPMENT"),
      ...common(refs),
      equipmentEventTypeCode: fc.constantFrom(
        "LOAD",
        "DISC",
        "GTIN",
        "GTOT",
        "PICK",
        "DROP",
        "STUF",
        "STRP",
        "INSP",
        "RSEA",
        "RMVD"
      ),
      equipmentReference: container,
      emptyIndicatorCode: fc.constantFrom("EMPTY", "LADEN"),
      eventLocation: location,
      transportCall
    }, {
      requiredKeys: [
        "eventType",
        "eventClassifierCode",
        "eventDateTime",
        "equipmentEventTypeCode",
        "documentReferences"
      ]
    }),
    fc.record({
      eventType: fc.constant("SHIPMENT"),
      eventClassifierCode: fc.constantFrom("ACT", "REQ"),
      shipmentEventTypeCode: fc.constantFrom("CONF", "ISSU", "RECE"),
      documentTypeCode: fc.constantFrom("BKG", "TRD", "SHI"),
      documentID: fc.constantFrom("BK3", "TD3"),
      documentReferences: refs
    }, { requiredKeys: ["eventType", "documentReferences"] })
  )
/**
 * The generated events as DCSA's conformance data would accept them: one event per eventID
 * (`tnt-220-response-wrong-event-ids.json`), and an actual event created once it happened
 * (`tnt-220-response-wrong-date-times.json`, "too early"); a repeated eventID is dropped and the
 * creation moved to the event's date.
 */
const plausible = <A extends Record<string, unknown>>(events: ReadonlyArray<A>): Array<A> => {
  const ids = new Set<unknown>()
  return events.map((e) => {
    const { eventID, ...rest } = e
    const unique = eventID === undefined || ids.has(eventID) ? rest : { ...rest, eventID }
    ids.add(eventID)
    const [created, happened] = [e["eventCreatedDateTime"], e["eventDateTime"]]
    const early = e["eventClassifierCode"] === "ACT" && typeof created === "string" && typeof happened === "string" &&
      Date.parse(created) < Date.parse(happened)
    return (early ? { ...unique, eventCreatedDateTime: happened } : unique) as unknown as A
  })
}

const withReference = docRef.filter((r) => r.documentReferenceType !== "CBR")
const referenced = event(
  fc.tuple(fc.array(docRef, { maxLength: 2 }), withReference, fc.array(docRef, { maxLength: 2 })).map((
    [a, b, c]
  ) => [...a, b, ...c])
)

describe("DcsaTntScheme.decode: properties", () => {
  const batch = fc.array(referenced, { minLength: 1, maxLength: 12 }).map(plausible)
  it.prop("events with document references decode, and every record passes Validation", [batch], ([events]) => {
    const out = records(events)
    assert.isTrue(Either.isRight(validate(out)), JSON.stringify(validate(out)))
    const imported = out.flatMap((r) => (r["events"] as Array<unknown> | undefined) ?? [])
    assert.strictEqual(imported.length, events.filter((e) => e.eventType !== "SHIPMENT").length)
    for (const r of out) {
      const refs = (key: string) => (r[key] as Array<string> | undefined) ?? []
      assert.include([...refs("booking_reference"), ...refs("bill_of_lading_reference")], r["tradeflow_reference"])
    }
  }, { fastCheck: { numRuns: 300 } })

  it.prop(
    "with the reference parameter: one record that passes Validation, or the one error saying why not",
    [fc.array(event(fc.array(docRef, { maxLength: 2 })), { minLength: 1, maxLength: 8 }).map(plausible)],
    ([events]) => {
      const result = run(events, { reference: "PO-1" })
      const hasReference = events.some((e) =>
        ("equipmentReference" in e && e.equipmentReference !== undefined) ||
        DcsaTntScheme.documentReferencesOf(e as DcsaTntScheme.DcsaEvent).length > 0
      )
      if (Either.isRight(result)) {
        assert.isTrue(hasReference)
        assert.deepStrictEqual(result.right.map((r) => r["tradeflow_reference"]), ["PO-1"])
        assert.isTrue(Either.isRight(validate(result.right)))
      } else {
        assert.isFalse(hasReference)
        assert.deepStrictEqual(result.left.errors.map((e) => e.path), [""])
      }
    },
    { fastCheck: { numRuns: 300 } }
  )

  const corruption = fc.constantFrom<ReadonlyArray<readonly [string, unknown]>>(
    [["eventDateTime", "yesterday"]],
    [["eventClassifierCode", "XXX"]],
    [["eventType", "OTHER"]],
    [["documentReferences", "BK1"]],
    [["eventType", "TRANSPORT"], ["transportEventTypeCode", "GTIN"]],
    [["eventType", "EQUIPMENT"], ["eventLocation", { UNLocationCode: "R" }]]
  )
  it.prop(
    "errors point at the broken event",
    [fc.array(referenced, { minLength: 1, maxLength: 8 }).map(plausible), fc.nat(), corruption],
    ([events, n, changes]) => {
      const i = n % events.length
      const broken = events.map((e, j) =>
        j === i ? { ...e, eventType: "TRANSPORT", transportCall: {}, ...Object.fromEntries(changes) } : e
      )
      const errors = failure(broken).errors
      assert.isAbove(errors.length, 0)
      assert.isTrue(
        errors.every((e) => e.path.startsWith(`/${i}/`) && e.message.startsWith(`event ${i}: `)),
        JSON.stringify(errors)
      )
    },
    { fastCheck: { numRuns: 200 } }
  )
})

describe("DcsaTntScheme.decode: bounded work", () => {
  it("an event with 32,000 document references of 1: a 422 with at most 101 issues, naming the field", () => {
    const error = failure([equipment("LOAD", { documentReferences: Array.from({ length: 32_000 }, () => 1) })])
    assert.strictEqual(error.reason, "invalid")
    assert.isAtMost(error.errors.length, 101)
    assert.isBelow(JSON.stringify(error.errors).length, 16_384)
    assert.deepStrictEqual(error.errors, [{
      path: "/0/documentReferences",
      message: "event 0: documentReferences must hold at most 100 entries per event, got 32,000"
    }])
  })

  it("documentReferences: 100 per event accepted, 101 refused before they are decoded", () => {
    const refs = (n: number) => Array.from({ length: n }, (_, i) => i === 0 ? bkg("BK1") : trd(`T${i}`))
    assert.strictEqual(records([equipment("LOAD", { documentReferences: refs(100) })]).length, 1)
    for (
      const event of [
        equipment("LOAD", { documentReferences: refs(101) }),
        transport("DEPA", { documentReferences: refs(101) })
      ]
    ) {
      assert.deepStrictEqual(failure([equipment("LOAD"), event]).errors, [{
        path: "/1/documentReferences",
        message: "event 1: documentReferences must hold at most 100 entries per event, got 101"
      }])
    }
    const shipment = failure([equipment("LOAD"), {
      eventType: "SHIPMENT",
      documentReferences: Array.from({ length: 101 }, () => 1)
    }])
    assert.deepStrictEqual(shipment.errors.map((e) => e.path), ["/1/documentReferences"])
  })

  it("many broken events: 100 problems listed, the rest counted", () => {
    const error = failure(
      Array.from({ length: 5_000 }, () => equipment("LOAD", { eventDateTime: "soon", eventClassifierCode: 1 }))
    )
    assert.strictEqual(error.errors.length, 101)
    assert.deepStrictEqual(error.errors[100], { path: "", message: "and 9,900 more problems not listed" })
  })

  it("a body that is not UTF-8 is malformed (400), not read with replacement characters", () => {
    const text = new TextEncoder().encode(JSON.stringify([equipment("LOAD", { equipmentReference: "CSQU3054383" })]))
    const at = text.indexOf("C".charCodeAt(0), text.indexOf("equipmentReference".charCodeAt(0)) + 20)
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]]) {
      const body = new Uint8Array([...text.slice(0, at), ...bad, ...text.slice(at)])
      const error = failure(body)
      assert.deepStrictEqual([error.reason, error.errors], ["malformed", [{
        path: "",
        message: "the body is not UTF-8 text"
      }]])
    }
    assert.isTrue(Either.isRight(run(new Uint8Array([0xef, 0xbb, 0xbf, ...text]))))
  })
})
