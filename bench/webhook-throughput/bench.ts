/**
 * Webhook delivery benchmark (issues 4 and 14): deliveries per second from the outbox to a local
 * no-op receiver (goal: at least 2,000/s on SQLite and on PostgreSQL), next to its floor in the same
 * run, and the latency from a committed message to its receipt.
 *
 * The receiver (receiver.mjs beside this file) runs in a child process: a `node:http` server
 * answering 204 at once, noting the first arrival of every `webhook-id`. The deliveries are real
 * outbox rows: the messages of an `ocean_basic` record (rendered once through the real Ingest and
 * Worker, in memory) are copied for each tradeflow (fresh hashes and references) and written with
 * `TradeflowStore.commit` and an `Outbox` naming one enabled `message` automation, so each record
 * gives one delivery per SHIPMENT_CHANGE, CONTAINER_MILESTONE and LOCATION_UPDATE message (19
 * today), whose bodies the claim reads from `messages`. The worker is the real `DeliveryWorker`
 * (background, on `DeliveryStore.wakeups` and its 1 s poll) with the real `WebhookClient`; thin
 * wrappers time its `claim`, `recordAndClaim` (and `record`) and `post` calls.
 *
 * Scenarios, on a fresh database each:
 * 1. throughput: the outbox is filled with BENCH_DELIVERIES deliveries first (whole records, so
 *    rounded up to a multiple of a record's deliveries), then the worker starts; deliveries/s =
 *    deliveries / time until the last one is recorded delivered. Once per batch size of
 *    BENCH_BATCH_SIZES. Then its floor: the same number of bodies POSTed, signed, by a bare
 *    `node:http` loop (as many at once as the batch size) to a fresh receiver, with no outbox.
 * 2. latency: the worker runs while messages are committed at BENCH_RATE deliveries/s for
 *    BENCH_LATENCY_SECONDS; per delivery, receipt time minus the time its commit returned.
 *    "spread": every message on its own tradeflow (commits every 50 ms); "records": whole
 *    records (all deliveries of one tradeflow per commit), which one tradeflow's ordering delivers
 *    one round at a time.
 *
 * `npm run bench:webhook-throughput [-- sqlite|postgres|both]` (not part of `npm test`). Writes the
 * section of each measured backend into bench/webhook-throughput/RESULTS.md, keeping the other.
 * Env: BENCH_STORAGE (sqlite | postgres | both, default both; a CLI argument wins),
 * BENCH_DELIVERIES (default 10,000), BENCH_BATCH_SIZES (default "256", the standalone server's
 * WEBHOOK_BATCH_SIZE), BENCH_RATE (default 200), BENCH_LATENCY_SECONDS (default 5; 0 skips the
 * latency runs), BENCH_LATENCY_BATCH
 * (worker batch size of the latency runs, default 64), BENCH_FILL_RECORDS (records per fill
 * commit, default 50), BENCH_SQLITE_SYNCHRONOUS (FULL | NORMAL, default FULL as in production),
 * BENCH_CPU_PROFILE_DIR (writes a V8 CPU profile of each throughput run's worker phase there, for
 * bench/profile-summary.ts), TRADEFLOW_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test). SQLite runs in a
 * temporary directory; PostgreSQL in a fresh schema per run, dropped afterwards (also on SIGINT /
 * SIGTERM). Exits 1 when a measured backend misses the goal. Both backends with the defaults take
 * about two minutes on 2 cores.
 */
import { SqlClient } from "@effect/sql"
import {
  AutomationAdmin,
  type Delivery,
  DeliveryStore,
  Ingest,
  JobQueue,
  Locations,
  MessageStore,
  OrganisationStore,
  Service,
  type Storage,
  type StorageError,
  type StoredMessage,
  TrackingConfig,
  TradeflowStore,
  Worker
} from "@tradeflow/core"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { DeliveryWorker, Ssrf, WebhookClient } from "@tradeflow/webhook"
import { Context, Deferred, Duration, Effect, Fiber, Layer, type Scope } from "effect"
import { type ChildProcess, fork } from "node:child_process"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { Session } from "node:inspector/promises"
import { cpus, loadavg, tmpdir, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeTestSchema } from "../../packages/storage-pg/test/TestDatabase.js"
import { type Backend, selectedBackends } from "../Backends.js"

const target = Number(process.env["BENCH_DELIVERIES"] ?? 10_000)
const batchSizes = (process.env["BENCH_BATCH_SIZES"] ?? "256").split(",").map(Number)
const rate = Number(process.env["BENCH_RATE"] ?? 200)
const latencySeconds = Number(process.env["BENCH_LATENCY_SECONDS"] ?? 5)
const latencyBatch = Number(process.env["BENCH_LATENCY_BATCH"] ?? 64)
const recordsPerCommit = Number(process.env["BENCH_FILL_RECORDS"] ?? 50)
const profileDir = process.env["BENCH_CPU_PROFILE_DIR"]
const synchronous = process.env["BENCH_SQLITE_SYNCHRONOUS"] === "NORMAL" ? "NORMAL" as const : "FULL" as const
const goal = 2_000

const backends = selectedBackends()

const here = dirname(fileURLToPath(import.meta.url))
const root = mkdtempSync(join(tmpdir(), "tradeflow-bench-webhook-"))
const wallClock = () => performance.timeOrigin + performance.now()

type StorageLayer = Layer.Layer<Storage.Storage | SqlClient.SqlClient, StorageError.StorageError | Error>
let runs = 0
/** A fresh database of the backend for one run (a new SQLite file, or a new PostgreSQL schema dropped with the scope). */
const freshStorage = (backend: Backend): Effect.Effect<StorageLayer, Error, Scope.Scope> =>
  backend === "sqlite"
    ? Effect.sync(() => SqliteStorage.layer({ filename: join(root, `run-${++runs}.sqlite`), synchronous }))
    : Effect.map(makeTestSchema({ create: false }), (test) =>
      PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 10 }))

// The receiver

interface ReceiverReport {
  readonly requests: number
  readonly connections: number
  readonly receipts: ReadonlyArray<readonly [string, number]>
}

interface Receiver {
  readonly url: string
  readonly report: Effect.Effect<ReceiverReport>
}

/** Forks receiver.mjs (plain node, no tsx) and waits until it listens; killed with the scope. */
const startReceiver: Effect.Effect<Receiver, never, Scope.Scope> = Effect.gen(function*() {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      fork(join(here, "receiver.mjs"), [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] })
    ),
    (c: ChildProcess) => Effect.sync(() => c.kill())
  )
  const port = yield* Effect.async<number>((resume) => {
    child.once("message", (m: { port: number }) => resume(Effect.succeed(m.port)))
    child.once("exit", (code) => resume(Effect.dieMessage(`the receiver exited (${code}) before listening`)))
  })
  const report = Effect.async<ReceiverReport>((resume) => {
    child.once("message", (m: ReceiverReport) => resume(Effect.succeed(m)))
    child.send({ type: "report" })
  })
  return { url: `http://127.0.0.1:${port}/hook`, report }
})

// The worker, with timers around the outbox and the client

interface Timings {
  claims: number
  claimed: number
  claimMs: number
  records: number
  recordMs: number
  /** From the end of a claim to the start of its record: reading the automation, signing and posting the batch. */
  postPhaseMs: number
  posts: Array<number>
  delivered: number
  /** Recorded but not delivered (failed or dead), or not recorded at all. */
  notDelivered: number
  lastClaimEnd: number
}

const newTimings = (): Timings => ({
  claims: 0,
  claimed: 0,
  claimMs: 0,
  records: 0,
  recordMs: 0,
  postPhaseMs: 0,
  posts: [],
  delivered: 0,
  notDelivered: 0,
  lastClaimEnd: 0
})

/** Runs `effect` and adds its duration (ms) to `add`. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, add: (ms: number, end: number) => void) =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.ensuring(
      effect,
      Effect.sync(() => {
        const end = performance.now()
        add(end - start, end)
      })
    )
  })

/**
 * The delivery worker over the storage's outbox and the real client, both wrapped with timers;
 * `delivered` completes once `expected()` deliveries were recorded delivered.
 */
const workerLayer = (t: Timings, batchSize: number, expected: () => number, delivered: Deferred.Deferred<void>) => {
  const count = (results: ReadonlyArray<Delivery.AttemptResult>, recorded: ReadonlyArray<boolean>) => {
    results.forEach((r, i) => {
      if (recorded[i] === true && r.status === "delivered") t.delivered++
      else t.notDelivered++
    })
    return t.delivered >= expected() ? Deferred.succeed(delivered, undefined) : Effect.void
  }
  const outbox = Layer.effect(
    DeliveryStore.DeliveryStore,
    Effect.map(DeliveryStore.DeliveryStore, (inner) =>
      DeliveryStore.DeliveryStore.of({
        ...inner,
        claim: (options) =>
          timed(inner.claim(options), (ms, end) => {
            t.claims++
            t.claimMs += ms
            t.lastClaimEnd = end
          }).pipe(Effect.tap((claimed) => {
            t.claimed += claimed.length
          })),
        record: (results) =>
          Effect.suspend(() => {
            t.postPhaseMs += performance.now() - t.lastClaimEnd
            return timed(inner.record(results), (ms) => {
              t.records++
              t.recordMs += ms
            })
          }).pipe(Effect.tap((recorded) => count(results, recorded))),
        recordAndClaim: (results, options) =>
          Effect.suspend(() => {
            t.postPhaseMs += performance.now() - t.lastClaimEnd
            return timed(inner.recordAndClaim(results, options), (ms, end) => {
              t.records++
              t.recordMs += ms
              t.claims++
              t.lastClaimEnd = end
            })
          }).pipe(Effect.tap(({ claimed, recorded }) => {
            t.claimed += claimed.length
            return count(results, recorded)
          }))
      }))
  )
  const client = Layer.effect(
    WebhookClient.WebhookClient,
    Effect.map(WebhookClient.WebhookClient, (inner) =>
      WebhookClient.WebhookClient.of({
        post: (request) => timed(inner.post(request), (ms) => void t.posts.push(ms))
      }))
  ).pipe(Layer.provide(WebhookClient.layer({ allowPrivate: true })))
  return DeliveryWorker.layer({ batchSize, background: true }).pipe(
    Layer.provide(Layer.mergeAll(outbox, client, Ssrf.layer({ allowPrivate: true, allowHttp: true })))
  )
}

const services = (storage: StorageLayer) =>
  Service.layer({ background: false }).pipe(
    Layer.provideMerge(Layer.mergeAll(storage, Locations.layerBuiltin, TrackingConfig.layer()))
  )

// The messages

const templateReference = "WHBENCH-TEMPLATE-REFERENCE"
const integrationTypes: ReadonlyArray<string> = ["SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE"]

/** The messages of one `ocean_basic` record (departed 10 hours ago), rendered by the real Ingest and Worker in memory. */
const renderTemplate = Effect.gen(function*() {
  const now = Date.now()
  const iso = (ms: number) => new Date(ms).toISOString()
  const org = "org-template"
  yield* Effect.flatMap(
    OrganisationStore.OrganisationStore,
    (s) =>
      s.insert({ id: org, name: "Template (UAT)", environment: "uat", live_organisation_id: null, created_at: now })
  )
  yield* Effect.flatMap(Ingest.Ingest, (i) =>
    i.submit({
      organisation_id: org,
      environment: "uat",
      form: "any",
      body: [{
        tradeflow_reference: templateReference,
        container_reference: "CSQU3054383",
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA",
        actual_time_of_departure: iso(now - 10 * 3_600_000),
        estimated_time_of_arrival: iso(now + 20 * 86_400_000),
        mock_tracking: { scenario: "ocean_basic" }
      }]
    }))
  yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
  const messages = yield* Effect.flatMap(
    MessageStore.MessageStore,
    (s) => s.list({ organisation_id: org, take: "oldest", limit: 1_000 })
  )
  return messages.map(({ seq: _, ...m }): StoredMessage.NewMessage => m)
}).pipe(Effect.provide(Service.layerMemory))

/** A copy of `m` for `reference`: its own hash, the reference replaced in the body. */
const copyFor = (m: StoredMessage.NewMessage, reference: string, salt: string | number): StoredMessage.NewMessage => {
  const hash = createHash("sha256").update(`${m.hash}/${reference}/${salt}`).digest("hex")
  return {
    ...m,
    hash,
    tradeflow_reference: reference,
    body: m.body.replaceAll(m.hash, hash).replaceAll(templateReference, reference)
  }
}

interface Setup {
  readonly organisationId: string
  readonly outbox: (at: number) => Delivery.Outbox
}

/** An organisation and one enabled `message` automation (all integration types) posting to the receiver. */
const setup = (
  url: string
): Effect.Effect<Setup, unknown, OrganisationStore.OrganisationStore | AutomationAdmin.AutomationAdmin> =>
  Effect.gen(function*() {
    const organisationId = `org-bench-${globalThis.crypto.randomUUID().slice(0, 8)}`
    yield* Effect.flatMap(
      OrganisationStore.OrganisationStore,
      (s) =>
        s.insert({
          id: organisationId,
          name: "Bench BV",
          environment: "production",
          live_organisation_id: null,
          created_at: Date.now()
        })
    )
    const created = yield* Effect.flatMap(
      AutomationAdmin.AutomationAdmin,
      (a) => a.create(organisationId, { url, enabled: true })
    )
    const target: Delivery.OutboxTarget = { id: created.id, format: created.format, types: created.types }
    return { organisationId, outbox: (at) => ({ automations: [target], documents: new Map(), at }) }
  })

/** Commits `messages` as one processed job with the outbox; answers when the commit returned. */
const commitMessages = (s: Setup, messages: ReadonlyArray<StoredMessage.NewMessage>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    const store = yield* TradeflowStore.TradeflowStore
    const now = Date.now()
    const job = yield* queue.enqueue({
      organisation_id: s.organisationId,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: now
    })
    if (job._tag !== "Enqueued") return yield* Effect.dieMessage("enqueue failed")
    const ok = yield* store.commit({
      job_id: job.id,
      organisation_id: s.organisationId,
      upserts: [],
      deletes: [],
      messages,
      result: { count: 0 },
      outbox: s.outbox(now)
    })
    if (!ok) return yield* Effect.dieMessage("commit refused")
    return wallClock()
  })

const deliveryCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<
    { status: string; n: number }
  >`SELECT status, CAST(count(*) AS INTEGER) AS n FROM deliveries GROUP BY status`
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>
})

const percentile = (values: ReadonlyArray<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

// Scenario 1: throughput

interface ThroughputResult {
  readonly batchSize: number
  readonly deliveries: number
  readonly tradeflows: number
  readonly fillSeconds: number
  readonly seconds: number
  readonly perSecond: number
  readonly received: number
  readonly requests: number
  readonly connections: number
  readonly counts: Record<string, number>
  readonly claims: number
  readonly meanClaimed: number
  readonly claimMs: number
  readonly recordMs: number
  readonly postPhaseMs: number
  readonly postP50: number
  readonly postP99: number
  /** A claim on the drained outbox (every delivery delivered), p50 of 20. */
  readonly idleClaimMs: number
  /** CPU time of the benchmark's process (the worker; not the receiver, not PostgreSQL) per delivery, µs. */
  readonly cpuMicros: number
  /** The floor of the same run: bare signed POSTs of the same bodies, as many at once, to a fresh receiver. */
  readonly floor: number
  /** CPU time of the benchmark's process per delivery of the floor, µs. */
  readonly floorCpuMicros: number
}

/**
 * The floor: what node:http alone does with the same deliveries, with no outbox: every body POSTed
 * once, signed (HMAC-SHA256 as Standard Webhooks, one secret) with the same headers, `concurrency`
 * at once over a keep-alive agent to a fresh receiver process; answers deliveries per second.
 */
const httpFloor = (bodies: ReadonlyArray<readonly [id: string, body: string]>, concurrency: number) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const url = new URL(receiver.url)
    const secret = randomBytes(32)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Http.Agent({ keepAlive: true, maxSockets: concurrency })),
      (a) => Effect.sync(() => a.destroy())
    )
    const post = ([id, body]: readonly [string, string]) =>
      new Promise<void>((resolve, reject) => {
        const timestamp = String(Math.floor(Date.now() / 1000))
        const signature = createHmac("sha256", secret).update(`${id}.${timestamp}.${body}`).digest("base64")
        const req = Http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "user-agent": "tradeflow-webhook/0.1",
            "webhook-id": id,
            "webhook-timestamp": timestamp,
            "webhook-signature": `v1,${signature}`
          }
        }, (res) => {
          res.resume()
          res.on("end", resolve)
        })
        req.on("error", reject)
        req.end(body)
      })
    const cpu = process.cpuUsage()
    const started = performance.now()
    yield* Effect.promise(async () => {
      let next = 0
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < bodies.length) await post(bodies[next++]!)
      }))
    })
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    const report = yield* receiver.report
    if (report.receipts.length !== bodies.length) {
      return yield* Effect.dieMessage(`floor: received ${report.receipts.length} of ${bodies.length}`)
    }
    return { perSecond: bodies.length / seconds, cpuMicros: (used.user + used.system) / bodies.length }
  }))

const throughput = (backend: Backend, template: ReadonlyArray<StoredMessage.NewMessage>, batchSize: number) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const context = yield* Layer.build(services(yield* freshStorage(backend)))
    const perRecord = template.filter((m) => integrationTypes.includes(m.type)).length
    const records = Math.ceil(target / perRecord)
    const s = yield* setup(receiver.url).pipe(Effect.provide(context))
    const fillStart = performance.now()
    for (let from = 0; from < records; from += recordsPerCommit) {
      const batch: Array<StoredMessage.NewMessage> = []
      for (let r = from; r < Math.min(records, from + recordsPerCommit); r++) {
        const reference = `WHB-${String(r).padStart(6, "0")}`
        for (const m of template) batch.push(copyFor(m, reference, r))
      }
      yield* commitMessages(s, batch).pipe(Effect.provide(context))
    }
    if (backend === "postgres") {
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ANALYZE deliveries, messages`).pipe(
        Effect.provide(context)
      )
    }
    const fillSeconds = (performance.now() - fillStart) / 1000
    const filled = (yield* deliveryCounts.pipe(Effect.provide(context)))["pending"] ?? 0
    if (filled !== records * perRecord) {
      return yield* Effect.dieMessage(`filled ${filled} deliveries, expected ${records * perRecord}`)
    }
    console.log(
      `${backend} batch ${batchSize}: ${filled} deliveries over ${records} tradeflows filled in ${
        fillSeconds.toFixed(1)
      } s`
    )

    const t = newTimings()
    const done = yield* Deferred.make<void>()
    const profiler = profileDir === undefined ? undefined : new Session()
    if (profiler !== undefined) {
      profiler.connect()
      yield* Effect.promise(() => profiler.post("Profiler.enable").then(() => profiler.post("Profiler.start")))
    }
    const cpu = process.cpuUsage()
    const started = performance.now()
    yield* Layer.build(workerLayer(t, batchSize, () => filled, done)).pipe(Effect.provide(context))
    yield* Deferred.await(done).pipe(
      Effect.timeoutFail({
        duration: Duration.minutes(10),
        onTimeout: () => new Error(`not all delivered: ${t.delivered} / ${filled}`)
      })
    )
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    if (profiler !== undefined && profileDir !== undefined) {
      const { profile } = yield* Effect.promise(() => profiler.post("Profiler.stop"))
      const file = join(profileDir, `webhook-${backend}-${batchSize}.cpuprofile`)
      writeFileSync(file, JSON.stringify(profile))
      profiler.disconnect()
      console.log(`CPU profile of the worker's run: ${file}`)
    }
    const report = yield* receiver.report
    const counts = yield* deliveryCounts.pipe(Effect.provide(context))
    const bodies: Array<readonly [string, string]> = []
    for (let r = 0; r < records; r++) {
      for (const m of template) {
        if (integrationTypes.includes(m.type)) {
          const copy = copyFor(m, `WHF-${String(r).padStart(6, "0")}`, r)
          bodies.push([copy.hash, copy.body])
        }
      }
    }
    const floor = yield* httpFloor(bodies, batchSize)
    const idleClaims: Array<number> = []
    const store = Context.get(context, DeliveryStore.DeliveryStore)
    for (let i = 0; i < 20; i++) {
      const start = performance.now()
      yield* store.claim({ worker: "bench-idle", limit: batchSize, leaseMillis: 60_000, now: Date.now() })
      idleClaims.push(performance.now() - start)
    }
    const result: ThroughputResult = {
      batchSize,
      deliveries: filled,
      tradeflows: records,
      fillSeconds,
      seconds,
      perSecond: filled / seconds,
      received: report.receipts.length,
      requests: report.requests,
      connections: report.connections,
      counts,
      claims: t.claims,
      meanClaimed: t.claimed / Math.max(1, t.claims),
      claimMs: t.claimMs,
      recordMs: t.recordMs,
      postPhaseMs: t.postPhaseMs,
      postP50: percentile(t.posts, 0.5),
      postP99: percentile(t.posts, 0.99),
      idleClaimMs: percentile(idleClaims, 0.5),
      cpuMicros: (used.user + used.system) / filled,
      floor: floor.perSecond,
      floorCpuMicros: floor.cpuMicros
    }
    console.log(JSON.stringify({ backend, scenario: "throughput", ...result }))
    return result
  }))

// Scenario 2: latency

type LatencyMode = "spread" | "records"

interface LatencyResult {
  readonly mode: LatencyMode
  readonly deliveries: number
  readonly commits: number
  readonly perCommit: number
  readonly intervalMs: number
  readonly seconds: number
  readonly received: number
  readonly requests: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  readonly commitP50: number
  readonly commitP99: number
  readonly claims: number
  readonly meanClaimed: number
}

const latency = (backend: Backend, template: ReadonlyArray<StoredMessage.NewMessage>, mode: LatencyMode) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const context = yield* Layer.build(services(yield* freshStorage(backend)))
    const s = yield* setup(receiver.url).pipe(Effect.provide(context))
    const integration = template.filter((m) => integrationTypes.includes(m.type))
    const perCommit = mode === "spread" ? Math.max(1, Math.round(rate / 20)) : integration.length
    const intervalMs = (1000 * perCommit) / rate
    const commits = Math.round((latencySeconds * 1000) / intervalMs)
    const expected = commits * perCommit

    const t = newTimings()
    const done = yield* Deferred.make<void>()
    yield* Layer.build(workerLayer(t, latencyBatch, () => expected, done)).pipe(Effect.provide(context))
    const committedAt = new Map<string, number>()
    const commitMs: Array<number> = []
    let n = 0
    const started = performance.now()
    for (let k = 0; k < commits; k++) {
      const wait = started + k * intervalMs - performance.now()
      if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      const messages = mode === "spread"
        ? Array.from({ length: perCommit }, () => {
          const i = n++
          return copyFor(integration[i % integration.length]!, `WHL-${String(i % 1_000).padStart(4, "0")}`, i)
        })
        : template.map((m) => copyFor(m, `WHL-${String(k).padStart(6, "0")}`, k))
      const before = performance.now()
      const at = yield* commitMessages(s, messages).pipe(Effect.provide(context))
      commitMs.push(performance.now() - before)
      for (const m of messages) if (integrationTypes.includes(m.type)) committedAt.set(m.hash, at)
    }
    const seconds = (performance.now() - started) / 1000
    yield* Deferred.await(done).pipe(
      Effect.timeoutFail({
        duration: Duration.minutes(5),
        onTimeout: () => new Error(`not all delivered: ${t.delivered} / ${expected}`)
      })
    )
    const report = yield* receiver.report
    const latencies: Array<number> = []
    for (const [id, at] of report.receipts) {
      const committed = committedAt.get(id)
      if (committed !== undefined) latencies.push(at - committed)
    }
    if (latencies.length !== expected) {
      return yield* Effect.dieMessage(`received ${latencies.length} of ${expected} deliveries`)
    }
    const result: LatencyResult = {
      mode,
      deliveries: expected,
      commits,
      perCommit,
      intervalMs,
      seconds,
      received: report.receipts.length,
      requests: report.requests,
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: Math.max(...latencies),
      commitP50: percentile(commitMs, 0.5),
      commitP99: percentile(commitMs, 0.99),
      claims: t.claims,
      meanClaimed: t.claimed / Math.max(1, t.claims)
    }
    console.log(JSON.stringify({ backend, scenario: "latency", ...result }))
    return result
  }))

// Report

const machine = () => ({
  nproc: cpus().length,
  cpu: cpus()[0]?.model.trim() ?? "unknown",
  memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
  node: process.version,
  load: loadavg().map((l) => l.toFixed(2)).join(" ")
})

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })

const section = (
  backend: Backend,
  info: string,
  rounds: ReadonlyArray<ThroughputResult>,
  latencies: ReadonlyArray<LatencyResult>
) => {
  const m = machine()
  const best = Math.max(...rounds.map((r) => r.perSecond))
  const lines = [
    `# Webhook throughput benchmark (${backend === "sqlite" ? "SQLite" : "PostgreSQL"})`,
    "",
    `Date: ${new Date().toISOString()}`,
    `Machine: ${m.nproc} CPUs (nproc), ${m.memory} memory, ${m.cpu}; Node ${m.node}; load average at the end ${m.load} ` +
    "(the machine was shared with other work while the benchmark ran)",
    info,
    "Receiver: receiver.mjs in a child process (plain node), 204 at once, keep-alive. Worker: `DeliveryWorker.layer` " +
    "(background, wakeups on) with `WebhookClient.layer` (node:http keep-alive agent), in the benchmark's process.",
    "",
    "## Throughput (outbox filled first, then the worker started)",
    "",
    `Each record is a copy of one rendered \`ocean_basic\` record: ${fmt(rounds[0]?.tradeflows ?? 0)} tradeflows × ` +
    `${fmt((rounds[0]?.deliveries ?? 0) / (rounds[0]?.tradeflows ?? 1))} deliveries ` +
    "(consecutive ids per tradeflow, bodies read from `messages` by the claim), one enabled `message` automation.",
    "",
    "| batch size | deliveries | seconds | deliveries/s | floor: bare POSTs/s | of floor | CPU µs per delivery (floor) | claims | mean claimed | claim ms | post phase ms | record ms | post p50 / p99 ms | requests | connections |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rounds.map((r) =>
      `| ${r.batchSize} | ${fmt(r.deliveries)} | ${fmt(r.seconds, 2)} | **${fmt(r.perSecond)}** | ${fmt(r.floor)} | ${
        fmt((100 * r.perSecond) / r.floor)
      } % | ${fmt(r.cpuMicros)} (${fmt(r.floorCpuMicros)}) | ${r.claims} | ${fmt(r.meanClaimed, 1)} | ` +
      `${fmt(r.claimMs)} | ${fmt(r.postPhaseMs)} | ${fmt(r.recordMs)} | ${fmt(r.postP50, 2)} / ${fmt(r.postP99, 2)} | ${
        fmt(r.requests)
      } | ${r.connections} |`
    ),
    "",
    "Floor, in the same run right after: the same number of deliveries (the same bodies, fresh ids) POSTed by a bare " +
    "`node:http` loop, signed with one secret, with the worker's headers, as many at once as the batch size, over a " +
    "keep-alive agent, to a fresh receiver.mjs: what the machine does with no outbox at all. CPU: user + system " +
    "time of the benchmark's process (the worker and its driver, or the bare loop; not the receiver, not PostgreSQL's " +
    "server) over the run, per delivery: what the outbox costs beyond the POSTs, independent of the machine's load.",
    "",
    "Claim, post phase and record ms are sums over the run: `DeliveryStore.claim` (the first claim of each drain), " +
    "from the end of a claim to the start of its record (reading the automation, signing and posting the batch, " +
    "waiting for the slowest answer), and `DeliveryStore.recordAndClaim` (or `record`): recording a batch and claiming " +
    "the next one in the same transaction; claims counts both kinds of call. Per delivery (µs): " +
    rounds.map((r) =>
      `batch ${r.batchSize}: claim ${fmt((1000 * r.claimMs) / r.deliveries)}, post ${
        fmt((1000 * r.postPhaseMs) / r.deliveries)
      }, ` +
      `record ${fmt((1000 * r.recordMs) / r.deliveries)}`
    ).join("; ") +
    ". Post p50 / p99: one `WebhookClient.post`, under the batch's concurrency. A claim on the drained " +
    `outbox afterwards (${fmt(rounds[0]?.deliveries ?? 0)} delivered rows, nothing claimable), p50 of 20: ` +
    rounds.map((r) => `${fmt(r.idleClaimMs, 2)} ms`).join(", ") + ".",
    "",
    `Goal (at least ${fmt(goal)} deliveries/s, on SQLite and on PostgreSQL): ${
      best >= goal ? "met" : "NOT met"
    } (best ${fmt(best)}/s; floor ${fmt(Math.max(...rounds.map((r) => r.floor)))}/s).`,
    `Fill: ${rounds.map((r) => `${fmt(r.fillSeconds, 1)} s`).join(", ")} (records per commit: ${recordsPerCommit}). ` +
    `Final delivery states: ${rounds.map((r) => JSON.stringify(r.counts)).join(", ")}; every webhook-id received: ` +
    `${rounds.every((r) => r.received === r.deliveries) ? "yes" : "NO"}.`,
    "",
    `## Latency (commit to receipt, ${
      fmt(rate)
    } deliveries/s for ${latencySeconds} s, worker batch size ${latencyBatch})`,
    "",
    "| mode | deliveries | commits | every ms | p50 ms | p90 ms | p99 ms | max ms | commit p50 / p99 ms | claims | mean claimed |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...latencies.map((l) =>
      `| ${l.mode} | ${fmt(l.deliveries)} | ${l.commits} | ${fmt(l.intervalMs, 1)} | **${fmt(l.p50, 1)}** | ${
        fmt(l.p90, 1)
      } | ` +
      `**${fmt(l.p99, 1)}** | ${fmt(l.max, 1)} | ${fmt(l.commitP50, 2)} / ${fmt(l.commitP99, 2)} | ${l.claims} | ${
        fmt(l.meanClaimed, 1)
      } |`
    ),
    "",
    "Latency: receipt time (receiver process) minus the time the commit returned (benchmark process), both " +
    "`performance.timeOrigin + performance.now()`. \"spread\": every message on its own tradeflow; \"records\": a whole " +
    `record per commit, whose ${fmt(latencies.find((l) => l.mode === "records")?.perCommit ?? 0)} deliveries to one ` +
    "automation go one round at a time (ordering per tradeflow).",
    ""
  ]
  return { md: lines.join("\n"), pass: best >= goal }
}

const resultsFile = join(here, "RESULTS.md")
const headers: Record<Backend, string> = {
  sqlite: "# Webhook throughput benchmark (SQLite)",
  postgres: "# Webhook throughput benchmark (PostgreSQL)"
}

/** Replaces (or adds) the sections of the measured backends in RESULTS.md, keeping the others. */
const writeSections = (sections: Partial<Record<Backend, string>>) => {
  const existing = existsSync(resultsFile) ? readFileSync(resultsFile, "utf8") : ""
  const current: Partial<Record<Backend, string>> = {}
  const starts = (["sqlite", "postgres"] as const)
    .map((b) => [b, existing.indexOf(headers[b])] as const)
    .filter(([, at]) => at >= 0)
    .sort((a, b) => a[1] - b[1])
  starts.forEach(([b, at], k) => {
    current[b] = existing.slice(at, starts[k + 1]?.[1] ?? existing.length).trimEnd() + "\n"
  })
  const merged = { ...current, ...sections }
  writeFileSync(
    resultsFile,
    (["sqlite", "postgres"] as const).flatMap((b) => merged[b] === undefined ? [] : [merged[b]]).join("\n")
  )
}

const main = Effect.gen(function*() {
  const template = yield* renderTemplate
  console.log(
    `template: ${template.length} messages, ${
      template.filter((m) => integrationTypes.includes(m.type)).length
    } delivered per record`
  )
  const sections: Partial<Record<Backend, string>> = {}
  let pass = true
  for (const backend of backends) {
    const rounds: Array<ThroughputResult> = []
    for (const size of batchSizes) rounds.push(yield* throughput(backend, template, size))
    const latencies: Array<LatencyResult> = []
    if (latencySeconds > 0) {
      for (const mode of ["spread", "records"] as const) latencies.push(yield* latency(backend, template, mode))
    }
    const info = backend === "sqlite"
      ? `Database: SQLite (better-sqlite3 through @tradeflow/storage-sqlite, WAL, synchronous=${synchronous}) in a fresh file per run under ${tmpdir()}.`
      : `Database: PostgreSQL on the same machine (127.0.0.1, default configuration) through @tradeflow/storage-pg ` +
        "(`PgStorage.layer`, pool of 10), a fresh schema per run, dropped afterwards; `ANALYZE deliveries, messages` " +
        "after the throughput fill (what autovacuum would do soon after such a burst)."
    const s = section(backend, info, rounds, latencies)
    sections[backend] = s.md
    pass &&= s.pass
  }
  writeSections(sections)
  for (const md of Object.values(sections)) console.log(md)
  return pass
})

const fiber = Effect.runFork(main)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`${signal}: interrupting (receivers are killed, PostgreSQL schemas dropped on the way out)`)
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
