import { Migrator } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import {
  JobQueue,
  type MessageStore,
  Storage,
  type StoredMessage,
  TrackingStore,
  type Tradeflow,
  type TradeflowStore
} from "@tradeflow/core"
import {
  arbitraryMessage,
  freshId,
  makeMessage,
  makeTarget,
  makeTracked,
  selectMessages,
  storageContract,
  targetsIndexedBefore
} from "@tradeflow/core/test-kit"
import {
  Cause,
  Clock,
  Config,
  ConfigProvider,
  Context,
  Duration,
  Effect,
  FastCheck as fc,
  Fiber,
  Layer,
  Option,
  Redacted,
  Ref,
  Schedule,
  Stream
} from "effect"
import { PgStorage } from "../src/index.js"
import { migrations, migrationsTable } from "../src/internal/migrations.js"
import { layerTest, makeTestSchema, openInstance, type TestSchema } from "./TestDatabase.js"

storageContract("postgres", layerTest)

const open = (test: TestSchema) => openInstance(test, 6)

const job = (organisation_id: string, reference: string | null = null) => ({
  organisation_id,
  environment: "production" as const,
  payload: { _tag: "Delete" as const, reference, hard: false },
  received_at: 1_700_000_000_000
})

const enqueue = (queue: JobQueue.JobQueue["Type"], organisation_id: string) =>
  Effect.flatMap(
    queue.enqueue(job(organisation_id)),
    (outcome) =>
      outcome._tag === "Enqueued"
        ? Effect.succeed(outcome.id)
        : Effect.dieMessage(`expected Enqueued, got ${outcome._tag}`)
  )

const commit = (
  store: TradeflowStore.TradeflowStore["Type"],
  c: {
    job_id: number
    organisation_id: string
    attempt?: number
    messages?: ReadonlyArray<StoredMessage.NewMessage>
    upserts?: ReadonlyArray<Tradeflow.Tradeflow>
  }
) =>
  store.commit({
    job_id: c.job_id,
    organisation_id: c.organisation_id,
    ...(c.attempt === undefined ? {} : { attempt: c.attempt }),
    upserts: c.upserts ?? [],
    deletes: [],
    messages: c.messages ?? [],
    result: { count: 0 }
  })

const logOf = (messages: MessageStore.MessageStore["Type"], organisation_id: string) =>
  messages.list({ organisation_id, take: "oldest", limit: 1_000_000 })

describe("PgStorage on PostgreSQL", () => {
  it.live("concurrent starts on a fresh schema create it and migrate it once", () =>
    Effect.gen(function*() {
      const test = yield* makeTestSchema({ create: false })
      const instances = yield* Effect.all(Array.from({ length: 4 }, () => open(test)), { concurrency: "unbounded" })
      const applied = yield* instances[0]!.sql<{ migration_id: number }>`SELECT migration_id FROM tradeflow_migrations`
      expect(applied).toEqual([
        { migration_id: 1 },
        { migration_id: 2 },
        { migration_id: 3 },
        { migration_id: 4 },
        { migration_id: 5 },
        { migration_id: 6 },
        { migration_id: 7 },
        { migration_id: 8 },
        { migration_id: 9 },
        { migration_id: 10 },
        { migration_id: 11 },
        { migration_id: 12 },
        { migration_id: 13 },
        { migration_id: 14 },
        { migration_id: 15 },
        { migration_id: 16 },
        { migration_id: 17 },
        { migration_id: 18 },
        { migration_id: 19 }
      ])
      const [schema] = yield* instances[3]!.sql<{ schema: string }>`SELECT current_schema() AS schema`
      expect(schema?.schema).toBe(test.schema)
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "enqueueAll: all or nothing; concurrent groups over shared organisations neither deadlock nor reorder",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const [a, b] = yield* Effect.all([open(test), open(test)], { concurrency: "unbounded" })
        yield* a!.sql`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'refused'; END $$`
        yield* a!.sql`CREATE TRIGGER refuse_jobs BEFORE INSERT ON jobs FOR EACH ROW
        WHEN (NEW.organisation_id = 'org-refused') EXECUTE FUNCTION refuse()`
        const keyed = { job: job("org-kept"), idempotency: { key: "k", request_hash: "h", response: "{}" } }
        const error = yield* Effect.flip(a!.queue.enqueueAll([keyed, { job: job("org-refused") }]))
        expect([error._tag, error.operation]).toEqual(["StorageError", "JobQueue.enqueueAll"])
        expect(yield* a!.queue.pending(10)).toEqual([])
        expect((yield* a!.queue.enqueueAll([keyed])).map((o) => o._tag)).toEqual(["Enqueued"])

        const orgs = Array.from({ length: 4 }, () => freshId("org"))
        const groups = Array.from(
          { length: 24 },
          (_, g) => Array.from({ length: 5 }, (_, i) => ({ job: job(orgs[(g + i * 3) % orgs.length]!, `g${g}-${i}`) }))
        )
        const outcomes = yield* Effect.all(
          groups.map((group, g) => (g % 2 === 0 ? a! : b!).queue.enqueueAll(group)),
          { concurrency: "unbounded" }
        )
        const idOf = new Map(groups.flatMap((group, g) =>
          group.map((e, i) => {
            const o = outcomes[g]![i]!
            return [e.job.payload.reference, o._tag === "Enqueued" ? o.id : -1] as const
          })
        ))
        const pending = (yield* a!.queue.pending(1_000)).filter((j) => orgs.includes(j.organisation_id))
        expect(pending.length).toBe(120)
        for (const j of pending) {
          expect(idOf.get(j.payload._tag === "Delete" ? j.payload.reference : null)).toBe(j.id)
        }
        for (const group of groups) {
          const ids = group.map((e) => idOf.get(e.job.payload.reference)!)
          expect(ids).toEqual([...ids].sort((x, y) => x - y))
        }
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a connection ended inside a transaction is a StorageError (retried), not a defect; the pool recovers",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const a = yield* open(test)
        yield* a.sql`CREATE FUNCTION end_me() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$`
        yield* a.sql`CREATE TRIGGER end_me BEFORE INSERT ON jobs FOR EACH ROW
        WHEN (NEW.organisation_id = 'org-ended') EXECUTE FUNCTION end_me()`
        const exit = yield* Effect.exit(a.queue.enqueueAll([{ job: job("org-kept") }, { job: job("org-ended") }]))
        expect(exit._tag).toBe("Failure")
        if (exit._tag === "Failure") {
          expect(Cause.isDie(exit.cause)).toBe(false)
          expect(Cause.failureOption(exit.cause).pipe(Option.map((e) => [e._tag, e.operation]))).toEqual(
            Option.some(["StorageError", "JobQueue.enqueueAll"])
          )
        }
        expect(yield* a.queue.pending(10)).toEqual([])
        expect((yield* a.queue.enqueueAll([{ job: job("org-kept") }])).map((o) => o._tag)).toEqual(["Enqueued"])
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "claim: only each organisation's oldest pending job, leased once across processes",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const [a, b] = yield* Effect.all([open(test), open(test)], { concurrency: "unbounded" })
        const org1 = freshId("org")
        const org2 = freshId("org")
        const j1 = yield* enqueue(a!.queue, org1)
        const j2 = yield* enqueue(b!.queue, org1)
        const k1 = yield* enqueue(a!.queue, org2)
        yield* enqueue(b!.queue, org1)
        const claims = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? a! : b!).queue.claim({ worker: `w${i}`, limit: 10, leaseMillis: 30_000 }).pipe(
              Effect.map((c) =>
                c.jobs
              )
            )),
          { concurrency: "unbounded" }
        )
        const claimed = claims.flat()
        expect(
          claimed.map((j) => [j.id, j.attempt]).sort((x, y) => x[0]! - y[0]!)
        ).toEqual([[j1, 1], [k1, 1]])
        for (const c of claims) expect(c.map((j) => j.id)).toEqual([...c.map((j) => j.id)].sort((x, y) => x - y))
        expect(
          yield* b!.queue.claim({ worker: "late", limit: 10, leaseMillis: 30_000 }).pipe(Effect.map((c) => c.jobs))
        ).toEqual([])
        expect(yield* commit(b!.store, { job_id: j1, organisation_id: org1, attempt: 1 })).toBe(true)
        const next = yield* a!.queue.claim({ worker: "w", limit: 10, leaseMillis: 30_000 }).pipe(
          Effect.map((c) => c.jobs)
        )
        expect(next.map((j) => [j.id, j.attempt, j.organisation_id])).toEqual([[j2, 1, org1]])
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "claim: a head leased after a claimer's snapshot was taken is not claimed again by it",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const a = yield* open(test)
        const org = freshId("org")
        const id = yield* enqueue(a.queue, org)
        // A second process, as a role under a row-security policy, stops inside its claim statement (after its
        // snapshot, before locking a row) until the gate opens; meanwhile the first process claims the head.
        const role = `${test.schema}_gated`
        const [lockClass, lockKey] = [7_316_412, Number.parseInt(test.schema.slice(-7), 16)]
        yield* Effect.acquireRelease(
          Effect.gen(function*() {
            yield* a.sql`CREATE ROLE ${a.sql(role)} LOGIN`
            yield* a.sql`GRANT ALL ON SCHEMA ${a.sql(test.schema)} TO ${a.sql(role)}`
            yield* a.sql`GRANT ALL ON ALL TABLES IN SCHEMA ${a.sql(test.schema)} TO ${a.sql(role)}`
            yield* a.sql`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${a.sql(test.schema)} TO ${a.sql(role)}`
          }),
          () => a.sql`DROP OWNED BY ${a.sql(role)}`.pipe(Effect.zipRight(a.sql`DROP ROLE ${a.sql(role)}`), Effect.orDie)
        )
        yield* a.sql.unsafe(`CREATE FUNCTION claim_gate() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN
          IF current_query() LIKE '%WITH RECURSIVE heads%' THEN
            PERFORM pg_advisory_xact_lock_shared(${lockClass}, ${lockKey});
          END IF;
          RETURN true;
        END $$`)
        yield* a.sql`CREATE POLICY gate ON jobs USING (claim_gate())`
        yield* a.sql`ALTER TABLE jobs ENABLE ROW LEVEL SECURITY`
        const gatedUrl = new URL(test.baseUrl)
        gatedUrl.username = role
        const gated = yield* Layer.build(
          PgStorage.layer({ url: PgStorage.urlWithSchema(gatedUrl.toString(), test.schema) })
        )
          .pipe(Effect.map((context) => Context.get(context, JobQueue.JobQueue)))

        const gate = yield* a.sql.reserve
        yield* gate.execute("SELECT pg_advisory_lock($1, $2)", [lockClass, lockKey], undefined)
        const late = yield* Effect.fork(gated.claim({ worker: "late", limit: 10, leaseMillis: 30_000 }))
        yield* a.sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted AND classid = ${lockClass} AND objid = ${lockKey}`.pipe(
          Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (rows) => rows[0]?.n === 1 })
        )
        const first = yield* a.queue.claim({ worker: "first", limit: 10, leaseMillis: 30_000 })
        expect(first.jobs.map((j) => [j.id, j.attempt])).toEqual([[id, 1]])
        yield* gate.execute("SELECT pg_advisory_unlock($1, $2)", [lockClass, lockKey], undefined)
        expect((yield* Fiber.join(late)).jobs).toEqual([])
        expect(yield* commit(a.store, { job_id: id, organisation_id: org, attempt: 1 })).toBe(true)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "leases run out on the database clock; stale attempts can neither commit nor fail; heartbeats extend",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const [a, b] = yield* Effect.all([open(test), open(test)], { concurrency: "unbounded" })
        const org = freshId("org")
        const id = yield* enqueue(a!.queue, org)
        expect(
          (yield* a!.queue.claim({ worker: "old", limit: 1, leaseMillis: 200 }).pipe(Effect.map((c) => c.jobs))).map((
            j
          ) => j.attempt)
        ).toEqual([1])
        yield* Effect.sleep("400 millis")
        expect(
          (yield* b!.queue.claim({ worker: "new", limit: 1, leaseMillis: 30_000 }).pipe(Effect.map((c) => c.jobs))).map(
            (j) => [j.id, j.attempt]
          )
        )
          .toEqual([[id, 2]])
        expect(
          yield* commit(a!.store, { job_id: id, organisation_id: org, attempt: 1, messages: [makeMessage("stale")] })
        )
          .toBe(false)
        expect(yield* a!.queue.fail(id, "stale", 1)).toBe(false)
        expect(yield* a!.queue.outcome(id)).toEqual(Option.none())
        expect(yield* logOf(a!.messages, org)).toEqual([])
        expect(
          yield* commit(b!.store, { job_id: id, organisation_id: org, attempt: 2, messages: [makeMessage("fresh")] })
        )
          .toBe(true)
        expect((yield* logOf(a!.messages, org)).map((m) => [m.seq, m.hash])).toEqual([[1, "fresh"]])

        const kept = freshId("org")
        const lost = freshId("org")
        const keptId = yield* enqueue(a!.queue, kept)
        const lostId = yield* enqueue(a!.queue, lost)
        const held = yield* a!.queue.claim({ worker: "holder", limit: 2, leaseMillis: 300 }).pipe(
          Effect.map((c) => c.jobs)
        )
        expect(held.map((j) => j.id)).toEqual([keptId, lostId])
        yield* a!.queue.heartbeat({ worker: "holder", jobs: [{ id: keptId, attempt: 1 }], leaseMillis: 30_000 })
        yield* a!.queue.heartbeat({ worker: "intruder", jobs: [{ id: lostId, attempt: 1 }], leaseMillis: 30_000 })
        yield* Effect.sleep("500 millis")
        const taken = yield* b!.queue.claim({ worker: "other", limit: 10, leaseMillis: 30_000 }).pipe(
          Effect.map((c) => c.jobs)
        )
        expect(taken.map((j) => [j.id, j.attempt])).toEqual([[lostId, 2]])
        expect(yield* b!.queue.fail(keptId, "done with it", 1)).toBe(true)
        expect(yield* b!.queue.outcome(keptId)).toEqual(Option.some({ _tag: "Failed", error: "done with it" }))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "three processes, six workers: every job runs exactly once, each organisation's in queue order",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const instances = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
        const orgs = Array.from({ length: 12 }, () => freshId("org"))
        const ids = new Map<string, Array<number>>()
        for (let round = 0; round < 5; round++) {
          for (const [i, org] of orgs.entries()) {
            const id = yield* enqueue(instances[(i + round) % 3]!.queue, org)
            ids.set(org, [...(ids.get(org) ?? []), id])
          }
        }
        const runs = yield* Ref.make<Array<{ readonly id: number; readonly org: string }>>([])
        const total = orgs.length * 5
        const worker = (n: number) =>
          Effect.gen(function*() {
            const { queue, store } = instances[n % 3]!
            while ((yield* Ref.get(runs)).length < total) {
              const jobs = yield* queue.claim({ worker: `worker-${n}`, limit: 3, leaseMillis: 30_000 }).pipe(
                Effect.map((c) => c.jobs)
              )
              for (const j of jobs) {
                yield* Ref.update(runs, (rs) => [...rs, { id: j.id, org: j.organisation_id }])
                const ok = yield* commit(store, {
                  job_id: j.id,
                  organisation_id: j.organisation_id,
                  attempt: j.attempt,
                  messages: [makeMessage(`job-${j.id}`)]
                })
                expect(ok).toBe(true)
              }
              if (jobs.length === 0) yield* Effect.sleep("10 millis")
            }
          })
        yield* Effect.all(Array.from({ length: 6 }, (_, n) => worker(n)), { concurrency: "unbounded", discard: true })
        const done = yield* Ref.get(runs)
        expect(done.length).toBe(total)
        expect(new Set(done.map((r) => r.id)).size).toBe(total)
        for (const org of orgs) {
          expect(done.filter((r) => r.org === org).map((r) => r.id)).toEqual(ids.get(org))
          expect((yield* logOf(instances[0]!.messages, org)).map((m) => [m.seq, m.hash]))
            .toEqual(ids.get(org)!.map((id, i) => [i + 1, `job-${id}`]))
        }
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "three processes, six claimers: no target is ever held by two claimers at once; each due check runs once",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const instances = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
        const start = 1_700_000_000_000
        const checks = 3
        const now = start + checks - 1
        const orgs = Array.from({ length: 8 }, () => freshId("org"))
        const references = ["TF-1", "TF-2", "TF-3"]
        for (const [i, org] of orgs.entries()) {
          yield* commit(instances[i % 3]!.store, {
            job_id: yield* enqueue(instances[i % 3]!.queue, org),
            organisation_id: org,
            upserts: references.map((reference, n) =>
              makeTracked(org, reference, [makeTarget("carrier-a", `MSCU${i}${n}`, start)])
            )
          })
        }
        const total = orgs.length * references.length * checks
        const held = new Map<string, number>()
        const overlaps: Array<string> = []
        const runs: Array<string> = []
        const claimer = (n: number) =>
          Effect.gen(function*() {
            const { queue, store, tracking } = instances[n % 3]!
            while (runs.length < total) {
              const claimed = yield* tracking.claim({ now, limit: 3, leaseMillis: 60_000 })
              for (const d of claimed) {
                const key = `${d.organisation_id}/${d.tradeflow_reference}`
                const holder = held.get(key)
                if (holder !== undefined) overlaps.push(`${key}: claimer ${n} while claimer ${holder} holds it`)
                held.set(key, n)
              }
              for (const d of claimed) {
                const key = `${d.organisation_id}/${d.tradeflow_reference}`
                yield* Effect.sleep("2 millis")
                runs.push(key)
                const doc = Option.getOrThrow(yield* store.get(d.organisation_id, d.tradeflow_reference))
                const targets = (doc.tracking?.targets ?? []).map((t) =>
                  t.id === d.target_id && t.next_check_at !== null ? { ...t, next_check_at: t.next_check_at + 1 } : t
                )
                held.delete(key)
                yield* commit(store, {
                  job_id: yield* enqueue(queue, d.organisation_id),
                  organisation_id: d.organisation_id,
                  upserts: [{ ...doc, tracking: { source: "carrier-a", targets } }]
                })
              }
              if (claimed.length === 0) yield* Effect.sleep("10 millis")
            }
          })
        yield* Effect.all(Array.from({ length: 6 }, (_, n) => claimer(n)), { concurrency: "unbounded", discard: true })
        expect(overlaps).toEqual([])
        expect(runs.length).toBe(total)
        for (const org of orgs) {
          for (const reference of references) {
            expect(runs.filter((r) => r === `${org}/${reference}`).length).toBe(checks)
            const doc = Option.getOrThrow(yield* instances[0]!.store.get(org, reference))
            expect(doc.tracking?.targets.map((t) => t.next_check_at)).toEqual([start + checks])
          }
        }
        expect(yield* instances[1]!.tracking.claim({ now, limit: 100, leaseMillis: 60_000 })).toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "exact feed: a reader resuming after_seq never skips a number held by an open transaction",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const [a, b, c, reader] = yield* Effect.all([open(test), open(test), open(test), open(test)], {
          concurrency: "unbounded"
        })
        const org = freshId("org")
        const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => makeMessage(`${prefix}-${i}`))
        yield* commit(a!.store, {
          job_id: yield* enqueue(a!.queue, org),
          organisation_id: org,
          messages: batch("before", 2)
        })

        const seen: Array<{ readonly seq: number; readonly hash: string; readonly at: number }> = []
        const pages: Array<ReadonlyArray<number>> = []
        const stop = yield* Ref.make(false)
        const cursor = yield* Ref.make(0)
        const poll = Effect.gen(function*() {
          const after = yield* Ref.get(cursor)
          const page = yield* reader!.messages.list({
            organisation_id: org,
            take: "oldest",
            limit: 1_000,
            after_seq: after
          })
          const now = yield* Clock.currentTimeMillis
          for (const m of page) seen.push({ seq: m.seq, hash: m.hash, at: now })
          if (page.length > 0) {
            pages.push(page.map((m) => m.seq))
            yield* Ref.set(cursor, page[page.length - 1]!.seq)
          }
        })
        const polling = yield* Effect.fork(Effect.gen(function*() {
          while (!(yield* Ref.get(stop))) {
            yield* poll
            yield* Effect.sleep("15 millis")
          }
          yield* poll
        }))

        const holdJob = yield* enqueue(a!.queue, org)
        const holding = yield* Effect.fork(a!.sql.withTransaction(Effect.gen(function*() {
          expect(yield* commit(a!.store, { job_id: holdJob, organisation_id: org, messages: batch("held", 3) })).toBe(
            true
          )
          yield* Effect.sleep("3 seconds")
          return yield* Clock.currentTimeMillis
        })))
        yield* Effect.sleep("300 millis")
        const bJob = yield* enqueue(b!.queue, org)
        const cJob = yield* enqueue(c!.queue, org)
        const others = yield* Effect.all([
          Effect.zipRight(
            commit(b!.store, { job_id: bJob, organisation_id: org, messages: batch("b", 4) }),
            Clock.currentTimeMillis
          ),
          Effect.zipRight(
            commit(c!.store, { job_id: cJob, organisation_id: org, messages: batch("c", 2) }),
            Clock.currentTimeMillis
          )
        ], { concurrency: "unbounded" }).pipe(Effect.fork)
        yield* Effect.sleep("1500 millis")
        const midway = yield* Ref.get(cursor)
        const heldUntil = yield* Fiber.join(holding)
        const [bAt, cAt] = yield* Fiber.join(others)
        yield* Effect.sleep("200 millis")
        yield* Ref.set(stop, true)
        yield* Fiber.join(polling)

        expect(midway).toBe(2)
        expect(bAt).toBeGreaterThanOrEqual(heldUntil)
        expect(cAt).toBeGreaterThanOrEqual(heldUntil)
        expect(seen.map((m) => m.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1))
        expect(new Set(seen.map((m) => m.hash)).size).toBe(11)
        expect(seen.slice(2, 5).map((m) => m.hash)).toEqual(["held-0", "held-1", "held-2"])
        expect(seen.slice(0, 2).every((m) => m.at < heldUntil)).toBe(true)
        expect(pages.length).toBeGreaterThanOrEqual(2)
        const final = yield* logOf(reader!.messages, org)
        expect(final.map((m) => m.seq)).toEqual(seen.map((m) => m.seq))
        expect(final.map((m) => m.hash)).toEqual(seen.map((m) => m.hash))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "wakeups: an enqueue in one process wakes a listener in another, once per committed enqueue",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const elsewhere = yield* makeTestSchema()
        const [a, b] = yield* Effect.all([open(test), open(test)], { concurrency: "unbounded" })
        const stranger = yield* open(elsewhere)
        const count = (s: Stream.Stream<void, unknown>) =>
          Effect.fork(s.pipe(Stream.interruptWhen(Effect.sleep("1500 millis")), Stream.runCount))
        const woken = yield* Effect.fork(Stream.runHead(b!.queue.wakeups))
        const counting = yield* count(b!.queue.wakeups)
        const strangerCount = yield* count(stranger.queue.wakeups)
        yield* Effect.sleep("200 millis")
        const org = freshId("org")
        yield* enqueue(a!.queue, org)
        expect(yield* Fiber.join(woken).pipe(Effect.timeout("5 seconds"))).toEqual(Option.some(undefined))
        yield* enqueue(a!.queue, org)
        const first = yield* a!.queue.enqueue(job(org), { key: "k", request_hash: "h", response: "{}" })
        const replay = yield* a!.queue.enqueue(job(org), { key: "k", request_hash: "h", response: "{}" })
        expect([first._tag, replay._tag]).toEqual(["Enqueued", "Replayed"])
        yield* a!.sql.withTransaction(Effect.zipRight(enqueue(a!.queue, org), Effect.fail("rolled back"))).pipe(
          Effect.ignore
        )
        expect(yield* Fiber.join(counting)).toBe(3)
        expect(yield* Fiber.join(strangerCount)).toBe(0)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "dead jobs: the upgrade turns failed jobs dead and gives unfinished jobs their kind and payload size",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const deadJobs = Object.keys(migrations).find((k) => k.endsWith("_dead_jobs"))!
        const payload = JSON.stringify({ _tag: "Delete", reference: "TF-ü", hard: false })
        const ids = yield* Effect.gen(function*() {
          const sql = yield* PgClient.PgClient
          yield* Migrator.make({})({
            loader: PgMigrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([k]) => k < deadJobs))),
            table: migrationsTable
          })
          const insert = (status: string, error: string | null) =>
            Effect.map(
              sql<
                { readonly id: number }
              >`INSERT INTO jobs (organisation_id, environment, payload, received_at, status, error)
            VALUES ('org-old', 'production', ${payload}, 1, ${status}, ${error}) RETURNING id::float8 AS id`,
              (rows) => rows[0]!.id
            )
          return {
            pending: yield* insert("pending", null),
            failed: yield* insert("failed", "boom"),
            done: yield* insert("done", null)
          }
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(test.url) })), Effect.scoped)
        const instance = yield* open(test)
        const bytes = new TextEncoder().encode(payload).length
        expect(yield* instance.queue.outcome(ids.failed)).toEqual(Option.some({ _tag: "Failed", error: "boom" }))
        expect((yield* instance.queue.list({ organisation_id: "org-old", state: "dead", limit: 10 }))
          .map((j) => [j.id, j.kind, j.payload_bytes, j.error])).toEqual([[ids.failed, "Delete", bytes, "boom"]])
        expect((yield* instance.queue.list({ organisation_id: "org-old", state: "pending", limit: 10 }))
          .map((j) => [j.id, j.kind, j.payload_bytes])).toEqual([[ids.pending, "Delete", bytes]])
        const refused = yield* Effect.flip(instance.sql`UPDATE jobs SET status = 'failed' WHERE id = ${ids.pending}`)
        expect(String(refused.cause)).toContain("jobs_status_check")
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "message heads: the upgrade finds the newest message of every key; later commits move them",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const heads = Object.keys(migrations).find((k) => k.endsWith("_message_heads"))!
        const log = fc.sample(fc.array(arbitraryMessage, { minLength: 30, maxLength: 30 }), { numRuns: 1, seed: 9 })[0]!
          .map((m, i) => ({ ...m, hash: `old-${i}`, seq: i + 1 }))
        yield* Effect.gen(function*() {
          const sql = yield* PgClient.PgClient
          yield* Migrator.make({})({
            loader: PgMigrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([k]) => k < heads))),
            table: migrationsTable
          })
          yield* sql`INSERT INTO messages ${sql.insert(log.map((m) => ({ organisation_id: "org-old", ...m })))}`
          yield* sql`INSERT INTO message_sequences (organisation_id, last_seq) VALUES ('org-old', ${log.length})`
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(test.url) })), Effect.scoped)
        const instance = yield* open(test)
        const later = makeMessage("new", {
          type: log[0]!.type,
          tradeflow_reference: log[0]!.tradeflow_reference,
          container_reference: log[0]!.container_reference
        })
        const latest = { organisation_id: "org-old", latest: true, take: "oldest", limit: 100 } as const
        expect(yield* instance.messages.list(latest)).toEqual(selectMessages(log, latest))
        yield* commit(instance.store, {
          job_id: yield* enqueue(instance.queue, "org-old"),
          organisation_id: "org-old",
          messages: [later]
        })
        expect(yield* instance.messages.list(latest)).toEqual(
          selectMessages([...log, { ...later, seq: log.length + 1 }], latest)
        )
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "target references: the upgrade fills them from the query of every target indexed before it",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const references = Object.keys(migrations).find((k) => k.endsWith("_tracking_target_references"))!
        const before = targetsIndexedBefore("org-old")
        yield* Effect.gen(function*() {
          const sql = yield* PgClient.PgClient
          yield* Migrator.make({})({
            loader: PgMigrator.fromRecord(
              Object.fromEntries(Object.entries(migrations).filter(([k]) => k < references))
            ),
            table: migrationsTable
          })
          yield* sql`INSERT INTO tracking_targets ${sql.insert(before.rows)}`
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(test.url) })), Effect.scoped)
        const instance = yield* open(test)
        expect(yield* before.answers.pipe(Effect.provideService(TrackingStore.TrackingStore, instance.tracking)))
          .toEqual(before.expected)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("settings: racing processes all get the value stored first", () =>
    Effect.gen(function*() {
      const test = yield* makeTestSchema()
      const instances = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
      const answers = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => instances[i % 3]!.settings.getOrCreate("cursor-secret", `value-${i}`)),
        { concurrency: "unbounded" }
      )
      expect(new Set(answers).size).toBe(1)
      expect(yield* instances[2]!.settings.getOrCreate("cursor-secret", "another")).toBe(answers[0])
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "connection failures are a StorageError of PgStorage.open; layerConfig reads its options",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Layer.build(PgStorage.layer({
          url: "postgres://postgres@127.0.0.1:1/none",
          connectTimeout: Duration.seconds(2)
        })))
        expect([error._tag, error.operation]).toEqual(["StorageError", "PgStorage.open"])
        const invalid = yield* Effect.flip(
          Layer.build(PgStorage.layer({ url: "postgres://x/y", schema: "Robert'); DROP" }))
        )
        expect(invalid.operation).toBe("PgStorage.open")

        const test = yield* makeTestSchema()
        const configured = PgStorage.layerConfig({
          url: Config.redacted("DATABASE_URL"),
          schema: Config.string("DATABASE_SCHEMA")
        }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
          new Map([
            ["DATABASE_URL", test.baseUrl],
            ["DATABASE_SCHEMA", test.schema]
          ])
        ))))
        const answer = yield* Effect.flatMap(Storage.Settings, (s) => s.getOrCreate("n", "v")).pipe(
          Effect.provide(configured)
        )
        expect(answer).toBe("v")
      }).pipe(Effect.scoped),
    30_000
  )
})
