/**
 * `GET /upstream` under the byte cap: over random message sizes (multi-byte text, some messages
 * alone larger than the cap), each page holds exactly the messages that fit after the cursor (the
 * first always), `has_more` says whether any follow, and the cursors chain through every message
 * once, in order. The array form answers the most recent messages that fit.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Locations, Service, Storage, TrackingConfig } from "@tradeflow/core"
import { commitMessages } from "@tradeflow/core/test-kit"
import { Effect, FastCheck as fc, Layer } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"
import { consoleToken, destinationLayer, newKey, send, uat } from "./Fixture.js"

const maxBytes = 3_000

const appLayer = HttpApp.layer.pipe(
  Layer.provide(destinationLayer()),
  Layer.provide(HttpConfig.layer({ consoleToken })),
  Layer.provideMerge(
    Service.layer({ background: false, upstream: { maxBytes } }).pipe(
      Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
    )
  ),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

interface Page {
  readonly data: ReadonlyArray<{ readonly n: number }>
  readonly next_cursor: string
  readonly has_more: boolean
}

const bytes = (body: string) => Buffer.byteLength(body)

/** The messages a page (or, newest first, the array form) holds from `from` on: the first, then while the total fits. */
const fitting = (bodies: ReadonlyArray<string>, limit: number) => {
  let total = 0
  let count = 0
  for (const body of bodies.slice(0, limit)) {
    total += bytes(body)
    if (count > 0 && total > maxBytes) break
    count++
  }
  return count
}

layer(appLayer, { excludeTestServices: true })("GET /upstream byte cap", (it) => {
  it.effect("pages hold what fits, has_more is exact, cursors continue right after the last message included", () =>
    Effect.gen(function*() {
      const samples = fc.sample(
        fc.record({
          sizes: fc.array(fc.tuple(fc.integer({ min: 0, max: 4_500 }), fc.constantFrom("a", "é", "€", "😀")), {
            maxLength: 30
          }),
          perPage: fc.integer({ min: 1, max: 10 })
        }),
        { numRuns: 40, seed: 12 }
      )
      for (const { perPage, sizes } of samples) {
        const { key, organisation } = yield* newKey("uat")
        const bodies = sizes.map(([size, unit], n) =>
          JSON.stringify({ n, text: unit.repeat(Math.floor(size / bytes(unit))) })
        )
        yield* commitMessages(
          organisation.id,
          bodies.map((body, n) => ({
            hash: `h${n}`,
            type: "BASIC_STATUS",
            tradeflow_reference: "TF-1",
            container_reference: null,
            generated_at: Date.now(),
            body
          }))
        )
        const seen: Array<number> = []
        let cursor = ""
        while (true) {
          const r = yield* send("GET", `/v3/upstream?per_page=${perPage}${cursor}`, { host: uat, auth: key })
          assert.strictEqual(r.status, 200, r.text)
          const page = r.body as Page
          const expected = fitting(bodies.slice(seen.length), perPage)
          assert.deepStrictEqual(
            page.data.map((m) => m.n),
            bodies.slice(seen.length, seen.length + expected).map((_, i) => seen.length + i)
          )
          seen.push(...page.data.map((m) => m.n))
          assert.strictEqual(page.has_more, seen.length < bodies.length)
          cursor = `&cursor=${page.next_cursor}`
          if (!page.has_more) break
        }
        assert.deepStrictEqual(seen, bodies.map((_, n) => n))
        const after = (yield* send("GET", `/v3/upstream?per_page=${perPage}${cursor}`, { host: uat, auth: key }))
          .body as Page
        assert.deepStrictEqual([after.data, after.has_more], [[], false])

        const list = yield* send("GET", "/v3/upstream", { host: uat, auth: key })
        const recent = fitting([...bodies].reverse(), 500)
        assert.deepStrictEqual(
          (list.body as Array<{ n: number }>).map((m) => m.n),
          bodies.map((_, n) => n).slice(bodies.length - recent)
        )
      }
    }))
})
