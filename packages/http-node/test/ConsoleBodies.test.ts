import { assert, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { consoleAuth, makeAppLayer, type Received, send } from "./Fixture.js"

interface Issue {
  readonly path: string
  readonly message: string
}

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text.slice(0, 2_000))
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  assert.isBelow(r.text.length, 2_048, "the problem does not echo the body")
  return r.body as { detail: string; errors: ReadonlyArray<Issue> }
}

const nested = (depth: number, open: string, close: string, inner: string) =>
  open.repeat(depth) + inner + close.repeat(depth)

/** The JSON bodies of the console and a body each takes. */
const endpoints = (organisationId: string) =>
  [
    { path: "/console/organisations", valid: `"name":"Deep Freight"`, field: "name" },
    {
      path: `/console/organisations/${organisationId}/api-keys`,
      valid: `"environment":"production"`,
      field: "environment"
    },
    {
      path: `/console/organisations/${organisationId}/automations`,
      valid: `"url":"https://example.com/hook"`,
      field: "url"
    }
  ] as const

const post = (path: string, text: string) => send("POST", path, { auth: consoleAuth, text })

layer(makeAppLayer(), { excludeTestServices: true })("console bodies of any depth or size", (it) => {
  it.effect("the hostile test's request (seed 1795531812564): 100,000 nested arrays under a record, to an unknown organisation's api-keys, is a 422 naming the root", () =>
    Effect.gen(function*() {
      const body = `[{"tradeflow_reference":"DEEP-1","booking_reference":"B","configuration":{"x":${
        nested(100_000, "[", "]", "")
      }}}]`
      const r = problem(yield* post("/console/organisations/%ef%bf%82%e3%82%91/api-keys", body), 422)
      assert.deepStrictEqual(r.errors, [{ path: "", message: "value must be an object, got an array" }])
    }))

  it.effect("100,000 levels as the whole body, as the field's value, or beside a valid field: 422 naming the field, or done", () =>
    Effect.gen(function*() {
      const created = yield* post("/console/organisations", `{"name":"Deep Freight"}`)
      const organisationId = (created.body as { id: string }).id
      for (const { field, path, valid } of endpoints(organisationId)) {
        const root = problem(yield* post(path, nested(100_000, `{"a":`, "}", "1")), 422)
        assert.deepStrictEqual(root.errors.map((e) => e.path), [`/${field}`], path)
        const value = problem(yield* post(path, `{"${field}":${nested(100_000, "[", "]", "")}}`), 422)
        assert.deepStrictEqual(value.errors.map((e) => e.path), [`/${field}`], path)
        assert.match(value.errors[0]!.message, new RegExp(`^${field} must be .+, got an array$`), path)
        const beside = yield* post(path, `{${valid},"x":${nested(100_000, "[", "]", "")}}`)
        assert.strictEqual(beside.status, 201, beside.text.slice(0, 2_000))
      }
    }))

  it.effect("a 1 MB value where a string belongs: 422 without the value in the problem", () =>
    Effect.gen(function*() {
      const r = problem(yield* post("/console/organisations", JSON.stringify({ name: ["A".repeat(1_000_000)] })), 422)
      assert.deepStrictEqual(r.errors, [{ path: "/name", message: "name must be a string, got an array" }])
    }))

  it.effect("an automation whose 1,000 types are numbers: 100 issues, then one counting the rest", () =>
    Effect.gen(function*() {
      const created = yield* post("/console/organisations", `{"name":"Many Types"}`)
      const organisationId = (created.body as { id: string }).id
      const r = yield* post(
        `/console/organisations/${organisationId}/automations`,
        JSON.stringify({
          url: "https://example.com/hook",
          types: Array.from({ length: 1_000 }, (_, i) => i)
        })
      )
      assert.strictEqual(r.status, 422, r.text.slice(0, 2_000))
      const errors = (r.body as { errors: ReadonlyArray<Issue> }).errors
      assert.deepStrictEqual([errors.length, errors[0], errors[100]], [101, {
        path: "/types/0",
        message: "types[0] must be a string, got a number"
      }, {
        path: "",
        message: "and 900 more problems not listed"
      }])
    }))

  it.effect.prop(
    "nested arrays and objects of any depth in any place of a console body: a 201 or a 422 problem, never 5xx",
    [
      fc.integer({ min: 1, max: 100_000 }),
      fc.constantFrom(
        ["[", "]", ""] as const,
        [`{"a":`, "}", "1"] as const,
        [`{"__proto__":`, "}", "1"] as const,
        ["[", "]", `"production"`] as const
      ),
      fc.constantFrom("root", "field", "beside", "record"),
      fc.nat(2)
    ],
    ([depth, [open, close, inner], place, which]) =>
      Effect.gen(function*() {
        const created = yield* post("/console/organisations", `{"name":"Deep Freight"}`)
        const { field, path, valid } = endpoints((created.body as { id: string }).id)[which]!
        const deep = nested(depth, open, close, inner)
        const body = place === "root"
          ? deep
          : place === "field"
          ? `{"${field}":${deep}}`
          : place === "beside"
          ? `{${valid},"x":${deep}}`
          : `[{${valid},"configuration":{"x":${deep}}}]`
        const r = yield* post(path, body)
        if (r.status !== 201) problem(r, 422)
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
