import { assert, describe, it } from "@effect/vitest"
import { Delivery, DeliveryStore } from "@tradeflow/core"
import { Effect, Either, FastCheck as fc } from "effect"

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Any UTF-16 code units, lone surrogates and U+0000 included. */
const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) =>
  String.fromCharCode(...units)
)

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length

const result = (delivery_id: number, fields: Partial<Delivery.AttemptResult> = {}): Delivery.AttemptResult => ({
  delivery_id,
  claim: 1,
  at: 0,
  status: "failed",
  response_status: 500,
  error: "HTTP 500",
  response_body: `body ${delivery_id}`,
  retry_at: 5_000,
  disable: null,
  ...fields
})

/** A batch write that refuses any batch holding a result `refuse` picks, recording what it accepts. */
const fakeBatch = (refuse: (r: Delivery.AttemptResult) => boolean) => {
  const recorded: Array<Delivery.AttemptResult> = []
  const calls: Array<ReadonlyArray<number>> = []
  const batch = (results: ReadonlyArray<Delivery.AttemptResult>) =>
    Effect.suspend(() => {
      calls.push(results.map((r) => r.delivery_id))
      if (results.some(refuse)) return Effect.fail("refused" as const)
      recorded.push(...results)
      return Effect.succeed(results.map(() => true))
    })
  return { batch, recorded, calls }
}

describe("Delivery.storableText", () => {
  it.prop("leaves no U+0000 and no lone surrogate, fits the byte limit, and keeps clean text as it is", [
    anyText,
    fc.integer({ min: 0, max: 120 })
  ], ([text, max]) => {
    const stored = Delivery.storableText(text, max)
    assert.notInclude(stored, "\u0000")
    assert.notMatch(stored, loneSurrogate)
    assert.isAtMost(utf8Bytes(stored), max)
    const clean = text.replace(/\u0000/g, "\uFFFD").replace(new RegExp(loneSurrogate, "g"), "\uFFFD")
    assert.isTrue(clean.startsWith(stored))
    if (utf8Bytes(clean) <= max) assert.strictEqual(stored, clean)
    else assert.isAbove(utf8Bytes(Array.from(clean).slice(0, Array.from(stored).length + 1).join("")), max)
  })

  it("replaces U+0000 and lone surrogates with U+FFFD, keeps pairs, cuts on a character boundary", () => {
    assert.strictEqual(
      Delivery.storableText("a\u0000b\uD800c\uDC00d\uD83D\uDE00", 100),
      "a\uFFFDb\uFFFDc\uFFFDd\uD83D\uDE00"
    )
    assert.strictEqual(Delivery.storableText("ab\u00e9", 3), "ab")
    assert.strictEqual(Delivery.storableText("a\uD83D\uDE00", 4), "a")
    assert.strictEqual(Delivery.storableText("x".repeat(5000), Delivery.maxResponseBodyBytes).length, 4096)
  })
})

describe("DeliveryStore.recordIndependently", () => {
  it.effect("stores the results neutralised, in one batch when it succeeds", () =>
    Effect.gen(function*() {
      const { batch, calls, recorded } = fakeBatch(() => false)
      const answers = yield* DeliveryStore.recordIndependently(batch)([
        result(1, { response_body: "a\u0000b", error: "e\uD800" }),
        result(2)
      ])
      assert.deepStrictEqual(answers, [true, true])
      assert.deepStrictEqual(calls, [[1, 2]])
      assert.deepStrictEqual(recorded.map((r) => [r.response_body, r.error]), [["a\uFFFDb", "e\uFFFD"], [
        "body 2",
        "HTTP 500"
      ]])
      assert.deepStrictEqual(yield* DeliveryStore.recordIndependently(batch)([]), [])
    }))

  it.effect("a result that fails the batch costs no other result its record; it is recorded without its texts", () =>
    Effect.gen(function*() {
      const { batch, calls, recorded } = fakeBatch((r) => r.response_body === "poison")
      const answers = yield* DeliveryStore.recordIndependently(batch)([
        result(1),
        result(2, { response_body: "poison" }),
        result(3, { status: "delivered", response_status: 204, error: null, retry_at: null })
      ])
      assert.deepStrictEqual(answers, [true, true, true])
      assert.deepStrictEqual(calls, [[1, 2, 3], [1], [2], [2], [3]])
      assert.deepStrictEqual(recorded.map((r) => [r.delivery_id, r.status, r.response_body, r.error]), [
        [1, "failed", "body 1", "HTTP 500"],
        [2, "failed", null, DeliveryStore.unstoredError],
        [3, "delivered", "body 3", null]
      ])
    }))

  it.effect("fails when even a result without texts cannot be stored (the database, not the result), after one try of each", () =>
    Effect.gen(function*() {
      const { batch, calls } = fakeBatch(() => true)
      const outcome = yield* Effect.either(DeliveryStore.recordIndependently(batch)([result(1), result(2), result(3)]))
      assert.deepStrictEqual(outcome, Either.left("refused" as const))
      assert.deepStrictEqual(calls, [[1, 2, 3], [1], [1]])
      const single = fakeBatch(() => true)
      assert.isTrue(Either.isLeft(yield* Effect.either(DeliveryStore.recordIndependently(single.batch)([result(7)]))))
      assert.deepStrictEqual(single.calls, [[7], [7]])
    }))
})
