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
 * Measured: the accept time of the posts; two refresh rounds, each from the first request the
 * carrier receives to the BENCH_TARGETS-th, next to its bound under the budget (targets / rate: a
 * round cannot be much shorter, and should not be longer), and the time until the server's queue is
 * empty (every answer merged and rendered). The first round finds each container's journey so far
 * (about 20 messages a target); for the second, every target is made due again in its document
 * and the target index (as a console refresh does) and asked from its high-water mark, as the rounds of a tracked
 * container's life are. Per round, the server's CPU time (user + system, /proc) a target; its peak
 * RSS (VmHWM) over both; the carrier's requests.
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
import { createRequire } from "node:module"
import { join } from "node:path"
import { consoleToken } from "../../examples/standalone/test/Process.js"
import { type BenchDatabase, call, machine, machineLine, post, startServer, withDatabase } from "../Harness.js"

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

/**
 * Every target still tracked made due at `now`, in its tradeflow's document and in the target index
 * (each tradeflow here has one target), as a refresh does: the second round asks the carrier again
 * from each target's high-water mark. Both are written, since any commit of a tradeflow writes its
 * index rows again from its document.
 */
const makeDue = async (backend: "sqlite" | "postgres", database: BenchDatabase, now: number) => {
  const index = "UPDATE tracking_targets SET next_check_at = $1 WHERE next_check_at IS NOT NULL"
  if (backend === "postgres") {
    const schema = database.schema
    await database.admin.query("BEGIN")
    await database.admin.query(index.replace("tracking_targets", `${schema}.tracking_targets`), [now])
    await database.admin.query(
      `UPDATE ${schema}.tradeflows SET doc = jsonb_set(doc::jsonb, '{tracking,targets,0,next_check_at}', ` +
        `to_jsonb($1::float8))::text WHERE doc::jsonb #> '{tracking,targets,0,next_check_at}' <> 'null'::jsonb`,
      [now]
    )
    await database.admin.query("COMMIT")
    return
  }
  const Database = createRequire(import.meta.url)("better-sqlite3")
  const db = new Database(database.file)
  try {
    db.pragma("busy_timeout = 10000")
    db.transaction(() => {
      db.prepare(index.replace("$1", "?")).run(now)
      db.prepare(
        "UPDATE tradeflows SET doc = json_set(doc, '$.tracking.targets[0].next_check_at', ?) " +
          "WHERE json_type(doc, '$.tracking.targets[0].next_check_at') IN ('integer', 'real')"
      ).run(now)
    })()
  } finally {
    db.close()
  }
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
        const eventsAsked = () => carrier.received.filter((r) => r.path === "/v2/events").length
        let firstAsked: number | undefined
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
          if (firstAsked === undefined && eventsAsked() > 0) firstAsked = Date.now()
        }
        const accepted = Date.now()
        let peakRss = 0
        /** Until the carrier has been asked about `count` targets in all; when the first of them was asked. */
        const round = async (count: number, first?: number) => {
          while (eventsAsked() < count) {
            if (first === undefined && eventsAsked() > count - targets) first = Date.now()
            peakRss = Math.max(peakRss, usage(pid).rssMiB)
            if (Date.now() - started > 7_200_000) {
              throw new Error(`after two hours only ${eventsAsked()} of ${count} questions were asked`)
            }
            await new Promise((r) => setTimeout(r, 200))
          }
          return { first: first ?? Date.now(), done: Date.now() }
        }
        /** Until no job of the organisation is pending: every answer merged and rendered. */
        const drained = async () => {
          for (;;) {
            const pending = await call(
              server.port,
              "GET",
              `/console/organisations/${org.id}/jobs?state=pending&limit=1`,
              consoleAuth
            )
            peakRss = Math.max(peakRss, usage(pid).rssMiB)
            if (pending.status === 200 && pending.body === "[]") return Date.now()
            await new Promise((r) => setTimeout(r, 500))
          }
        }
        const first = await round(targets, firstAsked)
        const merged = await drained()
        const afterFirst = usage(pid)
        const due = Date.now()
        await makeDue(backend, database, due)
        const second = await round(2 * targets)
        const mergedAgain = await drained()
        const after = usage(pid)
        const upstream = await call(server.port, "GET", "/upstream?per_page=1", { authorization: key })
        const bound = targets / ratePerMinute * 60_000
        const firstRound = first.done - first.first
        const secondRound = second.done - second.first
        const cpuMs = (from: { cpu: number }, to: { cpu: number }) => ((to.cpu - from.cpu) * 1000 / targets).toFixed(2)
        const report = {
          machine: machine(),
          backend,
          targets,
          rate_per_minute: ratePerMinute,
          accepted_seconds: Number(seconds(accepted - started)),
          round_bound_seconds: Number(seconds(bound)),
          first_round_seconds: Number(seconds(firstRound)),
          first_round_over_bound: Number((firstRound / bound).toFixed(2)),
          first_merged_seconds: Number(seconds(merged - started)),
          first_cpu_ms_per_target: Number(cpuMs(before, afterFirst)),
          second_round_seconds: Number(seconds(secondRound)),
          second_round_over_bound: Number((secondRound / bound).toFixed(2)),
          second_merged_seconds: Number(seconds(mergedAgain - due)),
          second_cpu_ms_per_target: Number(cpuMs(afterFirst, after)),
          carrier_requests: carrier.received.length,
          server_cpu_seconds: Number((after.cpu - before.cpu).toFixed(1)),
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
}/min (bound ${report.round_bound_seconds} s) | ${report.accepted_seconds} s | ${report.first_round_seconds} s (×${report.first_round_over_bound}), merged at ${report.first_merged_seconds} s | ${report.first_cpu_ms_per_target} ms | ${report.second_round_seconds} s (×${report.second_round_over_bound}), merged at ${report.second_merged_seconds} s | ${report.second_cpu_ms_per_target} ms | ${
  report.carrier_requests.toLocaleString("en")
} | ${report.server_peak_rss_mib} MiB |`
const file = join(import.meta.dirname, "RESULTS.md")
const header = `# Tracking benchmark (\`npm run bench:tracking\`)

Machine of each run: ${report.machine.nproc} × ${report.machine.cpu}, ${report.machine.memory_gib} GiB, Node ${report.machine.node}, PostgreSQL ${report.machine.postgres}.

Rounds: from the first question the carrier receives to the last; ×: the round over its bound under
the budget (targets / rate; the bucket starts full, so a round may end up to a minute's budget
sooner). Merged: when no job was pending any more (the first from the first post,
the second from the moment the targets were made due). CPU: the server's user + system time a target.

| date (UTC) | storage | targets | budget | accepted | first round | CPU/target | second round | CPU/target | carrier requests | server peak RSS |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
`
let existing = ""
try {
  existing = readFileSync(file, "utf8")
} catch {
  existing = header
}
writeFileSync(file, `${existing.trimEnd()}\n${line}\n`)
