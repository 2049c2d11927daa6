/**
 * Engine benchmark (issue 14, section 3): every throughput goal of the issue next to its floor,
 * measured in one run against the real standalone server (a child process, as `npm start` runs it;
 * `BENCH_SERVER=tsx` for the loader), on SQLite and PostgreSQL.
 *
 * Per storage, one server on a fresh database (job worker on, webhooks off), a warm-up, then:
 * - **a / c. 500 records per request**: ENGINE_RECORDS records (default 100,000) posted by
 *   ENGINE_CLIENTS keep-alive clients (default 16), then the wait until no job is pending. Accepted
 *   records/s run to the last 202, processed records/s to the last job done. The **storage floor**
 *   (goal a) follows in the same run: the tradeflow and message rows the server wrote for these
 *   records, read back and written again by a bare script into fresh tables with the same columns
 *   and indexes (SQLite: the tables' own DDL from `sqlite_master`, better-sqlite3, WAL,
 *   `synchronous = FULL`, prepared single-row INSERTs; PostgreSQL: `CREATE TABLE … (LIKE … INCLUDING
 *   ALL)`, `pg`, default durability, one multi-row INSERT per table), one transaction per 500
 *   records, that is per request. The **bare HTTP server** (goal c, bench/BareIngest.ts) then takes
 *   the same load: `node:http`, `JSON.parse`, one durable job row per request with the same driver.
 * - **b. single-record posts from 64 clients** (4 keys of a new organisation: one key may have at
 *   most 16 requests in flight) for ENGINE_SINGLE_SECONDS (default 6), then the wait until no job is
 *   pending: requests/s accepted and processed end to end, POST latency p50/p99. Then the same again
 *   in the organisation of a, which holds its ENGINE_RECORDS tradeflows (`b-large`).
 * The server's CPU time (utime + stime from /proc) and, for a, the bytes it wrote (`wchar`: every write to the
 * database, its WAL and its checkpoints) are taken around each load, and before it the load
 * average and the median time of an `fdatasync` in the temporary directory (the least a durable
 * SQLite commit waits).
 *
 * Then **d and f** (`GET /v3/upstream?per_page=500` against a bare server reading the same page
 * from the same database; peak RSS under polling): bench/upstream-load as a child process with
 * BENCH_MESSAGES = ENGINE_UPSTREAM_MESSAGES (default 1,000,000), BENCH_CLIENTS = ENGINE_UPSTREAM_CLIENTS
 * (default 8), BENCH_SECONDS 10, BENCH_MEMORY_SECONDS = ENGINE_MEMORY_SECONDS (default 60); its
 * JSON lines are read back. ENGINE_UPSTREAM=false skips it. Goal e (webhook deliveries) is
 * `npm run bench:webhook-throughput`.
 *
 * `npm run bench:engine [-- sqlite|postgres|both]` (or BENCH_STORAGE). ENGINE_PROFILE (a directory:
 * the server of a–c runs under `--cpu-prof` into it), ENGINE_RESULTS (the report file, default
 * bench/engine/RESULTS.md; `-` writes none), ENGINE_LABEL (the report's title), BENCH_SERVER,
 * TRADEFLOW_TEST_PG_URL. Prints JSON lines and a Markdown table of the goals.
 */
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import {
  closeSync,
  fdatasyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync
} from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { root } from "../../examples/standalone/test/Process.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { withBareIngest } from "../BareIngest.js"
import { bodyOf, machine, organisationKeys, pgUrl, post, startServer, withDatabase } from "../Harness.js"

const records = Number(process.env["ENGINE_RECORDS"] ?? 100_000)
const clients = Number(process.env["ENGINE_CLIENTS"] ?? 16)
const singleSeconds = Number(process.env["ENGINE_SINGLE_SECONDS"] ?? 6)
const singleClients = 64
const batch = 500
const upstream = (process.env["ENGINE_UPSTREAM"] ?? "true") !== "false"
const upstreamMessages = process.env["ENGINE_UPSTREAM_MESSAGES"] ?? "1000000"
const upstreamClients = process.env["ENGINE_UPSTREAM_CLIENTS"] ?? "8"
const memorySeconds = process.env["ENGINE_MEMORY_SECONDS"] ?? "60"
const profileDir = process.env["ENGINE_PROFILE"]
const resultsFile = process.env["ENGINE_RESULTS"] ?? join(import.meta.dirname, "RESULTS.md")
const label = process.env["ENGINE_LABEL"] ?? "Engine benchmark"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const load1 = () => loadavg().map((l) => l.toFixed(2)).join(" ")
const round = (n: number, digits = 0) => Number(n.toFixed(digits))
const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}

/** The CPU seconds (user + system) the process `pid` has used so far. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The bytes the process `pid` has passed to write(2) and its kin so far (`wchar` of /proc/<pid>/io). */
const writtenBytes = (pid: number) => Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0)

/**
 * The median time of one `fdatasync` after a 4 KiB write in the temporary directory (milliseconds,
 * 40 samples): what one durable SQLite commit waits for at least, on this machine at this moment.
 */
const fsyncMillis = () => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-engine-fsync-"))
  try {
    const fd = openSync(join(dir, "probe"), "w")
    const block = Buffer.alloc(4096, 1)
    const times: Array<number> = []
    for (let i = 0; i < 40; i++) {
      const started = performance.now()
      writeSync(fd, block, 0, block.length, (i % 8) * block.length)
      fdatasyncSync(fd)
      times.push(performance.now() - started)
    }
    closeSync(fd)
    return round(percentile(times, 0.5), 2)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Loaded {
  readonly requests: number
  readonly failed: number
  readonly accept_seconds: number
  readonly processed_seconds: number
  readonly latencies: ReadonlyArray<number>
}

/**
 * Posts `bodies` requests of `size` records from `concurrency` clients (each takes the next
 * request), or, with `seconds`, as many as fit in them; then waits until `pending` answers 0.
 */
const drive = async (options: {
  readonly port: number
  readonly keys: ReadonlyArray<string>
  readonly tag: string
  readonly size: number
  readonly concurrency: number
  readonly requests?: number
  readonly seconds?: number
  readonly pending: () => Promise<number>
}): Promise<Loaded> => {
  let next = 0
  let failed = 0
  const latencies: Array<number> = []
  const started = performance.now()
  const until = started + (options.seconds ?? Infinity) * 1000
  await Promise.all(Array.from({ length: options.concurrency }, async (_, c) => {
    const key = options.keys[Math.floor(c / perKey) % options.keys.length]!
    for (;;) {
      const n = next++
      if (options.requests !== undefined ? n >= options.requests : performance.now() >= until) return
      const sent = performance.now()
      const answer = await post(
        options.port,
        "/v3/downstream/tradeflows",
        bodyOf(`${options.tag}-${n}`, options.size),
        {
          authorization: key
        }
      )
      latencies.push(performance.now() - sent)
      if (answer.status !== 202 && failed++ === 0) {
        console.error(`answer ${answer.status}: ${answer.body.slice(0, 300)}`)
      }
    }
  }))
  const accepted = performance.now()
  while ((await options.pending()) > 0) await sleep(10)
  return {
    requests: latencies.length,
    failed,
    accept_seconds: (accepted - started) / 1000,
    processed_seconds: (performance.now() - started) / 1000,
    latencies
  }
}

/** Clients per key: the server's default `MAX_IN_FLIGHT_PER_KEY`. */
const perKey = 16

type Row = Record<string, unknown>

/** The rows of `table` whose `column` starts with `prefix`, in insertion order. */
const rowsOf = async (
  source: {
    readonly sqlite?: InstanceType<typeof Database>
    readonly admin: InstanceType<typeof pg.Pool>
    readonly schema: string
  },
  table: string,
  column: string,
  order: string,
  prefix: string
): Promise<Array<Row>> =>
  source.sqlite !== undefined
    ? source.sqlite.prepare(`SELECT * FROM ${table} WHERE ${column} LIKE ? ORDER BY ${order}`).all(`${prefix}%`)
    : (await source.admin.query(
      `SELECT * FROM ${source.schema}.${table} WHERE ${column} LIKE $1 ORDER BY ${order}`,
      [`${prefix}%`]
    )).rows

/** `rows` cut into `parts` consecutive slices of (nearly) equal size. */
const slices = <A>(rows: ReadonlyArray<A>, parts: number) =>
  Array.from(
    { length: parts },
    (_, i) => rows.slice(Math.round(i * rows.length / parts), Math.round((i + 1) * rows.length / parts))
  )

/** Records per second of the bare SQLite floor: `tables` written again, one transaction per request. */
const sqliteFloor = (
  server: InstanceType<typeof Database>,
  tables: ReadonlyArray<{ readonly name: string; readonly rows: ReadonlyArray<Row> }>,
  transactions: number
) => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-engine-floor-"))
  try {
    const db = new Database(join(dir, "floor.sqlite"))
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = FULL")
    const names = tables.map((t) => t.name)
    const ddl = server.prepare(
      `SELECT sql FROM sqlite_master WHERE tbl_name IN (${names.map(() => "?").join(", ")}) AND sql IS NOT NULL
        ORDER BY type = 'index', name`
    ).all(...names) as Array<{ sql: string }>
    for (const { sql } of ddl) db.exec(sql)
    const inserts = tables.map((t) => {
      const columns = Object.keys(t.rows[0] ?? {})
      const statement = db.prepare(
        `INSERT INTO ${t.name} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`
      )
      return { statement, parts: slices(t.rows, transactions), columns }
    })
    const commit = db.transaction((i: number) => {
      for (const insert of inserts) {
        for (const row of insert.parts[i]!) insert.statement.run(...insert.columns.map((c) => row[c]))
      }
    })
    const started = performance.now()
    for (let i = 0; i < transactions; i++) commit(i)
    const seconds = (performance.now() - started) / 1000
    db.close()
    return seconds
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The same on PostgreSQL: tables LIKE the server's, one connection, one multi-row INSERT per table and transaction. */
const postgresFloor = async (
  schema: string,
  tables: ReadonlyArray<{ readonly name: string; readonly rows: ReadonlyArray<Row> }>,
  transactions: number
) => {
  const floor = `bench_floor_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`
  const client = new pg.Client({ connectionString: pgUrl, options: `-c search_path=${floor}` })
  await client.connect()
  try {
    await client.query(`CREATE SCHEMA ${floor}`)
    for (const t of tables) {
      await client.query(`CREATE TABLE ${floor}.${t.name} (LIKE ${schema}.${t.name} INCLUDING ALL)`)
    }
    const inserts = tables.map((t) => {
      const columns = Object.keys(t.rows[0] ?? {})
      return {
        name: t.name,
        columns,
        parts: slices(t.rows, transactions).map((part) => ({
          text: `INSERT INTO ${t.name} (${columns.join(", ")}) VALUES ${
            part.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`).join(", ")
          }`,
          values: part.flatMap((row) => columns.map((c) => row[c]))
        }))
      }
    })
    const started = performance.now()
    for (let i = 0; i < transactions; i++) {
      await client.query("BEGIN")
      for (const insert of inserts) {
        const part = insert.parts[i]!
        if (part.values.length > 0) await client.query(part.text, part.values)
      }
      await client.query("COMMIT")
    }
    return (performance.now() - started) / 1000
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${floor} CASCADE`)
    await client.end()
  }
}

/** A bare server's schema on PostgreSQL: a `jobs` table LIKE the server's, dropped after `use`. */
const withBareSchema = async <A>(
  admin: InstanceType<typeof pg.Pool>,
  schema: string,
  use: (bare: string) => Promise<A>
) => {
  const bare = `bench_bare_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`
  await admin.query(`CREATE SCHEMA ${bare}`)
  await admin.query(`CREATE TABLE ${bare}.jobs (LIKE ${schema}.jobs INCLUDING ALL)`)
  try {
    return await use(bare)
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${bare} CASCADE`)
  }
}

const results: Array<Row> = []
const log = (row: Row) => {
  console.log(JSON.stringify(row))
  results.push(row)
}

const runBackend = (backend: Backend) =>
  withDatabase(backend, "engine", async ({ admin, file, schema, url }) => {
    const server = await startServer(url, {}, profileDir)
    const pid = server.child.pid!
    const sqlite = backend === "sqlite" ? new Database(file, { readonly: true }) : undefined
    const pending = async () =>
      sqlite !== undefined
        ? (sqlite.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'pending'").get() as { n: number }).n
        : Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.jobs WHERE status = 'pending'`)).rows[0].n)
    try {
      const keys = await organisationKeys(server, Math.ceil(singleClients / perKey))
      const base = { port: server.port, keys, pending }
      await drive({ ...base, tag: "warm500", size: batch, concurrency: 4, requests: 20 })
      await drive({ ...base, tag: "warm1", size: 1, concurrency: 16, requests: 500 })

      const requests = Math.ceil(records / batch)
      const loadA = load1()
      const fsyncA = fsyncMillis()
      const cpuA = cpuSeconds(pid)
      const writtenA = writtenBytes(pid)
      const a = await drive({ ...base, tag: "a500", size: batch, concurrency: clients, requests })
      const cpuAUsed = cpuSeconds(pid) - cpuA
      const writtenAUsed = writtenBytes(pid) - writtenA
      const source = { ...(sqlite ? { sqlite } : {}), admin, schema }
      const tables = [
        { name: "tradeflows", rows: await rowsOf(source, "tradeflows", "reference", "reference", "a500-") },
        { name: "messages", rows: await rowsOf(source, "messages", "tradeflow_reference", "seq", "a500-") }
      ]
      const floorSeconds = sqlite !== undefined
        ? sqliteFloor(sqlite, tables, requests)
        : await postgresFloor(schema, tables, requests)
      const stored = a.requests * batch
      const rowBytes = tables.reduce(
        (sum, t) => sum + t.rows.reduce((bytes: number, row) => bytes + JSON.stringify(Object.values(row)).length, 0),
        0
      )
      const accepted = stored / a.accept_seconds
      const processed = stored / a.processed_seconds
      const floor = stored / floorSeconds
      const bareLoad = load1()
      const bare = await (sqlite !== undefined
        ? withBareIngest({
          backend: "sqlite",
          ddl: (sqlite.prepare("SELECT group_concat(sql, ';') AS s FROM sqlite_master WHERE name = 'jobs'").get() as {
            s: string
          }).s
        }, (port) =>
          drive({
            port,
            keys: ["bare"],
            pending: async () => 0,
            tag: "bare500",
            size: batch,
            concurrency: clients,
            requests
          }))
        : withBareSchema(admin, schema, (bareSchema) =>
          withBareIngest(
            { backend: "postgres", url: pgUrl, schema: bareSchema },
            (port) =>
              drive({
                port,
                keys: ["bare"],
                pending: async () => 0,
                tag: "bare500",
                size: batch,
                concurrency: clients,
                requests
              })
          )))
      const bareAccepted = bare.requests * batch / bare.accept_seconds
      log({
        backend,
        goal: "a+c",
        batch,
        clients,
        requests: a.requests,
        failed: a.failed,
        records: stored,
        tradeflow_rows: tables[0]!.rows.length,
        message_rows: tables[1]!.rows.length,
        accept_seconds: round(a.accept_seconds, 2),
        processed_seconds: round(a.processed_seconds, 2),
        accepted_per_second: round(accepted),
        processed_per_second: round(processed),
        post_p50_ms: round(percentile(a.latencies, 0.5), 1),
        post_p99_ms: round(percentile(a.latencies, 0.99), 1),
        server_cpu_seconds: round(cpuAUsed, 2),
        server_cpu_ms_per_request: round(cpuAUsed * 1000 / a.requests, 1),
        server_written_bytes_per_record: round(writtenAUsed / (a.requests * batch)),
        floor_seconds: round(floorSeconds, 2),
        floor_per_second: round(floor),
        floor_bytes_per_record: round(rowBytes / stored),
        processed_to_floor: round(processed / floor, 4),
        bare_http_failed: bare.failed,
        bare_http_accepted_per_second: round(bareAccepted),
        accepted_to_bare_http: round(accepted / bareAccepted, 4),
        load: loadA,
        fsync_p50_ms: fsyncA,
        load_bare: bareLoad
      })

      const single = async (goal: string, organisation: string, singleKeys: ReadonlyArray<string>) => {
        const loadB = load1()
        const fsyncB = fsyncMillis()
        const cpuB = cpuSeconds(pid)
        const b = await drive({
          ...base,
          keys: singleKeys,
          tag: `${goal}-1`,
          size: 1,
          concurrency: singleClients,
          seconds: singleSeconds
        })
        const cpuBUsed = cpuSeconds(pid) - cpuB
        log({
          backend,
          goal,
          organisation,
          batch: 1,
          clients: singleClients,
          requests: b.requests,
          failed: b.failed,
          accept_seconds: round(b.accept_seconds, 2),
          processed_seconds: round(b.processed_seconds, 2),
          accepted_requests_per_second: round(b.requests / b.accept_seconds),
          processed_requests_per_second: round(b.requests / b.processed_seconds),
          post_p50_ms: round(percentile(b.latencies, 0.5), 1),
          post_p99_ms: round(percentile(b.latencies, 0.99), 1),
          server_cpu_seconds: round(cpuBUsed, 2),
          server_cpu_ms_per_request: round(cpuBUsed * 1000 / b.requests, 2),
          load: loadB,
          fsync_p50_ms: fsyncB
        })
      }
      await single("b", "new", await organisationKeys(server, Math.ceil(singleClients / perKey)))
      await single("b-large", `holding the ${stored} tradeflows of a`, keys)
    } finally {
      sqlite?.close()
      await server.stop()
    }
  })

/** bench/upstream-load on `backends` as a child process; its throughput and memory JSON lines. */
const upstreamLoad = (backends: ReadonlyArray<Backend>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [
      "--conditions=@tradeflow/source",
      "--import",
      "tsx",
      join(root, "bench", "upstream-load", "bench.ts"),
      backends.length === 2 ? "both" : backends[0]!
    ], {
      cwd: root,
      env: {
        ...process.env,
        BENCH_MESSAGES: upstreamMessages,
        BENCH_CLIENTS: upstreamClients,
        BENCH_SECONDS: "10",
        BENCH_MEMORY_SECONDS: memorySeconds
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let rest = ""
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk)
      const lines = (rest + chunk.toString()).split("\n")
      rest = lines.pop() ?? ""
      for (const line of lines) {
        if (!line.startsWith("{")) continue
        const row = JSON.parse(line) as Row
        if (row["scenario"] === "throughput") {
          const real = row["real"] as { req_per_s: number; p50_ms: number }
          const floor = row["floor"] as { req_per_s: number; p50_ms: number }
          const bareServer = row["bare"] as { req_per_s: number }
          results.push({
            backend: row["backend"],
            goal: "d",
            clients: row["clients"],
            messages: Number(upstreamMessages),
            real_requests_per_second: real.req_per_s,
            real_p50_ms: real.p50_ms,
            floor_requests_per_second: floor.req_per_s,
            floor_p50_ms: floor.p50_ms,
            real_to_floor: round(real.req_per_s / floor.req_per_s, 4),
            fixed_bytes_server_requests_per_second: bareServer.req_per_s,
            load: load1()
          })
        } else if (row["scenario"] === "memory") {
          results.push({
            backend: row["backend"],
            goal: "f",
            messages: row["messages"],
            seconds: row["seconds"],
            idle_rss_mb: row["idle_rss_mb"],
            median_rss_mb: row["median_rss_mb"],
            peak_rss_mb: row["peak_rss_mb"],
            vm_hwm_mb: row["vm_hwm_mb"],
            load: load1()
          })
        }
      }
    })
    child.once("exit", (code) => code === 0 ? resolve() : reject(new Error(`upstream-load exited with ${code}`)))
  })

const pct = (ratio: number) => `${(ratio * 100).toFixed(1)} %`
const int = (n: unknown) => Number(n).toLocaleString("en")
const name = (backend: unknown) => backend === "sqlite" ? "SQLite" : "PostgreSQL"

/** The goals table: goal | floor (same run) | measured | ratio | met. */
const goalRows = () => {
  const rows: Array<string> = []
  const find = (goal: string, backend: Backend) => results.filter((r) => r["goal"] === goal && r["backend"] === backend)
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("a+c", backend)) {
      const ratio = Number(r["processed_to_floor"])
      rows.push(
        backend === "sqlite"
          ? `| a. processed at 500/request, ${name(backend)}: ≥ 25 % of the storage floor | ${
            int(r["floor_per_second"])
          } rec/s | ${int(r["processed_per_second"])} rec/s | ${pct(ratio)} | ${ratio >= 0.25 ? "yes" : "**no**"} |`
          : `| a. processed at 500/request, ${name(backend)}: ≥ 10,000 rec/s | ${int(r["floor_per_second"])} rec/s | ${
            int(r["processed_per_second"])
          } rec/s | ${pct(ratio)} of the floor | ${Number(r["processed_per_second"]) >= 10_000 ? "yes" : "**no**"} |`
      )
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("b", backend)) {
      const met = Number(r["processed_requests_per_second"]) >= 3_000 && Number(r["post_p50_ms"]) < 20
      rows.push(
        `| b. 1 record/request, 64 clients, ${name(backend)}${
          backend === "sqlite" ? ": ≥ 3,000 req/s processed, POST p50 < 20 ms" : " (reported)"
        } | – | ${int(r["processed_requests_per_second"])} req/s processed (${
          int(r["accepted_requests_per_second"])
        } accepted), p50 ${r["post_p50_ms"]} ms | – | ${backend === "sqlite" ? met ? "yes" : "**no**" : "–"} |`
      )
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("b-large", backend)) {
      rows.push(
        `| b. the same in the organisation ${r["organisation"]}, ${name(backend)} (reported) | – | ${
          int(r["processed_requests_per_second"])
        } req/s processed (${int(r["accepted_requests_per_second"])} accepted), p50 ${r["post_p50_ms"]} ms | – | – |`
      )
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("a+c", backend)) {
      const ratio = Number(r["accepted_to_bare_http"])
      rows.push(
        `| c. accepted at 500/request, ${name(backend)}: ≥ 30 % of a bare node:http server | ${
          int(r["bare_http_accepted_per_second"])
        } rec/s | ${int(r["accepted_per_second"])} rec/s | ${pct(ratio)} | ${ratio >= 0.3 ? "yes" : "**no**"} |`
      )
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("d", backend)) {
      const ratio = Number(r["real_to_floor"])
      rows.push(
        `| d. GET /upstream?per_page=500, ${r["clients"]} clients, ${
          name(backend)
        }: ≥ 80 % of a bare server reading the page | ${int(r["floor_requests_per_second"])} req/s | ${
          int(r["real_requests_per_second"])
        } req/s | ${pct(ratio)} | ${ratio >= 0.8 ? "yes" : "**no**"} |`
      )
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    for (const r of find("f", backend)) {
      rows.push(
        `| f. peak RSS, ${int(r["messages"])} messages under polling, ${name(backend)}: < 300 MB | – | ${
          r["peak_rss_mb"]
        } MB | – | ${Number(r["peak_rss_mb"]) < 300 ? "yes" : "**no**"} |`
      )
    }
  }
  return rows
}

const backends = selectedBackends()
const startedAt = machine()
console.log(JSON.stringify({ machine: startedAt }))
for (const backend of backends) await runBackend(backend)
if (upstream) await upstreamLoad(backends)
const endedAt = machine()
const table = [
  "| goal | floor (same run) | measured | ratio | met |",
  "|---|---:|---:|---:|---|",
  ...goalRows()
].join("\n")
console.log(`\n${table}`)
if (resultsFile !== "-") {
  writeFileSync(
    resultsFile,
    `# ${label}

\`npm run bench:engine -- ${backends.length === 2 ? "both" : backends[0]}\` (${
      Object.entries(process.env).filter(([k]) => k.startsWith("ENGINE_") || k === "BENCH_SERVER").map(([k, v]) =>
        `${k}=${v}`
      ).join(" ") || "defaults"
    }), ${startedAt.date} – ${endedAt.date}.

Machine: ${startedAt.nproc} × ${startedAt.cpu}, ${startedAt.memory_gib} GiB RAM, Node ${startedAt.node}, PostgreSQL ${startedAt.postgres}.
Load average at the start ${startedAt.load}, at the end ${endedAt.load} (each measurement below has its own).

${table}

Raw numbers (one JSON line per measurement):

\`\`\`
${results.map((r) => JSON.stringify(r)).join("\n")}
\`\`\`
`
  )
  console.log(`\nwritten ${resultsFile}`)
}
