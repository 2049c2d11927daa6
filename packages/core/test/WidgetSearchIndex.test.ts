import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { type Candidate, TradeflowStore } from "../src/TradeflowStore.js"
import * as WidgetSearch from "../src/WidgetSearch.js"
import { C1, layer, org, post } from "./ProcessorKit.js"

/** What the widget search asked of the store since the last reset. */
const reads = { documents: 0, lists: 0, candidates: 0 }
const reset = () => Object.assign(reads, { documents: 0, lists: 0, candidates: 0 })

/** Candidates the store's lookup adds to what it found (a tradeflow changed since, or a key collision). */
let extra: ReadonlyArray<Candidate> = []

/** The memory store, counting the documents it hands the widget search. */
const counting = Layer.effect(
  TradeflowStore,
  Effect.map(TradeflowStore, (inner) =>
    TradeflowStore.of({
      ...inner,
      get: (o, r) =>
        Effect.tap(inner.get(o, r), (t) => Effect.sync(() => void (reads.documents += Option.isSome(t) ? 1 : 0))),
      list: (o) =>
        Effect.tap(inner.list(o), (ts) => Effect.sync(() => void (reads.lists++, reads.documents += ts.length))),
      lookup: (o, keys) =>
        Effect.map(inner.lookup(o, keys), (cs) => {
          const all = [...cs, ...extra]
          reads.candidates += all.length
          return all
        })
    }))
)

const TestLayer = WidgetSearch.layer.pipe(Layer.provide(counting), Layer.provideMerge(layer()))

const size = 2_000
const reference = (i: number) => `TF-${String(i).padStart(5, "0")}`

const search = (query: string) =>
  Effect.flatMap(WidgetSearch.WidgetSearch, (w) => w.search(org, query)).pipe(
    Effect.map((r) => r.booking_reference),
    Effect.catchTag("WidgetNoMatch", () => Effect.succeed(null))
  )

describe("WidgetSearch.search work", () => {
  it.effect(`in an organisation of ${size} tradeflows, a search decodes only the winner, whatever it matches by`, () =>
    Effect.gen(function*() {
      yield* post(Array.from({ length: size }, (_, i) => ({
        tradeflow_reference: reference(i),
        container_reference: i % 700 === 0 ? C1 : `TGHU${String(i).padStart(6, "0")}0`,
        booking_reference: `BK-${i}`,
        bill_of_lading_reference: `BL-${i % 2}`
      })))
      const cases: ReadonlyArray<readonly [string, string | null, number]> = [
        [reference(5), "BK-5", 1],
        ["bk-17", "BK-17", 1],
        [C1.toLowerCase(), `BK-${1_400}`, 3],
        ["BL-1", `BK-${size - 1}`, size / 2],
        ["nothing", null, 0]
      ]
      for (const [query, booking, candidates] of cases) {
        reset()
        assert.strictEqual(yield* search(query), booking, query)
        assert.deepStrictEqual(reads, { documents: booking === null ? 0 : 1, lists: 0, candidates }, query)
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a candidate that no longer matches is passed over for the next newest", () =>
    Effect.gen(function*() {
      yield* post([
        { tradeflow_reference: "OLD", container_reference: C1, booking_reference: "BK-OLD" },
        { tradeflow_reference: "OTHER", booking_reference: "BK-OTHER" }
      ])
      extra = [{ reference: "OTHER", created_at: Number.MAX_SAFE_INTEGER, updated_at: 0 }, {
        reference: "GONE",
        created_at: Number.MAX_SAFE_INTEGER,
        updated_at: 1
      }]
      reset()
      const found = yield* search(C1).pipe(Effect.ensuring(Effect.sync(() => extra = [])))
      assert.strictEqual(found, "BK-OLD")
      assert.deepStrictEqual(reads, { documents: 2, lists: 0, candidates: 3 })
    }).pipe(Effect.provide(TestLayer)))
})
