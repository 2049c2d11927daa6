/**
 * Upstream load benchmark (issue 6): throughput of `GET /v3/upstream?per_page=500` on the real
 * standalone server next to a bare `node:http` server answering the same bytes (goal: at least
 * 50% of its requests/s), and the peak RSS of the real server under polling load with
 * BENCH_MESSAGES (default 1,000,000) stored messages (goal: under 300 MB). One script for both
 * because both run on the same filled database, and the fill is the slow part.
 *
 * Per backend: the database (a SQLite file in a temporary directory, or a fresh PostgreSQL schema)
 * gets one organisation, production API keys (one per 4 clients, the server's default limit of
 * `GET /upstream` requests in flight per key, so that no client is refused with 429) and the
 * messages of bench/Fill.ts, written by this process; then the real server runs as a separate
 * process, as `npm start` runs it (bundled by `npm run build` into dist/server.mjs, plain node with
 * the start script's flags), with its defaults (job worker, webhook worker, SQLite
 * synchronous=FULL, PostgreSQL pool of 10). One real page (a cursor in the middle of the log) is captured with its headers, and a
 * bare server (`node -e`, a separate process) answers every request with those bytes and headers.
 *
 * Throughput: for each C of BENCH_CLIENTS, C keep-alive connections (node:http Agent, in this
 * process) each walk the log page by page, following `next_cursor` and restarting at the first page
 * when `has_more` is false; client k starts at sequence k/C of the log (cursors signed with the
 * stored secret, as the server would). BENCH_WARMUP seconds unmeasured, then BENCH_SECONDS
 * measured, on the real server and then on the bare server with the same client code (the bare
 * server's cursor is always the same). Reported: req/s, body MB/s, latency p50/p99, ratio.
 *
 * Memory: a fresh real server process; VmRSS of /proc/<pid>/status every 100 ms from its start,
 * BENCH_MEMORY_CLIENTS page walkers (spread as above) plus 2 clients polling the array form
 * (`GET /v3/upstream`) and 1 polling `GET /v3/upstream?latest=true`, for BENCH_MEMORY_SECONDS;
 * peak VmRSS and VmHWM at the end.
 *
 * `npx tsx --conditions=@tradeflow/source bench/upstream-load/bench.ts [sqlite|postgres|both]`. Prints JSON lines and Markdown
 * tables; writes nothing into the repository (RESULTS.md is written by hand from the output).
 * Env: BENCH_STORAGE (sqlite | postgres | both, default both; a CLI argument wins),
 * BENCH_MESSAGES, BENCH_CLIENTS (default "1,8,32"), BENCH_SECONDS (default 10), BENCH_WARMUP
 * (default 2), BENCH_MEMORY_CLIENTS (default 32), BENCH_MEMORY_SECONDS (default 60; 0 skips the
 * memory run), BENCH_FILL_CHUNK (the fill, bench/Fill.ts `bulkFill` on both storages: rows per
 * INSERT, default 100,000), BENCH_CPU_PROF (a directory: the throughput
 * server runs with `--cpu-prof` and writes its profiles into `<dir>/<backend>/` on exit, one per
 * thread, the main thread's named `CPU.*.0.*.cpuprofile`), BENCH_SERVER_NODE_ARGS (extra
 * node options of the real server, space-separated, e.g. `--max-old-space-size=128`), BENCH_SERVER
 * (`tsx`: run main.ts under the tsx loader instead of the bundle `npm start` runs), TRADEFLOW_TEST_PG_URL
 * (default postgres://postgres@127.0.0.1:5432/test). Temporary files and the schema are removed at
 * the end (also on SIGINT / SIGTERM).
 */
import type { SqlClient } from "@effect/sql"
import { Accounts, Cursor, Locations, Service, type Storage, type StorageError, TrackingConfig } from "@tradeflow/core"
import { HttpConfig } from "@tradeflow/http-node"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Exit, Layer, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, npmStartArgs, root as repoRoot } from "../../examples/standalone/test/Process.js"
import { makeTestSchema } from "../../packages/storage-pg/test/TestDatabase.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { bulkFill } from "../Fill.js"
import { machine, serverArgs, underTsx } from "../Harness.js"

const total = Number(process.env["BENCH_MESSAGES"] ?? 1_000_000)
const clientCounts = (process.env["BENCH_CLIENTS"] ?? "1,8,32").split(",").map(Number)
const seconds = Number(process.env["BENCH_SECONDS"] ?? 10)
const warmup = Number(process.env["BENCH_WARMUP"] ?? 2)
const memoryClients = Number(process.env["BENCH_MEMORY_CLIENTS"] ?? 32)
const memorySeconds = Number(process.env["BENCH_MEMORY_SECONDS"] ?? 60)
const fillChunk = Number(process.env["BENCH_FILL_CHUNK"] ?? 100_000)
const cpuProf = process.env["BENCH_CPU_PROF"]
const serverNodeArgs = (process.env["BENCH_SERVER_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "")
const perPage = 500
/** Requests of one key the server answers at once (`GET /upstream`); more clients get more keys. */
const perKey = HttpConfig.defaultMaxUpstreamInFlightPerKey
/** Enough keys for every page walker, and one for the three pollers of the memory run. */
const keyCount = Math.ceil(Math.max(...clientCounts, memoryClients) / perKey) + 1
/** The sequence number client `k` of `clients` starts after: page walkers spread evenly over the log. */
const startSeq = (k: number, clients: number) => Math.floor((k * total) / clients)
const pagePath = "/v3/upstream?per_page=500"

const backends = selectedBackends()
const serverEntry = serverArgs()
const tmp = mkdtempSync(join(tmpdir(), "tradeflow-bench-upstream-load-"))
const children = new Set<ChildProcess>()
const scope = Effect.runSync(Scope.make())

interface Prepared {
  /** The production keys: page walker k uses key k / perKey; the last key is the pollers'. */
  readonly keys: ReadonlyArray<string>
  readonly organisationId: string
  readonly env: Record<string, string>
  /** The storage floor server's arguments: driver, database file or URL, schema. */
  readonly floor: readonly [kind: Backend, target: string, schema: string]
  readonly starts: ReadonlyMap<number, ReadonlyArray<string | undefined>>
  readonly middle: string
  readonly fillSeconds: number
}

/** Creates the organisation and its key, fills the messages, signs the start cursors of every client count. */
const prepare = <E>(
  storage: Layer.Layer<Storage.Storage | SqlClient.SqlClient, StorageError.StorageError>,
  fill: (organisationId: string) => Effect.Effect<void, E, Storage.Storage | SqlClient.SqlClient>
) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const org = yield* accounts.createOrganisation("Bench BV")
    const keys = yield* Effect.forEach(
      Array.from({ length: keyCount }),
      () => Effect.map(accounts.createApiKey(org.id, "production"), (created) => created.key)
    )
    const started = performance.now()
    yield* fill(org.id)
    const fillSeconds = (performance.now() - started) / 1000
    const signer = yield* Effect.flatMap(Cursor.storedSecret, Cursor.makeSigner)
    const starts = new Map<number, ReadonlyArray<string | undefined>>()
    for (const clients of new Set([...clientCounts, memoryClients])) {
      starts.set(
        clients,
        yield* Effect.forEach(
          Array.from({ length: clients }, (_, k) => k),
          (k) => k === 0 ? Effect.succeed(undefined) : signer.sign({ organisation_id: org.id }, startSeq(k, clients))
        )
      )
    }
    const middle = yield* signer.sign({ organisation_id: org.id }, Math.floor(total / 2))
    return { keys, organisationId: org.id, fillSeconds, starts, middle }
  }).pipe(
    Effect.provide(
      Service.layer({ background: false }).pipe(
        Layer.provideMerge(Layer.mergeAll(storage, Locations.layerBuiltin, TrackingConfig.layer()))
      )
    ),
    Effect.scoped
  )

const prepareSqlite = async (): Promise<Prepared> => {
  const filename = join(tmp, "bench.sqlite")
  const prepared = await Effect.runPromise(prepare(
    SqliteStorage.layer({ filename, synchronous: "NORMAL" }),
    (id) => bulkFill(id, { total, chunk: fillChunk })
  ))
  return { ...prepared, env: { DATABASE_URL: `sqlite:${filename}` }, floor: ["sqlite", filename, ""] }
}

const preparePostgres = async (): Promise<Prepared> => {
  const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
  console.log(`PostgreSQL schema ${test.schema}`)
  const prepared = await Effect.runPromise(prepare(
    PgStorage.layer({ url: test.baseUrl, schema: test.schema }),
    (id) => bulkFill(id, { total, chunk: fillChunk })
  ))
  return { ...prepared, env: { DATABASE_URL: test.url }, floor: ["postgres", test.baseUrl, test.schema] }
}

interface Server {
  readonly base: string
  readonly child: ChildProcess
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

/**
 * The standalone server as `npm start` runs it (`node [nodeArgs] <the start script's node arguments>`
 * on the bundle `npm run build` made), or with BENCH_SERVER=tsx as `node [nodeArgs] --import tsx
 * main.ts`; its output in a log file of the temporary directory.
 */
const startServer = async (
  name: string,
  env: Record<string, string>,
  nodeArgs: ReadonlyArray<string> = []
): Promise<Server> => {
  const port = await freePort()
  const log = openSync(join(tmp, `${name}.log`), "a")
  const child = spawn(process.execPath, [...serverNodeArgs, ...nodeArgs, ...serverEntry], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      CONSOLE_TOKEN: "bench-console-token-0123456789abcdef",
      PRODUCTION_HOSTS: "127.0.0.1",
      UAT_HOSTS: "uat.localhost",
      ...env
    },
    stdio: ["ignore", log, log]
  })
  closeSync(log)
  children.add(child)
  child.once("exit", () => children.delete(child))
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) {
      throw new Error(`server exited with ${child.exitCode}; see ${join(tmp, `${name}.log`)}`)
    }
    const up = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)
    if (up) return { base, child }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("server did not start")
}

/** SIGTERM (a graceful shutdown, which also writes a `--cpu-prof` profile), SIGKILL after 40 s. */
const stopServer = async (server: Server) => {
  server.child.kill("SIGTERM")
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 40_000)
  await exited(server.child)
  clearTimeout(timer)
}

/**
 * The storage floor: a bare `node:http` server that answers each page as the real one does, read
 * from the same database with the bare driver (better-sqlite3 or pg, one prepared query of
 * `seq, body` for the 501 rows after the cursor) and written as one buffer; no authentication, and
 * its cursor is the plain sequence number. The least any server must do per page without holding
 * the log in memory.
 */
const floorSource = `
const http = require("node:http")
const fs = require("node:fs")
const [kind, target, schema, org, headersFile] = process.argv.slice(1)
const headers = JSON.parse(fs.readFileSync(headersFile, "utf8"))
delete headers["content-length"]
const perPage = ${perPage}
const page = (rows, after) => {
  const more = rows.length > perPage
  const data = more ? rows.slice(0, perPage) : rows
  const parts = ['{"data":[']
  for (let i = 0; i < data.length; i++) parts.push(i === 0 ? data[i].body : "," + data[i].body)
  const next = data.length === 0 ? after : data[data.length - 1].seq
  parts.push('],"next_cursor":"' + next + '","has_more":' + more + '}')
  return Buffer.from(parts.join(""), "utf8")
}
let read
if (kind === "sqlite") {
  const db = new (require("better-sqlite3"))(target, { readonly: true })
  const select = db.prepare("SELECT seq, body FROM messages WHERE organisation_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?")
  read = async (after) => page(select.all(org, after, perPage + 1), after)
} else {
  const pool = new (require("pg").Pool)({ connectionString: target, max: 10 })
  pool.on("connect", (client) => client.query("SET search_path TO " + JSON.stringify(schema)))
  read = async (after) => page((await pool.query({
    name: "page",
    text: "SELECT seq, body FROM messages WHERE organisation_id = $1 AND seq > $2 ORDER BY seq ASC LIMIT $3",
    values: [org, after, perPage + 1]
  })).rows, after)
}
const server = http.createServer((req, res) => {
  req.resume()
  const cursor = new URL(req.url, "http://x").searchParams.get("cursor")
  read(cursor === null ? 0 : Number(cursor)).then((body) => {
    res.writeHead(200, headers)
    res.end(body)
  }, (error) => {
    res.writeHead(500)
    res.end(String(error))
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

/** Starts a `node -e` server that prints its port, as a child of this process. */
const startChild = async (args: ReadonlyArray<string>, name: string): Promise<Server> => {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
  children.add(child)
  child.once("exit", () => children.delete(child))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
    child.once("exit", (code) => reject(new Error(`${name} server exited with ${code}`)))
  })
  return { base: `http://127.0.0.1:${port}`, child }
}

const bareSource = `
const http = require("node:http")
const fs = require("node:fs")
const body = fs.readFileSync(process.argv[1])
const headers = JSON.parse(fs.readFileSync(process.argv[2], "utf8"))
const server = http.createServer((req, res) => {
  req.resume()
  res.writeHead(200, headers)
  res.end(body)
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

interface Answer {
  readonly status: number
  readonly bytes: number
  readonly tail: string
  readonly headers: Record<string, string | Array<string> | undefined>
}

/** One GET over `agent`: the status, the body size and its last 512 bytes. */
const get = (agent: Agent, base: URL, path: string, key: string, keepBody = false) =>
  new Promise<Answer & { readonly body?: Buffer }>((resolve, reject) => {
    const req = request(
      { host: base.hostname, port: base.port, path, agent, headers: { authorization: key } },
      (res) => {
        let bytes = 0
        let tail = Buffer.alloc(0)
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          if (keepBody) chunks.push(chunk)
          tail = tail.length + chunk.length <= 512
            ? Buffer.concat([tail, chunk])
            : Buffer.concat([tail, chunk]).subarray(-512)
        })
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            bytes,
            tail: tail.toString("latin1"),
            headers: res.headers,
            ...(keepBody ? { body: Buffer.concat(chunks) } : {})
          }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end()
  })

const pageEnd = /"next_cursor":"([^"]+)","has_more":(true|false)\}$/

interface Walk {
  readonly kind: string
  readonly clients: number
  readonly requests: number
  readonly bytes: number
  readonly errors: number
  readonly wraps: number
  readonly seconds: number
  readonly latencies: Array<number>
}

/**
 * `clients` connections, each looping over `next(cursor)` paths until the deadline: page walkers
 * follow `next_cursor` (back to the first page after `has_more: false`); pollers send the same path.
 * Requests answered 200 within the measured window (after `warm` seconds) are counted; client k
 * uses key k / perKey.
 */
const walk = async (options: {
  readonly base: string
  readonly keys: ReadonlyArray<string>
  readonly kind: string
  readonly starts: ReadonlyArray<string | undefined>
  readonly path: (cursor: string | undefined) => string
  readonly warm: number
  readonly measured: number
}): Promise<Walk> => {
  const base = new URL(options.base)
  const clients = options.starts.length
  const agent = new Agent({ keepAlive: true, maxSockets: clients })
  const measureFrom = performance.now() + options.warm * 1000
  const deadline = measureFrom + options.measured * 1000
  let requests = 0
  let bytes = 0
  let errors = 0
  let wraps = 0
  const latencies: Array<number> = []
  await Promise.all(options.starts.map(async (start, k) => {
    const key = options.keys[Math.floor(k / perKey)]!
    let cursor = start
    while (performance.now() < deadline) {
      const sent = performance.now()
      const answer = await get(agent, base, options.path(cursor), key)
      const done = performance.now()
      const end = pageEnd.exec(answer.tail)
      if (answer.status !== 200) {
        errors++
        if (errors <= 3) console.error(`${options.kind}: ${answer.status} ${answer.tail.slice(-200)}`)
      } else if (end !== null) {
        cursor = end[2] === "true" ? end[1] : undefined
        if (end[2] !== "true") wraps++
      }
      if (answer.status === 200 && done >= measureFrom && done <= deadline) {
        requests++
        bytes += answer.bytes
        latencies.push(done - sent)
      }
    }
  }))
  agent.destroy()
  return { kind: options.kind, clients, requests, bytes, errors, wraps, seconds: options.measured, latencies }
}

const quantile = (values: ReadonlyArray<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

const summary = (w: Walk) => ({
  kind: w.kind,
  clients: w.clients,
  requests: w.requests,
  errors: w.errors,
  req_per_s: Math.round((w.requests / w.seconds) * 10) / 10,
  mb_per_s: Math.round((w.bytes / w.seconds / 1e6) * 10) / 10,
  p50_ms: Math.round(quantile(w.latencies, 0.5) * 10) / 10,
  p99_ms: Math.round(quantile(w.latencies, 0.99) * 10) / 10,
  wraps: w.wraps
})

const status = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`${field}:\\s*(\\d+) kB`).exec(text)?.[1] ?? 0)
  return { rssKb: kb("VmRSS"), hwmKb: kb("VmHWM") }
}

/** VmRSS of `pid` every 100 ms until stopped. */
const sampleRss = (pid: number) => {
  const samples: Array<{ readonly at: number; readonly rssKb: number }> = []
  const started = performance.now()
  const take = () => {
    try {
      samples.push({ at: performance.now() - started, rssKb: status(pid).rssKb })
    } catch {
      // the process is gone
    }
  }
  take()
  const timer = setInterval(take, 100)
  return {
    samples,
    stop: () => {
      clearInterval(timer)
      take()
      return Math.max(0, ...samples.map((s) => s.rssKb))
    }
  }
}

const mb = (kb: number) => Math.round(kb / 102.4) / 10

interface ThroughputRow {
  readonly clients: number
  readonly real: ReturnType<typeof summary>
  readonly bare: ReturnType<typeof summary>
  readonly floor: ReturnType<typeof summary>
  readonly realPeakRssMb: number
}

const throughput = async (backend: Backend, prepared: Prepared) => {
  const nodeArgs = cpuProf === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(cpuProf, backend)}`]
  const real = await startServer(`real-${backend}`, prepared.env, nodeArgs)
  const bodyFile = join(tmp, "page.json")
  const headersFile = join(tmp, "headers.json")
  const rows: Array<ThroughputRow> = []
  let bare: Server | undefined
  let floor: Server | undefined
  try {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const captured = await get(
      agent,
      new URL(real.base),
      `${pagePath}&cursor=${prepared.middle}`,
      prepared.keys[0]!,
      true
    )
    agent.destroy()
    if (captured.status !== 200 || captured.body === undefined) {
      throw new Error(`capture: ${captured.status} ${captured.tail}`)
    }
    const headers = Object.fromEntries(
      Object.entries(captured.headers).filter(([name]) =>
        !["date", "connection", "keep-alive", "transfer-encoding"].includes(name)
      )
    )
    const rows500 = (JSON.parse(captured.body.toString("utf8")) as { data: Array<unknown> }).data.length
    writeFileSync(bodyFile, captured.body)
    writeFileSync(headersFile, JSON.stringify(headers))
    console.log(JSON.stringify({ backend, captured: { bytes: captured.body.length, rows: rows500, headers } }))
    bare = await startChild(["-e", bareSource, bodyFile, headersFile], "bare")
    floor = await startChild(["-e", floorSource, ...prepared.floor, prepared.organisationId, headersFile], "floor")
    const bareCursor = pageEnd.exec(captured.tail)?.[1]
    for (const clients of clientCounts) {
      const starts = prepared.starts.get(clients)!
      const sampler = sampleRss(real.child.pid!)
      const realWalk = summary(
        await walk({
          base: real.base,
          keys: prepared.keys,
          kind: "real",
          starts,
          path: (cursor) => cursor === undefined ? pagePath : `${pagePath}&cursor=${cursor}`,
          warm: warmup,
          measured: seconds
        })
      )
      const realPeakRssMb = mb(sampler.stop())
      const bareWalk = summary(
        await walk({
          base: bare.base,
          keys: prepared.keys,
          kind: "bare",
          starts: starts.map(() => bareCursor),
          path: (cursor) => cursor === undefined ? pagePath : `${pagePath}&cursor=${cursor}`,
          warm: warmup,
          measured: seconds
        })
      )
      const floorWalk = summary(
        await walk({
          base: floor.base,
          keys: prepared.keys,
          kind: "floor",
          starts: starts.map((_, k) => k === 0 ? undefined : String(startSeq(k, clients))),
          path: (cursor) => cursor === undefined ? pagePath : `${pagePath}&cursor=${cursor}`,
          warm: warmup,
          measured: seconds
        })
      )
      const row = { clients, real: realWalk, bare: bareWalk, floor: floorWalk, realPeakRssMb }
      console.log(JSON.stringify({
        backend,
        scenario: "throughput",
        ...row,
        ratio: realWalk.req_per_s / bareWalk.req_per_s,
        floor_ratio: floorWalk.req_per_s / bareWalk.req_per_s
      }))
      rows.push(row)
    }
  } finally {
    await stopServer(real)
    for (const child of [bare, floor]) {
      if (child === undefined) continue
      child.child.kill("SIGKILL")
      await exited(child.child)
    }
  }
  return rows
}

const memory = async (backend: Backend, prepared: Prepared) => {
  const real = await startServer(`memory-${backend}`, prepared.env)
  const pid = real.child.pid!
  const sampler = sampleRss(pid)
  try {
    const idleKb = status(pid).rssKb
    const walks = await Promise.all([
      walk({
        base: real.base,
        keys: prepared.keys,
        kind: "per_page=500 walkers",
        starts: prepared.starts.get(memoryClients)!,
        path: (cursor) => cursor === undefined ? pagePath : `${pagePath}&cursor=${cursor}`,
        warm: 0,
        measured: memorySeconds
      }),
      walk({
        base: real.base,
        keys: prepared.keys.slice(-1),
        kind: "array form",
        starts: [undefined, undefined],
        path: () => "/v3/upstream",
        warm: 0,
        measured: memorySeconds
      }),
      walk({
        base: real.base,
        keys: prepared.keys.slice(-1),
        kind: "latest=true",
        starts: [undefined],
        path: () => "/v3/upstream?latest=true",
        warm: 0,
        measured: memorySeconds
      })
    ])
    const peakKb = sampler.stop()
    const end = status(pid)
    const during = sampler.samples.filter((s) => s.at > 2_000).map((s) => s.rssKb)
    const result = {
      backend,
      scenario: "memory",
      messages: total,
      seconds: memorySeconds,
      idle_rss_mb: mb(idleKb),
      peak_rss_mb: mb(peakKb),
      median_rss_mb: mb(quantile(during, 0.5)),
      end_rss_mb: mb(end.rssKb),
      vm_hwm_mb: mb(end.hwmKb),
      samples: sampler.samples.length,
      pages_walked: walks[0]!.requests,
      log_pages: Math.ceil(total / perPage),
      loads: walks.map(summary)
    }
    console.log(JSON.stringify(result))
    return result
  } finally {
    sampler.stop()
    await stopServer(real)
  }
}

const cleanup = async () => {
  for (const child of children) child.kill("SIGKILL")
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(tmp, { recursive: true, force: true })
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`${signal}: stopping the servers, removing the temporary files and the schema`)
    void cleanup().finally(() => process.exit(130))
  })
}

const run = async () => {
  const tables: Array<string> = []
  const memoryRows: Array<string> = []
  for (const backend of backends) {
    const prepared = backend === "sqlite" ? await prepareSqlite() : await preparePostgres()
    console.log(JSON.stringify({ backend, messages: total, fill_seconds: Math.round(prepared.fillSeconds * 10) / 10 }))
    for (const row of await throughput(backend, prepared)) {
      tables.push(
        `| ${backend} | ${row.clients} | ${row.real.req_per_s} | ${row.real.mb_per_s} | ${row.real.p50_ms} / ${row.real.p99_ms} | ${row.bare.req_per_s} | ${row.bare.mb_per_s} | ${row.bare.p50_ms} / ${row.bare.p99_ms} | ${
          (row.real.req_per_s / row.bare.req_per_s * 100).toFixed(1)
        }% | ${row.floor.req_per_s} | ${row.floor.p50_ms} / ${row.floor.p99_ms} | ${
          (row.floor.req_per_s / row.bare.req_per_s * 100).toFixed(1)
        }% | ${(row.real.req_per_s / row.floor.req_per_s * 100).toFixed(1)}% | ${row.realPeakRssMb} |`
      )
    }
    if (memorySeconds > 0) {
      const m = await memory(backend, prepared)
      memoryRows.push(
        `| ${backend} | ${
          total.toLocaleString("en")
        } | ${m.idle_rss_mb} | ${m.median_rss_mb} | ${m.peak_rss_mb} | ${m.vm_hwm_mb} | ${
          m.loads.map((l) => `${l.kind}: ${l.req_per_s} req/s`).join("; ")
        } | ${m.pages_walked} / ${m.log_pages} |`
      )
    }
  }
  console.log(JSON.stringify({ machine: machine() }))
  console.log(
    `\nThroughput of GET ${pagePath} (${
      total.toLocaleString("en")
    } messages, ${seconds} s per run after ${warmup} s warm-up)\n`
  )
  console.log(
    "| backend | clients | real req/s | real MB/s | real p50 / p99 ms | bare req/s | bare MB/s | bare p50 / p99 ms | real / bare | floor req/s | floor p50 / p99 ms | floor / bare | real / floor | real server peak RSS MB |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const line of tables) console.log(line)
  if (memoryRows.length > 0) {
    console.log(
      `\nMemory of the real server (${
        underTsx ? "node --import tsx main.ts" : npmStartArgs().join(" ")
      }) under polling load for ${memorySeconds} s\n`
    )
    console.log(
      "| backend | messages | idle RSS MB | median RSS MB | peak RSS MB (100 ms samples) | VmHWM MB | load | pages walked / log pages |"
    )
    console.log("|---|---:|---:|---:|---:|---:|---|---:|")
    for (const line of memoryRows) console.log(line)
  }
}

await run().then(cleanup, async (error) => {
  console.error(error)
  await cleanup()
  process.exit(2)
})
