/**
 * The whole service in memory for integrators' tests, driven by hand: no background fiber, so
 * `TestClock` (which `it.effect` of @effect/vitest provides) moves time only when the test says
 * so, and jobs run when the test calls {@link drain} (or {@link post}, which drains).
 *
 * @module
 */
import { Effect, FastCheck as fc, Layer, Schema, TestClock, TestContext } from "effect"
import { type ApiMessage, ApiMessageFromJson } from "../src/ApiMessage.js"
import type { Environment } from "../src/Environment.js"
import { Ingest } from "../src/Ingest.js"
import * as Locations from "../src/Locations.js"
import { MessageStore } from "../src/MessageStore.js"
import { Scheduler } from "../src/Scheduler.js"
import * as Service from "../src/Service.js"
import * as Storage from "../src/Storage.js"
import * as TrackingConfig from "../src/TrackingConfig.js"
import { Worker } from "../src/Worker.js"
import { trackedRecord } from "./Arbitraries.js"

/** The organisation {@link post} and {@link messages} use unless told otherwise. */
export const organisation = "org-test"

/**
 * Every service over memory storage, the built-in UN/LOCODE directory and default tracking
 * settings, with the worker and the position scheduler in the foreground (`background: false`).
 * Build it per test (`Effect.provide(layer)` inside `it.effect`): nothing is shared between tests.
 *
 * @example
 * it.effect("a delivered container", () =>
 *   Effect.gen(function* () {
 *     yield* TestClock.setTime(Date.UTC(2026, 0, 1))
 *     const messages = yield* post([{ tradeflow_reference: "PO-1", container_reference: "CSQU3054383",
 *       mock_tracking: { scenario: "ocean_basic", speed: "fast" } }])
 *     yield* TestClock.adjust("10 minutes")
 *     yield* drain
 *   }).pipe(Effect.provide(layer)))
 */
export const layer: Layer.Layer<
  Service.Services | Storage.Storage | Locations.Locations | TrackingConfig.TrackingConfig
> = Service.layer({ background: false }, { background: false }).pipe(
  Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
)

/**
 * Runs every queued job and renders what is due at the current (test) clock: positions of
 * vessels under way and mock events released by `mock_tracking.speed`. Call it after
 * `TestClock.adjust`.
 *
 * @example
 * yield* TestClock.adjust("1 hour")
 * yield* drain
 */
export const drain = Effect.gen(function*() {
  yield* Effect.flatMap(Worker, (w) => w.drain)
  yield* Effect.flatMap(Scheduler, (s) => s.tick)
  yield* Effect.flatMap(Worker, (w) => w.drain)
})

const lastSeq = (organisationId: string) =>
  Effect.flatMap(MessageStore, (s) => s.list({ organisation_id: organisationId, take: "newest", limit: 1 })).pipe(
    Effect.map((ms) => ms[0]?.seq ?? 0)
  )

const decode = Schema.decodeUnknownSync(ApiMessageFromJson)

/**
 * The organisation's upstream messages with a sequence number above `afterSeq`, oldest first,
 * decoded as APIMessages.
 *
 * @example
 * const all = yield* messages()
 */
export const messages = (organisationId: string = organisation, afterSeq = 0) =>
  Effect.flatMap(
    MessageStore,
    (s) => s.list({ organisation_id: organisationId, after_seq: afterSeq, take: "oldest", limit: 100_000 })
  ).pipe(Effect.map((stored): ReadonlyArray<ApiMessage> => stored.map((m) => decode(m.body))))

/**
 * Posts raw records as `POST /downstream/tradeflows` would (validated, queued), processes them and
 * answers the upstream messages they produced, oldest first. Fails with the service's
 * `ValidationError` on an invalid body.
 *
 * @example
 * const produced = yield* post(fc.sample(trackedRecord, 2), "uat")
 */
export const post = (
  records: ReadonlyArray<unknown>,
  environment: Environment = "uat",
  organisationId = organisation
) =>
  Effect.gen(function*() {
    const before = yield* lastSeq(organisationId)
    yield* Effect.flatMap(Ingest, (i) =>
      i.submit({ organisation_id: organisationId, environment, body: records, form: "array" }))
    yield* drain
    return yield* messages(organisationId, before)
  })

/** The instant {@link sampleMessages} renders at: 2026-06-01T00:00:00Z. */
export const sampleNow = Date.UTC(2026, 5, 1)

/**
 * `n` real APIMessages of every type (SHIPMENT_CHANGE, CONTAINER_MILESTONE, LOCATION_UPDATE,
 * BASIC_STATUS): tracked records posted to a fresh in-memory service (UAT) at {@link sampleNow},
 * rendered by the service's own renderer. Deterministic for a seed; runs on its own test clock.
 *
 * @example
 * const sample = yield* sampleMessages(50)
 */
export const sampleMessages = (n: number, seed = 42): Effect.Effect<ReadonlyArray<ApiMessage>> =>
  Effect.gen(function*() {
    const out: Array<ApiMessage> = []
    const span = 60 * 86_400_000
    const records = fc.sample(
      fc.tuple(trackedRecord, fc.integer({ min: -span, max: span }), fc.integer({ min: 1, max: span })).map(
        ([record, offset, length]) => ({
          ...record,
          estimated_time_of_departure: new Date(sampleNow + offset).toISOString(),
          estimated_time_of_arrival: new Date(sampleNow + offset + length).toISOString()
        })
      ),
      { numRuns: Math.max(1, n), seed }
    )
    for (const [i, record] of records.entries()) {
      if (out.length >= n) break
      const produced = yield* post([{ ...record, tradeflow_reference: `SAMPLE-${i}` }])
      out.push(...produced)
    }
    return out.slice(0, n)
  }).pipe(
    Effect.provide(layer),
    (body) => Effect.zipRight(TestClock.setTime(sampleNow), body),
    Effect.provide(TestContext.TestContext),
    Effect.orDie
  )

/**
 * An arbitrary over {@link sampleMessages}: rendered APIMessages of every type. Building it
 * renders the sample once; use it inside an Effect test.
 *
 * @example
 * it.effect("my consumer accepts every message", () =>
 *   Effect.gen(function* () {
 *     const arb = yield* apiMessage()
 *     fc.assert(fc.property(arb, (m) => { assert.isDefined(consume(m)) }))
 *   }))
 */
export const apiMessage = (n = 300, seed = 42): Effect.Effect<fc.Arbitrary<ApiMessage>> =>
  Effect.map(sampleMessages(n, seed), (ms) => fc.constantFrom(...ms))
