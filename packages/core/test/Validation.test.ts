import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, JSONSchema, Layer, ParseResult, Schema } from "effect"
import * as DcsaTntScheme from "../src/DcsaTntScheme.js"
import type { ValidationError } from "../src/DownstreamError.js"
import type { Environment } from "../src/Environment.js"
import { leavesOf } from "../src/internal/parseIssues.js"
import * as Iso6346 from "../src/Iso6346.js"
import * as Locations from "../src/Locations.js"
import { StorageError } from "../src/StorageError.js"
import { EventInput, RecordGroup, TradeflowRecord, TradeflowRecordInput } from "../src/TradeflowRecord.js"
import { issuesFromParseError, validateRequest } from "../src/Validation.js"

const validate = (body: unknown, form: "array" | "any" = "array", environment: Environment = "uat") =>
  validateRequest(body, { environment, form }).pipe(Effect.provide(Locations.layerBuiltin))

const run = (body: unknown, form: "array" | "any" = "array", environment: Environment = "uat") =>
  Effect.runSync(Effect.either(validate(body, form, environment)))

const errorsOf = (body: unknown, form: "array" | "any" = "array"): ValidationError["errors"] => {
  const result = run(body, form)
  if (Either.isRight(result)) return assert.fail("expected a ValidationError")
  assert.strictEqual(result.left._tag, "ValidationError")
  return (result.left as ValidationError).errors
}

const warningsOf = (body: unknown, environment: Environment = "uat", form: "array" | "any" = "array") => {
  const result = run(body, form, environment)
  if (Either.isLeft(result)) return assert.fail(`expected success, got ${JSON.stringify(result.left)}`)
  return result.right.warnings
}

const ok = { tradeflow_reference: "PO-1", container_reference: "CSQU3054383" }

describe("Validation.validateRequest: body shape", () => {
  it("POST /downstream requires an array", () => {
    const errors = errorsOf(ok, "array")
    assert.strictEqual(errors.length, 1)
    assert.strictEqual(errors[0]!.path, "")
    assert.match(errors[0]!.message, /array/)
  })

  it("POST /downstream/tradeflows takes one object or an array", () => {
    assert.isTrue(Either.isRight(run(ok, "any")))
    assert.isTrue(Either.isRight(run([ok], "any")))
    for (const body of [null, 5, "x", true]) {
      const errors = errorsOf(body, "any")
      assert.deepStrictEqual(errors.map((e) => e.path), [""])
    }
  })

  it("an empty array is rejected", () => {
    for (const form of ["array", "any"] as const) {
      const errors = errorsOf([], form)
      assert.deepStrictEqual(errors.map((e) => e.path), [""])
      assert.match(errors[0]!.message, /at least one/)
    }
  })

  it("a non-object element is reported at its index", () => {
    assert.deepStrictEqual(errorsOf([ok, 5, null, []]).map((e) => e.path), ["/1", "/2", "/3"])
  })
})

describe("Validation.validateRequest: record rules", () => {
  it("reports every issue of every record with JSON Pointers", () => {
    const errors = errorsOf([
      { container_reference: "CSQU3054383" },
      ok,
      {
        tradeflow_reference: "PO-3",
        booking_reference: "B1",
        port_of_loading: "XX",
        events: [{ message: "gate in" }, { message: "gate out", event_date: "yesterday" }]
      }
    ])
    assert.deepStrictEqual(errors.map((e) => e.path), [
      "/0/tradeflow_reference",
      "/2/port_of_loading",
      "/2/events/1/event_date"
    ])
    assert.match(errors[0]!.message, /^tradeflow_reference is required$/)
    assert.match(errors[1]!.message, /^port_of_loading must be a 5-character UN\/LOCODE/)
    assert.match(errors[2]!.message, /^events\[1\]\.event_date must be an ISO 8601 date-time/)
  })

  it("a single-object body has pointers without an index", () => {
    const errors = errorsOf({ tradeflow_reference: "PO-1", booking_reference: "B", port_of_discharge: "NLRTMX" }, "any")
    assert.deepStrictEqual(errors.map((e) => e.path), ["/port_of_discharge"])
  })

  it("none of the three references gives the 'at least one of' message, also beside other problems", () => {
    for (
      const record of [{ tradeflow_reference: "PO-1" }, { tradeflow_reference: "PO-1", container_reference: [] }, {
        tradeflow_reference: "PO-1",
        vessel: 5
      }]
    ) {
      const errors = errorsOf([record])
      const atLeastOne = errors.filter((e) =>
        e.message.startsWith("at least one of container_reference, bill_of_lading_reference, booking_reference")
      )
      assert.strictEqual(atLeastOne.length, 1, JSON.stringify(errors))
      assert.isTrue(atLeastOne[0]!.path.startsWith("/0/"))
    }
  })

  it("wrong types are errors naming the field and what was sent", () => {
    const errors = errorsOf([{
      tradeflow_reference: 7,
      container_reference: "CSQU3054383",
      port_of_loading: 5,
      explicit_arrival_confirmation: "yes"
    }])
    assert.deepStrictEqual(errors, [
      { path: "/0/tradeflow_reference", message: "tradeflow_reference must be a string, got a number" },
      { path: "/0/port_of_loading", message: "port_of_loading must be a string, got a number" },
      {
        path: "/0/explicit_arrival_confirmation",
        message: "explicit_arrival_confirmation must be a boolean, got a string"
      }
    ])
  })

  it("one clear message per problem: no 'Expected undefined' noise, unions collapsed", () => {
    const errors = errorsOf([{
      tradeflow_reference: "PO-1",
      container_reference: [{ reference: "" }, 4],
      booking_reference: ["", 3],
      estimated_time_of_departure: "soon",
      configuration: { enroll_insurance: "y" },
      mock_tracking: { scenario: 1 },
      partners: [{}]
    }])
    assert.deepStrictEqual(errors, [
      { path: "/0/container_reference/0/reference", message: "container_reference[0].reference must not be empty" },
      {
        path: "/0/container_reference/1",
        message: "container_reference[1] must be a string or an object, got a number"
      },
      { path: "/0/booking_reference/0", message: "booking_reference[0] must not be empty" },
      { path: "/0/booking_reference/1", message: "booking_reference[1] must be a string, got a number" },
      {
        path: "/0/estimated_time_of_departure",
        message: "estimated_time_of_departure must be an ISO 8601 date-time, for example 2026-11-22T10:00:00+01:00"
      },
      {
        path: "/0/configuration/enroll_insurance",
        message: "configuration.enroll_insurance must be a boolean, got a string"
      },
      { path: "/0/partners/0/name", message: "partners[0].name is required" },
      { path: "/0/mock_tracking/scenario", message: "mock_tracking.scenario must be a string, got a number" }
    ])
    for (const e of errors) assert.notMatch(e.message, /Expected|undefined/)
  })

  it("mock_tracking.speed is one of instant, fast, normal, slow: anything else is an error with its pointer, in either environment", () => {
    for (const speed of ["instant", "fast", "normal", "slow"]) {
      assert.isTrue(Either.isRight(run([{ ...ok, mock_tracking: { scenario: "ocean_basic", speed } }])))
    }
    const message = "mock_tracking.speed must be one of \"instant\", \"fast\", \"normal\", \"slow\""
    for (const speed of ["warp", "FAST", 1, null, ""]) {
      assert.deepStrictEqual(errorsOf([ok, { ...ok, mock_tracking: { scenario: "ocean_basic", speed } }]), [
        { path: "/1/mock_tracking/speed", message }
      ])
    }
    const production = run({ ...ok, mock_tracking: { scenario: "ocean_basic", speed: "warp" } }, "any", "production")
    if (Either.isRight(production)) return assert.fail("expected a ValidationError")
    assert.deepStrictEqual((production.left as ValidationError).errors, [{ path: "/mock_tracking/speed", message }])
  })

  it("JSON Pointer escapes ~ and /", () => {
    let deep: unknown = 1
    for (let i = 0; i < 40; i++) deep = [deep]
    const errors = errorsOf([ok, { ...ok, "a/b~c": deep }])
    assert.strictEqual(errors.length, 1)
    assert.isTrue(errors[0]!.path.startsWith("/1/a~1b~0c/0/0"), errors[0]!.path)
  })

  it("unknown extra keys are ignored", () => {
    const result = run([{ ...ok, surprise: { deep: [1, 2] }, another: null }])
    assert.isTrue(Either.isRight(result))
  })
})

describe("Validation.validateRequest: grouping and warnings", () => {
  it("groups by reference in first-appearance order with one warning list per group", () => {
    const result = run([
      { tradeflow_reference: "B", container_reference: "CSQU3054383" },
      { tradeflow_reference: "A", booking_reference: "BK1" },
      { tradeflow_reference: "B", container_reference: ["MSCU1234567"] }
    ])
    if (Either.isLeft(result)) return assert.fail("expected success")
    assert.deepStrictEqual(result.right.groups.map((g) => [g.tradeflow_reference, g.records.length]), [["B", 2], [
      "A",
      1
    ]])
    assert.deepStrictEqual(result.right.warnings, [
      ["container_reference at /2/container_reference/0: \"MSCU1234567\" fails the ISO 6346 check digit (expected 6); accepted as sent"],
      []
    ])
  })

  it("warns about check digits, unknown UN/LOCODEs, UAT-ignored fields, unknown scenarios and missing offsets", () => {
    const [warnings] = warningsOf(
      {
        tradeflow_reference: "PO-1",
        container_reference: [{ reference: "MSCU1234567" }],
        port_of_loading: "nlrtm",
        port_of_discharge: "XXABC",
        customer_name: "ACME",
        partners: [{ name: "Forwarder" }],
        mock_tracking: { scenario: "teleport" },
        estimated_time_of_arrival: "2026-11-22T10:00",
        actual_time_of_departure: "2026-11-20T10:00:00+01:00",
        events: [{ message: "gate in", container_reference: "CSQU3054384", event_date: "2026-11-19" }]
      },
      "uat",
      "any"
    )
    assert.deepStrictEqual(warnings, [
      "container_reference at /container_reference/0/reference: \"MSCU1234567\" fails the ISO 6346 check digit (expected 6); accepted as sent",
      "events[0].container_reference at /events/0/container_reference: \"CSQU3054384\" fails the ISO 6346 check digit (expected 3); accepted as sent",
      "port_of_discharge at /port_of_discharge: unknown UN/LOCODE XXABC; accepted, but no location details are known",
      "customer_name at /customer_name is ignored in UAT",
      "partners at /partners is ignored in UAT",
      "mock_tracking.scenario at /mock_tracking/scenario: unknown scenario \"teleport\" is ignored, no mock events are generated (known: ocean_basic, ocean_full, rolled_shipment, delayed_eta, empty)",
      "estimated_time_of_arrival at /estimated_time_of_arrival: date-time without an offset, read as UTC",
      "events[0].event_date at /events/0/event_date: date-time without an offset, read as UTC"
    ])
  })

  it("in production: mock_tracking is ignored with a warning, customer_name and partners are not", () => {
    const [warnings] = warningsOf([{
      ...ok,
      customer_name: "ACME",
      partners: [{ name: "F" }],
      mock_tracking: { scenario: "ocean_basic" }
    }], "production")
    assert.deepStrictEqual(warnings, ["mock_tracking at /0/mock_tracking is ignored in production"])
    const [uat] = warningsOf([{ ...ok, mock_tracking: { scenario: "ocean_basic" } }], "uat")
    assert.deepStrictEqual(uat, [])
  })

  it("in UAT, mock dates more than 365 days from now are warned about: the journey uses the bound instead", () => {
    const far = {
      ...ok,
      mock_tracking: { scenario: "ocean_basic" },
      actual_time_of_departure: "1000-01-01T00:00:00Z",
      estimated_time_of_arrival: "9999-01-01T00:00:00Z"
    }
    const [warnings] = warningsOf([far], "uat")
    assert.deepStrictEqual(warnings, [
      "estimated_time_of_arrival at /0/estimated_time_of_arrival: more than 365 days after now; the mock journey uses the date 365 days after now instead",
      "actual_time_of_departure at /0/actual_time_of_departure: more than 365 days before now; the mock journey uses the date 365 days before now instead"
    ])
    const near = new Date(Date.now() - 300 * 86_400_000).toISOString()
    assert.deepStrictEqual(
      warningsOf([{ ...far, actual_time_of_departure: near, estimated_time_of_arrival: near }], "uat")[0],
      []
    )
    assert.deepStrictEqual(warningsOf([{ ...far, mock_tracking: undefined }], "uat")[0], [])
  })

  it.effect("asks the Locations port about UN/LOCODEs", () =>
    Effect.gen(function*() {
      const custom = [{
        unlocode: "XXABC",
        name: "X",
        country: { name: "X", iso_a2: "XX" },
        timezone: "UTC",
        coordinates: { lat: 0, lng: 0 }
      }]
      const result = yield* validateRequest([{ ...ok, port_of_loading: "XXABC", port_of_discharge: "NLRTM" }], {
        environment: "production",
        form: "array"
      }).pipe(Effect.provide(Locations.layerFromList(custom)))
      assert.deepStrictEqual(result.warnings, [[
        "port_of_discharge at /0/port_of_discharge: unknown UN/LOCODE NLRTM; accepted, but no location details are known"
      ]])
    }))

  it.effect("a failing directory fails with its StorageError", () =>
    Effect.gen(function*() {
      const failing = Layer.succeed(
        Locations.Locations,
        Locations.Locations.of({
          lookup: () => Effect.fail(new StorageError({ operation: "lookup", cause: "down" })),
          all: Effect.succeed([])
        })
      )
      const error = yield* validateRequest([{ ...ok, port_of_loading: "NLRTM" }], { environment: "uat", form: "array" })
        .pipe(
          Effect.provide(failing),
          Effect.flip
        )
      assert.strictEqual(error._tag, "StorageError")
    }))
})

describe("Validation.validateRequest: hostile input", () => {
  it("__proto__ and constructor keys pollute nothing", () => {
    const body = JSON.parse(
      "[{\"tradeflow_reference\":\"PO-1\",\"booking_reference\":\"B\",\"__proto__\":{\"polluted\":1}," +
        "\"constructor\":{\"prototype\":{\"polluted\":2}},\"configuration\":{\"__proto__\":{\"polluted\":3}," +
        "\"constructor\":{\"prototype\":{\"polluted\":4}}}," +
        "\"container_reference\":[{\"reference\":\"CSQU3054383\",\"custom_properties\":{\"__proto__\":{\"polluted\":5}}}]}]"
    )
    const result = run(body)
    if (Either.isLeft(result)) return assert.fail("expected success")
    const record = result.right.groups[0]!.records[0]!
    assert.strictEqual(({} as Record<string, unknown>)["polluted"], undefined)
    assert.strictEqual(Object.getPrototypeOf(record.configuration), Object.prototype)
    assert.strictEqual((record.configuration as Record<string, unknown>)["polluted"], undefined)
    assert.isFalse(Object.prototype.hasOwnProperty.call(record.configuration, "__proto__"))
    const props = record.container_reference![0]!.custom_properties!
    assert.strictEqual(Object.getPrototypeOf(props), Object.prototype)
    assert.strictEqual(props["polluted"], undefined)
  })

  it("deeply nested values are a ValidationError, not a crash", () => {
    let deep: unknown = "bottom"
    for (let i = 0; i < 100_000; i++) deep = { a: [deep] }
    const errors = errorsOf([{ ...ok, configuration: { x: deep } }])
    assert.strictEqual(errors.length, 1)
    assert.isTrue(errors[0]!.path.startsWith("/0/configuration/x/"))
    assert.match(errors[0]!.message, /nested too deeply/)
  })

  it("huge requests are validated without crashing", () => {
    const records = Array.from(
      { length: 10_000 },
      (_, i) => ({ ...ok, tradeflow_reference: `PO-${i % 500}`, vessel: "x".repeat(100) })
    )
    const result = run(records)
    if (Either.isLeft(result)) return assert.fail("expected success")
    assert.strictEqual(result.right.groups.length, 500)
    const broken = run([{ ...ok, vessel: "v".repeat(2_000_000), port_of_loading: [..."x".repeat(100_000)] }])
    assert.isTrue(Either.isLeft(broken))
  })
})

const knownPorts = ["NLRTM", "CNSHA", "SGSIN", "USLAX", "deham", " BEANR "]
const locode = fc.oneof(fc.constantFrom(...knownPorts), fc.stringMatching(/^[A-Za-z]{2}[A-Za-z2-9]{3}$/))
const containerNumber = fc.oneof(
  fc.constantFrom("CSQU3054383", "csqu 305438-3", "MSCU1234567"),
  fc.stringMatching(/^[A-Z]{4}\d{7}$/)
)
const nonEmpty = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== "")
const dateTime = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }).chain((ms) => {
  const iso = new Date(ms).toISOString()
  return fc.constantFrom(
    iso,
    iso.slice(0, 19),
    iso.slice(0, 10),
    `${iso.slice(0, 19)}+02:00`,
    `${iso.slice(0, 16)}-0530`
  )
})
const references = fc.oneof(nonEmpty, fc.array(nonEmpty, { minLength: 1, maxLength: 3 }))

const validRecord = fc.record({
  tradeflow_reference: fc.constantFrom("PO-1", "PO-2", "PO-3", "CSQU3054383"),
  container_reference: fc.oneof(
    containerNumber,
    fc.array(
      fc.oneof(containerNumber, containerNumber.map((reference) => ({ reference, custom_properties: { k: 1 } }))),
      {
        minLength: 1,
        maxLength: 3
      }
    )
  ),
  bill_of_lading_reference: references,
  booking_reference: references,
  port_of_loading: locode,
  port_of_discharge: locode,
  estimated_time_of_departure: dateTime,
  estimated_time_of_arrival: dateTime,
  actual_time_of_departure: dateTime,
  explicit_arrival_confirmation: fc.boolean(),
  vessel: fc.string(),
  customer_name: fc.string(),
  carrier_scac: fc.string(),
  configuration: fc.record({ enroll_insurance: fc.boolean(), other: fc.jsonValue() }, { requiredKeys: [] }),
  references: fc.record({ house_bill_of_lading: fc.string(), delivery_event_date: dateTime }, { requiredKeys: [] }),
  events: fc.array(
    fc.record({ message: nonEmpty, container_reference: containerNumber, event_date: dateTime, actual: fc.boolean() }, {
      requiredKeys: ["message"]
    }),
    { maxLength: 3 }
  ),
  partners: fc.array(fc.record({ name: nonEmpty, role: fc.string() }, { requiredKeys: ["name"] }), { maxLength: 2 }),
  mock_tracking: fc.record({ scenario: fc.constantFrom("ocean_basic", "teleport", "") }),
  active: fc.boolean(),
  x_unknown: fc.jsonValue({ maxDepth: 3 })
}, { requiredKeys: ["tradeflow_reference"] }).map((r): Record<string, unknown> =>
  r.container_reference === undefined && r.bill_of_lading_reference === undefined && r.booking_reference === undefined
    ? { ...r, booking_reference: "BK-1" }
    : r
)

const breakers: ReadonlyArray<(r: Record<string, unknown>) => Record<string, unknown>> = [
  ({ tradeflow_reference: _, ...r }) => r,
  (r) => ({ ...r, tradeflow_reference: 5 }),
  (r) => ({ ...r, tradeflow_reference: "   " }),
  ({ container_reference: _c, bill_of_lading_reference: _b, booking_reference: _k, ...r }) => r,
  ({ bill_of_lading_reference: _b, booking_reference: _k, ...r }) => ({ ...r, container_reference: [] }),
  (r) => ({ ...r, port_of_loading: 5 }),
  (r) => ({ ...r, port_of_discharge: "XX" }),
  (r) => ({ ...r, estimated_time_of_arrival: "next tuesday" }),
  (r) => ({ ...r, explicit_departure_confirmation: "yes" }),
  (r) => ({ ...r, events: [{}] }),
  (r) => ({ ...r, events: "gate in" }),
  (r) => ({ ...r, booking_reference: [""] }),
  (r) => ({ ...r, container_reference: { reference: 1 } }),
  (r) => ({ ...r, references: { delivery_event_date: "x" } }),
  (r) => ({ ...r, mock_tracking: {} }),
  (r) => ({ ...r, partners: [{ role: "x" }] }),
  (r) => ({ ...r, configuration: { enroll_insurance: 1 } })
]

describe("Validation.validateRequest: properties", () => {
  it.prop(
    "valid records are always accepted, one group per distinct reference, whatever the warnings",
    [fc.array(validRecord, { minLength: 1, maxLength: 8 }), fc.constantFrom<Environment>("uat", "production")],
    ([records, environment]) => {
      const result = run(records, "array", environment)
      if (Either.isLeft(result)) return assert.fail(JSON.stringify(result.left))
      const distinct = [...new Set(records.map((r) => r["tradeflow_reference"]))]
      assert.deepStrictEqual(result.right.groups.map((g) => g.tradeflow_reference), distinct)
      assert.strictEqual(result.right.warnings.length, distinct.length)
      assert.strictEqual(result.right.groups.flatMap((g) => g.records).length, records.length)
      for (const warnings of result.right.warnings) {
        assert.strictEqual(new Set(warnings).size, warnings.length)
        for (const w of warnings) assert.match(w, /^[a-z_.[\]0-9]+ at \/\d+\//)
      }
    }
  )

  it.prop(
    "one broken field at index i gives a ValidationError whose paths all start with /i/",
    [fc.array(validRecord, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat({ max: breakers.length - 1 })],
    ([records, at, which]) => {
      const index = at % records.length
      const body = records.map((r, i) => (i === index ? breakers[which]!(r) : r))
      const errors = errorsOf(body)
      assert.isAbove(errors.length, 0)
      for (const e of errors) {
        assert.isTrue(e.path.startsWith(`/${index}/`), `${e.path} ${e.message}`)
        assert.notMatch(e.message, /Expected undefined/)
      }
    }
  )

  it.prop("a single object behaves like a one-element array, without the index", [
    validRecord,
    fc.nat({ max: breakers.length - 1 })
  ], ([record, which]) => {
    const asObject = run(breakers[which]!(record), "any")
    const asArray = run([breakers[which]!(record)], "any")
    if (Either.isRight(asObject) || Either.isRight(asArray)) return assert.fail("expected errors")
    const strip = (errors: ValidationError["errors"]) => errors.map((e) => ({ ...e, path: e.path.replace(/^\/0/, "") }))
    assert.deepStrictEqual(
      (asObject.left as ValidationError).errors,
      strip((asArray.left as ValidationError).errors)
    )
  })
})

describe("Validation.validateRequest: bounded problems", () => {
  it("one record with 32,000 events of 1: a 422 with at most 101 issues, a small document", () => {
    const errors = errorsOf([{ ...ok, events: Array.from({ length: 32_000 }, () => 1) }])
    assert.isAtMost(errors.length, 101)
    assert.isBelow(JSON.stringify(errors).length, 16_384)
    assert.deepStrictEqual(errors, [{
      path: "/0/events",
      message: "events must hold at most 1,000 entries per record, got 32,000"
    }])
  })

  it("a problem lists at most 100 issues, then counts the rest", () => {
    const errors = errorsOf(Array.from({ length: 1_000 }, () => ({ ...ok, port_of_loading: "XX" })))
    assert.strictEqual(errors.length, 101)
    assert.deepStrictEqual(errors.slice(0, 2).map((e) => e.path), ["/0/port_of_loading", "/1/port_of_loading"])
    assert.deepStrictEqual(errors[100], { path: "", message: "and 900 more problems not listed" })
  })

  it("a record of 1,000 broken events among 300 such records: every problem counted, 100 listed", () => {
    const record = { ...ok, events: Array.from({ length: 1_000 }, () => 1) }
    const errors = errorsOf(Array.from({ length: 300 }, () => record))
    assert.strictEqual(errors.length, 101)
    assert.deepStrictEqual(errors[99], { path: "/0/events/99", message: "events[99] must be an object, got a number" })
    assert.deepStrictEqual(errors[100], { path: "", message: "and 299,900 more problems not listed" })
  })
})

const parseErrorOf = <A, I>(schema: Schema.Schema<A, I>, value: unknown): ParseResult.ParseError => {
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all" })(value)
  if (Either.isRight(decoded)) return assert.fail("expected a ParseError")
  return decoded.left
}

/** Wraps every node of a parse issue tree in a proxy counting the reads of its properties. */
const counted = (root: ParseResult.ParseIssue) => {
  const count = { nodes: 0, reads: 0, actuals: 0 }
  const wrap = (node: ParseResult.ParseIssue): ParseResult.ParseIssue => {
    count.nodes++
    const children = new Map<PropertyKey, unknown>()
    if ("issue" in node) children.set("issue", wrap(node.issue))
    if ("issues" in node) {
      children.set(
        "issues",
        Array.isArray(node.issues) ? node.issues.map(wrap) : wrap(node.issues as ParseResult.ParseIssue)
      )
    }
    return new Proxy(node, {
      get: (target, property, receiver) => {
        count.reads++
        if (property === "actual") count.actuals++
        return children.has(property) ? children.get(property) : Reflect.get(target, property, receiver)
      }
    })
  }
  return { issue: wrap(root), count }
}

describe("Validation.validateRequest: giving way", () => {
  it("runs pause after each record and after each tradeflow's warnings, failing or not", () => {
    for (
      const [body, expected] of [[[ok, ok, { ...ok, tradeflow_reference: "PO-2" }], 5], [[ok, 5, {
        ...ok,
        port_of_loading: 1
      }], 3]] as const
    ) {
      let pauses = 0
      Effect.runSync(Effect.either(
        validateRequest(body, { environment: "uat", form: "array", pause: Effect.sync(() => void pauses++) }).pipe(
          Effect.provide(Locations.layerBuiltin)
        )
      ))
      assert.strictEqual(pauses, expected)
    }
  })

  it("with pauseEveryMillis, runs pause only once that much work has passed since it last ran", () => {
    const body = Array.from({ length: 200 }, (_, i) => ({
      ...ok,
      tradeflow_reference: `PO-${i}`,
      events: [{ message: "gate in" }]
    }))
    const count = (pauseEveryMillis: number, work: () => void) => {
      let pauses = 0
      Effect.runSync(
        validateRequest(body, {
          environment: "uat",
          form: "array",
          pause: Effect.sync(() => {
            pauses++
            work()
          }),
          pauseEveryMillis
        }).pipe(Effect.provide(Locations.layerBuiltin))
      )
      return pauses
    }
    const busy = () => {
      const until = performance.now() + 2
      while (performance.now() < until);
    }
    assert.strictEqual(count(60_000, () => {}), 0)
    assert.isAtLeast(count(1, busy), 200)
  })
})

describe("Validation.validateRequest: limits", () => {
  const container = (i: number) => {
    const owner = `${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26) % 26)}CU`
    const serial = String(i).padStart(6, "0")
    return `${owner}${serial}${Iso6346.checkDigit(owner + serial)}`
  }
  const lists: ReadonlyArray<readonly [key: string, max: number, entry: (i: number) => unknown]> = [
    ["events", 1_000, (i) => ({ message: `event ${i}` })],
    ["partners", 100, (i) => ({ name: `partner ${i}` })],
    ["container_reference", 1_000, container],
    ["booking_reference", 100, (i) => `BK-${i}`],
    ["bill_of_lading_reference", 100, (i) => `BL-${i}`]
  ]

  for (const [key, max, entry] of lists) {
    it(`${key}: ${max} per record accepted, ${max + 1} refused naming the field, before its entries are decoded`, () => {
      const atLimit = run([{ ...ok, [key]: Array.from({ length: max }, (_, i) => entry(i)) }], "array", "production")
      assert.isTrue(Either.isRight(atLimit), JSON.stringify(Either.isLeft(atLimit) ? atLimit.left : ""))
      const over = Array.from({ length: max + 1 }, (_, i) => i === max ? 1 : entry(i))
      assert.deepStrictEqual(errorsOf([ok, { ...ok, tradeflow_reference: 5, [key]: over }]), [
        {
          path: `/1/${key}`,
          message: `${key} must hold at most ${max.toLocaleString("en")} entries per record, got ${
            (max + 1).toLocaleString("en")
          }`
        }
      ])
    })
  }

  it("the input schema holds the same limits (for decoders that skip the pre-check), in its JSON Schema too; stored jobs' does not", () => {
    const decoded = Schema.decodeUnknownEither(TradeflowRecordInput, { errors: "all" })({
      ...ok,
      booking_reference: Array.from({ length: 101 }, (_, i) => `B${i}`)
    })
    if (Either.isRight(decoded)) return assert.fail("expected a ParseError")
    assert.deepStrictEqual(issuesFromParseError(decoded.left, "", undefined, "record"), [
      { path: "/booking_reference", message: "booking_reference must hold at most 100 entries per record, got 101" }
    ])
    const jsonSchema = JSON.stringify(JSONSchema.make(TradeflowRecordInput))
    assert.deepStrictEqual(
      jsonSchema.match(/"maxItems":\d+/g),
      ["1000", "100", "100", "1000", "100"].map((n) => `"maxItems":${n}`)
    )
    const stored = {
      tradeflow_reference: "*",
      records: [{ ...ok, tradeflow_reference: "*", events: Array.from({ length: 1_001 }, () => ({ message: "m" })) }]
    }
    assert.isTrue(Either.isRight(Schema.decodeUnknownEither(RecordGroup)(stored)))
  })

  it("per tradeflow and request: 1,000 distinct containers and 1,000 events in all, then a 422 at the record that crosses", () => {
    const containers = (from: number, n: number) => Array.from({ length: n }, (_, i) => container(from + i))
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ message: `e${i}` }))
    const fits = [
      { ...ok, container_reference: containers(0, 600), events: events(500) },
      { ...ok, container_reference: containers(200, 800), events: events(500) },
      { ...ok, tradeflow_reference: "PO-2", container_reference: containers(0, 1_000), events: events(1_000) }
    ]
    assert.isTrue(Either.isRight(run(fits, "array", "production")))
    const errors = errorsOf([...fits, { ...ok, container_reference: containers(1_000, 1), events: events(1) }])
    assert.deepStrictEqual(errors, [
      {
        path: "/3/container_reference",
        message:
          "the records with tradeflow_reference \"PO-1\" in this request name more than 1,000 distinct containers (from this record " +
          "on); at most 1,000 are accepted per tradeflow and request"
      },
      {
        path: "/3/events",
        message: "the records with tradeflow_reference \"PO-1\" in this request hold more than 1,000 events " +
          "(from this record on); at most 1,000 are accepted per tradeflow and request"
      }
    ])
  })

  it("warnings: at most 100 listed in all, each tradeflow's unlisted ones counted", () => {
    const many = Array.from({ length: 400 }, (_, i) => `ABCU${String(i).padStart(7, "0")}`).filter((c) =>
      !Iso6346.isValid(c)
    )
    const [one] = warningsOf([{ ...ok, container_reference: many.slice(0, 300) }], "production")
    assert.strictEqual(one!.length, 101)
    assert.strictEqual(one![100], "and 200 more warnings not listed")
    const three = warningsOf([
      { ...ok, tradeflow_reference: "A", container_reference: many.slice(0, 80) },
      { ...ok, tradeflow_reference: "B", container_reference: many.slice(80, 130) },
      { ...ok, tradeflow_reference: "C", container_reference: many.slice(130, 135) },
      { ...ok, tradeflow_reference: "D" }
    ], "production")
    assert.deepStrictEqual(three.map((w) => w.length), [80, 21, 1, 0])
    assert.strictEqual(three[1]![20], "and 30 more warnings not listed")
    assert.deepStrictEqual(three[2], ["and 5 more warnings not listed"])
  })

  it("a tradeflow reference * is refused: it stands for every tradeflow in a DELETE", () => {
    const message =
      "tradeflow_reference must not be \"*\", which stands for every tradeflow (DELETE /downstream/tradeflows/*)"
    for (const reference of ["*", " * "]) {
      assert.deepStrictEqual(errorsOf([ok, { ...ok, tradeflow_reference: reference }]), [{
        path: "/1/tradeflow_reference",
        message
      }])
    }
    assert.isTrue(Either.isRight(run([{ ...ok, tradeflow_reference: "**" }, { ...ok, tradeflow_reference: "PO-*" }])))
  })
})

describe("Validation.issuesFromParseError: linear collection", () => {
  it("visits each node of the error a bounded number of times, and never formats a mismatched value", () => {
    for (const n of [1_000, 32_000]) {
      const error = parseErrorOf(Schema.Array(EventInput), Array.from({ length: n }, () => 1))
      const { count, issue } = counted(error.issue)
      const issues = issuesFromParseError(new ParseResult.ParseError({ issue }), "/events", [], "events")
      assert.strictEqual(issues.length, n)
      assert.strictEqual(count.nodes, 3 * n + 1)
      assert.isAtMost(count.reads, 5 * count.nodes)
      assert.strictEqual(count.actuals, 0)
    }
  })

  const fieldNames = Object.keys(TradeflowRecord.from.fields)
  const anyRecord = fc.dictionary(fc.constantFrom(...fieldNames), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 })
  const agrees = (error: ParseResult.ParseError) => {
    const leaves = leavesOf(error.issue)
    const formatted = ParseResult.ArrayFormatter.formatIssueSync(error.issue)
    assert.strictEqual(leaves.length, formatted.length)
    leaves.forEach((leaf, i) => {
      const f = formatted[i]!
      assert.deepStrictEqual(leaf.path.map(String), f.path.map(String))
      assert.strictEqual(leaf.tag, f._tag)
      assert.isTrue(
        leaf.message === f.message || f.message.startsWith(`${leaf.message}, actual `),
        `${leaf.message} / ${f.message}`
      )
    })
  }

  it.prop(
    "the leaves of one walk are the formatter's, in order (mismatch messages without the value)",
    [fc.oneof(
      fc.tuple(validRecord, fc.nat({ max: breakers.length - 1 })).map(([r, which]) => breakers[which]!(r)),
      anyRecord
    )],
    ([record]) => {
      const decoded = Schema.decodeUnknownEither(TradeflowRecordInput, { errors: "all" })(record)
      if (Either.isLeft(decoded)) agrees(decoded.left)
    }
  )

  it.prop(
    "and so for DCSA events",
    [fc.record({
      eventType: fc.constantFrom("TRANSPORT", "EQUIPMENT", "SHIPMENT"),
      eventClassifierCode: fc.oneof(fc.constantFrom("ACT", "PLN"), fc.jsonValue({ maxDepth: 1 })),
      eventDateTime: fc.oneof(fc.constant("2024-01-01"), fc.jsonValue({ maxDepth: 1 })),
      transportEventTypeCode: fc.oneof(fc.constantFrom("ARRI", "DEPA"), fc.jsonValue({ maxDepth: 1 })),
      equipmentEventTypeCode: fc.oneof(fc.constantFrom("LOAD", "GTIN"), fc.jsonValue({ maxDepth: 1 })),
      transportCall: fc.jsonValue({ maxDepth: 2 }),
      documentReferences: fc.jsonValue({ maxDepth: 3 })
    }, { requiredKeys: ["eventType"] })],
    ([event]) => {
      const schema = event.eventType === "TRANSPORT"
        ? DcsaTntScheme.TransportEvent
        : event.eventType === "EQUIPMENT"
        ? DcsaTntScheme.EquipmentEvent
        : DcsaTntScheme.ShipmentEvent
      const decoded = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>, { errors: "all" })(event)
      if (Either.isLeft(decoded)) agrees(decoded.left)
    }
  )
})
