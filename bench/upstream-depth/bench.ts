/**
 * Depth benchmark of the paginated upstream feed: fills the storage (SQLite and/or PostgreSQL) with
 * BENCH_MESSAGES (default 1,000,000) messages of one organisation (the fills of bench/Fill.ts), then measures
 * `GET /upstream?per_page=500` on the first page and on pages deep in the log through the real HTTP
 * server (in-process, on a port), and the same pages at the service and storage level. Keyset
 * pagination must keep the deep page within 2x of the first one.
 *
 * `npm run bench:upstream-depth [-- sqlite|postgres|both]` (not part of `npm test`). Writes the
 * section of each measured backend into bench/upstream-depth/RESULTS.md, keeping the other one.
 * Env: BENCH_STORAGE (sqlite | postgres | both, default both; a CLI argument wins), BENCH_MESSAGES,
 * BENCH_REPEAT (default 200), BENCH_BATCH (SQLite: messages per commit, default 10,000),
 * BENCH_PG_CHUNK (PostgreSQL: rows per bulk INSERT, default 100,000), TRADEFLOW_TEST_PG_URL
 * (default postgres://postgres@127.0.0.1:5432/test). PostgreSQL runs in a fresh schema
 * `bench_depth_<random>`, dropped at the end (also on failure or SIGINT / SIGTERM).
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import {
  Accounts,
  Locations,
  MessageStore,
  Service,
  type Storage,
  type StorageError,
  TrackingConfig,
  Upstream,
  WebhookDestination
} from "@tradeflow/core"
import { HttpApp, HttpConfig } from "@tradeflow/http-node"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Context, Effect, Fiber, Layer, Redacted } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Backend, selectedBackends } from "../Backends.js"
import { bulkFill, commitFill, messageBody, messageTypes as types } from "../Fill.js"

const total = Number(process.env["BENCH_MESSAGES"] ?? 1_000_000)
const repeat = Number(process.env["BENCH_REPEAT"] ?? 200)
const batchSize = Number(process.env["BENCH_BATCH"] ?? 10_000)
const pgChunk = Number(process.env["BENCH_PG_CHUNK"] ?? 100_000)
const pgUrl = process.env["TRADEFLOW_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const perPage = 500

const backends = selectedBackends()

const root = mkdtempSync(join(tmpdir(), "tradeflow-bench-upstream-"))
const filename = join(root, "bench.sqlite")
const pgSchema = `bench_depth_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`

const appOn = (storage: Layer.Layer<Storage.Storage | SqlClient.SqlClient, StorageError.StorageError>) => {
  const services = Service.layer({ background: false }).pipe(
    Layer.provideMerge(Layer.mergeAll(storage, Locations.layerBuiltin, TrackingConfig.layer()))
  )
  return HttpApp.layer.pipe(
    Layer.provide(HttpConfig.layer({ consoleToken: "bench-console-token-0123456789abcdef" })),
    Layer.provide(WebhookDestination.layerMemory),
    Layer.provideMerge(services),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
}

interface Stats {
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly rows: number
}

/**
 * Runs every case `repeat` times, interleaved (one request of each case per round, after 20 warm-up
 * rounds), so background load on the machine affects all cases alike.
 */
const measureAll = <E, R>(cases: ReadonlyArray<readonly [string, Effect.Effect<number, E, R>]>) =>
  Effect.gen(function*() {
    const times = cases.map(() => [] as Array<number>)
    const rows = cases.map(() => 0)
    for (let round = -20; round < repeat; round++) {
      for (let c = 0; c < cases.length; c++) {
        const start = performance.now()
        rows[c] = yield* cases[c]![1]
        if (round >= 0) times[c]!.push(performance.now() - start)
      }
    }
    const stats: Record<string, Stats> = {}
    cases.forEach(([name], c) => {
      const sorted = times[c]!.sort((a, b) => a - b)
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
      stats[name] = {
        p50: at(0.5),
        p99: at(0.99),
        mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
        rows: rows[c]!
      }
    })
    return stats
  })

const program = <R>(fill: (organisationId: string) => Effect.Effect<void, unknown, R>) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const messages = yield* MessageStore.MessageStore
    const upstream = yield* Upstream.Upstream
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    const base = `http://127.0.0.1:${address.port}`

    const org = yield* accounts.createOrganisation("Bench BV")
    const { key } = yield* accounts.createApiKey(org.id, "production")

    const fillStart = performance.now()
    yield* fill(org.id)
    const fillSeconds = (performance.now() - fillStart) / 1000
    console.log(`filled ${total} messages in ${fillSeconds.toFixed(1)} s`)

    const signer = yield* Effect.flatMap(Upstream.Cursor.storedSecret, Upstream.Cursor.makeSigner)
    const cursorAt = (afterSeq: number, types?: ReadonlyArray<string>) =>
      signer.sign({ organisation_id: org.id, ...(types === undefined ? {} : { types }) }, afterSeq)
    const milestones = ["CONTAINER_MILESTONE"]
    const positions = {
      first: undefined,
      middle: yield* cursorAt(Math.floor(total / 2)),
      last: yield* cursorAt(total - perPage)
    }
    const typedPositions = {
      first: undefined,
      last: yield* cursorAt(total - perPage * types.length, milestones)
    }

    const http = (query: string) =>
      Effect.promise(async () => {
        const response = await fetch(`${base}/upstream?${query}`, { headers: { authorization: key } })
        const text = await response.text()
        if (response.status !== 200) throw new Error(`${response.status} ${text.slice(0, 200)}`)
        const parsed = JSON.parse(text) as { data?: Array<unknown> } | Array<unknown>
        return Array.isArray(parsed) ? parsed.length : parsed.data?.length ?? 0
      })
    const withCursor = (cursor: string | undefined) => cursor === undefined ? "" : `&cursor=${cursor}`

    const cases: Array<readonly [string, Effect.Effect<number, unknown>]> = []
    for (const [name, cursor] of Object.entries(positions)) {
      cases.push([`http per_page=500 ${name}`, http(`per_page=500${withCursor(cursor)}`)])
    }
    for (const [name, cursor] of Object.entries(typedPositions)) {
      cases.push([
        `http per_page=500 type=CONTAINER_MILESTONE ${name}`,
        http(`per_page=500&type=CONTAINER_MILESTONE${withCursor(cursor)}`)
      ])
    }
    cases.push(["http array form (newest 500, 24 h)", http("")])
    for (const [name, cursor] of Object.entries(positions)) {
      cases.push([
        `service Upstream.page ${name}`,
        Effect.map(
          upstream.page({ organisation_id: org.id, per_page: perPage, ...(cursor === undefined ? {} : { cursor }) }),
          (p) => p.data.length
        )
      ])
    }
    const storageAt = { first: 0, middle: Math.floor(total / 2), last: total - perPage }
    for (const [name, after] of Object.entries(storageAt)) {
      cases.push([
        `storage MessageStore.list after_seq ${name}`,
        Effect.map(
          messages.list({ organisation_id: org.id, after_seq: after, take: "oldest", limit: perPage + 1 }),
          (rows) => rows.length
        )
      ])
    }
    const results = yield* measureAll(cases)
    for (const [name, stats] of Object.entries(results)) {
      console.log(
        `${name.padEnd(50)} p50 ${stats.p50.toFixed(2)} ms  p99 ${stats.p99.toFixed(2)} ms  rows ${stats.rows}`
      )
    }
    return { fillSeconds, results }
  })

const machine = () => {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8")
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown"
  const memKb = Number(/MemTotal:\s*(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0)
  return {
    nproc: cpus().length,
    memory: `${(memKb / 1024 / 1024).toFixed(1)} GiB`,
    cpu: model.trim(),
    node: process.version,
    load: loadavg().map((l) => l.toFixed(2)).join(", ")
  }
}

type Outcome = Effect.Effect.Success<ReturnType<typeof program>>

const runSqlite = Effect.scoped(Effect.flatMap(
  Layer.build(appOn(SqliteStorage.layer({ filename, synchronous: "NORMAL" }))),
  (context) => Effect.provide(program((id) => commitFill(id, { total, batchSize })), context)
)).pipe(Effect.map((outcome) => ({
  ...outcome,
  dbBytes: statSync(filename).size + (() => {
    try {
      return statSync(`${filename}-wal`).size
    } catch {
      return 0
    }
  })()
})))

/** Drops the benchmark schema on a connection of its own (runs after the storage pool is closed). */
const dropSchema = Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(pgUrl), maxConnections: 1 }))
  const sql = Context.get(context, SqlClient.SqlClient)
  yield* sql`DROP SCHEMA IF EXISTS ${sql(pgSchema)} CASCADE`
  console.log(`dropped schema ${pgSchema}`)
})).pipe(Effect.catchAllCause((cause) => Effect.logError(`could not drop schema ${pgSchema}`, cause)))

const runPostgres = Effect.scoped(Effect.gen(function*() {
  yield* Effect.addFinalizer(() => dropSchema)
  console.log(`PostgreSQL schema ${pgSchema}`)
  const context = yield* Layer.build(appOn(PgStorage.layer({ url: pgUrl, schema: pgSchema })))
  const outcome = yield* Effect.provide(program((id) => bulkFill(id, { total, chunk: pgChunk })), context)
  const sql = Context.get(context, SqlClient.SqlClient)
  const info = yield* sql<{ version: string; bytes: number; shared_buffers: string }>`SELECT
    current_setting('server_version') AS version, current_setting('shared_buffers') AS shared_buffers,
    (SELECT sum(pg_total_relation_size(c.oid))::float8 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${pgSchema} AND c.relkind IN ('r', 'm')) AS bytes`
  const organisation = yield* sql<{ organisation_id: string }>`SELECT organisation_id FROM message_sequences LIMIT 1`
  const org = organisation[0]?.organisation_id ?? ""
  const explain = (query: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${query}`, params),
      (rows) => rows.map((r) => r["QUERY PLAN"]).join(" / ")
    )
  const plans = {
    "after_seq last": yield* explain(
      "SELECT * FROM messages m WHERE m.organisation_id = $1 AND m.seq > $2 ORDER BY m.seq ASC LIMIT 501",
      [org, total - perPage]
    ),
    "type filter last": yield* explain(
      "SELECT * FROM messages m WHERE m.organisation_id = $1 AND m.type IN ($2) AND m.seq > $3 ORDER BY m.seq ASC LIMIT 501",
      [org, "CONTAINER_MILESTONE", total - perPage * types.length]
    )
  }
  return {
    ...outcome,
    dbBytes: info[0]?.bytes ?? 0,
    version: info[0]?.version ?? "?",
    sharedBuffers: info[0]?.shared_buffers ?? "?",
    plans
  }
}))

const ratiosOf = (results: Outcome["results"]) => {
  const ratio = (deep: string, first: string) => results[deep]!.p50 / results[first]!.p50
  return {
    "http last / first (p50)": ratio("http per_page=500 last", "http per_page=500 first"),
    "http middle / first (p50)": ratio("http per_page=500 middle", "http per_page=500 first"),
    "http type filter last / first (p50)": ratio(
      "http per_page=500 type=CONTAINER_MILESTONE last",
      "http per_page=500 type=CONTAINER_MILESTONE first"
    ),
    "service last / first (p50)": ratio("service Upstream.page last", "service Upstream.page first"),
    "storage last / first (p50)": ratio(
      "storage MessageStore.list after_seq last",
      "storage MessageStore.list after_seq first"
    )
  }
}

const tables = (results: Outcome["results"], ratios: Record<string, number>) => [
  "| case | rows | p50 ms | p99 ms | mean ms |",
  "|---|---:|---:|---:|---:|",
  ...Object.entries(results).map(([name, s]) =>
    `| ${name} | ${s.rows} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.mean.toFixed(2)} |`
  ),
  "",
  "| ratio | value |",
  "|---|---:|",
  ...Object.entries(ratios).map(([name, r]) => `| ${name} | ${r.toFixed(2)} |`),
  ""
]

const method = () =>
  `Method: 20 warm-up rounds, then ${repeat} rounds of one sequential request per case, the cases interleaved so that ` +
  "background load hits all of them alike. The HTTP cases go through the real HttpApp on an " +
  "in-process NodeHttpServer (fetch over loopback, keep-alive, the whole body read and parsed). \"first\" is the first page " +
  `(no cursor), "middle" a cursor at sequence ${
    Math.floor(total / 2).toLocaleString("en")
  }, "last" a cursor ${perPage} before the end ` +
  "(the page is the final 500 messages). Deep cursors are signed with the server's stored secret, as the server would."

const sqliteSection = (outcome: Outcome & { readonly dbBytes: number }, pgMeasured: boolean) => {
  const m = machine()
  const ratios = ratiosOf(outcome.results)
  const pass = Object.values(ratios).every((r) => r <= 2)
  const md = [
    "# Upstream depth benchmark (SQLite)",
    "",
    `Date: ${new Date().toISOString()}`,
    `Machine: ${m.nproc} CPUs (nproc), ${m.memory} memory, ${m.cpu}; Node ${m.node}; load average at the end ${m.load} ` +
    "(the machine was shared with other work while the benchmark ran)",
    `Data: ${total.toLocaleString("en")} messages of one organisation (4 types round-robin, ~${
      Math.round(messageBody(0, "BASIC_STATUS", 0).length)
    } byte bodies), ` +
    `filled through TradeflowStore.commit in batches of ${batchSize.toLocaleString("en")} in ${
      outcome.fillSeconds.toFixed(1)
    } s ` +
    `(SQLite synchronous=NORMAL for the fill and the run); database ${(outcome.dbBytes / 1024 / 1024).toFixed(0)} MiB.`,
    method(),
    "",
    ...tables(outcome.results, ratios),
    `Deep pages within 2x of the first page: ${pass ? "yes" : "NO"}.`,
    "",
    "Notes:",
    "- Keyset pagination: every page is `seq > cursor ORDER BY seq LIMIT per_page + 1` on the (organisation_id, seq) " +
    "primary key (or the (organisation_id, type, seq) index with a type filter), so the depth of the cursor does not matter.",
    "- The array form (no per_page) reads the 500 newest matching messages by sequence and only asks the store for the " +
    "24-hour window when some of them fall outside it. Querying the window directly made SQLite use the generated_at " +
    "index and sort the whole window: 56 ms p50 with 20,000 messages, growing with the messages of the last 24 hours.",
    pgMeasured
      ? "- PostgreSQL: see the section below (measured in the same run)."
      : "- PostgreSQL was not measured in this run (no TRADEFLOW_TEST_PG_URL).",
    ""
  ].join("\n")
  return { md, pass }
}

const postgresSection = (outcome: Effect.Effect.Success<typeof runPostgres>) => {
  const m = machine()
  const ratios = ratiosOf(outcome.results)
  const pass = Object.values(ratios).every((r) => r <= 2)
  const md = [
    "# Upstream depth benchmark (PostgreSQL)",
    "",
    `Date: ${new Date().toISOString()}`,
    `Machine: ${m.nproc} CPUs (nproc), ${m.memory} memory, ${m.cpu}; Node ${m.node}; load average at the end ${m.load} ` +
    "(the machine was shared with other work while the benchmark ran)",
    `Database: PostgreSQL ${outcome.version} on the same machine (127.0.0.1, default configuration, shared_buffers ` +
    `${outcome.sharedBuffers}), reached through @tradeflow/storage-pg (\`PgStorage.layer\`, pool of 10) in a fresh schema, dropped afterwards.`,
    `Data: the same ${
      total.toLocaleString("en")
    } messages of one organisation as in the SQLite run (same hashes, types, ` +
    `references, timestamps and byte-identical ~${
      Math.round(messageBody(0, "BASIC_STATUS", 0).length)
    } byte bodies; checked on a sample), ` +
    `written with bulk \`INSERT … SELECT generate_series\` statements of ${
      pgChunk.toLocaleString("en")
    } rows into the migrated ` +
    "schema (every index in place), the organisation's message_sequences counter set to the last seq, then " +
    `\`VACUUM (ANALYZE) messages\`; fill ${outcome.fillSeconds.toFixed(1)} s in all; schema ${
      (outcome.dbBytes / 1024 / 1024).toFixed(0)
    } MiB ` +
    "(tables and indexes).",
    method(),
    "",
    ...tables(outcome.results, ratios),
    `Deep pages within 2x of the first page: ${pass ? "yes" : "NO"}.`,
    "",
    "Notes:",
    "- Plans of the deep storage queries (EXPLAIN ANALYZE after the run):",
    ...Object.entries(outcome.plans).map(([name, plan]) => `  - ${name}: \`${plan.replace(/\s+/g, " ")}\``),
    "- The fill bypasses TradeflowStore.commit because only the read path is measured here; the rows and the " +
    "message_sequences counter are what commits of the same messages would have produced.",
    ""
  ].join("\n")
  return { md, pass }
}

const resultsFile = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.md")

/** Replaces (or adds) the sections of the measured backends in RESULTS.md, keeping the others. */
const writeSections = (sections: Partial<Record<Backend, string>>) => {
  const existing = existsSync(resultsFile) ? readFileSync(resultsFile, "utf8") : ""
  const headers: Record<Backend, string> = {
    sqlite: "# Upstream depth benchmark (SQLite)",
    postgres: "# Upstream depth benchmark (PostgreSQL)"
  }
  const current: Partial<Record<Backend, string>> = {}
  const starts = (["sqlite", "postgres"] as const)
    .map((b) => [b, existing.indexOf(headers[b])] as const)
    .filter(([, at]) => at >= 0)
    .sort((a, b) => a[1] - b[1])
  starts.forEach(([b, at], k) => {
    const end = starts[k + 1]?.[1] ?? existing.length
    current[b] = existing.slice(at, end).trimEnd() + "\n"
  })
  const merged = { ...current, ...sections }
  const md = (["sqlite", "postgres"] as const).flatMap((b) => merged[b] === undefined ? [] : [merged[b]]).join("\n")
  writeFileSync(resultsFile, md)
}

const main = Effect.gen(function*() {
  const sections: Partial<Record<Backend, string>> = {}
  let pass = true
  const sqlite = backends.includes("sqlite") ? yield* runSqlite : undefined
  const postgres = backends.includes("postgres") ? yield* runPostgres : undefined
  if (sqlite !== undefined) {
    const section = sqliteSection(sqlite, postgres !== undefined)
    sections.sqlite = section.md
    pass &&= section.pass
  }
  if (postgres !== undefined) {
    const section = postgresSection(postgres)
    sections.postgres = section.md
    pass &&= section.pass
  }
  writeSections(sections)
  for (const md of Object.values(sections)) console.log(md)
  return pass
})

const fiber = Effect.runFork(main)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`${signal}: interrupting (the PostgreSQL schema is dropped on the way out)`)
    Effect.runFork(Fiber.interrupt(fiber))
  })
}

Effect.runPromise(Fiber.join(fiber)).then((pass) => {
  rmSync(root, { recursive: true, force: true })
  process.exit(pass ? 0 : 1)
}, (error) => {
  console.error(error)
  rmSync(root, { recursive: true, force: true })
  process.exit(2)
})
