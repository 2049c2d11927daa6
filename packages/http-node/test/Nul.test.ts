import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { consoleAuth, makeAppLayer, newKey, type Received, send } from "./Fixture.js"

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  return r.body as { errors?: ReadonlyArray<{ path: string; message: string }> }
}

layer(makeAppLayer())("U+0000, which PostgreSQL cannot store, is refused before anything is queued or stored", (it) => {
  it.effect("in record strings and keys, downstream and through a scheme: 422 naming each place", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const body = [{ tradeflow_reference: "A\u0000B", booking_reference: "BK" }, {
        tradeflow_reference: "C",
        booking_reference: "BK",
        "x\u0000": 1
      }]
      const r = problem(yield* send("POST", "/downstream/tradeflows", { auth: k.key, json: body }), 422)
      assert.deepStrictEqual(r.errors?.map((e) => e.path), ["/0/tradeflow_reference", "/1/x\u0000"])
      const csv = problem(
        yield* send("POST", "/downstream/scheme/csv", {
          auth: k.key,
          text: "tradeflow_reference,booking_reference\nPO\u00001,BK",
          contentType: "text/csv"
        }),
        422
      )
      assert.deepStrictEqual(csv.errors?.map((e) => e.path), ["/0/tradeflow_reference"])
      const feed = yield* send("GET", "/upstream", { auth: k.key })
      assert.deepStrictEqual(feed.body, [])
    }))

  it.effect("in console bodies: 422; in a URL's path or query, and a malformed percent-encoding in a path: 400", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      problem(yield* send("POST", "/console/organisations", { auth: consoleAuth, json: { name: "P\u0000" } }), 422)
      problem(yield* send("GET", "/upstream?tradeflow=A%00B", { auth: k.key }), 400)
      problem(yield* send("DELETE", "/downstream/tradeflows/A%00B", { auth: k.key }), 400)
      problem(yield* send("GET", "/console/automations/a%00/deliveries", { auth: consoleAuth }), 400)
      for (
        const path of ["/downstream/tradeflows/%E0%A4%A", "/downstream/tradeflows/%zz", "/downstream/tradeflows/%"]
      ) {
        const r = problem(yield* send("DELETE", path, { auth: k.key }), 400) as { detail?: string }
        assert.strictEqual(r.detail, "the URL path holds a malformed percent-encoding", path)
      }
      problem(yield* send("GET", "/console/organisations/%C0%AF/keys", { auth: consoleAuth }), 400)
      const fine = yield* send("GET", "/upstream?tradeflow=A%2500B", { auth: k.key })
      assert.strictEqual(fine.status, 200, fine.text)
    }))
})
