/**
 * Depth benchmark of the paginated upstream feed: fills SQLite with BENCH_MESSAGES (default
 * 1,000,000) messages of one organisation, then measures `GET /upstream?per_page=500` on the
 * first page and on pages deep in the log through the real HTTP server (in-process, on a port),
 * and the same pages at the service and storage level. Keyset pagination must keep the deep page
 * within 2x of the first one.
 *
 * `npm run bench:upstream-depth` (not part of `npm test`). Writes bench/upstream-depth/RESULTS.md.
 * Env: BENCH_MESSAGES, BENCH_REPEAT (default 200), BENCH_BATCH (messages per commit, default 10,000).
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Accounts, JobQueue, Locations, MessageStore, Service, TrackingConfig, TradeflowStore, Upstream } from "@tradeflow/core"
import { HttpApp, HttpConfig } from "@tradeflow/http-node"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const total = Number(process.env["BENCH_MESSAGES"] ?? 1_000_000)
const repeat = Number(process.env["BENCH_REPEAT"] ?? 200)
const batchSize = Number(process.env["BENCH_BATCH"] ?? 10_000)
const perPage = 500
const types = ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"] as const

const root = mkdtempSync(join(tmpdir(), "tradeflow-bench-upstream-"))
const filename = join(root, "bench.sqlite")

const storage = SqliteStorage.layer({ filename, synchronous: "NORMAL" })
const services = Service.layer({ background: false }).pipe(
  Layer.provideMerge(Layer.mergeAll(storage, Locations.layerBuiltin, TrackingConfig.layer()))
)
const app = HttpApp.layer.pipe(
  Layer.provide(HttpConfig.layer({ consoleToken: "bench" })),
  Layer.provideMerge(services),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const body = (i: number, type: string, generatedAt: number): string =>
  JSON.stringify({
    hash: `h${i}`,
    message_generated_event_date: new Date(generatedAt).toISOString(),
    type,
    tradeflow_reference: `TF-${i % 1000}`,
    payload: {
      type: type === "CONTAINER_MILESTONE" ? "CONTAINER_MILESTONES" : type,
      status_code: "VA",
      event_date: new Date(generatedAt).toISOString(),
      location: { name: "Rotterdam", unlocode: "NLRTM", timezone: "Europe/Amsterdam", country: { name: "Netherlands", iso_a2: "NL" } },
      shipment: { containers: [{ reference: "MSCU1234565", container_type: "45G1", container_length: 40 }], transport_plan_legs: [] }
    }
  })

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
      stats[name] = { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, rows: rows[c]! }
    })
    return stats
  })

const program = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const queue = yield* JobQueue.JobQueue
  const store = yield* TradeflowStore.TradeflowStore
  const messages = yield* MessageStore.MessageStore
  const upstream = yield* Upstream.Upstream
  const server = yield* HttpServer.HttpServer
  const address = server.address
  if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const base = `http://127.0.0.1:${address.port}`

  const org = yield* accounts.createOrganisation("Bench BV")
  const { key } = yield* accounts.createApiKey(org.id, "production")

  const fillStart = performance.now()
  const now = Date.now()
  for (let from = 0; from < total; from += batchSize) {
    const outcome = yield* queue.enqueue({
      organisation_id: org.id,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: now
    })
    if (outcome._tag !== "Enqueued") return yield* Effect.dieMessage("enqueue failed")
    const batch = Array.from({ length: Math.min(batchSize, total - from) }, (_, k) => {
      const i = from + k
      const type = types[i % types.length]!
      const generatedAt = now - (total - i)
      return {
        hash: `h${i}`,
        type,
        tradeflow_reference: `TF-${i % 1000}`,
        container_reference: type === "CONTAINER_MILESTONE" ? "MSCU1234565" : null,
        generated_at: generatedAt,
        body: body(i, type, generatedAt)
      }
    })
    yield* store.commit({ job_id: outcome.id, organisation_id: org.id, upserts: [], deletes: [], messages: batch, result: { count: 0 } })
    if ((from / batchSize) % 10 === 0) console.log(`filled ${from + batch.length} / ${total}`)
  }
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
    cases.push([`http per_page=500 type=CONTAINER_MILESTONE ${name}`, http(`per_page=500&type=CONTAINER_MILESTONE${withCursor(cursor)}`)])
  }
  cases.push(["http array form (newest 500, 24 h)", http("")])
  for (const [name, cursor] of Object.entries(positions)) {
    cases.push([`service Upstream.page ${name}`, Effect.map(
      upstream.page({ organisation_id: org.id, per_page: perPage, ...(cursor === undefined ? {} : { cursor }) }),
      (p) => p.data.length
    )])
  }
  const storageAt = { first: 0, middle: Math.floor(total / 2), last: total - perPage }
  for (const [name, after] of Object.entries(storageAt)) {
    cases.push([`storage MessageStore.list after_seq ${name}`, Effect.map(
      messages.list({ organisation_id: org.id, after_seq: after, take: "oldest", limit: perPage + 1 }),
      (rows) => rows.length
    )])
  }
  const results = yield* measureAll(cases)
  for (const [name, stats] of Object.entries(results)) {
    console.log(`${name.padEnd(50)} p50 ${stats.p50.toFixed(2)} ms  p99 ${stats.p99.toFixed(2)} ms  rows ${stats.rows}`)
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

const main = Effect.scoped(Effect.flatMap(Layer.build(app), (context) => Effect.provide(program, context)))

Effect.runPromise(main).then(({ fillSeconds, results }) => {
  const m = machine()
  const dbBytes = statSync(filename).size + (() => {
    try {
      return statSync(`${filename}-wal`).size
    } catch {
      return 0
    }
  })()
  const ratio = (deep: string, first: string) => results[deep]!.p50 / results[first]!.p50
  const ratios = {
    "http last / first (p50)": ratio("http per_page=500 last", "http per_page=500 first"),
    "http middle / first (p50)": ratio("http per_page=500 middle", "http per_page=500 first"),
    "http type filter last / first (p50)": ratio("http per_page=500 type=CONTAINER_MILESTONE last", "http per_page=500 type=CONTAINER_MILESTONE first"),
    "service last / first (p50)": ratio("service Upstream.page last", "service Upstream.page first"),
    "storage last / first (p50)": ratio("storage MessageStore.list after_seq last", "storage MessageStore.list after_seq first")
  }
  const pass = Object.values(ratios).every((r) => r <= 2)
  const rows = Object.entries(results).map(([name, s]) =>
    `| ${name} | ${s.rows} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.mean.toFixed(2)} |`)
  const md = [
    "# Upstream depth benchmark (SQLite)",
    "",
    `Date: ${new Date().toISOString()}`,
    `Machine: ${m.nproc} CPUs (nproc), ${m.memory} memory, ${m.cpu}; Node ${m.node}; load average at the end ${m.load} ` +
    "(the machine was shared with other work while the benchmark ran)",
    `Data: ${total.toLocaleString("en")} messages of one organisation (4 types round-robin, ~${Math.round(body(0, "BASIC_STATUS", 0).length)} byte bodies), ` +
    `filled through TradeflowStore.commit in batches of ${batchSize.toLocaleString("en")} in ${fillSeconds.toFixed(1)} s ` +
    `(SQLite synchronous=NORMAL for the fill and the run); database ${(dbBytes / 1024 / 1024).toFixed(0)} MiB.`,
    `Method: 20 warm-up rounds, then ${repeat} rounds of one sequential request per case, the cases interleaved so that ` +
    "background load hits all of them alike. The HTTP cases go through the real HttpApp on an " +
    "in-process NodeHttpServer (fetch over loopback, keep-alive, the whole body read and parsed). \"first\" is the first page " +
    `(no cursor), "middle" a cursor at sequence ${Math.floor(total / 2).toLocaleString("en")}, "last" a cursor ${perPage} before the end ` +
    "(the page is the final 500 messages). Deep cursors are signed with the server's stored secret, as the server would.",
    "",
    "| case | rows | p50 ms | p99 ms | mean ms |",
    "|---|---:|---:|---:|---:|",
    ...rows,
    "",
    "| ratio | value |",
    "|---|---:|",
    ...Object.entries(ratios).map(([name, r]) => `| ${name} | ${r.toFixed(2)} |`),
    "",
    `Deep pages within 2x of the first page: ${pass ? "yes" : "NO"}.`,
    "",
    "Notes:",
    "- Keyset pagination: every page is `seq > cursor ORDER BY seq LIMIT per_page + 1` on the (organisation_id, seq) " +
    "primary key (or the (organisation_id, type, seq) index with a type filter), so the depth of the cursor does not matter.",
    "- The array form (no per_page) reads the 500 newest matching messages by sequence and only asks the store for the " +
    "24-hour window when some of them fall outside it. Querying the window directly made SQLite use the generated_at " +
    "index and sort the whole window: 56 ms p50 with 20,000 messages, growing with the messages of the last 24 hours.",
    "- PostgreSQL was not measured in this run (no TRADEFLOW_TEST_PG_URL).",
    ""
  ].join("\n")
  const out = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.md")
  writeFileSync(out, md)
  console.log(md)
  rmSync(root, { recursive: true, force: true })
  process.exit(pass ? 0 : 1)
}, (error) => {
  console.error(error)
  rmSync(root, { recursive: true, force: true })
  process.exit(2)
})
