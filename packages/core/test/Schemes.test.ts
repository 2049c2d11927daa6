import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as Schemes from "../src/Schemes.js"

const payload = (
  body: string,
  contentType = "application/json",
  query: Record<string, string> = {}
): Schemes.Payload => ({
  contentType,
  body,
  query
})

const echo = (tag: string): Schemes.Scheme => ({
  decode: ({ body, query }) =>
    Effect.succeed([{ tradeflow_reference: `${tag}:${body}`, booking_reference: query["b"] ?? "B" }])
})

const decodeWith = (layer: Layer.Layer<Schemes.Schemes>, name: string, p: Schemes.Payload) =>
  Effect.either(Effect.flatMap(Schemes.Schemes, (s) => s.decode(name, p)).pipe(Effect.provide(layer)))

const unknownOf = (result: Effect.Effect.Success<ReturnType<typeof decodeWith>>) =>
  Either.isLeft(result) && result.left._tag === "UnknownScheme"
    ? { scheme: result.left.scheme, known: result.left.known }
    : assert.fail(`expected UnknownScheme, got ${JSON.stringify(result)}`)

const namesOf = (layer: Layer.Layer<Schemes.Schemes>) =>
  Effect.runSync(Effect.map(Schemes.Schemes, (s) => s.names).pipe(Effect.provide(layer)))

describe("Schemes", () => {
  it.effect("the built-in registry: csv and dcsa-tnt", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(namesOf(Schemes.layer), ["csv", "dcsa-tnt"])
      assert.deepStrictEqual(
        yield* decodeWith(Schemes.layer, "csv", payload("tradeflow_reference,booking_reference\nR,B\n", "text/csv")),
        Either.right([{ tradeflow_reference: "R", booking_reference: ["B"] }])
      )
      const dcsa = yield* decodeWith(Schemes.layer, "dcsa-tnt", payload("[]"))
      assert.isTrue(Either.isLeft(dcsa) && dcsa.left._tag === "SchemeError")
    }))

  it.effect("an unknown scheme names the known ones; names match exactly", () =>
    Effect.gen(function*() {
      for (const name of ["edi", "CSV", "constructor", "__proto__", ""]) {
        const result = yield* decodeWith(Schemes.layer, name, payload(""))
        assert.deepStrictEqual(unknownOf(result), { scheme: name, known: ["csv", "dcsa-tnt"] })
      }
    }))

  it.effect("layerWith adds schemes and may replace a built-in", () =>
    Effect.gen(function*() {
      const layer = Schemes.layerWith({ edi: echo("edi"), csv: echo("mine") })
      assert.deepStrictEqual(namesOf(layer), ["csv", "dcsa-tnt", "edi"])
      assert.deepStrictEqual(
        yield* decodeWith(layer, "edi", payload("x", "", { b: "B7" })),
        Either.right([{ tradeflow_reference: "edi:x", booking_reference: "B7" }])
      )
      assert.deepStrictEqual(
        yield* decodeWith(layer, "csv", payload("y")),
        Either.right([{ tradeflow_reference: "mine:y", booking_reference: "B" }])
      )
    }))

  it.effect("add stacks on the registry below it", () =>
    Effect.gen(function*() {
      const layer = Schemes.add({ b: echo("b"), csv: echo("csv2") }).pipe(
        Layer.provide(Schemes.add({ a: echo("a") })),
        Layer.provide(Schemes.layer)
      )
      assert.deepStrictEqual(namesOf(layer), ["dcsa-tnt", "a", "b", "csv"])
      assert.deepStrictEqual(
        yield* decodeWith(layer, "a", payload("1")),
        Either.right([{ tradeflow_reference: "a:1", booking_reference: "B" }])
      )
      assert.deepStrictEqual(
        yield* decodeWith(layer, "csv", payload("2")),
        Either.right([{ tradeflow_reference: "csv2:2", booking_reference: "B" }])
      )
      assert.isTrue(Either.isLeft(yield* decodeWith(layer, "dcsa-tnt", payload("nope"))))
      assert.deepStrictEqual(unknownOf(yield* decodeWith(layer, "zz", payload(""))), {
        scheme: "zz",
        known: ["dcsa-tnt", "a", "b", "csv"]
      })
    }))

  it("errors are wire-safe: they encode to plain JSON and decode back", () => {
    const error = Schemes.schemeError("invalid", [{
      path: "/rows/2/active",
      message: "row 2: active must be true or false"
    }])
    const encoded = Schema.encodeSync(Schemes.SchemeError)(error)
    assert.deepStrictEqual(JSON.parse(JSON.stringify(encoded)), {
      _tag: "SchemeError",
      reason: "invalid",
      errors: [{ path: "/rows/2/active", message: "row 2: active must be true or false" }]
    })
    assert.deepStrictEqual(Schema.decodeUnknownSync(Schemes.SchemeError)(JSON.parse(JSON.stringify(encoded))), error)
    assert.deepStrictEqual(
      Schema.encodeSync(Schemes.UnknownScheme)(new Schemes.UnknownScheme({ scheme: "x", known: ["csv"] })),
      { _tag: "UnknownScheme", scheme: "x", known: ["csv"] }
    )
  })

  it("schemeError lists at most maxErrors problems and counts the rest", () => {
    const many = Array.from({ length: Schemes.maxErrors + 7 }, (_, i) => ({ path: `/${i}`, message: `problem ${i}` }))
    const error = Schemes.schemeError("invalid", many)
    assert.strictEqual(error.errors.length, Schemes.maxErrors + 1)
    assert.deepStrictEqual(error.errors.at(-1), { path: "", message: "and 7 more problems not listed" })
    assert.strictEqual(
      Schemes.schemeError("invalid", many.slice(0, Schemes.maxErrors)).errors.length,
      Schemes.maxErrors
    )
  })
})
