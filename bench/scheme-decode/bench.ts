/**
 * Scheme decoding benchmark (issue 12 point 1): large hostile bodies for `POST /downstream/scheme/…`
 * on the real standalone server (a child process, as `npm start` runs it; `BENCH_SERVER=tsx` for
 * the loader) with the event-loop-delay probe of bench/event-loop-probe.mjs preloaded, while
 * another client sends `GET /health` one at a time.
 *
 * Bodies (each refused 422 by its scheme, so storage plays no part; SQLite):
 * - dcsa-tnt: 10,000 events with 100 `documentReferences` each that are not objects (3.9 MB);
 * - csv: 10,000 rows with a bad port_of_loading;
 * - csv: a header and 5,000,000 empty rows (5 MB);
 * - csv: one row of 2,000,000 cells (4 MB).
 * Each body is posted BENCH_ROUNDS (default 3) times, one after another. Reported per body: the
 * post's latency (p50 and max), the `GET /health` answers during the posts and their max latency,
 * and the server's event-loop delay p99 / max (monitorEventLoopDelay, 5 ms resolution) over the
 * posts. A first "floor" phase sends `GET /health` alone for 3 s (the same server, client and
 * machine load), so that the delays the machine adds can be told apart.
 *
 * `npx tsx --conditions=@tradeflow/source bench/scheme-decode/bench.ts`. Env: BENCH_ROUNDS, BENCH_SERVER. Prints JSON lines and a
 * Markdown table; writes nothing into the repository.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { call, eventLoopProbe, machineLine, startServer, withDatabase } from "../Harness.js"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)

const dcsa = JSON.stringify(Array.from({ length: 10_000 }, () => ({
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-05T09:40:00+01:00",
  equipmentEventTypeCode: "LOAD",
  equipmentReference: "CSQU3054383",
  documentReferences: Array(100).fill(1)
})))
const header = "tradeflow_reference,booking_reference,port_of_loading\n"

const bodies: ReadonlyArray<readonly [name: string, scheme: string, contentType: string, body: string]> = [
  ["floor: no post, GET /health alone for 3 s", "", "", ""],
  ["dcsa-tnt: 10,000 events × 100 broken document references", "dcsa-tnt", "application/json", dcsa],
  ["csv: 10,000 rows with a bad port_of_loading", "csv", "text/csv", header + "PO-1,BK-1,NL\n".repeat(10_000)],
  ["csv: 5,000,000 empty rows", "csv", "text/csv", header + "\n".repeat(5_000_000)],
  ["csv: one row of 2,000,000 cells", "csv", "text/csv", header + "PO-1,BK-1,NLRTM" + ",x".repeat(2_000_000) + "\n"]
]

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
const round1 = (n: number) => Number(n.toFixed(1))

const results: Array<Record<string, unknown>> = []

await withDatabase("sqlite", "scheme_decode", async (database) => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-bench-scheme-"))
  const probe = eventLoopProbe(dir)
  const server = await startServer(database.url, { ...probe.env }, undefined, probe.nodeArgs)
  try {
    const tenant = await uatKey(server, "Hostile tenant")
    console.log(machineLine())
    for (const [name, scheme, contentType, body] of bodies) {
      await probe.read(server)
      const posts: Array<number> = []
      const health: Array<number> = []
      let posting = true
      const poller = (async () => {
        while (posting) {
          const started = performance.now()
          const answer = await call(server.port, "GET", "/health", {})
          if (answer.status !== 200) throw new Error(`health answered ${answer.status}`)
          if (posting) health.push(performance.now() - started)
        }
      })()
      if (scheme === "") await new Promise((resolve) => setTimeout(resolve, 3_000))
      for (let i = 0; i < (scheme === "" ? 0 : rounds); i++) {
        const started = performance.now()
        const answer = await call(server.port, "POST", `/downstream/scheme/${scheme}`, {
          authorization: tenant.key,
          "content-type": contentType
        }, body)
        if (answer.status !== 422) throw new Error(`${name} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
        posts.push(performance.now() - started)
      }
      posting = false
      await poller
      const eld = await probe.read(server)
      const sortedPosts = posts.sort((a, b) => a - b)
      results.push({
        body: name,
        bytes: Buffer.byteLength(body),
        post_p50: round1(percentile(sortedPosts, 0.5)),
        post_max: round1(sortedPosts.at(-1) ?? 0),
        health_answers: health.length,
        health_max: round1(Math.max(0, ...health)),
        eld
      })
      console.log(JSON.stringify(results.at(-1)))
    }
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

console.log(
  `\n| body | MB | post p50 / max ms (${rounds} posts) | GET /health answered during them | health max ms | event-loop delay p99 / max ms |` +
    "\n|---|---:|---|---:|---:|---|"
)
for (const r of results) {
  const eld = r["eld"] as { p99: number; max: number }
  console.log(
    `| ${r["body"]} | ${((r["bytes"] as number) / 1e6).toFixed(1)} | ${
      r["bytes"] === 0 ? "–" : `${r["post_p50"]} / ${r["post_max"]}`
    } | ` +
      `${r["health_answers"]} | ${r["health_max"]} | ${eld.p99} / ${eld.max} |`
  )
}
