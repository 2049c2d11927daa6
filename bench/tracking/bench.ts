/**
 * Tracking benchmark (issue 15): 100,000 tracked containers against the fake DCSA carrier, on one
 * server process.
 *
 * The fake carrier (`@tradeflow/tracking-dcsa/test-kit`) runs in this process with one `ocean_basic`
 * shipment per container (departed two days ago, arriving in 20 days, so every container is in
 * transit with a few actual and estimated events), and the real standalone server (bundled, as
 * `npm start` runs it; webhooks off) tracks them through a sources file whose rate budget is
 * BENCH_RATE_PER_MINUTE requests a minute. One organisation posts BENCH_TARGETS production
 * tradeflows (one container and carrier_scac each) in requests of 500; each gets one target, due at
 * once.
 *
 * Measured: the accept time of the posts; the refresh round, from the first request the carrier
 * receives to the BENCH_TARGETS-th, next to its bound under the budget (targets / rate: the round
 * cannot be shorter, and should not be much longer); the time until the server's queue is empty
 * (every answer merged and rendered); the server's CPU time (user + system, /proc) and peak RSS
 * (VmHWM), and the carrier's requests by kind.
 *
 * `npm run bench:tracking [-- sqlite|postgres]` (not part of `npm test`). Env: BENCH_TARGETS
 * (default 100,000), BENCH_RATE_PER_MINUTE (default 60,000), BENCH_STORAGE (sqlite | postgres,
 * default sqlite; a CLI argument wins), TRADEFLOW_TEST_PG_URL, BENCH_CPU_PROFILE_DIR (the server runs
 * under `--cpu-prof` and writes its profile there, for bench/profile-summary.ts). Writes
 * bench/tracking/RESULTS.md.
 */
import { Iso6346 } from "@tradeflow/core"
import { FakeCarrier } from "@tradeflow/tracking-dcsa/test-kit"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { consoleToken } from "../../examples/standalone/test/Process.js"
import { call, machine, machineLine, post, startServer, withDatabase } from "../Harness.js"

const targets = Number(process.env["BENCH_TARGETS"] ?? 100_000)
const ratePerMinute = Number(process.env["BENCH_RATE_PER_MINUTE"] ?? 60_000)
const backend = (process.argv[2] ?? process.env["BENCH_STORAGE"] ?? "sqlite") as "sqlite" | "postgres"
const perRequest = 500
const day = 86_400_000

/** The `i`-th container: owner code MSKU, a six-digit serial, its check digit. */
const containerOf = (i: number) => {
  const first10 = `MSKU${String(i).padStart(6, "0")}`
  return `${first10}${Iso6346.checkDigit(first10)}`
}

/** CPU seconds (user + system) and peak RSS (MiB) of a process, from /proc. */
const usage = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = Number(fields[11]) + Number(fields[12])
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const hwm = Number(/VmHWM:\s*(\d+)/.exec(status)?.[1] ?? 0)
  const rss = Number(/VmRSS:\s*(\d+)/.exec(status)?.[1] ?? 0)
  return { cpu: ticks / 100, peakMiB: hwm / 1024, rssMiB: rss / 1024 }
}

const seconds = (ms: number) => (ms / 1000).toFixed(1)

const run = Effect.gen(function*() {
  console.log(machineLine())
  const now = Date.now()
  const carrier = yield* FakeCarrier.make({
    recordBodies: false,
    shipments: Array.from({ length: targets }, (_, i) => ({
      booking: `BK-${i}`,
      containers: [containerOf(i)],
      departure: now - 2 * day,
      arrival: now + 20 * day
    }))
  })
  return yield* Effect.promise(() =>
    withDatabase(backend, "tracking", async (database) => {
      const sources = join(database.file, "..", "sources.json")
      writeFileSync(
        sources,
        JSON.stringify({
          sources: [{
            id: "fake",
            version: "2.2",
            base_url: carrier.url,
            carriers: ["MAEU"],
            rate: { per_minute: ratePerMinute }
          }]
        })
      )
      const server = await startServer(database.url, {
        TRACKING_SOURCES_FILE: sources,
        TRACKING_INTERVAL_MILLIS: "1000",
        PRODUCTION_HOSTS: "127.0.0.1",
        UAT_HOSTS: "uat.localhost"
      }, process.env["BENCH_CPU_PROFILE_DIR"])
      try {
        const pid = server.child.pid!
        const consoleAuth = { authorization: `Bearer ${consoleToken}` }
        const org = JSON.parse(
          (await post(server.port, "/console/organisations", JSON.stringify({ name: "Bench" }), consoleAuth)).body
        ) as { id: string }
        const key = (JSON.parse(
          (await post(
            server.port,
            `/console/organisations/${org.id}/api-keys`,
            JSON.stringify({ environment: "production" }),
            consoleAuth
          )).body
        ) as { key: string }).key
        const before = usage(pid)
        const started = Date.now()
        for (let from = 0; from < targets; from += perRequest) {
          const body = JSON.stringify(
            Array.from({ length: Math.min(perRequest, targets - from) }, (_, i) => ({
              tradeflow_reference: `TR-${from + i}`,
              container_reference: containerOf(from + i),
              carrier_scac: "MAEU"
            }))
          )
          const answer = await post(server.port, "/downstream/tradeflows", body, { authorization: key })
          if (answer.status !== 202) throw new Error(`post answered ${answer.status}: ${answer.body.slice(0, 300)}`)
        }
        const accepted = Date.now()
        const eventsAsked = () => carrier.received.filter((r) => r.path === "/v2/events").length
        let firstAsked: number | undefined
        let peakRss = 0
        while (eventsAsked() < targets) {
          if (firstAsked === undefined && eventsAsked() > 0) firstAsked = Date.now()
          peakRss = Math.max(peakRss, usage(pid).rssMiB)
          if (Date.now() - started > 3_600_000) {
            throw new Error(`after an hour only ${eventsAsked()} targets were asked about`)
          }
          await new Promise((r) => setTimeout(r, 200))
        }
        const roundDone = Date.now()
        for (;;) {
          const pending = await call(
            server.port,
            "GET",
            `/console/organisations/${org.id}/jobs?state=pending&limit=1`,
            consoleAuth
          )
          peakRss = Math.max(peakRss, usage(pid).rssMiB)
          if (pending.status === 200 && pending.body === "[]") break
          await new Promise((r) => setTimeout(r, 500))
        }
        const merged = Date.now()
        const after = usage(pid)
        const upstream = await call(server.port, "GET", "/upstream?per_page=1", { authorization: key })
        const round = roundDone - (firstAsked ?? accepted)
        const bound = targets / ratePerMinute * 60_000
        const requests = carrier.received.length
        const report = {
          machine: machine(),
          backend,
          targets,
          rate_per_minute: ratePerMinute,
          accepted_seconds: Number(seconds(accepted - started)),
          round_seconds: Number(seconds(round)),
          round_bound_seconds: Number(seconds(bound)),
          round_over_bound: Number((round / bound).toFixed(2)),
          merged_seconds: Number(seconds(merged - started)),
          carrier_requests: requests,
          server_cpu_seconds: Number((after.cpu - before.cpu).toFixed(1)),
          server_cpu_ms_per_target: Number(((after.cpu - before.cpu) * 1000 / targets).toFixed(2)),
          server_peak_rss_mib: Math.round(Math.max(peakRss, after.peakMiB)),
          upstream_status: upstream.status
        }
        return report
      } finally {
        await server.stop()
      }
    })
  )
})

const report = await Effect.runPromise(Effect.scoped(run))
console.log(JSON.stringify(report, null, 2))
const line = `| ${report.machine.date.slice(0, 16).replace("T", " ")} | ${report.backend} | ${
  report.targets.toLocaleString("en")
} | ${
  report.rate_per_minute.toLocaleString("en")
}/min | ${report.accepted_seconds} s | ${report.round_seconds} s (bound ${report.round_bound_seconds} s, ×${report.round_over_bound}) | ${report.merged_seconds} s | ${
  report.carrier_requests.toLocaleString("en")
} | ${report.server_cpu_seconds} s (${report.server_cpu_ms_per_target} ms/target) | ${report.server_peak_rss_mib} MiB |`
const file = join(import.meta.dirname, "RESULTS.md")
const header = `# Tracking benchmark (\`npm run bench:tracking\`)

Machine of each run: ${report.machine.nproc} × ${report.machine.cpu}, ${report.machine.memory_gib} GiB, Node ${report.machine.node}, PostgreSQL ${report.machine.postgres}.

| date (UTC) | storage | targets | budget | accepted | refresh round | all merged | carrier requests | server CPU | server peak RSS |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
`
let existing = ""
try {
  existing = readFileSync(file, "utf8")
} catch {
  existing = header
}
writeFileSync(file, `${existing.trimEnd()}\n${line}\n`)
