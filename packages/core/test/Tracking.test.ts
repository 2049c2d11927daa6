import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Fiber, Layer, Option, Queue, Redacted, Ref, Stream, TestClock } from "effect"
import type { ApiMessage } from "../src/ApiMessage.js"
import { Ingest } from "../src/Ingest.js"
import * as Iso6346 from "../src/Iso6346.js"
import { JobQueue } from "../src/JobQueue.js"
import * as Locations from "../src/Locations.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import * as Positions from "../src/Positions.js"
import * as RenderDocument from "../src/RenderDocument.js"
import { Scheduler } from "../src/Scheduler.js"
import * as Service from "../src/Service.js"
import * as Storage from "../src/Storage.js"
import { Tracker } from "../src/Tracker.js"
import * as TrackingAdmin from "../src/TrackingAdmin.js"
import * as TrackingConfig from "../src/TrackingConfig.js"
import type { TrackingEvent } from "../src/TrackingEvent.js"
import * as TrackingPush from "../src/TrackingPush.js"
import * as TrackingSource from "../src/TrackingSource.js"
import { TrackingStore } from "../src/TrackingStore.js"
import type { Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import * as VesselPositions from "../src/VesselPositions.js"
import * as VesselPositionSource from "../src/VesselPositionSource.js"
import * as Worker from "../src/Worker.js"
import { counted } from "../test-kit/Counted.js"
import { messages } from "./ProcessorKit.js"

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour
const now0 = Date.UTC(2026, 10, 28, 9, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString()
const container = "MSKU1234565"
const container2 = "MSKU7654326"

/** A version of an event of the carrier `maersk`. */
const event = (fields: Partial<TrackingEvent> & Pick<TrackingEvent, "event_id" | "updated_at">): TrackingEvent => ({
  source: "maersk",
  retracted: false,
  event_type: "EQUIPMENT",
  event_code: "LOAD",
  classifier: "ACT",
  status_code: "AE",
  message: "Loaded on vessel",
  container_reference: container,
  location: "NLRTM",
  event_date: now0 - day,
  bookings: [],
  bills_of_lading: [],
  raw: null,
  ...fields
})

/** An estimated vessel arrival at CNSHA on `date`. */
const eta = (eventId: string, updatedAt: number, date: number, classifier: "EST" | "ACT" | "PLN" = "EST") =>
  event({
    event_id: eventId,
    updated_at: updatedAt,
    event_type: "TRANSPORT",
    event_code: "ARRI",
    classifier,
    status_code: "VA",
    message: "Vessel arrival",
    container_reference: null,
    location: "CNSHA",
    event_date: date
  })

const base = TradeflowMerge.empty("org", "PO-1", 0)

describe("TradeflowMerge.mergeTracking", () => {
  const arbitraryVersions = fc.uniqueArray(
    fc.record({
      id: fc.constantFrom("e1", "e2", "e3"),
      updated: fc.integer({ min: 1, max: 20 }),
      date: fc.integer({ min: 1, max: 4 }),
      classifier: fc.constantFrom("PLN" as const, "EST" as const, "ACT" as const),
      retracted: fc.boolean()
    }),
    { selector: (v) => `${v.id}@${v.updated}`, minLength: 1, maxLength: 12 }
  ).map((vs) =>
    vs.map((v) => ({ ...eta(v.id, v.updated * minute, now0 + v.date * day, v.classifier), retracted: v.retracted }))
  )

  it.prop(
    "merging the same versions in any order, one by one or together, gives the same journey; exact duplicates change nothing",
    [arbitraryVersions.chain((vs) => fc.tuple(fc.constant(vs), fc.shuffledSubarray(vs, { minLength: vs.length })))],
    ([[versions, shuffled]]) => {
      const together = TradeflowMerge.mergeTracking(base, versions, 5)
      const oneByOne = shuffled.reduce((t, v) => TradeflowMerge.mergeTracking(t, [v], 5), base)
      assert.deepStrictEqual(oneByOne.events, together.events)
      assert.deepStrictEqual(oneByOne.retracted_events, together.retracted_events)
      const again = TradeflowMerge.mergeTracking(together, versions, 9)
      assert.deepStrictEqual(again.events, together.events)
    }
  )

  it.prop(
    "the current reading is the latest actual one that is not retracted, else the latest one",
    [arbitraryVersions],
    ([versions]) => {
      const t = TradeflowMerge.mergeTracking(base, versions, 5)
      const retracted = new Map<string, number>()
      for (const v of versions) {
        if (v.retracted) retracted.set(v.event_id, Math.max(retracted.get(v.event_id) ?? -1, v.updated_at))
      }
      const counted = versions.filter((v) => !v.retracted && v.updated_at > (retracted.get(v.event_id) ?? -1))
        .sort((a, b) => a.updated_at - b.updated_at || (a.event_id < b.event_id ? -1 : 1))
      const expected = counted.filter((v) => v.classifier === "ACT").at(-1) ?? counted.at(-1)
      const milestone = [...t.events, ...t.retracted_events][0]
      if (expected === undefined) {
        assert.strictEqual(t.events.length, 0)
        return
      }
      assert.strictEqual(t.events.length, 1)
      assert.strictEqual(milestone?.event_date, expected.event_date)
      assert.strictEqual(milestone?.actual, expected.classifier === "ACT")
    }
  )

  it("an actual arrival wins over a newer estimate, which still joins the history", () => {
    const t = TradeflowMerge.mergeTracking(base, [
      eta("a1", 1 * minute, now0 + 10 * day),
      eta("a2", 2 * minute, now0 + 9 * day, "ACT"),
      eta("a3", 3 * minute, now0 + 12 * day)
    ], 5)
    const [arrival] = t.events
    assert.strictEqual(arrival?.actual, true)
    assert.strictEqual(arrival?.event_date, now0 + 9 * day)
    assert.deepStrictEqual(TradeflowMerge.visibleHistory(arrival!.history).map((h) => [h.event_date, h.actual]), [
      [now0 + 10 * day, false],
      [now0 + 9 * day, true],
      [now0 + 12 * day, false]
    ])
  })

  it("the same estimate published again is kept but not shown twice; an exact duplicate is not kept", () => {
    const once = TradeflowMerge.mergeTracking(base, [eta("a1", 1 * minute, now0 + 10 * day)], 5)
    const republished = TradeflowMerge.mergeTracking(once, [eta("a1", 2 * minute, now0 + 10 * day)], 6)
    assert.strictEqual(republished.events[0]!.history.length, 2)
    assert.strictEqual(TradeflowMerge.visibleHistory(republished.events[0]!.history).length, 1)
    assert.strictEqual(
      TradeflowMerge.mergeTracking(republished, [eta("a1", 2 * minute, now0 + 10 * day)], 7),
      republished
    )
  })

  it("a retraction takes its readings out; a milestone left with none leaves the journey, kept; a late version it retracts is kept retracted", () => {
    const t = TradeflowMerge.mergeTracking(base, [
      eta("a1", 1 * minute, now0 + 10 * day),
      eta("a2", 2 * minute, now0 + 11 * day)
    ], 5)
    const withoutA2 = TradeflowMerge.mergeTracking(t, [{ ...eta("a2", 3 * minute, 0), retracted: true }], 6)
    assert.strictEqual(withoutA2.events[0]!.event_date, now0 + 10 * day)
    assert.strictEqual(withoutA2.events[0]!.history.length, 2)
    const late = TradeflowMerge.mergeTracking(withoutA2, [eta("a2", 2 * minute + 1, now0 + 15 * day)], 7)
    assert.strictEqual(late.events[0]!.event_date, now0 + 10 * day)
    assert.deepStrictEqual(late.events[0]!.history.map((h) => [h.event_id, h.retracted === true]), [
      ["a1", false],
      ["a2", true],
      ["a2", true]
    ])
    const gone = TradeflowMerge.mergeTracking(late, [{ ...eta("a1", 4 * minute, 0), retracted: true }], 8)
    assert.deepStrictEqual(gone.events, [])
    assert.strictEqual(gone.retracted_events.length, 1)
    assert.strictEqual(gone.retracted_events[0]!.history.length, 3)
    const newer = TradeflowMerge.mergeTracking(gone, [eta("a1", 5 * minute, now0 + 20 * day)], 9)
    assert.strictEqual(newer.events[0]!.event_date, now0 + 20 * day)
  })

  it("milestones of another voyage are other milestones", () => {
    const t = TradeflowMerge.mergeTracking(base, [
      { ...eta("a1", 1 * minute, now0 + 10 * day), transport_call: { voyage: "101E" } },
      { ...eta("a2", 2 * minute, now0 + 12 * day), transport_call: { voyage: "202W" } }
    ], 5)
    assert.deepStrictEqual(t.events.map((e) => e.voyage), ["101E", "202W"])
  })
})

type Answer = Either.Either<TrackingSource.FetchResult, TrackingSource.TrackingSourceError>

/** A source in memory: it answers what `answers` holds for a query's key, and records every fetch. */
const fakeSource = (
  answers: Ref.Ref<ReadonlyMap<string, Answer>>,
  fetches: Ref.Ref<ReadonlyArray<TrackingSource.FetchRequest>>,
  fields: Partial<TrackingSource.TrackingSource> = {}
): TrackingSource.TrackingSource => ({
  id: "maersk",
  carriers: ["MAEU"],
  container_prefixes: ["MSKU"],
  queries: ["equipment", "booking"],
  fetch: (request) =>
    Effect.gen(function*() {
      yield* Ref.update(fetches, (all) => [...all, request])
      const key = request.query.equipment ?? request.query.booking ?? request.query.bill_of_lading ?? ""
      const answer = (yield* Ref.get(answers)).get(key) ??
        Either.right({ status: "awaiting" as const, events: [], malformed: [], high_water: request.since })
      return yield* answer
    }),
  ...fields
})

const found = (events: ReadonlyArray<TrackingEvent>): Answer =>
  Either.right({
    status: "found",
    events,
    malformed: [],
    high_water: Math.max(...events.map((e) => e.updated_at))
  })

const org = "org-prod"

const harness = Effect.gen(function*() {
  const answers = yield* Ref.make<ReadonlyMap<string, Answer>>(new Map())
  const fetches = yield* Ref.make<ReadonlyArray<TrackingSource.FetchRequest>>([])
  return { answers, fetches }
})

/** The service (nothing in the background) over `storage`, with these sources. */
const serviceOver = (storage: Layer.Layer<Storage.Storage>, sources: ReadonlyArray<TrackingSource.TrackingSource>) =>
  Service.layer({ background: false }, { background: false }, {}, {
    background: false,
    publicBaseUrl: "https://tracking.example/"
  }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      storage,
      Locations.layerBuiltin,
      TrackingConfig.layer(),
      TrackingSource.layer(sources).pipe(Layer.orDie)
    ))
  )

const organisations = Effect.forEach(
  [[org, "production"], ["org-uat", "uat"]] as const,
  ([id, environment]) =>
    Effect.flatMap(
      OrganisationStore,
      (s) => s.insert({ id, name: id, environment, live_organisation_id: null, created_at: now0 })
    ),
  { discard: true }
)

const withService = <A, E>(
  body: (h: Effect.Effect.Success<typeof harness>) => Effect.Effect<A, E, any>,
  fields: Partial<TrackingSource.TrackingSource> = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now0)
    const h = yield* harness
    return yield* Effect.provide(
      Effect.zipRight(organisations, body(h)),
      serviceOver(Storage.layerMemory, [fakeSource(h.answers, h.fetches, fields)])
    )
  })

const submit = (
  records: ReadonlyArray<unknown>,
  organisation = org,
  environment: "production" | "uat" = "production"
) => Effect.flatMap(Ingest, (i) => i.submit({ organisation_id: organisation, environment, body: records, form: "any" }))

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)
const tick = Effect.flatMap(Tracker, (t) => t.tick)

const stored = (reference: string, organisation = org) =>
  Effect.map(Effect.flatMap(TradeflowStore, (s) => s.get(organisation, reference)), Option.getOrThrow)

const targetsOf = (t: Tradeflow) => t.tracking?.targets ?? []

const seen = (organisation = org) =>
  Effect.map(
    messages(organisation),
    (ms) =>
      ms.map(({ message: m }: { message: ApiMessage }) =>
        m.type === "BASIC_STATUS"
          ? `${m.payload.status}${m.payload.status_code === null ? "" : ` ${m.payload.status_code}`}`
          : m.type === "CONTAINER_MILESTONE"
          ? `CM ${m.payload.status_code} ${m.payload.actual ? "actual" : "predicted"} ${m.payload.event_date}`
          : m.type === "SHIPMENT_CHANGE"
          ? `SC ${m.payload.change.move_type} ${
            m.payload.change.actual ? "actual" : "predicted"
          } ${m.payload.change.reading}`
          : m.type
      )
  )

const record = (fields: Record<string, unknown> = {}) => ({
  tradeflow_reference: "PO-1",
  container_reference: container,
  carrier_scac: "MAEU",
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  ...fields
})

describe("Tracker", () => {
  it.effect("a production tradeflow is asked about at once; its source's events become messages and its schedule follows its state", () =>
    withService(({ answers, fetches }) =>
      Effect.gen(function*() {
        yield* submit([record()])
        yield* drain
        const created = yield* stored("PO-1")
        assert.deepStrictEqual(targetsOf(created).map((t) => [t.id, t.state, t.next_check_at]), [[
          `equipment:${JSON.stringify([container, null, null])}`,
          "pending",
          now0
        ]])
        assert.deepStrictEqual(yield* seen(), ["TRADEFLOW_CREATED", "TRACKING_STARTED"])

        yield* Ref.set(
          answers,
          new Map([[
            container,
            found([
              event({ event_id: "load", updated_at: now0 - day, event_date: now0 - day }),
              eta("eta", now0 - day, now0 + 20 * day)
            ])
          ]])
        )
        assert.strictEqual(yield* tick, 1)
        assert.deepStrictEqual(yield* Ref.get(fetches), [{ query: { equipment: container }, since: null }])
        yield* drain
        assert.deepStrictEqual((yield* seen()).slice(2), [
          `CM AE actual ${iso(now0 - day)}`,
          "EVENT AE",
          `SC arrival predicted ${iso(now0 + 20 * day)}`,
          "EVENT VA"
        ])
        const [target] = targetsOf(yield* stored("PO-1"))
        assert.strictEqual(target?.state, "before_departure")
        assert.strictEqual(target?.next_check_at, now0 + 12 * hour)
        assert.strictEqual(target?.high_water, now0 - day)
        const raw = yield* Effect.flatMap(TrackingStore, (s) => s.rawEvents(org, "PO-1", 10))
        assert.deepStrictEqual(raw, [])

        assert.strictEqual(yield* tick, 0)
        yield* TestClock.adjust(12 * hour)
        yield* Ref.set(
          answers,
          new Map([[
            container,
            found([
              {
                ...eta("dep", now0 + 12 * hour, now0 + 11 * hour, "ACT"),
                event_code: "DEPA",
                status_code: "VD",
                location: "NLRTM",
                message: "Vessel departure",
                raw: "{\"eventID\":\"dep\"}"
              },
              eta("eta", now0 + 12 * hour, now0 + 22 * day)
            ])
          ]])
        )
        assert.strictEqual(yield* tick, 1)
        assert.deepStrictEqual((yield* Ref.get(fetches))[1], { query: { equipment: container }, since: now0 - day })
        yield* drain
        assert.deepStrictEqual((yield* seen()).slice(6), [
          `SC departure actual ${iso(now0 + 11 * hour)}`,
          "EVENT VD",
          `SC arrival predicted ${iso(now0 + 22 * day)}`,
          "EVENT VA"
        ])
        const [moving] = targetsOf(yield* stored("PO-1"))
        assert.strictEqual(moving?.state, "in_transit")
        assert.strictEqual(moving?.next_check_at, now0 + 36 * hour)
        const kept = yield* Effect.flatMap(TrackingStore, (s) => s.rawEvents(org, "PO-1", 10))
        assert.deepStrictEqual(kept.map((e) => [e.event_id, e.raw]), [["dep", "{\"eventID\":\"dep\"}"]])
        const document = yield* RenderDocument.tradeflowDocument(yield* stored("PO-1"), { vessels: false })
        assert.deepStrictEqual(document.metadata.tracking, {
          source: "maersk",
          targets: [{
            source: "maersk",
            kind: "equipment",
            container_reference: container,
            booking_reference: null,
            bill_of_lading_reference: null,
            state: "in_transit",
            stop_reason: null,
            last_check: iso(now0 + 12 * hour),
            next_check: iso(now0 + 36 * hour),
            last_event: iso(now0 + 12 * hour),
            failures: 0,
            last_error: null
          }]
        })
      })
    ))

  it.effect("in transit within 48 hours of a predicted arrival it is checked every 6 hours; after the empty return, for 3 more days", () =>
    withService(({ answers }) =>
      Effect.gen(function*() {
        yield* submit([record()])
        yield* drain
        yield* Ref.set(
          answers,
          new Map([[
            container,
            found([
              { ...eta("dep", now0 - day, now0 - day, "ACT"), status_code: "VD", location: "NLRTM" },
              eta("eta", now0 - day, now0 + day)
            ])
          ]])
        )
        yield* tick
        yield* drain
        assert.strictEqual(targetsOf(yield* stored("PO-1"))[0]?.next_check_at, now0 + 6 * hour)
        yield* TestClock.adjust(6 * hour)
        yield* Ref.set(
          answers,
          new Map([[
            container,
            found([
              event({ event_id: "ret", updated_at: now0 + 6 * hour, status_code: "GR", event_date: now0 + 5 * hour })
            ])
          ]])
        )
        yield* tick
        yield* drain
        const [returned] = targetsOf(yield* stored("PO-1"))
        assert.strictEqual(returned?.state, "returned")
        assert.strictEqual(returned?.next_check_at, now0 + 18 * hour)
        yield* TestClock.adjust(3 * day)
        yield* Ref.set(answers, new Map())
        yield* tick
        yield* drain
        const [stopped] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([stopped?.state, stopped?.stop_reason, stopped?.next_check_at], [
          "stopped",
          "empty_returned",
          null
        ])
        assert.strictEqual((yield* seen()).at(-1), "TRACKING_STOPPED")
        yield* TestClock.adjust(30 * day)
        assert.strictEqual(yield* tick, 0)
      })
    ))

  it.effect("failures: retry-after is honoured, transient ones back off, a refused credential pauses the source", () =>
    withService(({ answers, fetches }) =>
      Effect.gen(function*() {
        const limitedBefore = yield* counted("tradeflow_tracking_fetches_total", {
          source: "maersk",
          outcome: "rate_limited"
        })
        yield* submit([record()])
        yield* drain
        yield* Ref.set(
          answers,
          new Map([[
            container,
            Either.left(
              new TrackingSource.SourceRateLimited({
                source: "maersk",
                retry_after_millis: 90_000,
                message: "slow down"
              })
            )
          ]])
        )
        yield* tick
        yield* drain
        const [limited] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([limited?.next_check_at, limited?.failures], [now0 + 90_000, 0])
        assert.strictEqual(limited?.last_error, "rate_limited: slow down")
        assert.strictEqual(
          (yield* counted("tradeflow_tracking_fetches_total", { source: "maersk", outcome: "rate_limited" })) -
            limitedBefore,
          1
        )

        yield* TestClock.adjust(90_000)
        yield* Ref.set(
          answers,
          new Map([[container, Either.left(new TrackingSource.SourceTransient({ source: "maersk", message: "502" }))]])
        )
        yield* tick
        yield* drain
        const [transient] = targetsOf(yield* stored("PO-1"))
        const wait = transient!.next_check_at! - (now0 + 90_000)
        assert.strictEqual(transient?.failures, 1)
        assert.isAtLeast(wait, 2.5 * minute)
        assert.isAtMost(wait, 5 * minute)

        yield* TestClock.adjust(wait)
        yield* Ref.set(
          answers,
          new Map([[
            container,
            Either.left(new TrackingSource.SourceUnauthorized({ source: "maersk", message: "401" }))
          ]])
        )
        yield* tick
        yield* drain
        const paused = yield* Effect.flatMap(Tracker, (t) => t.paused)
        assert.deepStrictEqual([...paused.keys()], ["maersk"])
        yield* submit([record({ tradeflow_reference: "PO-2", container_reference: container2 })])
        yield* drain
        const asked = (yield* Ref.get(fetches)).length
        assert.strictEqual(yield* tick, 0)
        yield* TestClock.adjust("15 minutes")
        yield* Ref.set(answers, new Map())
        assert.isAtLeast(yield* tick, 1)
        assert.deepStrictEqual(
          (yield* Ref.get(fetches)).slice(asked).map((f) => f.query.equipment).includes(container2),
          true
        )
      })
    ))

  it.effect("a container the source does not know stops at once; a booking is retried daily for 7 days", () =>
    withService(({ answers }) =>
      Effect.gen(function*() {
        yield* submit([record({ booking_reference: "BKG-1" })])
        yield* drain
        const notFound: Answer = Either.right({ status: "not-found", events: [], malformed: [], high_water: null })
        yield* Ref.set(answers, new Map([[container, notFound], ["BKG-1", notFound]]))
        assert.strictEqual(yield* tick, 2)
        yield* drain
        const [byContainer, byBooking] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([byContainer?.state, byContainer?.stop_reason], ["stopped", "not_found"])
        assert.deepStrictEqual([byBooking?.state, byBooking?.next_check_at], ["awaiting", now0 + day])
        assert.deepStrictEqual((yield* seen()).slice(2).sort(), [
          "TRACKING_NOT_FOUND",
          "TRACKING_NOT_FOUND",
          "TRACKING_STOPPED"
        ])
        for (let i = 1; i <= 7; i++) {
          yield* TestClock.adjust(day)
          assert.strictEqual(yield* tick, 1)
          yield* drain
        }
        const [, last] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([last?.state, last?.stop_reason], ["stopped", "not_found"])
        assert.strictEqual((yield* seen()).filter((s) => s === "TRACKING_NOT_FOUND").length, 2)
      })
    ))

  it.effect("deactivation stops the targets and reactivation resumes them; a hard delete removes them", () =>
    withService(() =>
      Effect.gen(function*() {
        yield* submit([record()])
        yield* drain
        yield* submit([record({ active: false })])
        yield* drain
        assert.deepStrictEqual(targetsOf(yield* stored("PO-1")).map((t) => t.stop_reason), ["deactivated"])
        assert.strictEqual(yield* tick, 0)
        yield* submit([record()])
        yield* drain
        assert.deepStrictEqual(targetsOf(yield* stored("PO-1")).map((t) => [t.state, t.next_check_at]), [[
          "pending",
          now0
        ]])
        yield* submit([record({ container_reference: container2 })])
        yield* drain
        assert.strictEqual(targetsOf(yield* stored("PO-1")).length, 2)
        const removal = yield* Effect.fork(Effect.flatMap(
          Ingest,
          (i) => i.remove({ organisation_id: org, environment: "production", reference: "PO-1", hard: true })
        ))
        while (Option.isNone(yield* Fiber.poll(removal))) {
          yield* Effect.yieldNow()
          yield* drain
        }
        assert.deepStrictEqual(yield* Fiber.join(removal), { status: "deleted", count: 1 })
        assert.strictEqual(yield* tick, 0)
      })
    ))

  it.effect("a claimed target is not asked about again while its answer waits for the worker", () =>
    withService(({ fetches }) =>
      Effect.gen(function*() {
        yield* submit([record()])
        yield* drain
        assert.strictEqual(yield* tick, 1)
        assert.strictEqual(yield* tick, 0)
        yield* TestClock.adjust("2 minutes")
        assert.strictEqual(yield* tick, 1)
        assert.strictEqual((yield* Ref.get(fetches)).length, 2)
        yield* drain
        const pending = yield* Effect.flatMap(JobQueue, (q) => q.pending(10))
        assert.deepStrictEqual(pending, [])
      })
    ))

  it.effect("routing: by SCAC, else by container owner code; UAT mirrors production unless a mock journey runs", () =>
    withService(() =>
      Effect.gen(function*() {
        yield* submit([
          { tradeflow_reference: "BY-PREFIX", container_reference: container2 },
          { tradeflow_reference: "UNKNOWN", container_reference: "CSQU3054383", carrier_scac: "CMDU" }
        ])
        yield* drain
        assert.strictEqual((yield* stored("BY-PREFIX")).tracking?.source, "maersk")
        assert.strictEqual((yield* stored("UNKNOWN")).tracking, null)
        yield* submit(
          [
            { tradeflow_reference: "SANDBOX", container_reference: container, carrier_scac: "MAEU" },
            {
              tradeflow_reference: "MOCK",
              container_reference: container,
              carrier_scac: "MAEU",
              port_of_loading: "NLRTM",
              mock_tracking: { scenario: "ocean_basic" }
            }
          ],
          "org-uat",
          "uat"
        )
        yield* drain
        assert.strictEqual((yield* stored("SANDBOX", "org-uat")).tracking?.source, "maersk")
        assert.strictEqual((yield* stored("MOCK", "org-uat")).tracking, null)
      })
    ))

  it.effect("the 202 warns of a tradeflow no source tracks", () =>
    withService(() =>
      Effect.gen(function*() {
        const accepted = yield* submit([
          record(),
          { tradeflow_reference: "OTHER", container_reference: "CSQU3054383", carrier_scac: "CMDU" },
          { tradeflow_reference: "BOOKING-ONLY", booking_reference: "BKG-9" }
        ])
        assert.deepStrictEqual(accepted.tradeflows.map((t) => t.warnings), [
          [],
          ["not tracked: no tracking source serves carrier_scac \"CMDU\" or container owner code CSQU"],
          []
        ])
        const sandbox = yield* submit(
          [{
            tradeflow_reference: "MOCK",
            container_reference: "CSQU3054383",
            mock_tracking: { scenario: "ocean_basic" }
          }],
          "org-uat",
          "uat"
        )
        assert.deepStrictEqual(sandbox.tradeflows[0]!.warnings, [])
      })
    ))

  it.effect("a target whose source is no longer configured stops", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const h = yield* harness
      const storage = Layer.succeedContext(yield* Layer.build(Storage.layerMemory))
      yield* Effect.provide(
        Effect.gen(function*() {
          yield* organisations
          yield* submit([record()])
          yield* drain
        }),
        serviceOver(storage, [fakeSource(h.answers, h.fetches)])
      )
      yield* Effect.provide(
        Effect.gen(function*() {
          assert.strictEqual(yield* tick, 1)
          yield* drain
          const [target] = targetsOf(yield* stored("PO-1"))
          assert.deepStrictEqual([target?.state, target?.stop_reason], ["stopped", "source_removed"])
          assert.strictEqual((yield* seen()).at(-1), "TRACKING_STOPPED")
        }),
        serviceOver(storage, [])
      )
      assert.deepStrictEqual(yield* Ref.get(h.fetches), [])
    }).pipe(Effect.scoped))

  it.effect("a source that pushes by subscription is subscribed at the first check; a signed callback is merged, a forged one stores nothing; a stopped target is unsubscribed at the next sweep (a minute)", () =>
    Effect.gen(function*() {
      const subscribed = yield* Ref.make<ReadonlyArray<readonly [TrackingSource.TargetQuery, string]>>([])
      const removed = yield* Ref.make<ReadonlyArray<string>>([])
      const secretOf = (id: string) => new TextEncoder().encode(`secret-of-${id}`)
      const push: TrackingSource.SubscriptionPush = {
        _tag: "Subscription",
        subscribe: (query, callbackUrl) =>
          Effect.map(Ref.updateAndGet(subscribed, (all) => [...all, [query, callbackUrl] as const]), (all) => ({
            id: `sub-${all.length}`,
            secret: Redacted.make(secretOf(`sub-${all.length}`))
          })),
        unsubscribe: (id) => Ref.update(removed, (all) => [...all, id]),
        subscriptionOf: (request) => Option.fromNullable(request.headers["subscription-id"]),
        verify: (request, subscription) =>
          request.headers["notification-signature"] ===
              `sig:${new TextDecoder().decode(Redacted.value(subscription.secret))}`
            ? Effect.succeed({
              events: JSON.parse(new TextDecoder().decode(request.body)) as Array<TrackingEvent>,
              malformed: []
            })
            : Effect.fail(new TrackingSource.PushRefused({ source: "maersk", message: "forged" }))
      }
      yield* withService(() =>
        Effect.gen(function*() {
          yield* submit([record()])
          yield* drain
          yield* tick
          assert.deepStrictEqual(yield* Ref.get(subscribed), [[
            { equipment: container },
            "https://tracking.example/tracking/sources/maersk/callback"
          ]])
          const kept = yield* Effect.flatMap(TrackingStore, (s) => s.subscriptionsOf(org, "PO-1"))
          assert.deepStrictEqual(kept.map((s) => [s.subscription_id, s.target_id]), [[
            "sub-1",
            `equipment:${JSON.stringify([container, null, null])}`
          ]])
          yield* drain
          yield* TestClock.adjust(12 * hour)
          yield* tick
          assert.strictEqual((yield* Ref.get(subscribed)).length, 1)
          yield* drain

          const pushed = TrackingPush.TrackingPush
          const body = new TextEncoder().encode(JSON.stringify([eta("pushed", now0 + 12 * hour, now0 + 19 * day)]))
          const forged = yield* Effect.flip(Effect.flatMap(pushed, (p) =>
            p.callback("maersk", {
              headers: { "subscription-id": "sub-1", "notification-signature": "sig:guess" },
              body
            })))
          assert.strictEqual(forged._tag, "PushRefused")
          const unknown = yield* Effect.flip(Effect.flatMap(pushed, (p) =>
            p.callback("maersk", {
              headers: { "subscription-id": "sub-9", "notification-signature": "sig:secret-of-sub-9" },
              body
            })))
          assert.strictEqual(unknown._tag, "PushRefused")
          assert.deepStrictEqual(yield* Effect.flatMap(JobQueue, (q) => q.pending(10)), [])
          yield* Effect.flatMap(pushed, (p) =>
            p.callback("maersk", {
              headers: { "subscription-id": "sub-1", "notification-signature": "sig:secret-of-sub-1" },
              body
            }))
          yield* drain
          assert.strictEqual((yield* seen()).at(-2), `SC arrival predicted ${iso(now0 + 19 * day)}`)

          yield* submit([record({ active: false })])
          yield* drain
          yield* tick
          assert.deepStrictEqual(yield* Ref.get(removed), [])
          yield* TestClock.adjust("1 minute")
          yield* tick
          assert.deepStrictEqual(yield* Ref.get(removed), ["sub-1"])
          assert.deepStrictEqual(yield* Effect.flatMap(TrackingStore, (s) => s.subscriptionsOf(org, "PO-1")), [])
        }), { push })
    }))

  it.effect("a tracked vessel under way gets its AIS positions, at most one an interval, dated when observed; none once it arrives", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const h = yield* harness
      const reports = yield* Queue.unbounded<VesselPositionSource.VesselReport>()
      const feed = Layer.succeed(
        VesselPositionSource.VesselPositionSource,
        VesselPositionSource.VesselPositionSource.of({ reports: Stream.fromQueue(reports) })
      )
      const service = serviceOver(Storage.layerMemory, [fakeSource(h.answers, h.fetches)]).pipe(
        Layer.provideMerge(VesselPositions.layer().pipe(Layer.provide(feed)))
      )
      yield* Effect.provide(
        Effect.gen(function*() {
          yield* organisations
          yield* submit([record({ vessel: "KING OF THE SEAS" })])
          yield* drain
          const departure = {
            ...eta("dep", now0 - hour, now0 - 2 * hour, "ACT"),
            event_code: "DEPA",
            status_code: "VD",
            location: "NLRTM",
            message: "Vessel departure",
            transport_call: { vessel_name: "KING OF THE SEAS", vessel_imo: "9321483" }
          }
          yield* Ref.set(h.answers, new Map([[container, found([departure])]]))
          yield* tick
          yield* drain
          const positionsOf = Effect.map(
            messages(org),
            (ms) => ms.flatMap(({ message: m }) => m.type === "LOCATION_UPDATE" ? [m.payload] : [])
          )
          const advance = Effect.zipRight(Effect.flatMap(Scheduler, (s) => s.tick), drain)
          yield* advance
          assert.deepStrictEqual(yield* positionsOf, [])

          yield* Queue.offerAll(reports, [
            { _tag: "Static", mmsi: "211331640", imo: "9321483", name: "KING OF THE SEAS", observed_at: now0 },
            { _tag: "Position", mmsi: "211331640", lat: 53.5, lng: 4.25, observed_at: now0 - 30_000 },
            { _tag: "Position", mmsi: "999999999", lat: 1, lng: 1, observed_at: now0 }
          ])
          yield* TestClock.adjust(hour)
          yield* advance
          assert.deepStrictEqual(yield* positionsOf, [{
            type: "LOCATION_UPDATE",
            lat: 53.5,
            lng: 4.25,
            event_date: Positions.formatEventDate(now0 - 30_000),
            vessel_name: "KING OF THE SEAS"
          }])
          yield* Queue.offer(reports, {
            _tag: "Position",
            mmsi: "211331640",
            lat: 53.9,
            lng: 3.9,
            observed_at: now0 + 20 * minute
          })
          yield* TestClock.adjust(hour)
          yield* advance
          assert.strictEqual((yield* positionsOf).length, 1)
          yield* Queue.offer(reports, {
            _tag: "Position",
            mmsi: "211331640",
            lat: 54.1,
            lng: 3.2,
            observed_at: now0 + 2 * hour
          })
          yield* TestClock.adjust(hour)
          yield* advance
          assert.deepStrictEqual((yield* positionsOf).map((p) => p.lat), [53.5, 54.1])

          yield* Ref.set(
            h.answers,
            new Map([[
              container,
              found([
                {
                  ...departure,
                  event_id: "arr",
                  updated_at: now0 + 3 * hour,
                  event_code: "ARRI",
                  status_code: "VA",
                  location: "SGSIN",
                  event_date: now0 + 3 * hour
                }
              ])
            ]])
          )
          yield* Effect.flatMap(TrackingAdmin.TrackingAdmin, (a) => a.refresh(org, "PO-1"))
          const queued = Effect.flatMap(JobQueue, (q) => q.pending(10))
          for (let i = 0; i < 1000 && (yield* queued).length === 0; i++) yield* Effect.yieldNow()
          yield* drain
          assert.strictEqual((yield* stored("PO-1")).next_location_at, null)
          yield* Queue.offer(reports, {
            _tag: "Position",
            mmsi: "211331640",
            lat: 1.2,
            lng: 103.8,
            observed_at: now0 + 4 * hour
          })
          yield* TestClock.adjust(2 * hour)
          yield* advance
          assert.strictEqual((yield* positionsOf).length, 2)
        }),
        service
      )
    }))

  it.effect("a consumer push is queued for every tradeflow of every organisation whose target it concerns; unknown events are reported, unauthenticated pushes store nothing", () =>
    Effect.gen(function*() {
      const push: TrackingSource.ConsumerPush = {
        _tag: "Consumer",
        read: (request) =>
          request.headers["authorization"] === "Bearer tok"
            ? Effect.succeed({
              events: JSON.parse(new TextDecoder().decode(request.body)) as Array<TrackingEvent>,
              malformed: [{ index: 2, event_id: null, message: "/2/eventDateTime: not a date" }]
            })
            : Effect.fail(new TrackingSource.PushRefused({ source: "maersk", message: "no token" }))
      }
      yield* withService(() =>
        Effect.gen(function*() {
          yield* submit([record()])
          yield* submit([record({ tradeflow_reference: "OTHER-ORG" })], "org-uat", "uat")
          yield* submit([record({ tradeflow_reference: "STOPPED", container_reference: container2 })])
          yield* drain
          yield* submit([record({ tradeflow_reference: "STOPPED", container_reference: container2, active: false })])
          yield* drain
          const pushed = TrackingPush.TrackingPush
          const body = new TextEncoder().encode(JSON.stringify([
            event({ event_id: "load", updated_at: now0, event_date: now0 - hour }),
            event({ event_id: "elsewhere", updated_at: now0, container_reference: "TGHU1234566" }),
            event({ event_id: "stopped", updated_at: now0, container_reference: container2 })
          ]))
          const refused = yield* Effect.flip(Effect.flatMap(pushed, (p) => p.consume("maersk", { headers: {}, body })))
          assert.strictEqual(refused._tag, "PushRefused")
          assert.deepStrictEqual(yield* Effect.flatMap(JobQueue, (q) => q.pending(10)), [])
          const answer = yield* Effect.flatMap(pushed, (p) =>
            p.consume("maersk", { headers: { authorization: "Bearer tok" }, body }))
          assert.deepStrictEqual(answer.feedbackElements, [
            { severity: "ERROR", message: "/2/eventDateTime: not a date", propertyPath: "$.events[2]" },
            { severity: "WARN", message: "no tracked target concerns event elsewhere" },
            { severity: "WARN", message: "no tracked target concerns event stopped" }
          ])
          yield* drain
          assert.strictEqual(
            (yield* seen()).filter((m) =>
              m.startsWith("CM AE")
            ).length,
            1
          )
          assert.strictEqual((yield* seen("org-uat")).filter((m) => m.startsWith("CM AE")).length, 1)
          assert.deepStrictEqual((yield* stored("STOPPED")).events, [])
        }), { push })
    }))
})

describe("Tracker: freshness, refusals and pushes that come late", () => {
  const departed = { ...eta("dep", now0 - day, now0 - day, "ACT"), status_code: "VD" as const, location: "NLRTM" }
  const loaded = event({ event_id: "load", updated_at: now0 - day, event_date: now0 - 2 * day })

  it.effect("a target stays fresh while another target of its tradeflow brings its shipment's events; 30 days without a new one, both stop", () =>
    withService(({ answers }) =>
      Effect.gen(function*() {
        yield* submit([record({ booking_reference: "BKG-1" })])
        yield* drain
        const answer = (estimates: ReadonlyArray<TrackingEvent>) =>
          Ref.set(
            answers,
            new Map([[container, found([departed, loaded])], ["BKG-1", found([departed, ...estimates])]])
          )
        yield* answer([])
        assert.strictEqual(yield* tick, 2)
        yield* drain
        let estimates: ReadonlyArray<TrackingEvent> = []
        for (let i = 1; i <= 35; i++) {
          yield* TestClock.adjust(day)
          estimates = [eta("eta", now0 + i * day, now0 + 60 * day + i * hour)]
          yield* answer(estimates)
          yield* tick
          yield* drain
        }
        assert.deepStrictEqual(targetsOf(yield* stored("PO-1")).map((t) => [t.kind, t.state]), [
          ["equipment", "in_transit"],
          ["booking", "in_transit"]
        ])
        for (let i = 1; i <= 31; i++) {
          yield* TestClock.adjust(day)
          yield* tick
          yield* drain
        }
        assert.deepStrictEqual(targetsOf(yield* stored("PO-1")).map((t) => [t.state, t.stop_reason]), [
          ["stopped", "no_new_events"],
          ["stopped", "no_new_events"]
        ])
        assert.strictEqual((yield* seen()).filter((s) => s === "TRACKING_STOPPED").length, 2)
      })
    ))

  it.effect("a container whose question the source refuses stops at once; a target failing for 30 days stops", () =>
    withService(({ answers }) =>
      Effect.gen(function*() {
        yield* submit([record({ booking_reference: "BKG-1" })])
        yield* drain
        yield* Ref.set(
          answers,
          new Map<string, Answer>([
            [container, Either.left(new TrackingSource.SourceNotFound({ source: "maersk", message: "400" }))],
            ["BKG-1", Either.left(new TrackingSource.SourceTransient({ source: "maersk", message: "502" }))]
          ])
        )
        yield* tick
        yield* drain
        const [refused, failing] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([refused?.state, refused?.stop_reason], ["stopped", "not_found"])
        assert.deepStrictEqual([failing?.state, failing?.failures], ["pending", 1])
        while ((yield* TestClock.currentTimeMillis) < now0 + 29 * day) {
          yield* TestClock.adjust(12 * hour)
          yield* tick
          yield* drain
        }
        assert.strictEqual(targetsOf(yield* stored("PO-1"))[1]?.state, "pending")
        yield* TestClock.adjust(day)
        yield* tick
        yield* drain
        yield* TestClock.adjust(day)
        yield* tick
        yield* drain
        const [, stopped] = targetsOf(yield* stored("PO-1"))
        assert.deepStrictEqual([stopped?.state, stopped?.stop_reason, stopped?.last_error], [
          "stopped",
          "no_new_events",
          "transient: 502"
        ])
      })
    ))

  it.effect("a consumer push reaches a combined target only when it names its references and contradicts none; a target stopped before the push is merged takes nothing", () =>
    Effect.gen(function*() {
      const push: TrackingSource.ConsumerPush = {
        _tag: "Consumer",
        read: (request) =>
          Effect.succeed({
            events: JSON.parse(new TextDecoder().decode(request.body)) as Array<TrackingEvent>,
            malformed: []
          })
      }
      yield* withService(({ answers }) =>
        Effect.gen(function*() {
          yield* submit([
            record({ booking_reference: "BKG-A" }),
            record({ tradeflow_reference: "PO-2", container_reference: container2, booking_reference: "BKG-2" })
          ])
          yield* submit([record({ tradeflow_reference: "PO-B", booking_reference: "BKG-B" })], "org-uat", "uat")
          yield* drain
          const consume = (events: ReadonlyArray<TrackingEvent>) =>
            Effect.flatMap(
              TrackingPush.TrackingPush,
              (p) => p.consume("maersk", { headers: {}, body: new TextEncoder().encode(JSON.stringify(events)) })
            )
          const first = yield* consume([
            event({ event_id: "b-load", updated_at: now0, bookings: ["BKG-B"] }),
            event({
              event_id: "discharged",
              updated_at: now0,
              event_code: "DISC",
              status_code: "UV",
              message: "Discharged",
              location: "CNSHA"
            })
          ])
          assert.deepStrictEqual(first.feedbackElements, [])
          yield* drain
          assert.deepStrictEqual((yield* stored("PO-1")).events.map((e) => e.status_code), ["UV"])
          assert.deepStrictEqual((yield* stored("PO-B", "org-uat")).events.map((e) => e.status_code).sort(), [
            "AE",
            "UV"
          ])

          yield* Ref.set(
            answers,
            new Map([[
              container2,
              Either.left(new TrackingSource.SourceNotFound({ source: "maersk", message: "404" }))
            ]])
          )
          yield* tick
          const late = yield* consume([
            event({ event_id: "late", updated_at: now0, container_reference: container2, bookings: ["BKG-2"] })
          ])
          assert.deepStrictEqual(late.feedbackElements, [])
          yield* drain
          const po2 = yield* stored("PO-2")
          assert.deepStrictEqual([targetsOf(po2)[0]?.stop_reason, po2.events], ["not_found", []])
        }), { push, queries: ["booking+equipment"] })
    }))

  it.effect("a question still unanswered near the end of its lease is given up: no answer is queued for it, and it is asked again once the lease is over", () => {
    let asked = 0
    const slow: Partial<TrackingSource.TrackingSource> = {
      fetch: (request) =>
        Effect.sync(() => asked++).pipe(
          Effect.zipRight(Effect.sleep("50 seconds")),
          Effect.as({ status: "awaiting" as const, events: [], malformed: [], high_water: request.since })
        )
    }
    return withService(() =>
      Effect.gen(function*() {
        const containers = Array.from({ length: 17 }, (_, i) => {
          const first10 = `MSKU${String(100_000 + i)}`
          return `${first10}${Iso6346.checkDigit(first10)}`
        })
        yield* submit(containers.map((c, i) => record({ tradeflow_reference: `PO-${i}`, container_reference: c })))
        yield* drain
        const ticking = yield* Effect.fork(tick)
        yield* TestClock.adjust("110 seconds")
        assert.strictEqual(yield* Fiber.join(ticking), 17)
        assert.strictEqual(asked, 17)
        const queued = yield* Effect.flatMap(JobQueue, (q) => q.pending(100))
        assert.strictEqual(queued.filter((j) => j.payload._tag === "Track").length, 16)
        yield* drain
        const stillPending = (yield* Effect.forEach(containers, (_, i) => stored(`PO-${i}`)))
          .filter((t) => targetsOf(t)[0]?.state === "pending")
        assert.strictEqual(stillPending.length, 1)
        assert.strictEqual(yield* tick, 0)
        yield* TestClock.adjust("10 seconds")
        const again = yield* Effect.fork(tick)
        yield* TestClock.adjust("50 seconds")
        assert.strictEqual(yield* Fiber.join(again), 1)
        assert.strictEqual(asked, 18)
      }), slow)
  })
})
