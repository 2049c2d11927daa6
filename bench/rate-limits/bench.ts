/**
 * Rate limits and request metrics benchmark (issue 17): what the per-request work added by the
 * rate limits per API key costs a cheap keyed request, next to the same server without it.
 *
 * Per backend, two real standalone servers (child processes, as `npm start` runs them;
 * `BENCH_SERVER=tsx` for the loader), each on a fresh database of its own, run side by side:
 * - "off" (the floor): every rate limit `off`, as bench/Harness.ts starts servers;
 * - "on": `RATE_LIMIT_API_PRODUCTION` and `RATE_LIMIT_API_UAT` at `999999999/86400` (the largest
 *   quota: nothing is refused, every keyed request does the counting upsert).
 * Both have `MAX_IN_FLIGHT_PER_KEY` and `MAX_UPSTREAM_IN_FLIGHT_PER_KEY` raised to the number of
 * clients, so that the in-flight limits refuse nothing either. The request metrics (a counter and a
 * histogram per request) are always on, in both: this run cannot tell their cost; the micro floor
 * below does.
 *
 * Each database is seeded by a server with its worker on: one UAT organisation, BENCH_KEYS (default
 * 4) keys, 5 tradeflows posted and processed (their messages readable upstream). The measured
 * servers then run with the worker off, so that the posts of the second case leave no processing
 * behind them to steal the CPU from the next phase.
 *
 * Cases, each a closed loop of BENCH_CLIENTS (default 16) keep-alive clients spread over the keys,
 * every client sending its next request when the previous one answers, for BENCH_SECONDS (default
 * 4) after one warm-up phase per server and case:
 * - `GET /v3/upstream?per_page=1` (must answer 200 with one message);
 * - `POST /v3/downstream/tradeflows` with one record (must answer 202; a job row per request).
 * BENCH_ROUNDS (default 6) rounds, each one phase per case and server, the servers alternating
 * (off, on in even rounds; on, off in odd ones). Reported per phase: requests/s, latency p50 / p99,
 * and the server process's CPU time per request (user + system from /proc/<pid>/stat; PostgreSQL's
 * own processes not included); per case: the medians and the median of the per-round ratios on/off. At the end (once
 * the servers have written their counts, which they do at least every 250 ms) the "on" database's
 * `rate_limits` must hold exactly as many hits as requests were sent to it.
 *
 * Then the bare floors, in this process:
 * - the upsert alone with the bare driver, on a table with the same DDL: SQLite (better-sqlite3,
 *   WAL, `synchronous = FULL` connection) as the upsert alone under `NORMAL`, and as the server runs
 *   it (`PRAGMA synchronous = NORMAL`, the upsert, `PRAGMA synchronous = FULL`); PostgreSQL (`pg`,
 *   UNLOGGED table) one client serially next to `SELECT 1`, and 16 concurrent clients on a pool of
 *   10 over 4 keys;
 * - the request metrics: `requestMetrics` of @tradeflow/http-node around an app answering 200 at
 *   once, against the bare app, for `GET /v3/upstream?per_page=1` (alternating, Effect.runSync).
 *
 * `npm run bench:rate-limits [-- sqlite|postgres|both]`. Env: BENCH_CLIENTS, BENCH_KEYS,
 * BENCH_SECONDS, BENCH_ROUNDS, BENCH_SERVER, TRADEFLOW_TEST_PG_URL. Prints JSON lines and Markdown
 * tables; writes nothing into the repository.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { syncMillis } from "../../packages/http-node/src/internal/rateLimit.js"
import { requestMetrics } from "../../packages/http-node/src/internal/requestMetrics.js"
import { type Backend, selectedBackends } from "../Backends.js"
import {
  type BenchDatabase,
  call,
  machineLine,
  organisationKeys,
  pgUrl,
  post,
  type Running,
  startServer,
  withDatabase
} from "../Harness.js"

const clients = Number(process.env["BENCH_CLIENTS"] ?? 16)
const keyCount = Number(process.env["BENCH_KEYS"] ?? 4)
const seconds = Number(process.env["BENCH_SECONDS"] ?? 4)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 6)

const quota = "999999999/86400"
const inFlight = { MAX_IN_FLIGHT_PER_KEY: String(clients), MAX_UPSTREAM_IN_FLIGHT_PER_KEY: String(clients) }
const limitsOn = { RATE_LIMIT_API_PRODUCTION: quota, RATE_LIMIT_API_UAT: quota }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n === 0 ? 0 : n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2
}
const round1 = (x: number) => Number(x.toFixed(1))
const round2 = (x: number) => Number(x.toFixed(2))

type Mode = "off" | "on"
type Case = "upstream" | "post"

interface Target {
  readonly mode: Mode
  readonly database: BenchDatabase
  readonly server: Running
  readonly keys: ReadonlyArray<string>
  /** Keyed requests sent to it (the warm-ups included). */
  sent: number
}

let posted = 0

/** One request of `which` with `key`; throws on an unexpected answer. */
const requestOf = async (which: Case, port: number, key: string) => {
  if (which === "upstream") {
    const answer = await call(port, "GET", "/v3/upstream?per_page=1", { authorization: key })
    if (answer.status !== 200) throw new Error(`upstream answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    return
  }
  const body = JSON.stringify([{
    tradeflow_reference: `RL-${posted++}`,
    container_reference: "MSCU1234565",
    port_of_loading: "CNSHA",
    port_of_discharge: "NLRTM"
  }])
  const answer = await post(port, "/v3/downstream/tradeflows", body, { authorization: key })
  if (answer.status !== 202) throw new Error(`post answered ${answer.status}: ${answer.body.slice(0, 300)}`)
}

/** CPU time (user + system) of process `pid` so far, in µs (/proc/<pid>/stat, 100 ticks a second). */
const cpuMicros = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/** A closed loop of `clients` clients for `ms`: requests/s and latency percentiles. */
const phase = async (which: Case, target: Target, ms: number) => {
  const latencies: Array<number> = []
  const pid = target.server.child.pid!
  const cpu0 = cpuMicros(pid)
  const started = performance.now()
  const end = started + ms
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const key = target.keys[c % target.keys.length]!
    while (performance.now() < end) {
      const t0 = performance.now()
      await requestOf(which, target.server.port, key)
      latencies.push(performance.now() - t0)
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  const cpu = cpuMicros(pid) - cpu0
  target.sent += latencies.length
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuUs: cpu / latencies.length
  }
}

/** Seeds `database` with a server whose worker is on, then starts the measured server (worker off). */
const prepare = async (mode: Mode, database: BenchDatabase): Promise<Target> => {
  const seeder = await startServer(database.url, inFlight)
  let keys: ReadonlyArray<string>
  try {
    keys = await organisationKeys(seeder, keyCount)
    const body = JSON.stringify(Array.from({ length: 5 }, (_, i) => ({
      tradeflow_reference: `SEED-${i}`,
      container_reference: "MSCU1234565",
      port_of_loading: "CNSHA",
      port_of_discharge: "NLRTM"
    })))
    const accepted = await post(seeder.port, "/v3/downstream/tradeflows", body, { authorization: keys[0]! })
    if (accepted.status !== 202) throw new Error(`seed answered ${accepted.status}: ${accepted.body}`)
    for (let i = 0;; i++) {
      const page = await call(seeder.port, "GET", "/v3/upstream?per_page=1", { authorization: keys[0]! })
      if (page.status === 200 && (JSON.parse(page.body) as { data: ReadonlyArray<unknown> }).data.length > 0) break
      if (i > 600) throw new Error("the seed tradeflows were not processed in 60 s")
      await sleep(100)
    }
  } finally {
    await seeder.stop()
  }
  const server = await startServer(database.url, {
    ...inFlight,
    WORKER_ENABLED: "false",
    ...mode === "on" ? limitsOn : {}
  })
  return { mode, database, server, keys, sent: 0 }
}

/** Hits counted in the `rate_limits` table of `target`'s database. */
const countedHits = async (backend: Backend, target: Target): Promise<number> => {
  if (backend === "postgres") {
    const r = await target.database.admin.query(
      `SELECT coalesce(sum(hits), 0)::int AS n FROM ${target.database.schema}.rate_limits`
    )
    return (r.rows[0] as { n: number }).n
  }
  const db = new Database(target.database.file, { readonly: true })
  try {
    return (db.prepare("SELECT coalesce(sum(hits), 0) AS n FROM rate_limits").get() as { n: number }).n
  } finally {
    db.close()
  }
}

const rows: Array<Record<string, unknown>> = []
const summaries: Array<Record<string, unknown>> = []

const runBackend = (backend: Backend) =>
  withDatabase(backend, "rate_limits_off", (offDb) =>
    withDatabase(backend, "rate_limits_on", async (onDb) => {
      const off = await prepare("off", offDb)
      const on = await prepare("on", onDb).catch(async (e) => {
        await off.server.stop()
        throw e
      })
      try {
        const cases: ReadonlyArray<Case> = ["upstream", "post"]
        for (const which of cases) {
          for (const target of [off, on]) await phase(which, target, 2000)
        }
        const seen = new Map<string, Array<{ rps: number; p50: number; p99: number; cpuUs: number }>>()
        for (let r = 0; r < rounds; r++) {
          const order = r % 2 === 0 ? [off, on] : [on, off]
          for (const which of cases) {
            for (const target of order) {
              const m = await phase(which, target, seconds * 1000)
              const row = {
                backend,
                case: which,
                limits: target.mode,
                round: r,
                requests: m.requests,
                rps: round1(m.rps),
                p50_ms: round2(m.p50),
                p99_ms: round2(m.p99),
                server_cpu_us: round1(m.cpuUs)
              }
              rows.push(row)
              console.log(JSON.stringify(row))
              const k = `${which} ${target.mode}`
              seen.set(k, [...seen.get(k) ?? [], m])
            }
          }
        }
        for (const which of cases) {
          const o = seen.get(`${which} off`)!
          const n = seen.get(`${which} on`)!
          const summary = {
            backend,
            case: which,
            off_rps: round1(median(o.map((m) => m.rps))),
            on_rps: round1(median(n.map((m) => m.rps))),
            ratio_rps: round2(median(n.map((m, i) => m.rps / o[i]!.rps))),
            ratios: n.map((m, i) => round2(m.rps / o[i]!.rps)),
            off_p50_ms: round2(median(o.map((m) => m.p50))),
            on_p50_ms: round2(median(n.map((m) => m.p50))),
            off_p99_ms: round2(median(o.map((m) => m.p99))),
            on_p99_ms: round2(median(n.map((m) => m.p99))),
            off_cpu_us: round1(median(o.map((m) => m.cpuUs))),
            on_cpu_us: round1(median(n.map((m) => m.cpuUs))),
            ratio_cpu: round2(median(n.map((m, i) => m.cpuUs / o[i]!.cpuUs))),
            // what the counting adds per request at the rates seen: 1/on - 1/off, in µs of the whole machine
            added_us: round1(1e6 / median(n.map((m) => m.rps)) - 1e6 / median(o.map((m) => m.rps)))
          }
          summaries.push(summary)
          console.log(JSON.stringify(summary))
        }
        await new Promise((resolve) => setTimeout(resolve, 4 * syncMillis))
        const [offHits, onHits] = [await countedHits(backend, off), await countedHits(backend, on)]
        console.log(JSON.stringify({ backend, off_counted: offHits, on_counted: onHits, on_sent: on.sent }))
        if (offHits !== 0 || onHits !== on.sent) throw new Error("the rate_limits table does not match the requests")
      } finally {
        await off.server.stop()
        await on.server.stop()
      }
    }))

/** Runs `body` repeatedly for `ms`; answers µs per call. */
const perCall = async (ms: number, body: () => unknown | Promise<unknown>, concurrency = 1) => {
  let n = 0
  const started = performance.now()
  const end = started + ms
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      for (let i = 0; i < 100; i++) await body()
      n += 100
    }
  }))
  return (performance.now() - started) * 1000 / n
}

const ddl = {
  sqlite: `CREATE TABLE rate_limits (
      key TEXT NOT NULL, window_start INTEGER NOT NULL, window_end INTEGER NOT NULL, hits INTEGER NOT NULL,
      PRIMARY KEY (key, window_start)) WITHOUT ROWID;
    CREATE INDEX rate_limits_window_end ON rate_limits (window_end)`,
  postgres: `CREATE UNLOGGED TABLE rate_limits (
      key text COLLATE "C" NOT NULL, window_start double precision NOT NULL,
      window_end double precision NOT NULL, hits integer NOT NULL, PRIMARY KEY (key, window_start));
    CREATE INDEX rate_limits_window_end ON rate_limits (window_end)`
}
const upsertSql = (p: (i: number) => string) =>
  `INSERT INTO rate_limits (key, window_start, window_end, hits) VALUES (${p(1)}, ${p(2)}, ${p(3)}, 1)
   ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limits.hits + 1 RETURNING hits`
const keyOf = (i: number) => `uat:apiKey:${"k".repeat(40)}${i % 4}`
const windowStart = Math.floor(Date.now() / 86_400_000) * 86_400_000

const bareFloors: Array<Record<string, unknown>> = []

const bareSqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-bench-rate-limits-bare-"))
  const db = new Database(join(dir, "bare.sqlite"))
  try {
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = FULL")
    db.exec(ddl.sqlite)
    const upsert = db.prepare(upsertSql(() => "?"))
    let i = 0
    const alone = () => upsert.get(keyOf(i++), windowStart, windowStart + 86_400_000)
    const asServer = () => {
      db.exec("PRAGMA synchronous = NORMAL")
      upsert.get(keyOf(i++), windowStart, windowStart + 86_400_000)
      db.exec("PRAGMA synchronous = FULL")
    }
    const a: Array<number> = []
    const b: Array<number> = []
    for (let r = 0; r < 5; r++) {
      db.pragma("synchronous = NORMAL")
      a.push(await perCall(1000, alone))
      db.pragma("synchronous = FULL")
      b.push(await perCall(1000, asServer))
    }
    bareFloors.push({ backend: "sqlite", floor: "upsert alone (synchronous = NORMAL)", us_per_op: round1(median(a)) })
    bareFloors.push({ backend: "sqlite", floor: "PRAGMA NORMAL + upsert + PRAGMA FULL", us_per_op: round1(median(b)) })
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const barePostgres = () =>
  withDatabase("postgres", "rate_limits_bare", async (database) => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 10, options: `-c search_path=${database.schema}` })
    try {
      await pool.query(ddl.postgres)
      let i = 0
      const text = upsertSql((n) => `$${n}`)
      const upsert = () => pool.query(text, [keyOf(i++), windowStart, windowStart + 86_400_000])
      const select = () => pool.query("SELECT 1")
      await perCall(500, upsert, 16)
      const a: Array<number> = []
      const b: Array<number> = []
      const c: Array<number> = []
      for (let r = 0; r < 5; r++) {
        a.push(await perCall(1000, select))
        b.push(await perCall(1000, upsert))
        c.push(await perCall(1000, upsert, 16))
      }
      bareFloors.push({ backend: "postgres", floor: "SELECT 1, one client", us_per_op: round1(median(a)) })
      bareFloors.push({ backend: "postgres", floor: "upsert, one client", us_per_op: round1(median(b)) })
      bareFloors.push({
        backend: "postgres",
        floor: "upsert, 16 clients, pool of 10, 4 keys",
        us_per_op: round1(median(c)),
        ops_per_s: Math.round(1e6 / median(c))
      })
    } finally {
      await pool.end()
    }
  })

const bareMetrics = async () => {
  const request = HttpServerRequest.fromWeb(new Request("http://127.0.0.1/v3/upstream?per_page=1"))
  const app = Effect.succeed(HttpServerResponse.empty({ status: 200 }))
  const bare = app.pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
  const measured = requestMetrics(app).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
  const a: Array<number> = []
  const b: Array<number> = []
  for (let r = 0; r < 6; r++) {
    a.push(await perCall(500, () => Effect.runSync(bare)))
    b.push(await perCall(500, () => Effect.runSync(measured)))
  }
  // the first pair is warm-up
  const [bareUs, metricsUs] = [median(a.slice(1)), median(b.slice(1))]
  bareFloors.push({ backend: "-", floor: "app answering 200 (Effect.runSync)", us_per_op: round2(bareUs) })
  bareFloors.push({
    backend: "-",
    floor: "the same inside requestMetrics",
    us_per_op: round2(metricsUs),
    added_us: round2(metricsUs - bareUs)
  })
}

console.log(machineLine())
console.log(JSON.stringify({ clients, keys: keyCount, seconds, rounds, quota }))
const backends = selectedBackends()
for (const backend of backends) await runBackend(backend)
if (backends.includes("sqlite")) await bareSqlite()
if (backends.includes("postgres")) await barePostgres()
await bareMetrics()
for (const f of bareFloors) console.log(JSON.stringify(f))
console.log(machineLine())

console.log(
  `\n| storage | request | limits off req/s | limits on req/s | on/off (median of ${rounds} rounds) | p50 ms off / on | p99 ms off / on | 1/rate on − off | server CPU µs/request off / on (ratio) |` +
    "\n|---|---|---:|---:|---:|---:|---:|---:|---:|"
)
for (const s of summaries) {
  console.log(
    `| ${s["backend"]} | ${s["case"] === "upstream" ? "GET /v3/upstream?per_page=1" : "POST 1 record"} | ${
      s["off_rps"]
    } | ${s["on_rps"]} | **${s["ratio_rps"]}** (${(s["ratios"] as Array<number>).join(", ")}) | ${s["off_p50_ms"]} / ${
      s["on_p50_ms"]
    } | ${s["off_p99_ms"]} / ${s["on_p99_ms"]} | ${s["added_us"]} µs | ${s["off_cpu_us"]} / ${s["on_cpu_us"]} (${
      s["ratio_cpu"]
    }) |`
  )
}
console.log("\n| storage | bare floor | µs per operation |\n|---|---|---:|")
for (const f of bareFloors) {
  console.log(
    `| ${f["backend"]} | ${f["floor"]} | ${f["us_per_op"]}${
      f["ops_per_s"] === undefined ? "" : ` (${f["ops_per_s"]}/s)`
    }${f["added_us"] === undefined ? "" : ` (+${f["added_us"]})`} |`
  )
}
