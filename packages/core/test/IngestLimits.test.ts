import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option, TestClock } from "effect"
import type { ValidationError } from "../src/DownstreamError.js"
import type { Environment } from "../src/Environment.js"
import { Ingest } from "../src/Ingest.js"
import * as IngestLimits from "../src/IngestLimits.js"
import { JobQueue } from "../src/JobQueue.js"
import { MessageStore } from "../src/MessageStore.js"
import * as Processor from "../src/Processor.js"
import * as RenderBudget from "../src/RenderBudget.js"
import * as StoredMessage from "../src/StoredMessage.js"
import type { TrackedEvent, Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import { Worker } from "../src/Worker.js"
import { layer } from "../testing/TestService.js"
import { groups, layer as processorLayer, recordArb } from "./ProcessorKit.js"

const org = "org-caps"
const containerNumber = (i: number) => `ABCU${String(i).padStart(7, "0")}`
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)

const submit = (body: unknown, environment: Environment = "production") =>
  Effect.flatMap(Ingest, (ingest) => ingest.submit({ organisation_id: org, environment, body, form: "any" }))

const refused = (body: unknown, environment: Environment = "production") =>
  Effect.map(Effect.either(submit(body, environment)), (answer): ValidationError => {
    if (Either.isRight(answer) || answer.left._tag !== "ValidationError") {
      throw new Error(`expected a ValidationError, got ${Either.isRight(answer) ? "a 202" : answer.left._tag}`)
    }
    return answer.left
  })

const pendingJobs = Effect.flatMap(JobQueue, (q) => q.pending(1_000))

const drain = Effect.flatMap(Worker, (w) => w.drain)

/** Commits a stored tradeflow as it is, through a job of its own. */
const store = (t: Tradeflow) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const enqueued = yield* queue.enqueue({
      organisation_id: org,
      environment: "production",
      payload: { _tag: "Delete", reference: "none", hard: false },
      received_at: 0
    })
    if (enqueued._tag !== "Enqueued") return yield* Effect.dieMessage("not enqueued")
    yield* (yield* TradeflowStore).commit({
      job_id: enqueued.id,
      organisation_id: org,
      upserts: [t],
      deletes: [],
      messages: [],
      result: { count: 0 }
    })
  })

/** A container event, imported, of container `i`. */
const gateOut = (i: number) => ({
  message: "Gate out empty",
  container_reference: containerNumber(i),
  location_name: "CNSHA",
  event_date: "2026-01-01T00:00:00Z",
  actual: true
})

/** A stored tradeflow at the caps: 1,000 containers and 20,000 imported events (20 per container). */
const atTheCaps = (reference: string): Tradeflow => {
  const incoming = range(0, IngestLimits.maxStoredEvents).map((i): TradeflowMerge.IncomingEvent => ({
    message: `Status ${Math.floor(i / IngestLimits.maxStoredContainers)}`,
    status_code: null,
    container_reference: containerNumber(i % IngestLimits.maxStoredContainers),
    location: "CNSHA",
    event_date: 1_700_000_000_000 + i,
    actual: true,
    source: "import"
  }))
  const events: ReadonlyArray<TrackedEvent> = TradeflowMerge.run(TradeflowMerge.mergeEvents([], incoming, 0, 0))
  return {
    ...TradeflowMerge.empty(org, reference, 0),
    containers: range(0, IngestLimits.maxStoredContainers).map((i) => ({ reference: containerNumber(i) })),
    details: { port_of_loading: "CNSHA", port_of_discharge: "NLRTM" },
    events
  }
}

describe("Ingest: stored caps", () => {
  it.effect("issue 12: a UAT tradeflow of 2,500 containers and 2,500 events is refused 422, naming the record; nothing is queued", () =>
    Effect.gen(function*() {
      const body = [{
        tradeflow_reference: "UAT-BIG",
        container_reference: range(0, 2_500).map(containerNumber),
        port_of_loading: "CNSHA",
        port_of_discharge: "NLRTM",
        events: range(0, 2_500).map((i) => ({ message: "Gate out empty", container_reference: containerNumber(i) }))
      }]
      assert.isAbove(JSON.stringify(body).length, 170_000)
      const error = yield* refused(body, "uat")
      const issue = error.errors.find((e) => e.path.startsWith("/0"))
      assert.isDefined(issue)
      assert.match(issue!.message, /1,000/)
      assert.deepStrictEqual(yield* pendingJobs, [])
    }).pipe(Effect.provide(layer)))

  it.effect("containers: counted against what is stored; a re-post of stored containers passes", () =>
    Effect.gen(function*() {
      const record = (from: number, to: number, reference = "TF-1") => ({
        tradeflow_reference: reference,
        container_reference: range(from, to).map(containerNumber)
      })
      yield* submit([record(0, 600)])
      yield* drain
      const error = yield* refused([
        { tradeflow_reference: "OTHER", booking_reference: "B" },
        record(600, 900),
        record(900, 1_001)
      ])
      assert.deepStrictEqual(error.errors, [{
        path: "/2/container_reference",
        message: "tradeflow \"TF-1\" would hold 1,001 containers; at most 1,000 per tradeflow (it holds 600)"
      }])
      assert.deepStrictEqual(yield* pendingJobs, [])
      yield* submit([record(0, 600), record(600, 1_000)])
      yield* drain
      const stored = yield* Effect.flatMap(TradeflowStore, (s) => s.get(org, "TF-1"))
      assert.strictEqual(Option.map(stored, (t) => t.containers.length).pipe(Option.getOrThrow), 1_000)
      yield* submit([record(0, 1_000)])
      assert.strictEqual((yield* refused([record(999, 1_001)])).errors[0]?.path, "/0/container_reference")
    }).pipe(Effect.provide(layer)))

  it.effect("events: a tradeflow at 20,000 events takes known events, not new ones", () =>
    Effect.gen(function*() {
      yield* store(atTheCaps("FULL"))
      const known = {
        tradeflow_reference: "FULL",
        booking_reference: "B",
        events: [{ ...gateOut(0), message: "Status 0" }]
      }
      yield* submit([known])
      const error = yield* refused([{ tradeflow_reference: "FULL", booking_reference: "B", events: [gateOut(1)] }])
      assert.deepStrictEqual(error.errors, [{
        path: "/0/events",
        message: "tradeflow \"FULL\" would hold 20,001 events; at most 20,000 per tradeflow (it holds 20,000)"
      }])
    }).pipe(Effect.provide(layer)))
})

describe("Ingest: the render estimate", () => {
  it.effect("a request whose tradeflows together would render past 64 MiB in one job is refused, naming where it passes", () =>
    Effect.gen(function*() {
      const record = (i: number) => ({
        tradeflow_reference: `TF-${i}`,
        container_reference: range(0, 100).map(containerNumber),
        events: range(0, 10).map(gateOut)
      })
      yield* submit(range(0, 100).map(record))
      const error = yield* refused(range(0, 400).map(record))
      assert.strictEqual(error.errors.length, 1)
      const issue = error.errors[0]!
      const at = Number(issue.path.slice(1))
      assert.isAbove(at, 100)
      assert.isBelow(at, 200)
      assert.match(issue.message, /^this request would render about .* MiB in one job, from tradeflow "TF-\d+" on/)
      assert.strictEqual((yield* pendingJobs).length, 1)
    }).pipe(Effect.provide(layer)))

  it.effect(
    "a tradeflow at the caps: the most events the estimate admits process within 64 MiB; more are refused",
    () =>
      Effect.gen(function*() {
        yield* store(atTheCaps("FULL"))
        const perEvent = 600 + IngestLimits.shipmentMessageBytes(IngestLimits.maxStoredContainers, false)
        const admitted = Math.floor((RenderBudget.maxBytesPerJob - 4_000 - 20 * 1_000) / perEvent)
        const changed = (n: number) => ({
          tradeflow_reference: "FULL",
          container_reference: range(0, 1_000).map(containerNumber),
          events: range(0, n).map((i) => ({ ...gateOut(i), message: "Status 0", event_date: "2026-02-01T00:00:00Z" }))
        })
        const error = yield* refused([changed(admitted + 10)])
        assert.match(error.errors[0]!.message, /^this request would render/)
        yield* submit([changed(admitted)])
        yield* drain
        const log = yield* Effect.flatMap(
          MessageStore,
          (m) => m.list({ organisation_id: org, take: "oldest", limit: 100_000 })
        )
        assert.isAtLeast(log.length, admitted)
        const bytes = log.reduce((n, m) => n + StoredMessage.byteLength(m.body), 0)
        assert.isAtMost(bytes, RenderBudget.maxBytesPerJob)
        assert.isAbove(bytes, RenderBudget.maxBytesPerJob / 2)
      }).pipe(Effect.provide(layer)),
    120_000
  )

  it.effect.prop("the estimate bounds what processing renders (positions aside)", [
    fc.array(recordArb, { minLength: 1, maxLength: 4 }),
    fc.constantFrom<Environment>("uat", "production")
  ], ([records, environment]) =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 5, 1))
      const jobGroups = groups(records)
      const job = {
        id: 1,
        organisation_id: org,
        environment,
        payload: { _tag: "Upsert" as const, groups: jobGroups },
        received_at: 0
      }
      const commit = yield* Processor.processJob(job)
      const rendered = commit.messages.filter((m) => m.type !== "LOCATION_UPDATE")
      const estimates = jobGroups.map((g) =>
        IngestLimits.estimateGroup(g, undefined, { uat: environment === "uat", documents: false })
      )
      assert.isAtMost(rendered.length, estimates.reduce((n, e) => n + e.messages, 0))
      assert.isAtMost(
        rendered.reduce((n, m) => n + StoredMessage.byteLength(m.body), 0),
        estimates.reduce((n, e) => n + e.bytes, 0)
      )
      for (const [i, t] of commit.upserts.entries()) {
        const e = estimates.find((_, j) => jobGroups[j]!.tradeflow_reference === t.reference)!
        assert.isAtMost(t.containers.length, Math.max(1, e.containers), `group ${i}`)
        assert.isAtMost(t.events.length, e.events)
      }
    }).pipe(Effect.provide(processorLayer())), { fastCheck: { numRuns: 40 } })
})
