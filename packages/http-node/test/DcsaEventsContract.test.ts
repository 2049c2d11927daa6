/**
 * Contract of `GET /dcsa/v2/events` against DCSA's own Track & Trace 2.2 document, vendored outside
 * the repository at `../shared/vendor/dcsa-tnt` (relative to its root): every answer of the
 * conformance scenarios validates against the operation's 200 schema (each event against its
 * type's schema, and no field the document does not declare), every 400 against its error schema,
 * the requests the scenarios send against the operation's parameters, and our operation takes every
 * parameter of DCSA's (the three deprecated ones it refuses). Where the folder is missing these tests do not run, and say so; under
 * `CI=true` its absence fails.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Ajv, type ValidateFunction } from "ajv"
import addFormatsModule from "ajv-formats"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { badRequests, carrier, dataset, type Event, eventsOf, get, scenarios } from "./DcsaEventsData.js"
import { makeAppLayer, send } from "./Fixture.js"

const vendor = join(import.meta.dirname, "..", "..", "..", "..", "shared", "vendor", "dcsa-tnt")
const document = join(vendor, "schemas", "TNT_v2.2.0-resolved.yaml")
const present = existsSync(document)
const missing = `DCSA 2.2 contract tests of GET /dcsa/v2/events did not run: ${document} is missing`

if (!present && process.env["CI"] === "true") {
  describe("DCSA 2.2 contract of GET /dcsa/v2/events (CI)", () => {
    it("has DCSA's vendored document", () => {
      assert.fail(`${missing}, and under CI=true they must run`)
    })
  })
} else if (!present) {
  console.warn(`${missing} (they run where DCSA's vendored files are; under CI=true their absence fails)`)
}

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** The validators of the 2.2 document, built at the first use. */
const contract = (() => {
  let built: ReturnType<typeof build> | undefined
  return () => (built ??= build())
})()

function build() {
  const doc: Json = parse(readFileSync(document, "utf8"))
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addFormat("$date-time", true)
  /** A schema of the document, its `#/components/…` references resolved within the document. */
  const compile = (schema: unknown): ValidateFunction =>
    ajv.compile({ ...(schema as object), components: doc["components"] })
  const operation: Json = doc["paths"]["/v2/events"]["get"]
  const json = (status: string) => operation["responses"][status]["content"]["application/json"]["schema"]
  const schemas: Json = doc["components"]["schemas"]
  const resolve = (schema: Json): Json =>
    typeof schema["$ref"] === "string" ? resolve(schemas[schema["$ref"].replace("#/components/schemas/", "")]) : schema

  /** Every field path a schema declares (`transportCall.vessel.vesselIMONumber`, `documentReferences[].documentReferenceType`). */
  const declared = (schema: Json, prefix = "", out = new Set<string>(), seen = new Set<Json>()): Set<string> => {
    const s = resolve(schema)
    if (seen.has(s)) return out
    seen.add(s)
    for (const part of [...(s["allOf"] ?? []), ...(s["anyOf"] ?? []), ...(s["oneOf"] ?? [])]) {
      declared(part, prefix, out, new Set(seen))
    }
    if (s["items"] !== undefined) declared(s["items"], `${prefix}[]`, out, new Set(seen))
    for (const [name, property] of Object.entries<Json>(s["properties"] ?? {})) {
      const path = prefix === "" ? name : `${prefix}.${name}`
      out.add(path)
      declared(property, path, out, new Set(seen))
    }
    return out
  }
  const leaves = (value: unknown, prefix = ""): ReadonlyArray<string> =>
    Array.isArray(value)
      ? value.flatMap((v) => leaves(v, `${prefix}[]`))
      : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap((
        [k, v]
      ) => [prefix === "" ? k : `${prefix}.${k}`, ...leaves(v, prefix === "" ? k : `${prefix}.${k}`)])
      : []

  const parameters = (operation["parameters"] as Array<Json>).filter((p) => p["in"] === "query")
  const parameterValidators = new Map(parameters.map((p) => [p["name"] as string, compile(p["schema"])]))
  return {
    answer: compile(json("200")),
    error: compile(json("default")),
    events: {
      TRANSPORT: compile({ $ref: "#/components/schemas/transportEvent" }),
      EQUIPMENT: compile({ $ref: "#/components/schemas/equipmentEvent" })
    },
    fields: {
      TRANSPORT: declared({ $ref: "#/components/schemas/transportEvent" }),
      EQUIPMENT: declared({ $ref: "#/components/schemas/equipmentEvent" })
    },
    leaves,
    parameters,
    header: (name: string) => compile(doc["components"]["headers"][name]["schema"]),
    /** The problems of a query string's parameters against the operation's (2.2 date operators allowed). */
    queryProblems: (query: string): ReadonlyArray<string> =>
      [...new URLSearchParams(query)].flatMap(([name, value]) => {
        const [base, operator] = name.split(":") as [string, string | undefined]
        if (
          operator !== undefined &&
          !(base === "eventCreatedDateTime" && ["gte", "gt", "lte", "lt", "eq"].includes(operator))
        ) {
          return [`${name}: no such operator`]
        }
        const validate = parameterValidators.get(base)
        if (validate === undefined) return [`${name}: not a parameter of GET /v2/events`]
        const schema = resolve(parameters.find((p) => p["name"] === base)!["schema"])
        const typed = schema["type"] === "array"
          ? value.split(",")
          : schema["type"] === "integer"
          ? Number(value)
          : value
        return validate(typed) ? [] : [`${name}=${value}: ${JSON.stringify(validate.errors)}`]
      })
  }
}

const problems = (validate: ValidateFunction, value: unknown): string =>
  validate(value) ? "" : JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message}`))

describe.skipIf(!present)(present ? "DCSA 2.2 contract of GET /dcsa/v2/events" : missing, () => {
  layer(makeAppLayer({}, {}, [carrier]), { excludeTestServices: true })("answers", (it) => {
    it.effect("every answer of the scenarios validates against DCSA's 2.2 document, each event against its type's schema, no field undeclared", () =>
      Effect.gen(function*() {
        const c = contract()
        const data = yield* dataset
        const queries = [
          "limit=1000",
          "limit=1",
          ...(["TRANSPORT", "EQUIPMENT", "SHIPMENT"] as const).flatMap((type) =>
            scenarios(data, type).map((s) => s.query)
          )
        ]
        let checked = 0
        for (const query of queries) {
          assert.strictEqual(c.queryProblems(query).join("; "), "", `the request ${query} is not a 2.2 request`)
          const r = yield* get(data.key, query)
          const events: ReadonlyArray<Event> = eventsOf(r)
          assert.strictEqual(problems(c.answer, events), "", query)
          assert.strictEqual(problems(c.header("API-Version"), r.headers["api-version"]), "")
          assert.strictEqual(problems(c.header("Current-Page"), r.headers["current-page"]), "")
          if (r.headers["next-page"] !== undefined) {
            assert.strictEqual(problems(c.header("Next-Page"), r.headers["next-page"]), "")
          }
          for (const event of events) {
            assert.strictEqual(problems(c.events[event.eventType], event), "", JSON.stringify(event))
            const undeclared = c.leaves(event).filter((path) => !c.fields[event.eventType].has(path))
            assert.deepStrictEqual(undeclared, [], JSON.stringify(event))
            checked++
          }
        }
        assert.isAbove(checked, 100)
        const kinds = new Set(
          data.all.map((e) => `${e.eventType} ${e.transportEventTypeCode ?? e.equipmentEventTypeCode}`)
        )
        assert.strictEqual(kinds.size, 6)
      }))

    it.effect("every 400 is DCSA's error as well as a problem", () =>
      Effect.gen(function*() {
        const c = contract()
        const data = yield* dataset
        for (const [query] of badRequests) {
          const r = yield* get(data.key, query)
          assert.strictEqual(r.status, 400, query)
          assert.strictEqual(problems(c.error, r.body), "", `${query}: ${r.text}`)
          assert.strictEqual(problems(c.header("API-Version"), r.headers["api-version"]), "")
        }
        const version = yield* send("GET", "/dcsa/v2/events", { auth: data.key, headers: { "api-version": "1" } })
        assert.strictEqual(problems(c.error, version.body), "", version.text)
      }))

    it.effect("the served operation takes every query parameter of DCSA's GET /v2/events", () =>
      Effect.gen(function*() {
        const c = contract()
        const served = (yield* send("GET", "/openapi.json")).body as Json
        const ours = new Set<string>(
          (served["paths"]["/dcsa/v2/events"]["get"]["parameters"] as Array<Json>).map((p) => p["name"])
        )
        const absent = c.parameters.map((p) => p["name"] as string).filter((name) => !ours.has(name))
        assert.deepStrictEqual(absent, [])
      }))
  })
})
