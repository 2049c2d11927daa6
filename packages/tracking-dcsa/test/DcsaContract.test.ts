/**
 * Contract tests against DCSA's own documents, vendored outside the repository at
 * `../shared/vendor/dcsa-tnt` (relative to its root): the OpenAPI documents of 2.2 and 3.0 and
 * DCSA's sample messages. Where the folder is missing they do not run, and say so; under
 * `CI=true` its absence fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { DcsaTnt22, DcsaTnt30, DcsaTntScheme } from "@tradeflow/core"
import { Ajv, type ValidateFunction } from "ajv"
import addFormatsModule from "ajv-formats"
import { Effect, Either, TestClock } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import * as DcsaSource from "../src/DcsaSource.js"
import { day, FakeCarrier, Http, profileOf, T0 } from "./Fixture.js"
import * as Receiver from "./Receiver.js"

const vendor = join(import.meta.dirname, "..", "..", "..", "..", "shared", "vendor", "dcsa-tnt")
const present = existsSync(join(vendor, "schemas", "TNT_v2.2.0-resolved.yaml"))

const missing = `DCSA contract tests did not run: ${vendor} is missing`

if (!present && process.env["CI"] === "true") {
  describe("DCSA contract (CI)", () => {
    it("has DCSA's vendored documents", () => {
      assert.fail(`${missing}, and under CI=true they must run`)
    })
  })
} else if (!present) {
  console.warn(`${missing} (they run where DCSA's vendored files are; under CI=true their absence fails)`)
}

type Json = Record<string, unknown>

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** A schema of an OpenAPI document, its local `$ref`s made to point into the document registered as `id`. */
const within = (schema: unknown, id: string): unknown =>
  Array.isArray(schema)
    ? schema.map((s) => within(s, id))
    : typeof schema === "object" && schema !== null
    ? Object.fromEntries(
      Object.entries(schema).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? `${id}${v}` : within(v, id)])
    )
    : schema

const at = (value: unknown, ...path: ReadonlyArray<string | number>): any =>
  path.reduce<any>((v, k) => (v === undefined ? undefined : v[k]), value)

/** The documents' validators, built once the first test that needs them runs. */
const contract = (() => {
  let built: ReturnType<typeof build> | undefined
  return () => (built ??= build())
})()

function build() {
  const doc22 = parse(readFileSync(join(vendor, "schemas", "TNT_v2.2.0-resolved.yaml"), "utf8"))
  const doc30 = parse(readFileSync(join(vendor, "schemas", "TNT_v3.0.0.yaml"), "utf8"))

  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addFormat("$date-time", true)
  ajv.addSchema({ components: doc22.components }, "tnt22")
  ajv.addSchema({ components: doc30.components }, "tnt30")
  const compile = (schema: unknown, id: "tnt22" | "tnt30"): ValidateFunction =>
    ajv.compile(within(schema, id) as object)

  const events22 = at(doc22, "paths", "/v2/events", "get")
  const subscriptions22 = at(doc22, "paths", "/v2/event-subscriptions")
  const callback22 = at(subscriptions22, "post", "callbacks", "event", "{$request.body.callbackUrl}", "post")
  const events30 = at(doc30, "paths", "/events")
  const json = (operation: unknown, status: string) =>
    at(operation, "responses", status, "content", "application/json", "schema")
  const v = {
    answer22: compile(json(events22, "200"), "tnt22"),
    error22: compile(json(events22, "default"), "tnt22"),
    event22: compile(at(json(events22, "200"), "items"), "tnt22"),
    subscribe22: compile(at(subscriptions22, "post", "requestBody", "content", "application/json", "schema"), "tnt22"),
    subscription22: compile(json(at(subscriptions22, "post"), "201"), "tnt22"),
    subscriptions22: compile(json(at(subscriptions22, "get"), "200"), "tnt22"),
    callback22: compile(at(callback22, "requestBody", "content", "application/json", "schema"), "tnt22"),
    answer30: compile(json(at(events30, "get"), "200"), "tnt30"),
    error30: compile(json(at(events30, "get"), "default"), "tnt30"),
    push30: compile(at(events30, "post", "requestBody", "content", "application/json", "schema"), "tnt30"),
    pushAnswer30: compile(json(at(events30, "post"), "200"), "tnt30")
  }
  const callbackHeader = (name: string) =>
    compile((callback22.parameters as Array<Json>).find((p) => p["name"] === name)!["schema"], "tnt22")

  const problems = (validate: ValidateFunction, value: unknown): string =>
    validate(value) ? "" : JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message}`))

  /** The problems of a GET's query parameters against the operation's parameters (2.2 date operators allowed). */
  const parameterProblems = (
    operation: Json,
    params: ReadonlyArray<readonly [string, string]>,
    id: "tnt22" | "tnt30"
  ) =>
    params.flatMap(([name, value]) => {
      const [base, operator] = name.split(":") as [string, string | undefined]
      if (
        operator !== undefined &&
        !(base === "eventCreatedDateTime" && ["gte", "gt", "lte", "lt", "eq"].includes(operator))
      ) {
        return [`${name}: no such operator`]
      }
      const spec = (operation["parameters"] as Array<Json>).find((p) => p["in"] === "query" && p["name"] === base)
      if (spec === undefined) return [`${name}: not a parameter of the operation`]
      const schema = spec["schema"] as Json
      const typed = schema["type"] === "array" ? value.split(",") : schema["type"] === "integer" ? Number(value) : value
      const found = problems(compile(schema, id), typed)
      return found === "" ? [] : [`${name}=${value}: ${found}`]
    })
  /** The headers a 2.2 GET /v2/events answer must have (`Current-Page`). */
  const requiredHeaders22 = Object.entries(at(events22, "responses", "200", "headers") as Record<string, Json>)
    .filter(([, header]) => {
      const ref = header["$ref"]
      return (typeof ref === "string" ? at(doc22, ...ref.slice(2).split("/")) : header)?.required === true
    })
    .map(([name]) => name.toLowerCase())
  return { v, callbackHeader, problems, parameterProblems, events22, events30, requiredHeaders22 }
}

const message = (name: string): unknown => JSON.parse(readFileSync(join(vendor, "messages", name), "utf8"))

describe.skipIf(!present)(present ? "DCSA contract: the vendored 2.2 and 3.0 documents and samples" : missing, () => {
  it("the documents' schemas are read: they refuse what DCSA calls wrong", () => {
    const { v } = contract()
    assert.isFalse(v.answer22(message("tnt-220-response-wrong-date-times.json")))
    assert.isFalse(v.event22({ eventType: "TRANSPORT", eventCreatedDateTime: "2021-01-01T00:00:00Z" }))
    assert.isFalse(v.answer30({ events: [{ eventDateTime: "soon" }] }))
    assert.isFalse(v.subscribe22({ callbackUrl: "https://example.com/cb" }))
  })

  it("DCSA's 2.2 sample answer decodes to its events, as a carrier's answer and as a dcsa-tnt payload", () => {
    const { problems, v } = contract()
    const sample = message("tnt-220-response.json") as Array<Json>
    assert.strictEqual(problems(v.answer22, sample), "")
    const decoded = DcsaTnt22.decode(sample, { source: "sample", now: Date.parse("2026-11-28T00:00:00Z") })
    assert.isTrue(Either.isRight(decoded))
    if (Either.isRight(decoded)) {
      assert.deepStrictEqual(decoded.right.malformed, [])
      assert.deepStrictEqual(decoded.right.events.map((e) => e.event_id), sample.map((e) => e["eventID"]))
      assert.deepStrictEqual(
        decoded.right.events.map((e) => [e.event_type, e.event_code, e.status_code]),
        [
          ["TRANSPORT", "ARRI", "VA"],
          ["SHIPMENT", "DRFT", null],
          ["EQUIPMENT", "LOAD", "AE"],
          ["TRANSPORT", "ARRI", "VA"],
          ["SHIPMENT", "DRFT", null],
          ["EQUIPMENT", "LOAD", "AE"],
          ["SHIPMENT", "DRFT", null]
        ]
      )
    }
    const records = Effect.runSync(Effect.either(DcsaTntScheme.decode(
      { contentType: "application/json", body: JSON.stringify(sample), query: {} },
      { turn: Effect.void }
    )))
    assert.isTrue(Either.isRight(records), JSON.stringify(records))
  })

  it("DCSA's 3.0 samples decode to their events (IoT and reefer skipped)", () => {
    const { problems, v } = contract()
    for (
      const [name, validate] of [
        ["tnt-300-response.json", v.answer30],
        ["tnt-300-response-nextpage.json", v.answer30],
        ["tnt-300-request-equipment.json", v.push30],
        ["tnt-300-request-shipment.json", v.push30],
        ["tnt-300-request-transport.json", v.push30],
        ["tnt-300-request-iot.json", v.push30],
        ["tnt-300-request-reefer.json", v.push30]
      ] as const
    ) {
      const body = message(name) as { events: Array<Json> }
      assert.strictEqual(problems(validate, body), "", name)
      const decoded = DcsaTnt30.decode(body, { source: "sample", now: Date.parse("2026-11-28T00:00:00Z") })
      if (Either.isLeft(decoded)) return assert.fail(decoded.left)
      const tracked = body.events.filter((e) =>
        !["IOT", "REEFER"].includes(at(e, "eventClassification", "eventTypeCode"))
      )
      assert.deepStrictEqual(decoded.right.malformed, [], name)
      assert.deepStrictEqual(decoded.right.events.map((e) => e.event_id), tracked.map((e) => e["eventID"]), name)
    }
  })

  /**
   * DCSA's wrong samples, event by event: which events are good, and where each other one is wrong.
   * The attribute values are wrong for a query (the conformance tool checks them against the query
   * parameters): asked for the container APZU4812090 of DCSA's valid sample, the event naming
   * another container is malformed.
   */
  const wrong: ReadonlyArray<readonly [string, DcsaTnt22.DecodeOptions, ReadonlyArray<number>, ReadonlyArray<string>]> =
    [
      ["tnt-220-response-wrong-attribute-values.json", { source: "s", query: { equipment: "APZU4812090" } }, [0, 1], [
        "/2/equipmentReference: names container APZU2134567, not the container asked for (APZU4812090)"
      ]],
      ["tnt-220-response-wrong-date-times.json", { source: "s", now: Date.parse("2026-11-28T00:00:00Z") }, [0], [
        "/1/eventCreatedDateTime: eventCreatedDateTime is required",
        "/2/eventDateTime: eventDateTime is required",
        "/3/eventCreatedDateTime: eventCreatedDateTime must be an RFC 3339 date-time",
        "/4/eventDateTime: eventDateTime must be an RFC 3339 date-time",
        "/5/eventDateTime: eventDateTime 2019-11-12T07:41:00+08:30 lies more than a day after eventCreatedDateTime",
        "/6/eventCreatedDateTime: eventCreatedDateTime 2099-01-01T14:12:56Z lies in the future"
      ]],
      ["tnt-220-response-wrong-event-ids.json", { source: "s" }, [2, 4, 5], [
        "/0/eventID: eventID must be a string, got a number",
        "/1/eventID: eventID must be a UUID",
        "/3/eventID: eventID 3cecb101-7a1a-43a4-9d62-e88a131651e8 repeats event 2's",
        "/6/eventID: eventID af7728dc-0e1e-42d2-ad78-61c5c0c25878 repeats event 5's"
      ]],
      ["tnt-220-response-wrong-structure.json", { source: "s" }, [], [
        "/0/eventType: eventType must be one of",
        "/1/eventType: eventType must be one of"
      ]]
    ]
  for (const [name, options, good, messages] of wrong) {
    it(`${name} is reported malformed event by event; events ${good.join(", ") || "none"} good`, () => {
      const { v } = contract()
      const body = message(name) as Array<Json>
      const decoded = DcsaTnt22.decode(body, options)
      if (Either.isLeft(decoded)) return assert.fail(decoded.left)
      const kept = decoded.right.events.map((e) => body.findIndex((b) => JSON.stringify(b) === e.raw))
      assert.deepStrictEqual(kept, good)
      assert.strictEqual(decoded.right.malformed.length, messages.length)
      decoded.right.malformed.forEach((m, i) => assert.isTrue(m.message.startsWith(messages[i]!), m.message))
      for (const [i, event] of body.entries()) {
        if (!v.event22(event)) assert.notInclude(good, i, `ajv refuses event ${i}, which we keep`)
      }
    })
  }

  it.effect("every request of the adapter and every answer of the fake validate against the documents", () =>
    Effect.gen(function*() {
      const { callbackHeader, events22, events30, parameterProblems, problems, requiredHeaders22, v } = contract()
      assert.deepStrictEqual(requiredHeaders22, ["current-page"])
      yield* TestClock.setTime(T0)
      const shipments = [
        { booking: "BK-BASIC1", bill_of_lading: "TD-BASIC1", containers: ["MSKU9070323", "CSQU3054383"] },
        { booking: "BK-FULL01", containers: ["MAEU1234567"], scenario: "ocean_full" },
        { booking: "BK-ROLL01", containers: ["CMAU0000010"], scenario: "rolled_shipment", mistake: true },
        { booking: "BK-ETA001", containers: ["APZU4812090"], scenario: "delayed_eta" },
        { booking: "BK-EMPTY1", containers: ["ABCU1234560"], scenario: "empty" }
      ]
      const fake = yield* FakeCarrier.make({ shipments, pagination: "next-page", release: { duplicates: true } })
      const receiver = yield* Receiver.make()
      const profiles = [
        profileOf(fake, { page_size: 3, push: "subscription" }),
        profileOf(fake, { version: "3.0", page_size: 3, push: "consumer", consumer_token: "contract-token" })
      ]
      const sources = yield* Effect.forEach(profiles, DcsaSource.make)
      const queries = shipments.flatMap((s) => [
        { equipment: s.containers[0] },
        { booking: s.booking },
        { booking: s.booking, equipment: s.containers[0] },
        ...(s.bill_of_lading === undefined ? [] : [{ bill_of_lading: s.bill_of_lading, equipment: s.containers[0] }])
      ])
      const push = sources[0]!.push
      if (push?._tag !== "Subscription") return assert.fail("a subscription push")
      const subscription = yield* push.subscribe({ booking: "BK-BASIC1" }, receiver.url)
      let since: number | null = null
      for (const step of [0, 2 * 3_600_000, 4 * day, 30 * day]) {
        yield* TestClock.adjust(step)
        for (const source of sources) {
          for (const query of queries) yield* source.fetch({ query, since })
        }
        since = T0 + step
        yield* fake.deliver
      }
      yield* Effect.promise(() => fetch(`${fake.url}/v2/event-subscriptions`))
      yield* Effect.promise(() => fetch(`${fake.url}/v2/event-subscriptions/${subscription.id}`))
      yield* push.unsubscribe(subscription.id)
      yield* push.unsubscribe(subscription.id)
      yield* fake.pushTo(receiver.url, -Infinity, "contract-token")
      for (
        const bad of [
          "/events?carrierBookingReference=BK-BASIC1&transportDocumentReference=TD-BASIC1",
          "/events",
          "/v2/events?limit=0",
          "/v2/events?equipmentReference=ZZZU0000000"
        ]
      ) {
        yield* Effect.promise(() => fetch(`${fake.url}${bad}`))
      }

      /** The adapter's requests (not the malformed ones this test sends by hand) say their API version. */
      const fromAdapter = (r: FakeCarrier.Received) => r.headers["api-version"] !== undefined
      const checked: Record<string, number> = {}
      const check = (what: string, validate: ValidateFunction, value: unknown) => {
        assert.strictEqual(problems(validate, value), "", `${what}: ${JSON.stringify(value).slice(0, 300)}`)
        checked[what] = (checked[what] ?? 0) + 1
      }
      for (const r of fake.received) {
        const body = r.answer?.body === undefined || r.answer.body === "" ? undefined : JSON.parse(r.answer.body)
        if (r.path === "/v2/events") {
          if (fromAdapter(r)) {
            assert.deepStrictEqual(parameterProblems(events22, r.params, "tnt22"), [], JSON.stringify(r.params))
          }
          check(
            r.status === 200 ? "2.2 GET /v2/events answer" : "2.2 error answer",
            r.status === 200 ? v.answer22 : v.error22,
            body
          )
          if (r.status === 200) {
            assert.deepStrictEqual(requiredHeaders22.filter((name) => r.answer?.headers[name] === undefined), [])
          }
        } else if (r.path === "/events") {
          if (fromAdapter(r)) {
            assert.deepStrictEqual(
              parameterProblems(at(events30, "get"), r.params, "tnt30"),
              [],
              JSON.stringify(r.params)
            )
          }
          check(
            r.status === 200 ? "3.0 GET /events answer" : "3.0 error answer",
            r.status === 200 ? v.answer30 : v.error30,
            body
          )
        } else if (r.path === "/v2/event-subscriptions" && r.method === "POST") {
          check("2.2 subscription request", v.subscribe22, JSON.parse(r.body))
          check("2.2 subscription answer", v.subscription22, body)
        } else if (r.path === "/v2/event-subscriptions") {
          check("2.2 subscriptions answer", v.subscriptions22, body)
        } else if (r.method === "GET") {
          check("2.2 subscription answer", v.subscription22, body)
        } else if (r.status !== 204) {
          check("2.2 error answer", v.error22, body)
        }
      }
      for (const got of receiver.got) {
        const body = JSON.parse(new TextDecoder().decode(got.body))
        if (got.headers["subscription-id"] === undefined) {
          check("3.0 POST /events request", v.push30, body)
          const consumer = sources[1]!.push
          if (consumer?._tag !== "Consumer") return assert.fail("a consumer push")
          const read = yield* consumer.read(got)
          check("3.0 POST /events answer", v.pushAnswer30, DcsaTnt30.postEventsResponse(read.malformed))
        } else {
          check("2.2 callback", v.callback22, body)
          check(
            "2.2 callback Notification-Signature",
            callbackHeader("Notification-Signature"),
            got.headers["notification-signature"]
          )
          check("2.2 callback Subscription-ID", callbackHeader("Subscription-ID"), got.headers["subscription-id"])
          const events = yield* push.verify({ headers: got.headers, body: got.body }, subscription)
          assert.deepStrictEqual(events.malformed, [])
        }
      }
      assert.deepStrictEqual(Object.keys(checked).sort(), [
        "2.2 GET /v2/events answer",
        "2.2 callback",
        "2.2 callback Notification-Signature",
        "2.2 callback Subscription-ID",
        "2.2 error answer",
        "2.2 subscription answer",
        "2.2 subscription request",
        "2.2 subscriptions answer",
        "3.0 GET /events answer",
        "3.0 POST /events answer",
        "3.0 POST /events request",
        "3.0 error answer"
      ])
      assert.isAbove(checked["2.2 GET /v2/events answer"]!, 100)
      assert.isAbove(checked["3.0 GET /events answer"]!, 100)
    }).pipe(Effect.scoped, Effect.provide(Http)))
})
