import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, type Duration, Effect, FastCheck as fc, Fiber, Layer, Option, Ref, TestClock } from "effect"
import type { NewJob } from "../src/Job.js"
import { attemptLimitReached, JobQueue } from "../src/JobQueue.js"
import * as Locations from "../src/Locations.js"
import * as Storage from "../src/Storage.js"
import { StorageError } from "../src/StorageError.js"
import * as TrackingConfig from "../src/TrackingConfig.js"
import { type Commit, TradeflowStore, withCommit } from "../src/TradeflowStore.js"
import * as Worker from "../src/Worker.js"

interface CommitCall {
  readonly job_id: number
  readonly organisation_id: string
  readonly attempt: number | undefined
  readonly committed: boolean
  /** How many commits the call held (the jobs committed in one transaction). */
  readonly together: number
}

interface Faults {
  /** Delays the commits of these attempts (slow processing). */
  readonly slowAttempts?: ReadonlyArray<readonly [attempt: number, delay: Duration.DurationInput]>
  /** Heartbeats of these attempts are lost (a worker whose renewals never arrive). */
  readonly lostHeartbeats?: ReadonlyArray<number>
  /** Commits of these jobs die (a defect while processing). */
  readonly dieOn?: ReadonlyArray<number>
  /** The first commit of these jobs fails with a StorageError. */
  readonly storageErrorOnce?: ReadonlyArray<number>
  /** Every commit of these jobs fails with a StorageError. */
  readonly storageErrorAlways?: ReadonlyArray<number>
  /** The first claims fail: a StorageError, then a defect. */
  readonly failingClaims?: number
  /** Marking a job dead is refused (its lease was lost meanwhile). */
  readonly failRefused?: boolean
}

const job = (organisation_id: string): NewJob => ({
  organisation_id,
  environment: "production",
  payload: { _tag: "Delete", reference: null, hard: false },
  received_at: 0
})

/** Memory storage with recorded (and optionally faulty) commits, and a factory of workers over it. */
const setup = (faults: Faults = {}) =>
  Effect.gen(function*() {
    const ctx = yield* Layer.build(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
    const innerStore = Context.get(ctx, TradeflowStore)
    const innerQueue = Context.get(ctx, JobQueue)
    const commits = yield* Ref.make<ReadonlyArray<CommitCall>>([])
    const erred = new Set<number>()
    let claims = 0
    const faulty = (c: Commit) =>
      Effect.gen(function*() {
        const slow = faults.slowAttempts?.find(([attempt]) => attempt === c.attempt)
        if (slow !== undefined) yield* Effect.sleep(slow[1])
        if (faults.dieOn?.includes(c.job_id)) return yield* Effect.dieMessage(`cannot process job ${c.job_id}`)
        if (faults.storageErrorAlways?.includes(c.job_id)) {
          return yield* new StorageError({
            operation: "TradeflowStore.commit",
            cause: new Error("value too long\u0000")
          })
        }
        if (faults.storageErrorOnce?.includes(c.job_id) && !erred.has(c.job_id)) {
          erred.add(c.job_id)
          return yield* new StorageError({ operation: "TradeflowStore.commit", cause: "disk full" })
        }
      })
    const store = TradeflowStore.of(withCommit({
      ...innerStore,
      commitAll: (cs) =>
        Effect.gen(function*() {
          for (const c of cs) yield* faulty(c)
          const committed = yield* innerStore.commitAll(cs)
          yield* Ref.update(commits, (calls) => [
            ...calls,
            ...cs.map((c) => ({
              job_id: c.job_id,
              organisation_id: c.organisation_id,
              attempt: c.attempt,
              committed,
              together: cs.length
            }))
          ])
          return committed
        })
    }))
    const queue = JobQueue.of({
      ...innerQueue,
      claim: (options) => {
        claims++
        if (claims <= (faults.failingClaims ?? 0)) {
          return claims % 2 === 1
            ? Effect.fail(new StorageError({ operation: "JobQueue.claim", cause: "locked" }))
            : Effect.dieMessage("claim blew up")
        }
        return innerQueue.claim(options)
      },
      fail: (id, error, attempt) => faults.failRefused ? Effect.succeed(false) : innerQueue.fail(id, error, attempt),
      heartbeat: (options) =>
        innerQueue.heartbeat({
          ...options,
          jobs: options.jobs.filter((j) => !(faults.lostHeartbeats ?? []).includes(j.attempt))
        })
    })
    const ports = ctx.pipe(Context.add(TradeflowStore, store), Context.add(JobQueue, queue))
    const worker = (options: Worker.WorkerOptions = {}) =>
      Effect.map(
        Layer.build(Worker.layer({ background: false, ...options }).pipe(Layer.provide(Layer.succeedContext(ports)))),
        Context.get(Worker.Worker)
      )
    const enqueue = (organisation_id: string) =>
      Effect.flatMap(innerQueue.enqueue(job(organisation_id)), (o) =>
        o._tag === "Enqueued" ? Effect.succeed(o.id) : Effect.dieMessage("not enqueued"))
    return { queue: innerQueue, commits, worker, enqueue }
  })

/** Asserts every job committed exactly once, and per organisation in ascending id. */
const assertOncePerJobInOrder = (calls: ReadonlyArray<CommitCall>, ids: ReadonlyArray<number>) => {
  assert.isTrue(calls.every((c) => c.committed))
  assert.deepStrictEqual(calls.map((c) => c.job_id).sort((a, b) => a - b), [...ids].sort((a, b) => a - b))
  const byOrg = new Map<string, Array<number>>()
  for (const c of calls) byOrg.set(c.organisation_id, [...(byOrg.get(c.organisation_id) ?? []), c.job_id])
  for (const list of byOrg.values()) assert.deepStrictEqual(list, [...list].sort((a, b) => a - b))
}

describe("Worker", () => {
  it.scoped.prop("drain processes every job once, each organisation's jobs in queue order", [
    fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 30 }),
    fc.integer({ min: 1, max: 5 }),
    fc.integer({ min: 1, max: 4 })
  ], ([orgs, batchSize, concurrency]) =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup()
      const ids: Array<number> = []
      for (const o of orgs) ids.push(yield* enqueue(`org-${o}`))
      const w = yield* worker({ batchSize, concurrency })
      yield* w.drain
      assertOncePerJobInOrder(yield* Ref.get(commits), ids)
      const heads = new Set<string>()
      for (const c of yield* Ref.get(commits)) {
        assert.strictEqual(c.attempt, heads.has(c.organisation_id) ? 0 : 1)
        heads.add(c.organisation_id)
      }
      for (const id of ids) {
        assert.deepStrictEqual(yield* queue.outcome(id), Option.some({ _tag: "Done" as const, result: { count: 0 } }))
      }
    }), { fastCheck: { numRuns: 30 } })

  it.scoped.prop("two workers over one store process every job exactly once, in order per organisation", [
    fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
    fc.integer({ min: 1, max: 3 })
  ], ([orgs, batchSize]) =>
    Effect.gen(function*() {
      const { commits, enqueue, worker } = yield* setup()
      const ids: Array<number> = []
      for (const o of orgs) ids.push(yield* enqueue(`org-${o}`))
      const [w1, w2] = [yield* worker({ batchSize }), yield* worker({ batchSize })]
      yield* Effect.all([w1.drain, w2.drain, w1.drain, w2.drain], { concurrency: "unbounded" })
      yield* w1.drain
      assertOncePerJobInOrder(yield* Ref.get(commits), ids)
    }), { fastCheck: { numRuns: 30 } })

  it.scoped("a job claimed by a worker that died is processed by another after the lease, exactly once", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup()
      const id = yield* enqueue("org-a")
      const later = yield* enqueue("org-a")
      const other = yield* enqueue("org-b")
      assert.deepStrictEqual(
        (yield* queue.claim({ worker: "dead", limit: 1, leaseMillis: 30_000 }).pipe(Effect.map((c) => c.jobs))).map((
          j
        ) => [j.id, j.attempt]),
        [[id, 1]]
      )
      const w = yield* worker({ leaseMillis: 10_000 })
      yield* w.drain
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => c.job_id), [other])
      assert.deepStrictEqual(yield* queue.outcome(id), Option.none())
      yield* TestClock.adjust("29 seconds")
      yield* w.drain
      assert.deepStrictEqual(yield* queue.outcome(id), Option.none())
      yield* TestClock.adjust("1 second")
      yield* w.drain
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt, c.committed]), [
        [other, 1, true],
        [id, 2, true],
        [later, 1, true]
      ])
      yield* TestClock.adjust("1 minute")
      yield* w.drain
      assert.strictEqual((yield* Ref.get(commits)).length, 3)
    }))

  it.scoped("fencing: a slow attempt whose lease lapsed cannot commit once the job was claimed again", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({
        slowAttempts: [[1, "1 minute"], [2, "2 minutes"]],
        lostHeartbeats: [1]
      })
      const id = yield* enqueue("org-a")
      const [w1, w2] = [yield* worker({ leaseMillis: 10_000 }), yield* worker({ leaseMillis: 10_000 })]
      const first = yield* Effect.fork(w1.drain)
      yield* TestClock.adjust("1 millis")
      yield* w2.drain
      yield* TestClock.adjust("10 seconds")
      const second = yield* Effect.fork(w2.drain)
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(first)
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt, c.committed]), [[id, 1, false]])
      assert.deepStrictEqual(yield* queue.outcome(id), Option.none())
      yield* TestClock.adjust("2 minutes")
      yield* Fiber.join(second)
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt, c.committed]), [
        [id, 1, false],
        [id, 2, true]
      ])
      assert.deepStrictEqual(yield* queue.outcome(id), Option.some({ _tag: "Done" as const, result: { count: 0 } }))
    }))

  it.scoped("heartbeats keep a slow job's lease alive, so no other worker takes it", () =>
    Effect.gen(function*() {
      const { commits, enqueue, worker } = yield* setup({ slowAttempts: [[1, "1 minute"]] })
      const id = yield* enqueue("org-a")
      const [w1, w2] = [yield* worker({ leaseMillis: 9_000 }), yield* worker({ leaseMillis: 9_000 })]
      const slow = yield* Effect.fork(w1.drain)
      for (let s = 0; s < 59; s++) {
        yield* TestClock.adjust("1 second")
        yield* w2.drain
      }
      assert.deepStrictEqual(yield* Ref.get(commits), [])
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(slow)
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt, c.committed]), [[id, 1, true]])
    }))

  it.scoped("an interrupted worker releases its unfinished jobs: another takes them at once, the old attempt writes nothing", () =>
    Effect.gen(function*() {
      const { commits, enqueue, worker } = yield* setup({ slowAttempts: [[1, "1 hour"]] })
      const first = yield* enqueue("org-a")
      const second = yield* enqueue("org-b")
      const [w1, w2] = [yield* worker({ leaseMillis: 600_000 }), yield* worker({ leaseMillis: 600_000 })]
      const stopped = yield* Effect.fork(w1.drain)
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(stopped)
      yield* w2.drain
      assert.deepStrictEqual(
        (yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt, c.committed]).sort(),
        [[first, 2, true], [second, 2, true]]
      )
    }))

  it.scoped("a defect fails the job with its message; a passing storage error is retried within the same attempt", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({ dieOn: [1], storageErrorOnce: [2] })
      const doomed = yield* enqueue("org-a")
      const flaky = yield* enqueue("org-b")
      assert.deepStrictEqual([doomed, flaky], [1, 2])
      const after = yield* enqueue("org-a")
      const w = yield* worker({ leaseMillis: 5_000 })
      const draining = yield* Effect.fork(w.drain)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(draining)
      assert.deepStrictEqual(
        yield* queue.outcome(doomed),
        Option.some({ _tag: "Failed" as const, error: "cannot process job 1" })
      )
      assert.deepStrictEqual(yield* queue.outcome(flaky), Option.some({ _tag: "Done" as const, result: { count: 0 } }))
      assert.deepStrictEqual(
        (yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt]).sort(([a], [b]) => Number(a) - Number(b)),
        [[flaky, 1], [after, 0]]
      )
    }))

  it.scoped("a job whose defect cannot mark it dead (lease lost) stops its run: the jobs after it do not commit", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({ dieOn: [1], failRefused: true })
      const doomed = yield* enqueue("org-a")
      const after = yield* enqueue("org-a")
      const w = yield* worker({ leaseMillis: 5_000 })
      yield* w.drain
      assert.deepStrictEqual(yield* Ref.get(commits), [])
      assert.deepStrictEqual((yield* queue.pending(10)).map((j) => j.id), [doomed, after])
    }))

  it.scoped("the background loop wakes on enqueues without waiting for the poll", () =>
    Effect.gen(function*() {
      const { enqueue, worker } = yield* setup()
      const w = yield* worker({ background: true, pollInterval: "1 hour" })
      yield* TestClock.adjust("1 millis")
      const id = yield* enqueue("org-a")
      const outcome = yield* Effect.fork(w.await(id))
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(outcome), { _tag: "Done", result: { count: 0 } })
    }))

  it.scoped("the background loop survives storage errors and defects, then processes the queue", () =>
    Effect.gen(function*() {
      const { enqueue, queue, worker } = yield* setup({ failingClaims: 4 })
      const w = yield* worker({ background: true, pollInterval: "1 second" })
      const id = yield* enqueue("org-a")
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* queue.outcome(id), Option.none())
      const outcome = yield* Effect.fork(w.await(id))
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* Fiber.join(outcome), { _tag: "Done", result: { count: 0 } })
    }))

  it.scoped("a job a dying worker held maxAttempts times is dead at its next claim, without running; its organisation goes on", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup()
      const poison = yield* enqueue("org-a")
      const later = yield* enqueue("org-a")
      for (let attempt = 1; attempt <= 3; attempt++) {
        const { jobs } = yield* queue.claim({
          worker: `crashed-${attempt}`,
          limit: 10,
          leaseMillis: 10_000,
          maxAttempts: 3
        })
        assert.deepStrictEqual(jobs.map((j) => [j.id, j.attempt]), [[poison, attempt]])
        yield* TestClock.adjust("10 seconds")
      }
      const w = yield* worker({ leaseMillis: 10_000, maxAttempts: 3 })
      const ended = yield* Effect.fork(w.await(poison))
      yield* w.drain
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => [c.job_id, c.attempt]), [[later, 1]])
      assert.deepStrictEqual(yield* Fiber.join(ended), { _tag: "Failed", error: attemptLimitReached(3) })
      assert.deepStrictEqual(
        (yield* queue.list({ organisation_id: "org-a", state: "dead", limit: 10 })).map((j) => [j.id, j.attempt]),
        [[poison, 3]]
      )
    }))

  it.scoped("a job whose commit keeps failing is dead after maxAttempts claims, with its last error recorded", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({ storageErrorAlways: [1] })
      const failing = yield* enqueue("org-a")
      const later = yield* enqueue("org-a")
      const other = yield* enqueue("org-b")
      const w = yield* worker({ leaseMillis: 5_000, maxAttempts: 2 })
      const drain = Effect.gen(function*() {
        const draining = yield* Effect.fork(w.drain)
        yield* TestClock.adjust("4 seconds")
        yield* Fiber.join(draining)
      })
      yield* drain
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => c.job_id), [other])
      const [pending] = yield* queue.list({ organisation_id: "org-a", state: "pending", limit: 1 })
      assert.deepStrictEqual([pending?.id, pending?.attempt, pending?.error], [
        failing,
        1,
        "StorageError (TradeflowStore.commit): value too long"
      ])
      yield* TestClock.adjust("5 seconds")
      yield* drain
      yield* TestClock.adjust("5 seconds")
      yield* drain
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => c.job_id), [other, later])
      assert.deepStrictEqual(
        yield* queue.outcome(failing),
        Option.some({
          _tag: "Failed" as const,
          error: "StorageError (TradeflowStore.commit): value too long"
        })
      )
      const [dead] = yield* queue.list({ organisation_id: "org-a", state: "dead", limit: 10 })
      assert.deepStrictEqual([dead?.id, dead?.attempt], [failing, 2])
    }))

  it.scoped("a claim's part whose commit keeps failing stops the claim: the part processed after it commits nothing", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({ storageErrorAlways: [1] })
      const failing = yield* enqueue("org-a")
      const later = yield* enqueue("org-a")
      const w = yield* worker({ leaseMillis: 5_000, jobsPerCommit: 1, commitsPerClaim: 2 })
      const draining = yield* Effect.fork(w.drain)
      yield* TestClock.adjust("4 seconds")
      yield* Fiber.join(draining)
      assert.deepStrictEqual(yield* Ref.get(commits), [])
      assert.deepStrictEqual((yield* queue.pending(10)).map((j) => j.id), [failing, later])
    }))

  it.scoped("a claim's part whose commit dies: its job is dead and the part after it is processed again and committed", () =>
    Effect.gen(function*() {
      const { commits, enqueue, queue, worker } = yield* setup({ dieOn: [1] })
      const doomed = yield* enqueue("org-a")
      const after = yield* enqueue("org-a")
      const last = yield* enqueue("org-a")
      const w = yield* worker({ leaseMillis: 5_000, jobsPerCommit: 1, commitsPerClaim: 3 })
      yield* w.drain
      assert.deepStrictEqual(
        yield* queue.outcome(doomed),
        Option.some({ _tag: "Failed" as const, error: "cannot process job 1" })
      )
      assert.deepStrictEqual(yield* queue.outcome(after), Option.some({ _tag: "Done" as const, result: { count: 0 } }))
      assert.deepStrictEqual(yield* queue.outcome(last), Option.some({ _tag: "Done" as const, result: { count: 0 } }))
      assert.deepStrictEqual((yield* Ref.get(commits)).map((c) => c.job_id), [after, last])
    }))

  it.scoped("a part ends once its jobs have rendered renderedPerCommit", () =>
    Effect.gen(function*() {
      const { commits, queue, worker } = yield* setup()
      const enqueueThree = Effect.forEach(["a", "b", "c"], (reference) =>
        queue.enqueue({ ...job("org-a"), payload: { _tag: "Delete", reference, hard: false } }))
      yield* enqueueThree
      yield* (yield* worker()).drain
      assert.deepStrictEqual(
        (yield* Ref.get(commits)).map((c) =>
          c.together
        ),
        [3, 3, 3]
      )
      yield* enqueueThree
      yield* (yield* worker({ renderedPerCommit: 0 })).drain
      assert.deepStrictEqual((yield* Ref.get(commits)).slice(3).map((c) => c.together), [1, 1, 1])
    }))

  it.scoped("the background loop starts only once startAfter has completed", () =>
    Effect.gen(function*() {
      const { enqueue, queue, worker } = yield* setup()
      const gate = yield* Deferred.make<void>()
      const w = yield* worker({ background: true, pollInterval: "1 second", startAfter: Deferred.await(gate) })
      const id = yield* enqueue("org-a")
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(
        (yield* queue.list({ organisation_id: "org-a", state: "pending", limit: 10 })).map((j) => [j.id, j.attempt]),
        [[id, 0]]
      )
      yield* Deferred.succeed(gate, undefined)
      const outcome = yield* Effect.fork(w.await(id))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(outcome), { _tag: "Done", result: { count: 0 } })
    }))

  it("failureText keeps tag, operation, message and causes, drops NUL and caps the length", () => {
    assert.strictEqual(
      Worker.failureText(new StorageError({ operation: "JobQueue.claim", cause: new Error("bad\u0000 byte") })),
      "StorageError (JobQueue.claim): bad byte"
    )
    assert.strictEqual(Worker.failureText(new Error("boom")), "boom")
    assert.strictEqual(Worker.failureText("x".repeat(5_000)).length, Worker.maxFailureLength)
  })
})
