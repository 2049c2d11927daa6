/**
 * The storage contract of the webhook outbox (`TradeflowStore.commit`'s deliveries and the
 * `DeliveryStore` port): one suite every storage adapter must pass, beside `storageContract`.
 *
 * Claims are global, so every test claims with a large limit, keeps its own automations'
 * deliveries, and removes its automations at the end. Instants are passed explicitly (`now`), so
 * nothing here sleeps.
 *
 * @module
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, type Layer, Option, Stream } from "effect"
import type { Automation } from "../src/Automation.js"
import { AutomationStore } from "../src/AutomationStore.js"
import type { AttemptResult, ClaimedDelivery, Outbox, OutboxTarget } from "../src/Delivery.js"
import { DeliveryStore } from "../src/DeliveryStore.js"
import { JobQueue } from "../src/JobQueue.js"
import { RetentionStore } from "../src/RetentionStore.js"
import type { Storage } from "../src/Storage.js"
import type { NewMessage } from "../src/StoredMessage.js"
import { type Commit, TradeflowStore } from "../src/TradeflowStore.js"
import {
  commitOf,
  freshId,
  makeAutomation,
  makeMessage,
  makeTradeflow,
  type StorageContractOptions
} from "./StorageContract.js"

const ports = Effect.all({
  queue: JobQueue,
  store: TradeflowStore,
  automations: AutomationStore,
  deliveries: DeliveryStore
})

const at = 1_700_000_000_000

const target = (a: Automation): OutboxTarget => ({ id: a.id, format: a.format, types: a.types })

const outboxOf = (automations: ReadonlyArray<Automation>, documents: Record<string, string> = {}): Outbox => ({
  automations: automations.map(target),
  documents: new Map(Object.entries(documents)),
  at
})

/** Queues a job of the organisation; answers its id. */
const enqueueJob = (organisation_id: string) =>
  Effect.gen(function*() {
    const enqueued = yield* (yield* JobQueue).enqueue({
      organisation_id,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: at
    })
    if (enqueued._tag !== "Enqueued") throw new Error("expected Enqueued")
    return enqueued.id
  })

/** Queues a job and commits it with these messages (and changes); answers the commit's answer. */
const commitWith = (
  organisation_id: string,
  messages: ReadonlyArray<NewMessage>,
  outbox: Outbox | undefined,
  changes: Partial<Pick<Commit, "upserts" | "deletes">> = {}
) =>
  Effect.gen(function*() {
    const { store } = yield* ports
    return yield* store.commit({
      job_id: yield* enqueueJob(organisation_id),
      organisation_id,
      upserts: changes.upserts ?? [],
      deletes: changes.deletes ?? [],
      messages,
      result: { count: 0 },
      ...(outbox === undefined ? {} : { outbox })
    })
  })

const milestone = (hash: string, reference = "TF-1") =>
  makeMessage(hash, { type: "CONTAINER_MILESTONE", tradeflow_reference: reference, container_reference: "MSCU1234565" })

/** Stores enabled automations of a fresh organisation. */
const setup = (count: number, fields: Partial<Automation> = {}) =>
  Effect.gen(function*() {
    const { automations } = yield* ports
    const org = freshId("org")
    const created = Array.from({ length: count }, (_, i) =>
      makeAutomation(org, { enabled: true, created_at: i, ...fields }))
    for (const a of created) {
      yield* automations.put(a)
    }
    return { org, automations: created }
  })

const teardown = (automations: ReadonlyArray<Automation>) =>
  Effect.flatMap(AutomationStore, (store) => Effect.forEach(automations, (a) => store.remove(a.id), { discard: true }))

/** Claims at `now` and keeps these automations' deliveries. */
const claimOf = (automations: ReadonlyArray<Automation>, now: number, leaseMillis = 60_000, worker = "w1") =>
  Effect.flatMap(DeliveryStore, (store) => store.claim({ worker, limit: 100_000, leaseMillis, now })).pipe(
    Effect.map((claimed) => {
      expect(claimed.map((d) => d.id)).toEqual([...claimed.map((d) => d.id)].sort((a, b) => a - b))
      const ids = new Set(automations.map((a) => a.id))
      return claimed.filter((d) => ids.has(d.automation_id))
    })
  )

const result = (
  d: ClaimedDelivery,
  fields: Partial<AttemptResult> & Pick<AttemptResult, "status" | "at">
): AttemptResult => ({
  delivery_id: d.id,
  claim: d.claim,
  response_status: null,
  error: null,
  response_body: null,
  retry_at: null,
  disable: null,
  ...fields
})

const recordOne = (r: AttemptResult) =>
  Effect.flatMap(DeliveryStore, (store) => store.record([r])).pipe(Effect.map((answers) => answers[0]))

/**
 * Registers the outbox contract tests for an adapter; `layer` is built once for the suite. Give
 * it a database no live delivery worker uses.
 */
export const deliveryContract = (
  name: string,
  layer: Layer.Layer<Storage, unknown>,
  options: Pick<StorageContractOptions, "numRuns"> = {}
): void =>
  sharedLayer(layer, { timeout: "30 seconds", excludeTestServices: true })(`outbox contract: ${name}`, (it) => {
    const numRuns = options.numRuns ?? 25
    it.effect("outbox: a commit writes a delivery per inserted message of each enabled automation's types", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(2)
        const [all, milestones] = automations as [Automation, Automation]
        const narrow = { ...milestones, types: ["CONTAINER_MILESTONE" as const] }
        yield* (yield* AutomationStore).put(narrow)
        const messages = [
          makeMessage("s1", { type: "BASIC_STATUS" }),
          milestone("m1"),
          makeMessage("c1", { type: "SHIPMENT_CHANGE" }),
          milestone("m1"),
          makeMessage("l1", { type: "LOCATION_UPDATE", tradeflow_reference: "TF-2" })
        ]
        expect(yield* commitWith(org, messages, outboxOf([all, narrow]))).toBe(true)
        expect(yield* commitWith(org, [milestone("m1"), milestone("m2")], outboxOf([all, narrow]))).toBe(true)
        const ofAll = yield* deliveries.list(all.id, 100)
        expect(ofAll.map((d) => [d.message_hash, d.seq, d.tradeflow_reference])).toEqual([
          ["m1", 2, "TF-1"],
          ["c1", 3, "TF-1"],
          ["l1", 4, "TF-2"],
          ["m2", 5, "TF-1"]
        ])
        expect(
          ofAll.every((d) =>
            d.status === "pending" && d.attempt === 0 && d.retries === 0 && d.body === null && !d.test &&
            d.created_at === at && d.next_attempt_at === at && d.schedule_started_at === null &&
            d.organisation_id === org && d.automation_id === all.id
          )
        ).toBe(true)
        expect((yield* deliveries.list(narrow.id, 100)).map((d) => d.message_hash)).toEqual(["m1", "m2"])
        expect(Option.map(yield* deliveries.get(ofAll[0]?.id ?? -1), (d) => d.message_hash)).toEqual(Option.some("m1"))
        yield* teardown(automations)
      }))

    it.effect("outbox: nothing without an outbox, for an automation removed before the commit, or for a refused commit", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries, queue } = yield* ports
        const { automations, org } = yield* setup(2)
        const [kept, removed] = automations as [Automation, Automation]
        expect(yield* commitWith(org, [milestone("a")], undefined)).toBe(true)
        yield* store.remove(removed.id)
        expect(yield* commitWith(org, [milestone("b")], outboxOf([kept, removed]))).toBe(true)
        const jobId = yield* enqueueJob(org)
        yield* queue.fail(jobId, "gone")
        const refused = yield* (yield* TradeflowStore).commit({
          job_id: jobId,
          organisation_id: org,
          upserts: [],
          deletes: [],
          messages: [milestone("c")],
          result: { count: 0 },
          outbox: outboxOf([kept])
        })
        expect(refused).toBe(false)
        expect((yield* deliveries.list(kept.id, 100)).map((d) => d.message_hash)).toEqual(["b"])
        expect(yield* deliveries.list(removed.id, 100)).toEqual([])
        yield* teardown(automations)
      }))

    it.effect("outbox: commitAll of a job that delivers a tradeflow's messages and a later one deleting it leaves no delivery of it", () =>
      Effect.gen(function*() {
        const { deliveries, store } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const ids: Array<number> = []
        for (let i = 0; i < 3; i++) ids.push(yield* enqueueJob(org))
        const commit = (job_id: number, changes: Partial<Commit>) => commitOf(job_id, org, changes)
        expect(
          yield* store.commitAll([
            commit(ids[0]!, { messages: [milestone("a"), milestone("k", "TF-2")], outbox: outboxOf([a]) }),
            commit(ids[1]!, { deletes: ["TF-1"] }),
            commit(ids[2]!, { messages: [milestone("b")], outbox: outboxOf([a]) })
          ])
        ).toBe(true)
        expect((yield* deliveries.list(a.id, 100)).map((d) => d.message_hash).sort()).toEqual(["b", "k"])
        yield* teardown(automations)
      }))

    it.effect("outbox: the tradeflow format gets one delivery per tradeflow and commit, with the document and the newest hash", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1, {
          format: "tradeflow",
          types: ["CONTAINER_MILESTONE", "SHIPMENT_CHANGE"]
        })
        const [a] = automations as [Automation]
        const messages = [
          milestone("m1", "TF-1"),
          milestone("m2", "TF-2"),
          makeMessage("c1", { type: "SHIPMENT_CHANGE", tradeflow_reference: "TF-1" }),
          makeMessage("l1", { type: "LOCATION_UPDATE", tradeflow_reference: "TF-3" }),
          makeMessage("s1", { type: "BASIC_STATUS", tradeflow_reference: "TF-2" })
        ]
        const documents = { "TF-1": "{\"doc\":1}", "TF-2": "{\"doc\":2}", "TF-3": "{\"doc\":3}" }
        expect(yield* commitWith(org, messages, outboxOf([a], documents))).toBe(true)
        const listed = yield* deliveries.list(a.id, 100)
        expect(listed.map((d) => [d.tradeflow_reference, d.message_hash, d.seq, d.body])).toEqual([
          ["TF-2", "m2", 2, "{\"doc\":2}"],
          ["TF-1", "c1", 3, "{\"doc\":1}"]
        ])
        const claimed = yield* claimOf([a], at)
        expect(claimed.map((d) => d.body)).toEqual(["{\"doc\":2}", "{\"doc\":1}"])
        yield* teardown(automations)
      }))

    it.effect("backlog: pending deliveries counted, the oldest by id; a delivered one leaves it", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const before = yield* deliveries.backlog
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const send = (hash: string, created_at: number) =>
          deliveries.enqueue({
            automation_id: a.id,
            organisation_id: org,
            tradeflow_reference: "TEST-1",
            message_hash: hash,
            seq: null,
            body: "{}",
            test: true,
            created_at
          })
        yield* send("b1", at + 5_000)
        yield* send("b2", at)
        const queued = yield* deliveries.backlog
        expect(queued.pending - before.pending).toBe(2)
        expect(queued.oldest_created_at).toBe(before.oldest_created_at ?? at + 5_000)
        const [head] = yield* claimOf(automations, at + 10_000)
        yield* deliveries.record([{
          delivery_id: head!.id,
          claim: head!.claim,
          at: at + 10_000,
          status: "delivered",
          response_status: 200,
          error: null,
          response_body: null,
          retry_at: null,
          disable: null
        }])
        expect((yield* deliveries.backlog).pending - before.pending).toBe(1)
        yield* teardown(automations)
        expect((yield* deliveries.backlog).pending).toBe(before.pending)
      }))

    it.effect("claim: heads of each (automation, tradeflow) only, due, unleased, enabled; with the message body", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries } = yield* ports
        const { automations, org } = yield* setup(2)
        const [a, b] = automations as [Automation, Automation]
        const messages = [milestone("x1", "TF-1"), milestone("x2", "TF-1"), milestone("y1", "TF-2")]
        yield* commitWith(org, messages, outboxOf([a, b]))
        const first = yield* claimOf(automations, at)
        expect(first.map((d) => [d.automation_id, d.message_hash])).toEqual([
          [a.id, "x1"],
          [a.id, "y1"],
          [b.id, "x1"],
          [b.id, "y1"]
        ])
        expect(first.every((d) => d.claim === 1)).toBe(true)
        expect(first[0]?.body).toBe(messages[0]?.body)
        expect(yield* claimOf(automations, at + 59_999)).toEqual([])
        const again = yield* claimOf(automations, at + 60_000, 1_000, "w2")
        expect(again.map((d) => [d.message_hash, d.claim])).toEqual([["x1", 2], ["y1", 2], ["x1", 2], ["y1", 2]])
        expect(yield* claimOf(automations, at + 60_999)).toEqual([])

        yield* store.put({ ...b, enabled: false })
        const later = at + 1_000_000
        expect((yield* claimOf(automations, later)).map((d) => [d.automation_id, d.message_hash])).toEqual([
          [a.id, "x1"],
          [a.id, "y1"]
        ])
        const test = yield* deliveries.enqueue({
          automation_id: b.id,
          organisation_id: org,
          tradeflow_reference: "TEST-1",
          message_hash: "t1",
          seq: null,
          body: "{\"test\":true}",
          test: true,
          created_at: later
        })
        expect(test).toMatchObject({
          status: "pending",
          attempt: 0,
          test: true,
          next_attempt_at: later,
          body: "{\"test\":true}"
        })
        const withTest = yield* claimOf(automations, later + 120_000)
        expect(withTest.map((d) => [d.automation_id, d.message_hash, d.body])).toEqual([
          [a.id, "x1", messages[0]?.body],
          [a.id, "y1", messages[2]?.body],
          [b.id, "t1", "{\"test\":true}"]
        ])
        yield* teardown(automations)
      }))

    it.effect("claim: a delivery whose message is gone is not claimed, holds those after it, and costs no other delivery its claim", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const messages = [milestone("x1", "TF-1")]
        yield* commitWith(org, messages, outboxOf([a]), { upserts: [makeTradeflow(org, "TF-1", [])] })
        const [stored] = yield* deliveries.list(a.id, 100)
        const send = (reference: string, body: string | null) =>
          deliveries.enqueue({
            automation_id: a.id,
            organisation_id: org,
            tradeflow_reference: reference,
            message_hash: `${reference}/${body}`,
            seq: body === null ? stored?.seq ?? null : null,
            body,
            test: true,
            created_at: at
          })
        const bodiless = yield* send("TEST-1", null)
        const first = yield* claimOf([a], at)
        expect(first.map((d) => [d.id, d.body])).toEqual([[stored?.id, messages[0]?.body], [
          bodiless.id,
          messages[0]?.body
        ]])
        yield* deliveries.record(first.map((d) => result(d, { status: "failed", at, retry_at: at + 1 })))

        expect(yield* commitWith(org, [], undefined, { deletes: ["TF-1"] })).toBe(true)
        expect((yield* deliveries.list(a.id, 100)).map((d) => d.id)).toEqual([bodiless.id])
        const held = yield* send("TEST-1", "{\"held\":true}")
        const other = yield* send("TEST-2", "{\"other\":true}")
        const later = yield* claimOf([a], at + 120_000)
        expect(later.map((d) => [d.id, d.body])).toEqual([[other.id, "{\"other\":true}"]])
        expect((yield* deliveries.get(held.id)).pipe(Option.map((d) => d.status))).toEqual(Option.some("pending"))
        expect((yield* deliveries.get(bodiless.id)).pipe(Option.map((d) => [d.status, d.attempt]))).toEqual(
          Option.some(["pending", 1])
        )
        yield* teardown(automations)
      }))

    it.effect("retention: attempts and dead deliveries older than the bound go, oldest first, in batches; the rest stay", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const retention = yield* RetentionStore
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const base = -9e15 + Math.floor(Math.random() * 1e9)
        const make = (n: number) =>
          deliveries.enqueue({
            automation_id: a.id,
            organisation_id: org,
            tradeflow_reference: `TEST-R${n}`,
            message_hash: `r${n}`,
            seq: null,
            body: "{}",
            test: true,
            created_at: base + 10 * n
          })
        yield* Effect.forEach([1, 2, 3], make)
        const claimed = yield* claimOf([a], base + 100)
        const [d1, d2, d3] = [1, 2, 3].map((n) => claimed.find((d) => d.message_hash === `r${n}`)!)
        expect(yield* recordOne(result(d1!, { status: "dead", at: base + 200, error: "gave up" }))).toBe(true)
        expect(
          yield* recordOne(
            result(d2!, { status: "failed", at: base + 300, error: "HTTP 500", retry_at: base + 50_000 })
          )
        ).toBe(true)
        expect(yield* recordOne(result(d3!, { status: "delivered", at: base + 5_000 }))).toBe(true)
        const logged = () => Effect.map(deliveries.log(a.id, 100), (log) => log.map((e) => e.message_hash).sort())
        expect(yield* logged()).toEqual(["r1", "r2", "r3"])

        expect(yield* retention.prune("dead_deliveries", base + 100, 10)).toBe(1)
        expect(Option.isNone(yield* deliveries.get(d1!.id))).toBe(true)
        expect(yield* logged()).toEqual(["r2", "r3"])
        expect(yield* retention.prune("dead_deliveries", base + 100, 10)).toBe(0)

        expect(yield* retention.prune("delivery_attempts", base + 1_000, 1)).toBe(1)
        expect(yield* logged()).toEqual(["r3"])
        expect(yield* retention.prune("delivery_attempts", base + 1_000, 10)).toBe(0)
        expect(Option.getOrThrow(yield* deliveries.get(d2!.id))).toMatchObject({ status: "pending", attempt: 1 })
        expect(Option.getOrThrow(yield* deliveries.get(d3!.id))).toMatchObject({ status: "delivered" })
        yield* teardown(automations)
      }))

    it.effect("record: fenced by the claim; outcomes move the head, the schedule and the log", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, [milestone("x1"), milestone("x2"), milestone("x3")], outboxOf([a]))
        const [x1] = yield* claimOf([a], at, 1_000)
        if (x1 === undefined) throw new Error("no claim")
        const [stolen] = yield* claimOf([a], at + 1_000)
        if (stolen === undefined) throw new Error("no reclaim")
        expect(yield* recordOne(result(x1, { status: "delivered", at: at + 1_001 }))).toBe(false)

        expect(
          yield* recordOne(result(stolen, {
            status: "failed",
            at: at + 2_000,
            response_status: 500,
            error: "HTTP 500",
            response_body: "oops",
            retry_at: at + 7_000
          }))
        ).toBe(true)
        expect(yield* recordOne(result(stolen, { status: "delivered", at: at + 2_001 }))).toBe(false)
        const failed = Option.getOrThrow(yield* deliveries.get(stolen.id))
        expect(failed).toMatchObject({
          status: "pending",
          attempt: 1,
          retries: 1,
          schedule_started_at: at + 2_000,
          next_attempt_at: at + 7_000
        })
        const failing = Option.getOrThrow(yield* (yield* AutomationStore).get(a.id))
        expect(failing.failing_since).toBe(at + 2_000)
        expect(yield* claimOf([a], at + 6_999)).toEqual([])

        const [retry] = yield* claimOf([a], at + 7_000)
        expect(retry?.message_hash).toBe("x1")
        if (retry === undefined) throw new Error("no retry")
        expect(yield* recordOne(result(retry, { status: "delivered", at: at + 8_000, response_status: 204 }))).toBe(
          true
        )
        expect(Option.getOrThrow(yield* deliveries.get(retry.id))).toMatchObject({
          status: "delivered",
          attempt: 2,
          retries: 1
        })
        expect(Option.getOrThrow(yield* (yield* AutomationStore).get(a.id)).failing_since).toBe(null)

        const [x2] = yield* claimOf([a], at + 8_000)
        expect(x2?.message_hash).toBe("x2")
        if (x2 === undefined) throw new Error("no x2")
        expect(yield* recordOne(result(x2, { status: "dead", at: at + 9_000, error: "gave up" }))).toBe(true)
        expect(Option.getOrThrow(yield* deliveries.get(x2.id)).status).toBe("dead")
        expect((yield* claimOf([a], at + 9_000)).map((d) => d.message_hash)).toEqual(["x3"])

        expect(yield* deliveries.log(a.id, 10)).toEqual([
          {
            id: x2.id,
            message_hash: "x2",
            attempt: 1,
            status: "dead",
            response_status: null,
            error: "gave up",
            response_body: null,
            at: at + 9_000,
            test: false,
            tradeflow_reference: "TF-1",
            type: "CONTAINER_MILESTONE"
          },
          {
            id: x1.id,
            message_hash: "x1",
            attempt: 2,
            status: "delivered",
            response_status: 204,
            error: null,
            response_body: null,
            at: at + 8_000,
            test: false,
            tradeflow_reference: "TF-1",
            type: "CONTAINER_MILESTONE"
          },
          {
            id: x1.id,
            message_hash: "x1",
            attempt: 1,
            status: "failed",
            response_status: 500,
            error: "HTTP 500",
            response_body: "oops",
            at: at + 2_000,
            test: false,
            tradeflow_reference: "TF-1",
            type: "CONTAINER_MILESTONE"
          }
        ])
        expect((yield* deliveries.log(a.id, 2)).map((e) => e.attempt)).toEqual([1, 2])
        yield* teardown(automations)
      }))

    it.effect("record: a batch records each result on its own; disable turns the automation off with its reason", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, [milestone("x1", "TF-1"), milestone("y1", "TF-2")], outboxOf([a]))
        const [x1, y1] = yield* claimOf([a], at)
        if (x1 === undefined || y1 === undefined) throw new Error("no claims")
        const answers = yield* deliveries.record([
          result(x1, {
            status: "failed",
            at: at + 1,
            retry_at: at + 5_000,
            response_status: 410,
            disable: "the receiver answered 410 Gone"
          }),
          result({ ...y1, claim: y1.claim + 1 }, { status: "delivered", at: at + 1 }),
          result(y1, { status: "delivered", at: at + 2 })
        ])
        expect(answers).toEqual([true, false, true])
        const after = Option.getOrThrow(yield* store.get(a.id))
        expect(after).toMatchObject({ enabled: false, disabled_reason: "the receiver answered 410 Gone" })
        expect((yield* store.enabled(org)).map((x) => x.id)).toEqual([])
        expect(yield* claimOf([a], at + 10_000)).toEqual([])
        expect(Option.getOrThrow(yield* deliveries.get(x1.id)).status).toBe("pending")
        yield* store.put({ ...after, enabled: true, disabled_reason: null })
        expect((yield* claimOf([a], at + 10_000)).map((d) => d.message_hash)).toEqual(["x1"])
        yield* teardown(automations)
      }))

    it.effect("record: texts from outside are stored neutralised, and a batch with them records every result", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, [milestone("x1", "TF-1"), milestone("y1", "TF-2")], outboxOf([a]))
        const [x1, y1] = yield* claimOf([a], at)
        if (x1 === undefined || y1 === undefined) throw new Error("no claims")
        const answers = yield* deliveries.record([
          result(x1, {
            status: "failed",
            at: at + 1,
            retry_at: at + 5_000,
            response_status: 500,
            error: "HTTP 500 \u0000\uDC00",
            response_body: `ok\u0000\uD800${"\u00e9".repeat(3_000)}`
          }),
          result(y1, { status: "delivered", at: at + 2, response_status: 200, response_body: "fine \uD83D\uDE00" })
        ])
        expect(answers).toEqual([true, true])
        const log = yield* deliveries.log(a.id, 10)
        expect(log.map((e) => [e.id, e.status, e.error])).toEqual([[y1.id, "delivered", null], [
          x1.id,
          "failed",
          "HTTP 500 \uFFFD\uFFFD"
        ]])
        expect(log[0]?.response_body).toBe("fine \uD83D\uDE00")
        expect(log[1]?.response_body).toBe(`ok\uFFFD\uFFFD${"\u00e9".repeat(2_044)}`)
        expect(new TextEncoder().encode(log[1]?.response_body ?? "").length).toBe(4_096)
        expect(Option.getOrThrow(yield* deliveries.get(x1.id))).toMatchObject({
          status: "pending",
          attempt: 1,
          next_attempt_at: at + 5_000
        })
        expect(Option.getOrThrow(yield* deliveries.get(y1.id))).toMatchObject({ status: "delivered", attempt: 1 })
        yield* teardown(automations)
      }))

    it.effect("recordAndClaim: records as record does, then claims what the record made claimable", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const own = (claimed: ReadonlyArray<ClaimedDelivery>) =>
          claimed.filter((d) => d.automation_id === a.id).map((d) => d.message_hash)
        yield* commitWith(
          org,
          [milestone("x1", "TF-1"), milestone("x2", "TF-1"), milestone("y1", "TF-2")],
          outboxOf([a])
        )
        const [x1, y1] = yield* claimOf([a], at)
        if (x1 === undefined || y1 === undefined) throw new Error("no claims")
        const options = { worker: "w2", limit: 100_000, leaseMillis: 60_000 }
        const first = yield* deliveries.recordAndClaim([
          result(x1, { status: "delivered", at: at + 1, response_status: 200, response_body: "ok\u0000" }),
          result({ ...y1, claim: y1.claim + 1 }, { status: "delivered", at: at + 1 })
        ], { ...options, now: at + 2 })
        expect(first.recorded).toEqual([true, false])
        expect(own(first.claimed)).toEqual(["x2"])
        expect(first.claimed.map((d) => d.id)).toEqual([...first.claimed.map((d) => d.id)].sort((x, y) => x - y))
        expect(Option.getOrThrow(yield* deliveries.get(x1.id))).toMatchObject({ status: "delivered", attempt: 1 })
        expect(Option.getOrThrow(yield* deliveries.get(y1.id))).toMatchObject({ status: "pending", attempt: 0 })
        expect((yield* deliveries.log(a.id, 10)).map((e) => [e.id, e.status, e.response_body])).toEqual([
          [x1.id, "delivered", "ok\uFFFD"]
        ])
        const alone = yield* deliveries.recordAndClaim([], { ...options, now: at + 60_001 })
        expect(alone.recorded).toEqual([])
        expect(own(alone.claimed)).toEqual(["y1"])
        yield* teardown(automations)
      }))

    it.effect("record: only the newest 3 attempts of a delivery keep the receiver's answer; older ones keep the rest", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, [milestone("x1", "TF-1"), milestone("y1", "TF-2")], outboxOf([a]))
        for (let n = 1; n <= 5; n++) {
          const claimed = yield* claimOf([a], at + n * 10)
          expect(claimed.length).toBe(n <= 2 ? 2 : 1)
          yield* deliveries.record(claimed.map((d) =>
            result(d, {
              status: "failed",
              at: at + n * 10,
              retry_at: d.message_hash === "x1" || n === 1 ? at + n * 10 + 1 : at + 1_000_000,
              response_status: 500 + n,
              error: `HTTP ${500 + n}`,
              response_body: `answer ${n} to ${d.message_hash}`
            })
          ))
        }
        const log = [...(yield* deliveries.log(a.id, 100))].reverse()
        expect(log.map((e) => [e.message_hash, e.attempt, e.status, e.response_status, e.error, e.at, e.response_body]))
          .toEqual([
            ["x1", 1, "failed", 501, "HTTP 501", at + 10, null],
            ["y1", 1, "failed", 501, "HTTP 501", at + 10, "answer 1 to y1"],
            ["x1", 2, "failed", 502, "HTTP 502", at + 20, null],
            ["y1", 2, "failed", 502, "HTTP 502", at + 20, "answer 2 to y1"],
            ["x1", 3, "failed", 503, "HTTP 503", at + 30, "answer 3 to x1"],
            ["x1", 4, "failed", 504, "HTTP 504", at + 40, "answer 4 to x1"],
            ["x1", 5, "failed", 505, "HTTP 505", at + 50, "answer 5 to x1"]
          ])
        yield* teardown(automations)
      }))

    it.effect("record: test deliveries leave the automation's health alone", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries } = yield* ports
        const { automations, org } = yield* setup(1, { enabled: false })
        const [a] = automations as [Automation]
        yield* deliveries.enqueue({
          automation_id: a.id,
          organisation_id: org,
          tradeflow_reference: "TEST-1",
          message_hash: "t1",
          seq: null,
          body: "{}",
          test: true,
          created_at: at
        })
        const [t] = yield* claimOf([a], at)
        if (t === undefined) throw new Error("no claim")
        expect(yield* recordOne(result(t, { status: "failed", at: at + 1, retry_at: at + 10, disable: "x" }))).toBe(
          true
        )
        expect(Option.getOrThrow(yield* store.get(a.id))).toMatchObject({ failing_since: null, disabled_reason: null })
        expect((yield* deliveries.log(a.id, 10)).map((e) => [e.status, e.test, e.type])).toEqual([[
          "failed",
          true,
          null
        ]])
        yield* teardown(automations)
      }))

    it.effect("retry: dead or failed deliveries become due now on a fresh schedule; others are left alone", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(
          org,
          [milestone("x1", "TF-1"), milestone("y1", "TF-2"), milestone("z1", "TF-3")],
          outboxOf([a])
        )
        const [x1, y1, z1] = yield* claimOf([a], at)
        if (x1 === undefined || y1 === undefined || z1 === undefined) throw new Error("no claims")
        expect(yield* deliveries.retry(z1.id, at)).toBe("not-retryable")
        yield* deliveries.record([
          result(x1, { status: "dead", at: at + 1 }),
          result(y1, { status: "delivered", at: at + 1 }),
          result(z1, { status: "failed", at: at + 1, retry_at: at + 1_000_000 })
        ])
        expect(yield* deliveries.retry(y1.id, at + 5)).toBe("not-retryable")
        expect(yield* deliveries.retry(x1.id, at + 5)).toBe("retried")
        expect(yield* deliveries.retry(z1.id, at + 5)).toBe("retried")
        expect(yield* deliveries.retry(2_000_000_000, at + 5)).toBe("not-found")
        for (const id of [x1.id, z1.id]) {
          expect(Option.getOrThrow(yield* deliveries.get(id))).toMatchObject({
            status: "pending",
            attempt: 1,
            retries: 0,
            schedule_started_at: null,
            next_attempt_at: at + 5
          })
        }
        expect((yield* claimOf([a], at + 5)).map((d) => d.message_hash)).toEqual(["x1", "z1"])
        yield* teardown(automations)
      }))

    it.effect("deletes: a deleted tradeflow takes its deliveries and their log along; test sends stay", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, [milestone("x1", "TF-1"), milestone("y1", "TF-2")], outboxOf([a]), {
          upserts: [makeTradeflow(org, "TF-1", []), makeTradeflow(org, "TF-2", [])]
        })
        yield* deliveries.enqueue({
          automation_id: a.id,
          organisation_id: org,
          tradeflow_reference: "TF-1",
          message_hash: "t1",
          seq: null,
          body: "{}",
          test: true,
          created_at: at
        })
        for (const round of [1, 2]) {
          const claimed = yield* claimOf([a], at + round)
          yield* deliveries.record(claimed.map((d) => result(d, { status: "delivered", at: at + round })))
        }
        expect((yield* deliveries.log(a.id, 100)).map((e) => e.message_hash).sort()).toEqual(["t1", "x1", "y1"])
        expect(yield* commitWith(org, [], undefined, { deletes: ["TF-1"] })).toBe(true)
        expect((yield* deliveries.list(a.id, 100)).map((d) => d.message_hash)).toEqual(["y1", "t1"])
        expect((yield* deliveries.log(a.id, 100)).map((e) => e.message_hash).sort()).toEqual(["t1", "y1"])
        yield* teardown(automations)
      }))

    it.effect("remove: an automation goes with its deliveries and log", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries } = yield* ports
        const { automations, org } = yield* setup(2)
        const [a, b] = automations as [Automation, Automation]
        yield* commitWith(org, [milestone("x1")], outboxOf([a, b]))
        const claimed = yield* claimOf([a, b], at)
        yield* deliveries.record(claimed.map((d) => result(d, { status: "failed", at: at + 1, retry_at: at + 10 })))
        expect(yield* store.remove(a.id)).toBe(true)
        expect(yield* deliveries.list(a.id, 100)).toEqual([])
        expect(yield* deliveries.log(a.id, 100)).toEqual([])
        const ofA = claimed.find((d) => d.automation_id === a.id)
        expect(yield* deliveries.get(ofA?.id ?? -1)).toEqual(Option.none())
        expect((yield* deliveries.list(b.id, 100)).length).toBe(1)
        expect((yield* deliveries.log(b.id, 100)).length).toBe(1)
        yield* teardown(automations)
      }))

    it.effect("a deleted delivery takes its attempts along, whichever way it goes: a deleted tradeflow, a removed automation, a pruned dead delivery", () =>
      Effect.gen(function*() {
        const { automations: store, deliveries } = yield* ports
        const retention = yield* RetentionStore
        const base = -7e15 + Math.floor(Math.random() * 1e9)
        const { automations, org } = yield* setup(2)
        const [a, b] = automations as [Automation, Automation]
        yield* commitWith(org, [milestone("x1")], outboxOf([a, b]), { upserts: [makeTradeflow(org, "TF-1", [])] })
        const send = (automation: Automation, reference: string) =>
          deliveries.enqueue({
            automation_id: automation.id,
            organisation_id: org,
            tradeflow_reference: reference,
            message_hash: reference,
            seq: null,
            body: "{}",
            test: true,
            created_at: base
          })
        yield* send(a, "TEST-A")
        yield* send(b, "TEST-B")
        const claimed = yield* claimOf([a, b], at)
        expect(claimed.length).toBe(4)
        const answers = yield* deliveries.record(claimed.map((d, i) =>
          d.message_hash === "TEST-B"
            ? result(d, { status: "dead", at: base + i, error: "gave up" })
            : result(d, { status: "failed", at: base + i, retry_at: at + 10 })
        ))
        expect(answers).toEqual([true, true, true, true])
        expect((yield* deliveries.log(a.id, 100)).length + (yield* deliveries.log(b.id, 100)).length).toBe(4)

        expect(yield* commitWith(org, [], undefined, { deletes: ["TF-1"] })).toBe(true)
        expect(yield* retention.prune("dead_deliveries", base + 1, 100)).toBe(1)
        expect(yield* store.remove(a.id)).toBe(true)
        expect(yield* deliveries.list(a.id, 100)).toEqual([])
        expect(yield* deliveries.list(b.id, 100)).toEqual([])
        expect(yield* retention.prune("delivery_attempts", base + 1_000, 100)).toBe(0)
        yield* teardown(automations)
      }))

    it.effect("claim: concurrent claimers never get the same delivery", () =>
      Effect.gen(function*() {
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        yield* commitWith(org, Array.from({ length: 40 }, (_, i) => milestone(`m${i}`, `TF-${i}`)), outboxOf([a]))
        const claims = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) => claimOf([a], at, 60_000, `w${i}`)),
          { concurrency: "unbounded" }
        )
        const ids = claims.flat().map((d) => d.id)
        expect(ids.length).toBe(40)
        expect(new Set(ids).size).toBe(40)
        yield* teardown(automations)
      }))

    it.effect("wakeups: a commit that writes deliveries signals a subscriber", () =>
      Effect.gen(function*() {
        const { deliveries } = yield* ports
        const { automations, org } = yield* setup(1)
        const [a] = automations as [Automation]
        const fiber = yield* deliveries.wakeups.pipe(Stream.take(1), Stream.runDrain, Effect.fork)
        let woke = false
        for (let i = 0; i < 25 && !woke; i++) {
          yield* commitWith(org, [milestone(`w${i}`)], outboxOf([a]))
          woke = Option.isSome(yield* Fiber.join(fiber).pipe(Effect.timeout("200 millis"), Effect.option))
        }
        expect(woke).toBe(true)
        yield* teardown(automations)
      }))

    it.effect.prop(
      "ordering: under any outcomes, each (automation, tradeflow) gets its messages in sequence order, each delivered once",
      [
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.constantFrom("delivered", "failed", "failed", "dead", "lost"), { minLength: 40, maxLength: 40 })
      ],
      ([tradeflowOf, outcomes]) =>
        Effect.gen(function*() {
          const { deliveries } = yield* ports
          const { automations, org } = yield* setup(2)
          const messages = tradeflowOf.map((t, i) => milestone(`m${i}`, `TF-${t}`))
          yield* commitWith(org, messages, outboxOf(automations))
          const seqOf = new Map(messages.map((m, i) => [m.hash, i + 1]))
          const received: Array<[string, string, number]> = []
          let now = at
          for (const outcome of outcomes) {
            const claimed = yield* claimOf(automations, now, 1_000)
            const results: Array<AttemptResult> = []
            for (const d of claimed) {
              if (outcome !== "delivered" && outcome !== "failed" && outcome !== "dead") continue
              if (outcome === "delivered") {
                received.push([d.automation_id, d.tradeflow_reference, seqOf.get(d.message_hash) ?? 0])
              }
              results.push(result(d, { status: outcome, at: now, retry_at: now + 500 }))
            }
            if (results.length > 0) {
              expect((yield* deliveries.record(results)).every((x) => x)).toBe(true)
            }
            now += 1_000
          }
          const delivered = new Set(received.map(([a, , seq]) => `${a}/${seq}`))
          expect(delivered.size).toBe(received.length)
          for (const a of automations) {
            for (const t of new Set(tradeflowOf)) {
              const seqs = received.filter(([x, r]) => x === a.id && r === `TF-${t}`).map(([, , s]) => s)
              expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
            }
            const listed = yield* deliveries.list(a.id, 100)
            for (const d of listed) {
              expect(delivered.has(`${a.id}/${d.seq}`)).toBe(d.status === "delivered")
            }
          }
          yield* teardown(automations)
        }),
      { fastCheck: { numRuns } }
    )
  })
