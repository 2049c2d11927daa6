/**
 * The load of the CPU profiles of the request path (BENCHMARKS.md, "CPU profile, issue 14"): starts
 * the standalone server (as `npm start` runs it; `BENCH_SERVER=tsx` under the loader, so that a
 * profile names each package's files) on a fresh SQLite database, under `--cpu-prof` into
 * PROFILE_DIR when it is set, posts PROFILE_BATCH records per request (UAT records without mock
 * tracking) from PROFILE_CLIENTS keep-alive clients for PROFILE_SECONDS, waits until every job is
 * processed (unless PROFILE_DRAIN=false or PROFILE_WORKER=false), stops the server (which writes its profile) and prints one JSON line: requests/s
 * answered 202, the POST latency p50/p99, the server's CPU time per request while they were posted,
 * and records/s processed end to end.
 *
 * `npx tsx --conditions=@tradeflow/source bench/ingest/profile.ts`. Env: PROFILE_BATCH (default 1),
 * PROFILE_CLIENTS (default 64), PROFILE_SECONDS (default 15), PROFILE_DIR, PROFILE_WORKER (default
 * true), PROFILE_DRAIN (default true), PROFILE_PRELOAD (a module the server's node loads first with
 * `--import`, such as bench/sqlite-statement-times.mjs), BENCH_SERVER. The key may have PROFILE_CLIENTS requests in flight (`MAX_IN_FLIGHT_PER_KEY`).
 */
import Database from "better-sqlite3"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { bodyOf, machineLine, post, startServer, withDatabase } from "../Harness.js"

const batch = Number(process.env["PROFILE_BATCH"] ?? 1)
const clients = Number(process.env["PROFILE_CLIENTS"] ?? 64)
const seconds = Number(process.env["PROFILE_SECONDS"] ?? 15)
const profileDir = process.env["PROFILE_DIR"]
const preload = process.env["PROFILE_PRELOAD"]
const drain = (process.env["PROFILE_DRAIN"] ?? "true") === "true" &&
  (process.env["PROFILE_WORKER"] ?? "true") === "true"

/** The CPU time (user and system) process `pid` has used, in milliseconds (Linux `/proc/<pid>/stat`). */
const cpuMillis = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

console.log(machineLine())
await withDatabase("sqlite", "profile", async ({ file, url }) => {
  const server = await startServer(
    url,
    {
      WORKER_ENABLED: process.env["PROFILE_WORKER"] ?? "true",
      MAX_IN_FLIGHT_PER_KEY: String(Math.max(16, clients))
    },
    profileDir,
    preload === undefined ? [] : ["--import", pathToFileURL(resolve(preload)).href]
  )
  const sqlite = new Database(file, { readonly: true })
  const pending = () =>
    (sqlite.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'pending'").get() as { n: number }).n
  try {
    const { key } = await uatKey(server, "Profile bench")
    const run = async (tag: string, runSeconds: number) => {
      const latencies: Array<number> = []
      let failed = 0
      const cpu = cpuMillis(server.child.pid!)
      const started = performance.now()
      const until = started + runSeconds * 1000
      await Promise.all(Array.from({ length: clients }, async (_, c) => {
        for (let n = 0; performance.now() < until; n++) {
          const body = bodyOf(`${tag}-${c}-${n}`, batch)
          const at = performance.now()
          const answer = await post(server.port, "/v3/downstream/tradeflows", body, { authorization: key })
          if (answer.status === 202) latencies.push(performance.now() - at)
          else if (failed++ === 0) console.error(`answer ${answer.status}: ${answer.body.slice(0, 300)}`)
        }
      }))
      const accepted = (performance.now() - started) / 1000
      const acceptCpu = cpuMillis(server.child.pid!) - cpu
      while (drain && pending() > 0) await new Promise((r) => setTimeout(r, 20))
      const processed = (performance.now() - started) / 1000
      const sorted = latencies.sort((a, b) => a - b)
      return {
        batch,
        clients,
        requests: latencies.length,
        failed,
        requests_per_second: Math.round(latencies.length / accepted),
        p50_ms: Number(percentile(sorted, 0.5).toFixed(1)),
        p99_ms: Number(percentile(sorted, 0.99).toFixed(1)),
        server_cpu_ms_per_request: Number((acceptCpu / Math.max(1, latencies.length)).toFixed(2)),
        processed_records_per_second: drain ? Math.round(latencies.length * batch / processed) : null
      }
    }
    await run("warmup", 2)
    console.log(JSON.stringify(await run("load", seconds)))
  } finally {
    sqlite.close()
    await server.stop()
  }
})
