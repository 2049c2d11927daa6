import { describe, expect, it } from "@effect/vitest"
import type { Automation, Delivery, StoredMessage } from "@tradeflow/core"
import { deliveryContract, freshId, makeAutomation, makeMessage } from "@tradeflow/core/test-kit"
import { Effect, Fiber, Option, Stream } from "effect"
import { layerTest, makeTestSchema, openInstance, type TestSchema } from "./TestDatabase.js"

deliveryContract("postgres", layerTest)

const at = 1_700_000_000_000

const open = (test: TestSchema) => openInstance(test, 4)

type Instance = Effect.Effect.Success<ReturnType<typeof open>>

/** Queues a job and commits these messages with the automations in the outbox. */
const commitWith = (
  instance: Instance,
  org: string,
  messages: ReadonlyArray<StoredMessage.NewMessage>,
  automations: ReadonlyArray<Automation.Automation>
) =>
  Effect.gen(function*() {
    const job = yield* instance.queue.enqueue({
      organisation_id: org,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: at
    })
    if (job._tag !== "Enqueued") return yield* Effect.dieMessage(`expected Enqueued, got ${job._tag}`)
    return yield* instance.store.commit({
      job_id: job.id,
      organisation_id: org,
      upserts: [],
      deletes: [],
      messages,
      result: { count: 0 },
      ...(automations.length === 0 ? {} : {
        outbox: {
          automations: automations.map((a) => ({ id: a.id, format: a.format, types: a.types })),
          documents: new Map(),
          at
        }
      })
    })
  })

const milestone = (hash: string, reference: string) =>
  makeMessage(hash, { type: "CONTAINER_MILESTONE", tradeflow_reference: reference, container_reference: "MSCU1234565" })

const outcome = (d: Delivery.ClaimedDelivery, status: Delivery.AttemptStatus): Delivery.AttemptResult => ({
  delivery_id: d.id,
  claim: d.claim,
  at,
  status,
  response_status: status === "delivered" ? 204 : 500,
  error: status === "delivered" ? null : "HTTP 500",
  response_body: null,
  retry_at: status === "failed" ? at : null,
  disable: null
})

describe("PgStorage deliveries on PostgreSQL", () => {
  it.live("0003 creates the outbox tables and their indexes", () =>
    Effect.gen(function*() {
      const test = yield* makeTestSchema()
      const { sql } = yield* open(test)
      const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM tradeflow_migrations ORDER BY 1`
      expect(applied.map((m) => m.migration_id)).toContain(3)
      const indexes = yield* sql<{ indexname: string }>`SELECT indexname FROM pg_indexes
        WHERE schemaname = ${test.schema} AND tablename IN ('deliveries', 'delivery_attempts') ORDER BY indexname`
      expect(indexes.map((i) => i.indexname)).toEqual([
        "deliveries_automation",
        "deliveries_dead",
        "deliveries_due",
        "deliveries_head",
        "deliveries_pending",
        "deliveries_pkey",
        "deliveries_tradeflow",
        "delivery_attempts_at",
        "delivery_attempts_log",
        "delivery_attempts_pkey"
      ])
    }).pipe(Effect.scoped))

  it.live(
    "three processes, six claimers: no delivery is ever held twice, each (automation, tradeflow) in order",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const instances = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
        const org = freshId("org")
        const automations = [
          makeAutomation(org, { enabled: true, created_at: 1 }),
          makeAutomation(org, { enabled: true, created_at: 2 })
        ]
        for (const a of automations) yield* instances[0]!.automations.put(a)
        const references = Array.from({ length: 5 }, (_, i) => `TF-${i}`)
        for (let round = 0; round < 4; round++) {
          const messages = references.flatMap((r) => [milestone(`${r}-${round}-a`, r), milestone(`${r}-${round}-b`, r)])
          expect(yield* commitWith(instances[round % 3]!, org, messages, automations)).toBe(true)
        }
        const planned = (yield* Effect.forEach(automations, (a) => instances[1]!.deliveries.list(a.id, 1_000))).flat()
        expect(planned.length).toBe(2 * references.length * 8)

        const held = new Set<string>()
        const overlaps: Array<string> = []
        const attempts = new Map<number, number>()
        const delivered: Array<Delivery.Delivery> = []
        const worker = (n: number) =>
          Effect.gen(function*() {
            const { deliveries } = instances[n % 3]!
            while (delivered.length < planned.length) {
              const claimed = yield* deliveries.claim({ worker: `w${n}`, limit: 3, leaseMillis: 600_000, now: at })
              for (const d of claimed) {
                const pair = `${d.automation_id}/${d.tradeflow_reference}`
                if (held.has(pair)) overlaps.push(`${pair} #${d.id}`)
                held.add(pair)
              }
              yield* Effect.yieldNow()
              const results = claimed.map((d) => {
                const tries = (attempts.get(d.id) ?? 0) + 1
                attempts.set(d.id, tries)
                return outcome(d, d.seq! % 3 === 0 && tries === 1 ? "failed" : "delivered")
              })
              claimed.forEach((d, i) => {
                if (results[i]!.status === "delivered") delivered.push(d)
              })
              for (const d of claimed) held.delete(`${d.automation_id}/${d.tradeflow_reference}`)
              expect(yield* deliveries.record(results)).toEqual(results.map(() => true))
              if (claimed.length === 0) yield* Effect.sleep("5 millis")
            }
          })
        yield* Effect.all(Array.from({ length: 6 }, (_, n) => worker(n)), { concurrency: "unbounded", discard: true })

        expect(overlaps).toEqual([])
        expect(delivered.map((d) => d.id).sort((x, y) => x - y)).toEqual(planned.map((d) => d.id).sort((x, y) => x - y))
        for (const a of automations) {
          for (const r of references) {
            const seqs = delivered.filter((d) => d.automation_id === a.id && d.tradeflow_reference === r).map((d) =>
              d.seq
            )
            expect(seqs.length).toBe(8)
            expect(seqs).toEqual([...seqs].sort((x, y) => x! - y!))
          }
          const stored = yield* instances[2]!.deliveries.list(a.id, 1_000)
          expect(stored.every((d) => d.status === "delivered" && d.attempt === (d.seq! % 3 === 0 ? 2 : 1))).toBe(true)
          expect((yield* instances[2]!.deliveries.log(a.id, 1_000)).length).toBe(
            stored.reduce((n, d) => n + d.attempt, 0)
          )
        }
        expect(yield* instances[0]!.deliveries.claim({ worker: "late", limit: 100, leaseMillis: 1_000, now: at + 1 }))
          .toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "wakeups: commits with deliveries, enqueues and retries in one process wake another, on commit only",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const elsewhere = yield* makeTestSchema()
        const [a, b] = yield* Effect.all([open(test), open(test)], { concurrency: "unbounded" })
        const stranger = yield* open(elsewhere)
        const org = freshId("org")
        const automation = makeAutomation(org, { enabled: true })
        yield* a!.automations.put(automation)
        const count = (s: Stream.Stream<void, unknown>) =>
          Effect.fork(s.pipe(Stream.interruptWhen(Effect.sleep("2 seconds")), Stream.runCount))
        const woken = yield* Effect.fork(Stream.runHead(b!.deliveries.wakeups))
        const counting = yield* count(b!.deliveries.wakeups)
        const strangerCount = yield* count(stranger.deliveries.wakeups)
        const jobsCount = yield* count(b!.queue.wakeups)
        yield* Effect.sleep("200 millis")

        expect(yield* commitWith(a!, org, [milestone("m1", "TF-1")], [automation])).toBe(true)
        expect(yield* Fiber.join(woken).pipe(Effect.timeout("5 seconds"))).toEqual(Option.some(undefined))
        expect(yield* commitWith(a!, org, [milestone("m2", "TF-1")], [])).toBe(true)
        const test1 = yield* a!.deliveries.enqueue({
          automation_id: automation.id,
          organisation_id: org,
          tradeflow_reference: "TEST-1",
          message_hash: "t1",
          seq: null,
          body: "{}",
          test: true,
          created_at: at
        })
        yield* a!.sql.withTransaction(Effect.zipRight(
          a!.deliveries.enqueue({ ...test1, message_hash: "t2" }),
          Effect.fail("rolled back")
        )).pipe(Effect.ignore)
        const [first] = yield* a!.deliveries.claim({ worker: "w", limit: 1, leaseMillis: 1_000, now: at })
        if (first === undefined) return yield* Effect.dieMessage("nothing claimed")
        expect(yield* a!.deliveries.retry(first.id, at)).toBe("not-retryable")
        expect(yield* a!.deliveries.record([outcome(first, "dead")])).toEqual([true])
        expect(yield* a!.deliveries.retry(first.id, at + 1)).toBe("retried")

        expect(yield* Fiber.join(counting)).toBe(3)
        expect(yield* Fiber.join(strangerCount)).toBe(0)
        expect(yield* Fiber.join(jobsCount)).toBe(2)
        expect((yield* b!.deliveries.list(automation.id, 10)).map((d) => d.message_hash)).toEqual(["m1", "t1"])
      }).pipe(Effect.scoped),
    30_000
  )

  /**
   * A schema whose delivery_attempts refuse a row with the response body "poison", and one claimed
   * delivery of each of three tenants' automations.
   */
  const poisonedTenants = Effect.gen(function*() {
    const test = yield* makeTestSchema()
    const instance = yield* open(test)
    const { automations, deliveries, sql } = instance
    yield* sql.unsafe(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.response_body = 'poison' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`)
    yield* sql`CREATE TRIGGER refuse_poison BEFORE INSERT ON delivery_attempts FOR EACH ROW EXECUTE FUNCTION refuse_poison()`
    const tenants = [freshId("org"), freshId("org"), freshId("org")]
    const own = tenants.map((org) => makeAutomation(org, { enabled: true }))
    for (const [i, org] of tenants.entries()) {
      yield* automations.put(own[i]!)
      yield* commitWith(instance, org, [milestone(`m${i}`, "TF-1")], [own[i]!])
    }
    const claimed = yield* deliveries.claim({ worker: "w", limit: 10, leaseMillis: 60_000, now: at })
    expect(claimed.map((d) => d.organisation_id)).toEqual(tenants)
    return { claimed, deliveries, own, tenants }
  })

  it.live(
    "a row the database refuses costs no other tenant its record; it is recorded without its texts",
    () =>
      Effect.gen(function*() {
        const { claimed, deliveries, own, tenants } = yield* poisonedTenants
        const answers = yield* deliveries.record(claimed.map((d, i) => ({
          ...outcome(d, i === 1 ? "failed" : "delivered"),
          response_body: i === 1 ? "poison" : "ok"
        })))
        expect(answers).toEqual([true, true, true])
        const logs = yield* Effect.forEach(own, (a) => deliveries.log(a.id, 10))
        expect(logs.map((log) => log.map((e) => [e.status, e.error, e.response_body]))).toEqual([
          [["delivered", null, "ok"]],
          [["failed", "the result of this attempt could not be stored as it was", null]],
          [["delivered", null, "ok"]]
        ])
        const again = yield* deliveries.claim({ worker: "w", limit: 10, leaseMillis: 60_000, now: at })
        expect(again.map((d) => [d.organisation_id, d.attempt])).toEqual([[tenants[1], 1]])
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "recordAndClaim: a row the database refuses fails its transaction; the results are recorded on their own, then the claim runs",
    () =>
      Effect.gen(function*() {
        const { claimed, deliveries, own, tenants } = yield* poisonedTenants
        const { claimed: again, recorded } = yield* deliveries.recordAndClaim(
          claimed.map((d, i) => ({
            ...outcome(d, i === 1 ? "failed" : "delivered"),
            response_body: i === 1 ? "poison" : "ok"
          })),
          { worker: "w", limit: 10, leaseMillis: 60_000, now: at }
        )
        expect(recorded).toEqual([true, true, true])
        const logs = yield* Effect.forEach(own, (a) => deliveries.log(a.id, 10))
        expect(logs.map((log) => log.map((e) => [e.status, e.error, e.response_body]))).toEqual([
          [["delivered", null, "ok"]],
          [["failed", "the result of this attempt could not be stored as it was", null]],
          [["delivered", null, "ok"]]
        ])
        expect(again.map((d) => [d.organisation_id, d.attempt])).toEqual([[tenants[1], 1]])
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "remove racing commits and attempts in other processes leaves no delivery behind",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const [a, b, c] = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
        for (let round = 0; round < 8; round++) {
          const org = freshId("org")
          const automation = makeAutomation(org, { enabled: true })
          yield* a!.automations.put(automation)
          yield* commitWith(a!, org, [milestone(`seed-${round}`, "TF-0")], [automation])
          const claimed = yield* a!.deliveries.claim({ worker: "w", limit: 1_000, leaseMillis: 60_000, now: at })
          const mine = claimed.filter((d) => d.automation_id === automation.id)
          const [removed] = yield* Effect.all([
            c!.automations.remove(automation.id),
            commitWith(b!, org, Array.from({ length: 5 }, (_, i) => milestone(`r${round}-${i}`, `TF-${i}`)), [
              automation
            ]),
            a!.deliveries.record(mine.map((d) => outcome(d, "failed")))
          ], { concurrency: "unbounded" })
          expect(removed).toBe(true)
          expect(yield* a!.deliveries.list(automation.id, 100)).toEqual([])
          expect(yield* a!.deliveries.log(automation.id, 100)).toEqual([])
          expect(yield* a!.automations.get(automation.id)).toEqual(Option.none())
        }
      }).pipe(Effect.scoped),
    60_000
  )
})
