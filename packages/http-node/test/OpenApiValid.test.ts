import { assert, layer } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { ApiMessage } from "@tradeflow/core"
import { Effect } from "effect"
import { makeAppLayer, send } from "./Fixture.js"

interface JsonSchema {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly items?: JsonSchema
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly additionalProperties?: boolean | JsonSchema
  readonly enum?: ReadonlyArray<unknown>
}

interface Document {
  readonly openapi: string
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly components: { readonly schemas: Readonly<Record<string, JsonSchema>> }
}

interface Operation {
  readonly description?: string
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly description?: string }>
}

/**
 * A description written for the API, not one Effect gives a schema by default ("a string that will
 * be trimmed", "a non empty string", "a positive number"): every default starts with a lower-case
 * "a" or "an", and every description of ours with a capital or a literal value.
 */
const meaningful = (description: string | undefined): boolean =>
  description !== undefined && description.trim() !== "" && !/^an? /.test(description)

const served = Effect.map(send("GET", "/openapi.json"), (r) => {
  assert.strictEqual(r.status, 200, r.text)
  return r.body as Document
})

/** The schema a `#/components/schemas/…` reference names, followed until it is no reference. */
const resolve = (doc: Document, schema: JsonSchema): JsonSchema => {
  if (schema.$ref === undefined) return schema
  const name = schema.$ref.replace(/^#\/components\/schemas\//, "")
  const target = doc.components.schemas[name]
  assert.isDefined(target, `unresolved reference ${schema.$ref}`)
  return resolve(doc, target!)
}

const payloads = {
  SHIPMENT_CHANGE: ApiMessage.ShipmentChange,
  CONTAINER_MILESTONE: ApiMessage.ContainerMilestone,
  LOCATION_UPDATE: ApiMessage.LocationUpdate,
  BASIC_STATUS: ApiMessage.BasicStatus
} as const

layer(makeAppLayer(), { excludeTestServices: true })("OpenAPI document", (it) => {
  it.effect("the served /openapi.json is a valid OpenAPI 3.1 document (strict schema validator)", () =>
    Effect.gen(function*() {
      const doc = yield* served
      assert.match(doc.openapi, /^3\.1\./)
      const validator = new Validator()
      const result = yield* Effect.promise(() =>
        validator.validate(structuredClone(doc) as unknown as Record<string, unknown>)
      )
      assert.isTrue(result.valid, JSON.stringify(result.errors, null, 2))
      assert.strictEqual(validator.version, "3.1")
    }))

  it.effect("every operation and every parameter has a description of its own", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const missing: Array<string> = []
      let operations = 0
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of ["get", "put", "post", "delete", "patch"]) {
          const operation = item[method] as Operation | undefined
          if (operation === undefined) continue
          operations++
          if (!meaningful(operation.description)) missing.push(`${method.toUpperCase()} ${path}`)
          for (const parameter of operation.parameters ?? []) {
            if (!meaningful(parameter.description)) {
              missing.push(`${method.toUpperCase()} ${path} ${parameter.in} ${parameter.name}`)
            }
          }
        }
      }
      assert.isAbove(operations, 30)
      assert.deepStrictEqual(missing, [])
    }))

  it.effect("every error response, 400 included, is documented as the problem document the server answers", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const wrong: Array<string> = []
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const responses = (operation as { responses: Record<string, { content?: Record<string, unknown> }> })
            .responses
          for (const [status, response] of Object.entries(responses)) {
            if (Number(status) < 400) continue
            const types = Object.keys(response.content ?? {})
            if (types.join() !== "application/problem+json") wrong.push(`${method} ${path} ${status}: ${types.join()}`)
          }
        }
      }
      assert.deepStrictEqual(wrong, [])
      assert.notInclude(JSON.stringify(doc), "HttpApiDecodeError")
    }))

  it.effect("GET /upstream types each of the four message payloads with the fields the renderer writes", () =>
    Effect.gen(function*() {
      const doc = yield* served
      for (const path of ["/upstream", "/v3/upstream"]) {
        const list = doc.paths[path]?.["get"] as {
          responses: Record<string, { content: Record<string, { schema: JsonSchema }> }>
        }
        const schema = resolve(doc, list.responses["200"]!.content["application/json"]!.schema)
        const bodies = (schema.anyOf ?? [schema]).map((s) => resolve(doc, s))
        const array = bodies.find((s) => s.type === "array")
        const page = bodies.find((s) => s.type === "object")
        assert.isDefined(array, `${path}: the list answer`)
        assert.isDefined(page, `${path}: the page answer`)
        for (const items of [array!.items!, resolve(doc, page!.properties!["data"]!).items!]) {
          const messages = resolve(doc, items).anyOf?.map((s) => resolve(doc, s)) ?? []
          assert.deepStrictEqual(messages.map((m) => m.properties?.["type"]?.enum?.[0]), [...ApiMessage.messageTypes])
          for (const message of messages) {
            const type = message.properties!["type"]!.enum![0] as keyof typeof payloads
            const payload = resolve(doc, message.properties!["payload"]!)
            assert.strictEqual(payload.type, "object", type)
            assert.strictEqual(payload.additionalProperties, false, `${type}: the payload is not an open object`)
            assert.deepStrictEqual(Object.keys(payload.properties ?? {}), Object.keys(payloads[type].fields), type)
          }
        }
      }
      const milestone = resolve(doc, { $ref: "#/components/schemas/ContainerMilestone" })
      for (const field of ["status_code", "event_date", "location", "container_details", "dwell_details"]) {
        assert.isDefined(milestone.properties?.[field], field)
      }
      const details = resolve(doc, milestone.properties!["container_details"]!)
      assert.includeMembers(Object.keys(details.properties ?? {}), ["reference", "container_type"])
    }))
})
