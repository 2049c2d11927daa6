/**
 * Storage v2 benchmark: claim/commit throughput of the queue (memory, SQLite), the Worker end to
 * end, the cost of a claim with a deep backlog, and the `latest` filter on a large log.
 *
 * Run: npx tsx --conditions=@tradeflow/source bench/storage-v2/bench.ts
 */
import { type Job, JobQueue, MessageStore, Storage, TradeflowStore } from "@tradeflow/core"
import { Locations, TrackingConfig, Worker } from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const dir = mkdtempSync(join(tmpdir(), "bench-storage-v2-"))
const job = (org: string): Job.NewJob => ({
  organisation_id: org,
  environment: "production",
  payload: { _tag: "Delete", reference: null, hard: false },
  received_at: 0
})
const time = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const a = yield* self
    return [a, performance.now() - t0] as const
  })
const enqueueMany = (n: number, orgs: number, prefix: string) =>
  Effect.gen(function*() {
    const q = yield* JobQueue.JobQueue
    for (let i = 0; i < n; i++) yield* q.enqueue(job(`${prefix}-${i % orgs}`))
  })

/** Old path (pending + unfenced commit) versus new path (claim + fenced commit), no processing. */
const queueThroughput = (n: number, orgs: number) =>
  Effect.gen(function*() {
    const q = yield* JobQueue.JobQueue
    const store = yield* TradeflowStore.TradeflowStore
    const commit = (id: number, org: string, attempt?: number) =>
      store.commit({
        job_id: id,
        organisation_id: org,
        upserts: [],
        deletes: [],
        messages: [],
        result: { count: 0 },
        ...(attempt === undefined ? {} : { attempt })
      })
    yield* enqueueMany(n, orgs, "old")
    const [, oldMs] = yield* time(Effect.gen(function*() {
      while (true) {
        const jobs = yield* q.pending(100)
        if (jobs.length === 0) return
        for (const j of jobs) yield* commit(j.id, j.organisation_id)
      }
    }))
    yield* enqueueMany(n, orgs, "new")
    const [, newMs] = yield* time(Effect.gen(function*() {
      while (true) {
        const jobs = yield* q.claim({ worker: "bench", limit: 100, leaseMillis: 30_000 }).pipe(
          Effect.map((c) => c.jobs)
        )
        if (jobs.length === 0) return
        for (const j of jobs) yield* commit(j.id, j.organisation_id, j.attempt)
      }
    }))
    return { oldPerSec: Math.round(n / oldMs * 1000), newPerSec: Math.round(n / newMs * 1000) }
  })

const claimLatency = (backlog: number, orgs: number) =>
  Effect.gen(function*() {
    const q = yield* JobQueue.JobQueue
    yield* enqueueMany(backlog, orgs, "deep")
    const samples: Array<number> = []
    for (let i = 0; i < 20; i++) {
      const [jobs, ms] = yield* time(q.claim({ worker: `w${i}`, limit: 100, leaseMillis: 1 }))
      samples.push(ms)
      void jobs
    }
    samples.sort((a, b) => a - b)
    return { medianMs: +samples[10]!.toFixed(2), maxMs: +samples[19]!.toFixed(2) }
  })

const latestQuery = (messages: number) =>
  Effect.gen(function*() {
    const q = yield* JobQueue.JobQueue
    const store = yield* TradeflowStore.TradeflowStore
    const log = yield* MessageStore.MessageStore
    const org = "latest-org"
    const batch = 1_000
    for (let b = 0; b < messages / batch; b++) {
      const e = yield* q.enqueue(job(org))
      if (e._tag !== "Enqueued") continue
      yield* store.commit({
        job_id: e.id,
        organisation_id: org,
        upserts: [],
        deletes: [],
        result: { count: 0 },
        messages: Array.from({ length: batch }, (_, i) => {
          const n = b * batch + i
          return {
            hash: `h${n}`,
            type: n % 3 === 0 ? "SHIPMENT_CHANGE" : "CONTAINER_MILESTONE",
            tradeflow_reference: `TF-${n % 500}`,
            container_reference: n % 3 === 0 ? null : `C${n % 1500}`,
            generated_at: n,
            body: "{}"
          }
        })
      })
    }
    const run = (latest: boolean) =>
      Effect.gen(function*() {
        const samples: Array<number> = []
        let count = 0
        for (let i = 0; i < 5; i++) {
          const [rows, ms] = yield* time(log.list({ organisation_id: org, take: "newest", limit: 500, latest }))
          samples.push(ms)
          count = rows.length
        }
        samples.sort((a, b) => a - b)
        return { rows: count, medianMs: +samples[2]!.toFixed(2) }
      })
    const pagedLatest = Effect.gen(function*() {
      let after = 0
      let rows = 0
      const [, ms] = yield* time(Effect.gen(function*() {
        while (true) {
          const page = yield* log.list({
            organisation_id: org,
            take: "oldest",
            limit: 500,
            latest: true,
            after_seq: after
          })
          if (page.length === 0) return
          rows += page.length
          after = page[page.length - 1]!.seq
        }
      }))
      return { rows, totalMs: +ms.toFixed(1) }
    })
    return {
      plainNewest500: yield* run(false),
      latestNewest500: yield* run(true),
      latestContainerFilter: (yield* time(
        log.list({ organisation_id: org, take: "oldest", limit: 500, latest: true, container_reference: "C7" })
      ))[1].toFixed(2),
      pagedLatestAll: yield* pagedLatest
    }
  })

const workerThroughput = (n: number, orgs: number, concurrency: number) =>
  Effect.gen(function*() {
    yield* enqueueMany(n, orgs, `wk${concurrency}`)
    const w = yield* Worker.Worker
    const [, ms] = yield* time(w.drain)
    return Math.round(n / ms * 1000)
  })

const suite = <E>(name: string, storage: () => Layer.Layer<Storage.Storage, E>) =>
  Effect.gen(function*() {
    const on = <A, E2>(eff: Effect.Effect<A, E2, Storage.Storage>) => Effect.provide(eff, storage())
    const withWorker = (concurrency: number) =>
      Worker.layer({ background: false, concurrency }).pipe(
        Layer.provideMerge(Layer.mergeAll(storage(), Locations.layerBuiltin, TrackingConfig.layer()))
      )
    const result = {
      queue_5000_jobs_100_orgs: yield* on(queueThroughput(5_000, 100)),
      claim_backlog_20000_jobs_1000_orgs: yield* on(claimLatency(20_000, 1_000)),
      latest_50000_messages: yield* on(latestQuery(50_000)),
      worker_drain_3000_jobs_100_orgs_per_sec: {
        concurrency1: yield* Effect.provide(workerThroughput(3_000, 100, 1), withWorker(1)),
        concurrency4: yield* Effect.provide(workerThroughput(3_000, 100, 4), withWorker(4))
      }
    }
    console.log(name, JSON.stringify(result, null, 2))
  })

let file = 0
Effect.runPromise(
  Effect.gen(function*() {
    yield* suite("memory", () => Storage.layerMemory)
    yield* suite("sqlite", () => SqliteStorage.layer({ filename: join(dir, `b${file++}.sqlite`) }))
  }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
).catch((e) => {
  console.error(e)
  process.exit(1)
})
