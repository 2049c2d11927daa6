import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber, Ref } from "effect"
import * as CsvScheme from "../src/CsvScheme.js"
import * as DcsaTntScheme from "../src/DcsaTntScheme.js"
import { turn } from "../src/internal/eventLoop.js"
import type { DecodeOptions, SchemeError } from "../src/Scheme.js"

/**
 * Decodes with a slice of 0 ms, so that the event loop turns at every point where the decoder
 * may pause, and counts those turns and the turns a fiber of other work got meanwhile.
 */
const counted = <A>(decode: (options: DecodeOptions) => Effect.Effect<A, SchemeError>) =>
  Effect.gen(function*() {
    const turns = yield* Ref.make(0)
    const ticks = yield* Ref.make(0)
    const other = yield* Effect.fork(Effect.forever(Effect.zipRight(turn, Ref.update(ticks, (n) => n + 1))))
    const result = yield* Effect.either(
      decode({ sliceMillis: 0, turn: Effect.zipRight(turn, Ref.update(turns, (n) => n + 1)) })
    )
    yield* Fiber.interrupt(other)
    return { result, turns: yield* Ref.get(turns), ticks: yield* Ref.get(ticks) }
  })

const equipment = (n: number, refs: ReadonlyArray<unknown>) => ({
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-05T09:40:00+01:00",
  equipmentEventTypeCode: "LOAD",
  equipmentReference: "CSQU3054383",
  documentReferences: refs.length > 0
    ? refs
    : [{ documentReferenceType: "BKG", documentReferenceValue: `BK-${n % 50}` }]
})

/** `events` events, each with 100 document references that are not objects (the hostile body of issue 12). */
const hostile = (events: number) =>
  JSON.stringify(Array.from({ length: events }, (_, i) => equipment(i, Array(100).fill(1))))
const valid = (events: number) => JSON.stringify(Array.from({ length: events }, (_, i) => equipment(i, [])))

const dcsa = (body: string) => (options: DecodeOptions) =>
  DcsaTntScheme.decode({ contentType: "application/json", body, query: {} }, options)
const csv = (body: string) => (options: DecodeOptions) =>
  CsvScheme.decode({ contentType: "text/csv", body, query: {} }, options)

describe("Schemes: decoding lets the event loop turn, and more often the more there is to decode", () => {
  it.effect("dcsa-tnt: a body of events with 100 broken document references each, refused as before", () =>
    Effect.gen(function*() {
      const small = yield* counted(dcsa(hostile(1_000)))
      const large = yield* counted(dcsa(hostile(4_000)))
      for (const [run, events] of [[small, 1_000], [large, 4_000]] as const) {
        assert.isTrue(Either.isLeft(run.result))
        if (Either.isLeft(run.result)) {
          assert.strictEqual(run.result.left.reason, "invalid")
          assert.strictEqual(run.result.left.errors.length, 101)
          assert.match(run.result.left.errors[100]!.message, /^and [\d,]+ more problems not listed$/)
        }
        assert.isAtLeast(run.turns, events)
        assert.isAtLeast(run.ticks, run.turns - 1)
      }
      assert.isAbove(large.turns, small.turns)
    }))

  it.effect("dcsa-tnt: a valid body pauses while its events are grouped into records too", () =>
    Effect.gen(function*() {
      const small = yield* counted(dcsa(valid(1_000)))
      const large = yield* counted(dcsa(valid(4_000)))
      for (const [run, events] of [[small, 1_000], [large, 4_000]] as const) {
        assert.isTrue(Either.isRight(run.result) && run.result.right.length === 50)
        assert.isAtLeast(run.turns, 2 * events)
      }
      assert.isAbove(large.turns, small.turns)
    }))

  it.effect("csv: many rows with broken cells, refused as before", () =>
    Effect.gen(function*() {
      const body = (rows: number) => "tradeflow_reference,booking_reference,port_of_loading\n" + "R,B,NL\n".repeat(rows)
      const small = yield* counted(csv(body(1_000)))
      const large = yield* counted(csv(body(4_000)))
      for (const [run, rows] of [[small, 1_000], [large, 4_000]] as const) {
        assert.isTrue(Either.isLeft(run.result))
        if (Either.isLeft(run.result)) {
          assert.strictEqual(run.result.left.errors.length, 101)
          assert.strictEqual(run.result.left.errors[0]!.path, "/rows/2/port_of_loading")
        }
        assert.isAtLeast(run.turns, rows)
        assert.isAtLeast(run.ticks, run.turns - 1)
      }
      assert.isAbove(large.turns, small.turns)
    }))

  it.effect("csv: inside one long row, a long quoted cell and a long run of empty rows as well", () =>
    Effect.gen(function*() {
      const header = "tradeflow_reference,booking_reference\n"
      const cases: ReadonlyArray<readonly [string, (n: number) => string, (n: number, result: unknown) => void]> = [
        ["cells", (n) => header + "R,B" + ",x".repeat(n) + "\n", (n, result) =>
          assert.deepStrictEqual(
            result,
            Either.left([{ path: "/rows/2", message: `row 2: ${n + 2} cells, but the header names 2 columns` }])
          )],
        [
          "quotes",
          (n) => header + "R,\"B" + "\"\"".repeat(n) + "\"\n",
          (n, result) =>
            assert.deepStrictEqual(
              result,
              Either.right([{ tradeflow_reference: "R", booking_reference: ["B" + "\"".repeat(n)] }])
            )
        ],
        [
          "empty rows",
          (n) => header + "\n".repeat(n) + "R,B\n",
          (_, result) =>
            assert.deepStrictEqual(result, Either.right([{ tradeflow_reference: "R", booking_reference: ["B"] }]))
        ]
      ]
      for (const [what, body, check] of cases) {
        const small = yield* counted(csv(body(5_000)))
        const large = yield* counted(csv(body(20_000)))
        assert.isAbove(small.turns, 0, what)
        assert.isAbove(large.turns, small.turns, what)
        for (const [run, n] of [[small, 5_000], [large, 20_000]] as const) {
          check(n, Either.mapLeft(run.result, (e) => e.errors))
        }
      }
    }))
})
