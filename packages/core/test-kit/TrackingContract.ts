/**
 * The tracking part of the storage contract (registered by `storageContract`, so it runs on every
 * adapter): the index of tracked targets that commits write and `TrackingStore.claim` leases from,
 * the raw events commits keep, and the subscriptions sources hold for targets.
 *
 * `claim` is global. Every test works in an instant window of its own, far below the instants of
 * real use (around -7e15 ms), and first leases, for good, every target due at the window's start:
 * targets of other tests (and of the arbitrary tradeflows other tests commit, whose next checks are
 * any numbers) are then either leased or not due in the window. Claims pass their `now`, so leases
 * run out without sleeping. `staleSubscriptions` is global too: a test that counts on its order
 * first removes every stale subscription, and the others look at their own organisation's.
 *
 * @module
 */
import { describe, expect, type Vitest } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import { JobQueue } from "../src/JobQueue.js"
import type { Storage } from "../src/Storage.js"
import { type QueryKind, queryKinds, type TargetQuery } from "../src/TrackingSource.js"
import { type DueTarget, type RawEvent, type StoredSubscription, TrackingStore } from "../src/TrackingStore.js"
import * as TrackingTarget from "../src/TrackingTarget.js"
import type { Tradeflow } from "../src/Tradeflow.js"
import { type Commit, TradeflowStore } from "../src/TradeflowStore.js"
import { commitOf, freshId, makeTradeflow } from "./StorageContract.js"

/** A target of `source` asking about container `equipment`, next checked at `next_check_at`. */
export const makeTarget = (
  source: string,
  equipment: string,
  next_check_at: number | null,
  fields: Partial<TrackingTarget.TrackingTarget> = {}
): TrackingTarget.TrackingTarget => ({
  ...TrackingTarget.make(source, "equipment", { equipment }, 0),
  next_check_at,
  ...fields
})

/** A tradeflow of these containers tracked with these targets (by the source of the first). */
export const makeTracked = (
  organisation_id: string,
  reference: string,
  targets: ReadonlyArray<TrackingTarget.TrackingTarget>,
  containers: ReadonlyArray<string> = []
): Tradeflow => ({
  ...makeTradeflow(organisation_id, reference, containers),
  tracking: { source: targets[0]?.source ?? "source", targets }
})

/** What `claim` answers for a target of a tradeflow. */
export const dueOf = (
  organisation_id: string,
  tradeflow_reference: string,
  target: TrackingTarget.TrackingTarget
): DueTarget => {
  if (target.next_check_at === null) throw new Error("a stopped target is never due")
  return {
    organisation_id,
    tradeflow_reference,
    target_id: target.id,
    source: target.source,
    query: TrackingTarget.queryOf(target),
    high_water: target.high_water,
    next_check_at: target.next_check_at
  }
}

/** The model of the target index: a row per target of the tradeflows committed, with its lease. */
export interface TargetModel {
  readonly rows: Map<string, DueTargetRow>
}

/** A row of the {@link TargetModel}: a target's place in the index and its lease. */
export interface DueTargetRow {
  readonly organisation_id: string
  readonly tradeflow_reference: string
  readonly target_id: string
  readonly source: string
  readonly next_check_at: number | null
  lease_until: number | null
}

const rowKey = (organisation_id: string, reference: string, id: string) =>
  JSON.stringify([organisation_id, reference, id])

/**
 * The reference semantics of the index, written out: a committed tradeflow's targets replace its
 * rows, each keeping its lease while its next check is unchanged; a hard delete drops them.
 */
export const indexModel = {
  make: (): TargetModel => ({ rows: new Map() }),
  upsert: (model: TargetModel, t: Tradeflow): void => {
    const targets = t.tracking?.targets ?? []
    const ids = new Set(targets.map((target) => target.id))
    for (const [key, row] of model.rows) {
      if (
        row.organisation_id === t.organisation_id && row.tradeflow_reference === t.reference && !ids.has(row.target_id)
      ) model.rows.delete(key)
    }
    for (const target of targets) {
      const key = rowKey(t.organisation_id, t.reference, target.id)
      const before = model.rows.get(key)
      model.rows.set(key, {
        organisation_id: t.organisation_id,
        tradeflow_reference: t.reference,
        target_id: target.id,
        source: target.source,
        next_check_at: target.next_check_at,
        lease_until: before !== undefined && before.next_check_at === target.next_check_at ? before.lease_until : null
      })
    }
  },
  remove: (model: TargetModel, organisation_id: string, reference: string): void => {
    for (const [key, row] of model.rows) {
      if (row.organisation_id === organisation_id && row.tradeflow_reference === reference) model.rows.delete(key)
    }
  },
  /** The keys `claim` leases, in its order, leasing them in the model. */
  claim: (
    model: TargetModel,
    options: {
      readonly now: number
      readonly limit: number
      readonly leaseMillis: number
      readonly exclude: ReadonlyArray<string>
    }
  ): Array<string> => {
    const code = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
    const soonest = (a: DueTargetRow, b: DueTargetRow) =>
      a.next_check_at! - b.next_check_at! || code(a.organisation_id, b.organisation_id) ||
      code(a.tradeflow_reference, b.tradeflow_reference) || code(a.target_id, b.target_id)
    const due = [...model.rows.values()].filter((r) =>
      r.next_check_at !== null && r.next_check_at <= options.now &&
      (r.lease_until === null || r.lease_until <= options.now) && !options.exclude.includes(r.source)
    ).sort(soonest)
    const turns = new Map<string, number>()
    const ranked = due.map((r) => {
      const turn = (turns.get(r.organisation_id) ?? 0) + 1
      turns.set(r.organisation_id, turn)
      return { r, turn }
    }).sort((a, b) => a.turn - b.turn || soonest(a.r, b.r)).slice(0, options.limit).map(({ r }) => r)
    for (const r of ranked) r.lease_until = options.now + options.leaseMillis
    return ranked.map((r) => rowKey(r.organisation_id, r.tradeflow_reference, r.target_id))
  }
}

/** A window of instants of its own (see the module notes): its start, below every instant the test uses. */
const freshWindow = Effect.gen(function*() {
  const start = -7e15 + Math.floor(Math.random() * 1e12)
  const tracking = yield* TrackingStore
  yield* tracking.claim({ now: start, limit: 1_000_000, leaseMillis: 1e16 })
  return start
})

/** Enqueues a job for the organisation and commits it with these changes. */
const commitTo = (organisation_id: string, changes: Partial<Commit>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const store = yield* TradeflowStore
    const outcome = yield* queue.enqueue({
      organisation_id,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: 1_700_000_000_000
    })
    if (outcome._tag !== "Enqueued") return yield* Effect.dieMessage(`expected Enqueued, got ${outcome._tag}`)
    expect(yield* store.commit(commitOf(outcome.id, organisation_id, changes))).toBe(true)
  })

/** What a claim at `now` would lease, without leasing anything (a lease of 0 ms ends at once). */
const peek = (now: number, organisations: ReadonlyArray<string>, exclude: ReadonlyArray<string> = []) =>
  Effect.flatMap(TrackingStore, (tracking) =>
    Effect.map(
      tracking.claim({ now, limit: 1_000_000, leaseMillis: 0, exclude }),
      (claimed) => claimed.filter((t) => organisations.includes(t.organisation_id))
    ))

/** A raw event of a tradeflow, with defaults for what a test does not care about. */
export const makeRawEvent = (tradeflow_reference: string, fields: Partial<RawEvent> = {}): RawEvent => ({
  tradeflow_reference,
  source: "carrier-a",
  event_id: "event-1",
  updated_at: 1_000,
  received_at: 2_000,
  raw: JSON.stringify({ eventID: "event-1" }),
  ...fields
})

/** A subscription of `source` for a target of a tradeflow, with a fresh id and defaults for the rest. */
export const makeSubscription = (
  organisation_id: string,
  tradeflow_reference: string,
  target_id: string,
  fields: Partial<StoredSubscription> = {}
): StoredSubscription => ({
  source: "carrier-a",
  subscription_id: freshId("subscription"),
  organisation_id,
  tradeflow_reference,
  target_id,
  secret: btoa(freshId("secret")),
  created_at: 1_000,
  ...fields
})

/** Subscriptions in one order, by source and id (the port gives `subscriptionsOf` none). */
const sorted = (subscriptions: ReadonlyArray<StoredSubscription>) => {
  const key = (s: StoredSubscription) => JSON.stringify([s.source, s.subscription_id])
  return [...subscriptions].sort((a, b) => key(a) < key(b) ? -1 : 1)
}

/** Removes every stale subscription, so that a test's stale search sees only what the test makes stale. */
const freshStale = Effect.gen(function*() {
  const tracking = yield* TrackingStore
  for (const s of yield* tracking.staleSubscriptions(1_000_000)) {
    yield* tracking.removeSubscription(s.source, s.subscription_id)
  }
  expect(yield* tracking.staleSubscriptions(1_000_000)).toEqual([])
})

/** A target of `source` asking `kind` about these references (next checked at 1e15, far from every test's window). */
const makeKindTarget = (source: string, kind: QueryKind, query: TargetQuery): TrackingTarget.TrackingTarget =>
  TrackingTarget.make(source, kind, query, 1e15)

/** What `targetsAbout` answers for a target of a tradeflow: as `claim` would, a stopped one with next check 0. */
const aboutOf = (
  organisation_id: string,
  tradeflow_reference: string,
  target: TrackingTarget.TrackingTarget
): DueTarget & { readonly stopped: boolean } => ({
  ...dueOf(organisation_id, tradeflow_reference, { ...target, next_check_at: target.next_check_at ?? 0 }),
  stopped: target.next_check_at === null
})

/** Found targets in one order, by organisation, tradeflow and target (the port gives `targetsAbout` none). */
const byTarget = (found: ReadonlyArray<DueTarget>) => {
  const key = (t: DueTarget) => JSON.stringify([t.organisation_id, t.tradeflow_reference, t.target_id])
  return [...found].sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)
}

/** `targetsAbout` of these references (the kinds not given: none), in {@link byTarget} order. */
const about = (
  source: string,
  references: {
    readonly equipment?: ReadonlyArray<string>
    readonly booking?: ReadonlyArray<string>
    readonly bill_of_lading?: ReadonlyArray<string>
  }
) =>
  Effect.flatMap(TrackingStore, (tracking) =>
    Effect.map(
      tracking.targetsAbout(source, {
        equipment: references.equipment ?? [],
        booking: references.booking ?? [],
        bill_of_lading: references.bill_of_lading ?? []
      }),
      byTarget
    ))

/**
 * Rows of the target index as the SQL adapters wrote them before the references had columns of their
 * own (the query alone; one reference holds a lone surrogate), what `targetsAbout` answers for some
 * references after the upgrade, and what it should: their upgrade tests insert the rows before the
 * migration that adds the columns, and ask after it.
 */
export const targetsIndexedBefore = (organisation_id: string) => {
  const [equipment, both, stopped] = [
    makeTarget("carrier-a", "MSCU1234565", 1e15, { high_water: 7 }),
    makeKindTarget("carrier-a", "booking+equipment", { booking: "BK-1", equipment: "TGHU0000001" }),
    TrackingTarget.stop(makeKindTarget("carrier-a", "bill_of_lading", { bill_of_lading: "BL-\uD800" }), "not_found")
  ] as const
  const asked = [
    { equipment: ["MSCU1234565"] },
    { booking: ["BK-1"] },
    { equipment: ["TGHU0000001"] },
    { bill_of_lading: ["BL-\uD800"] },
    { equipment: ["BK-1"], booking: ["MSCU1234565", "TGHU0000001"] }
  ]
  return {
    rows: [equipment, both, stopped].map((t) => ({
      organisation_id,
      tradeflow_reference: "TF-old",
      target_id: t.id,
      source: t.source,
      query: JSON.stringify(TrackingTarget.queryOf(t)),
      high_water: t.high_water,
      next_check_at: t.next_check_at
    })),
    answers: Effect.forEach(asked, (references) => about("carrier-a", references)),
    expected: [
      [{ ...aboutOf(organisation_id, "TF-old", equipment), high_water: 7 }],
      [aboutOf(organisation_id, "TF-old", both)],
      [aboutOf(organisation_id, "TF-old", both)],
      [{ ...aboutOf(organisation_id, "TF-old", stopped), next_check_at: 0, stopped: true }],
      []
    ]
  }
}

/** The kinds of reference `targetsAbout` is asked about. */
export const referenceKinds = ["equipment", "booking", "bill_of_lading"] as const

/**
 * The `i`-th tracked tradeflow of the plan tests of `targetsAbout`: its targets ask about every kind
 * of reference (container `MSCU<i>`, of which every tenth is stopped; booking `BK<i>` with
 * container `TGHU<i>`; bill of lading `BL<i>`, of another source).
 */
export const makeTrackedOfEveryKind = (organisation_id: string, i: number): Tradeflow =>
  makeTracked(organisation_id, `TF-${i}`, [
    makeTarget("carrier-a", `MSCU${i}`, i % 10 === 0 ? null : 1e15 + i),
    makeKindTarget("carrier-a", "booking+equipment", { booking: `BK${i}`, equipment: `TGHU${i}` }),
    makeKindTarget("carrier-b", "bill_of_lading", { bill_of_lading: `BL${i}` })
  ])

/**
 * What the plan tests of `targetsAbout` ask of tradeflows of {@link makeTrackedOfEveryKind}:
 * references of every kind at once, then two of each kind alone (in {@link referenceKinds} order).
 */
export const askEveryKind = Effect.flatMap(TrackingStore, (tracking) =>
  Effect.all([
    tracking.targetsAbout("carrier-a", { equipment: ["MSCU1", "TGHU2"], booking: ["BK3"], bill_of_lading: ["BL4"] }),
    ...referenceKinds.map((kind) =>
      tracking.targetsAbout("carrier-a", { equipment: [], booking: [], bill_of_lading: [], [kind]: ["X1", "X2"] })
    )
  ]))

/** The references of each kind a query kind asks about. */
const kindReferences: Record<QueryKind, ReadonlyArray<keyof TargetQuery>> = {
  equipment: ["equipment"],
  booking: ["booking"],
  bill_of_lading: ["bill_of_lading"],
  "booking+equipment": ["booking", "equipment"],
  "bill_of_lading+equipment": ["bill_of_lading", "equipment"]
}

type AboutOp =
  | {
    readonly _tag: "Upsert"
    readonly org: number
    readonly ref: number
    readonly targets: ReadonlyArray<{
      readonly kind: QueryKind
      readonly source: string
      readonly references: TargetQuery
      readonly stopped: boolean
    }>
  }
  | { readonly _tag: "Delete"; readonly org: number; readonly ref: number }

/** A commit of a tradeflow with these targets (organisation and reference by number, up to `max`). */
const arbitraryUpsert = <T>(max: number, targets: fc.Arbitrary<T>) =>
  fc.record({
    _tag: fc.constant("Upsert" as const),
    org: fc.integer({ min: 0, max }),
    ref: fc.integer({ min: 0, max }),
    targets
  })

/** A hard delete of a tradeflow (organisation and reference by number, up to `max`). */
const arbitraryDelete = (max: number) =>
  fc.record({
    _tag: fc.constant("Delete" as const),
    org: fc.integer({ min: 0, max }),
    ref: fc.integer({ min: 0, max })
  })

/** One of three references of each kind (a test prefixes them with its own run). */
const arbitraryReferences: fc.Arbitrary<Required<TargetQuery>> = fc.record({
  equipment: fc.constantFrom("E0", "E1", "E2"),
  booking: fc.constantFrom("B0", "B1", "B2"),
  bill_of_lading: fc.constantFrom("L0", "L1", "L2")
})

const arbitraryAboutOp: fc.Arbitrary<AboutOp> = fc.oneof(
  {
    arbitrary: arbitraryUpsert(
      1,
      fc.array(
        fc.record({
          kind: fc.constantFrom(...queryKinds),
          source: fc.constantFrom("carrier-a", "carrier-b"),
          references: arbitraryReferences,
          stopped: fc.boolean()
        }),
        { maxLength: 5 }
      )
    ),
    weight: 4
  },
  { arbitrary: arbitraryDelete(1), weight: 1 }
)

/** What `targetsAbout` is asked in the property: some references of each kind, of one source. */
const arbitraryAsked = fc.record({
  source: fc.constantFrom("carrier-a", "carrier-b"),
  equipment: fc.subarray(["E0", "E1", "E2", "B0"]),
  booking: fc.subarray(["B0", "B1", "B2", "L0"]),
  bill_of_lading: fc.subarray(["L0", "L1", "L2", "E0"])
})

type Op =
  | { readonly _tag: "Upsert"; readonly org: number; readonly ref: number; readonly targets: ReadonlyArray<TargetOp> }
  | { readonly _tag: "Delete"; readonly org: number; readonly ref: number }
  | {
    readonly _tag: "Claim"
    readonly at: number
    readonly limit: number
    readonly lease: number
    readonly exclude: ReadonlyArray<string>
  }

interface TargetOp {
  readonly id: number
  readonly source: string
  readonly next: number | null
}

const sources = ["carrier-a", "carrier-b"] as const

const arbitraryOp: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: arbitraryUpsert(
      2,
      fc.uniqueArray(
        fc.record({
          id: fc.integer({ min: 0, max: 3 }),
          source: fc.constantFrom(...sources),
          next: fc.option(fc.integer({ min: 0, max: 20 }), { nil: null })
        }),
        { selector: (t) => t.id, maxLength: 4 }
      )
    ),
    weight: 4
  },
  { arbitrary: arbitraryDelete(2), weight: 1 },
  {
    arbitrary: fc.record({
      _tag: fc.constant("Claim" as const),
      at: fc.integer({ min: 0, max: 30 }),
      limit: fc.integer({ min: 0, max: 6 }),
      lease: fc.integer({ min: 0, max: 15 }),
      exclude: fc.subarray([...sources])
    }),
    weight: 3
  }
)

/** Registers the tracking tests of the storage contract on the suite's shared layer. */
export const trackingContract = (
  it: Vitest.MethodsNonLive<Storage, true>,
  options: { readonly numRuns: number }
): void => {
  describe("tracking: the target index", () => {
    it.effect("a commit indexes the targets of the tradeflows it upserts; the index follows the document; a hard delete drops it", () =>
      Effect.gen(function*() {
        const start = yield* freshWindow
        const org = freshId("org")
        // each peek leases until its instant, so the instants only grow
        const mine = (now: number) => peek(now, [org])
        const a = makeTarget("carrier-a", "MSCU1234565", start + 10, { high_water: 5 })
        const b = makeTarget("carrier-a", "TGHU0000001", start + 20)
        const stopped = TrackingTarget.stop(makeTarget("carrier-a", "CSQU3054383", start + 5), "not_found")
        yield* commitTo(org, {
          upserts: [makeTracked(org, "TF-1", [a, b, stopped]), makeTradeflow(org, "TF-plain", [])]
        })
        expect(yield* mine(start + 9)).toEqual([])
        expect(yield* mine(start + 10)).toEqual([dueOf(org, "TF-1", a)])
        expect(yield* mine(start + 20)).toEqual([dueOf(org, "TF-1", a), dueOf(org, "TF-1", b)])

        const a2 = { ...a, next_check_at: start + 40, high_water: 7 }
        const b2 = { ...b, next_check_at: start + 15 }
        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [a2, b2, stopped])] })
        expect(yield* mine(start + 21)).toEqual([dueOf(org, "TF-1", b2)])
        expect(yield* mine(start + 40)).toEqual([dueOf(org, "TF-1", b2), dueOf(org, "TF-1", a2)])

        const c = makeTarget("carrier-a", "CAIU1234567", start + 52)
        const other = makeTarget("carrier-a", "MSCU1234565", start + 51)
        yield* commitTo(org, {
          upserts: [
            makeTracked(org, "TF-1", [TrackingTarget.stop(a2, "deactivated"), c]),
            makeTracked(org, "TF-2", [other])
          ]
        })
        expect(yield* mine(start + 51)).toEqual([dueOf(org, "TF-2", other)])
        expect(yield* mine(start + 60)).toEqual([dueOf(org, "TF-2", other), dueOf(org, "TF-1", c)])

        yield* commitTo(org, { deletes: ["TF-1"] })
        expect(yield* mine(start + 61)).toEqual([dueOf(org, "TF-2", other)])
        yield* commitTo(org, { deletes: ["TF-2"], upserts: [makeTracked(org, "TF-1", [b])] })
        expect(yield* mine(start + 62)).toEqual([dueOf(org, "TF-1", b)])
      }))

    it.effect("claim: only due, unleased targets of sources not excluded, round-robin across organisations, within the limit", () =>
      Effect.gen(function*() {
        const start = yield* freshWindow
        const tracking = yield* TrackingStore
        const [a, b, c] = [freshId("org-a"), freshId("org-b"), freshId("org-c")]
        const t = (name: string, offset: number | null, source = "carrier-a") =>
          makeTarget(source, name, offset === null ? null : start + offset)
        yield* commitTo(a, {
          upserts: [
            makeTracked(a, "TF-1", [t("A1", 1), t("A3", 3), t("A5", 5)]),
            makeTracked(a, "TF-2", [t("A2", 2), t("A4", 5)])
          ]
        })
        yield* commitTo(b, {
          upserts: [makeTracked(b, "TF-1", [t("B1", 10), t("B2", 11), t("B-paused", 1, "paused")])]
        })
        yield* commitTo(c, {
          upserts: [makeTracked(c, "TF-1", [t("C1", 20), t("C-later", 1_000), t("C-stopped", null)])]
        })
        const names = (limit: number, exclude: ReadonlyArray<string> = ["paused"]) =>
          Effect.map(
            tracking.claim({ now: start + 100, limit, leaseMillis: 0, exclude }),
            (claimed) => claimed.map((d) => d.query.equipment)
          )
        expect(yield* names(4)).toEqual(["A1", "B1", "C1", "A2"])
        expect(yield* names(100)).toEqual(["A1", "B1", "C1", "A2", "B2", "A3", "A5", "A4"])
        expect(yield* names(100, [])).toEqual(["A1", "B-paused", "C1", "A2", "B1", "A3", "B2", "A5", "A4"])
        expect(yield* names(100, ["paused", "carrier-a"])).toEqual([])
        expect(yield* names(0)).toEqual([])
        expect(yield* names(2.7)).toEqual(["A1", "B1"])
      }))

    it.effect("claim: a claimed target is not claimed again until its lease runs out or a commit moves its next check", () =>
      Effect.gen(function*() {
        const start = yield* freshWindow
        const tracking = yield* TrackingStore
        const org = freshId("org")
        const claim = (now: number, leaseMillis = 100) =>
          Effect.map(
            tracking.claim({ now, limit: 1_000_000, leaseMillis }),
            (claimed) => claimed.filter((d) => d.organisation_id === org).map((d) => d.query.equipment)
          )
        const kept = makeTarget("carrier-a", "KEPT", start + 10)
        const moved = makeTarget("carrier-a", "MOVED", start + 10)
        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [kept]), makeTracked(org, "TF-2", [moved])] })
        expect(yield* claim(start + 20)).toEqual(["KEPT", "MOVED"])
        expect(yield* claim(start + 20)).toEqual([])
        expect(yield* claim(start + 119)).toEqual([])
        expect(yield* claim(start + 120)).toEqual(["KEPT", "MOVED"])
        yield* commitTo(org, {
          upserts: [
            makeTracked(org, "TF-1", [{ ...kept, high_water: 42, last_check_at: start + 121 }]),
            makeTracked(org, "TF-2", [{ ...moved, next_check_at: start + 12 }])
          ]
        })
        expect(yield* claim(start + 121)).toEqual(["MOVED"])
        expect(yield* claim(start + 219)).toEqual([])
        expect(yield* claim(start + 220)).toEqual(["KEPT"])
      }))

    it.effect.prop("claim: any sequence of commits, deletes and claims leases what the model leases, in its order", [
      fc.array(arbitraryOp, { maxLength: 16 })
    ], ([ops]) =>
      Effect.gen(function*() {
        const start = yield* freshWindow
        const tracking = yield* TrackingStore
        const run = freshId("run")
        const orgs = [0, 1, 2].map((i) => `${run}-org${i}`)
        const model = indexModel.make()
        for (const op of ops) {
          if (op._tag === "Upsert") {
            const org = orgs[op.org]!
            const t = makeTracked(
              org,
              `TF-${op.ref}`,
              op.targets.map((target) =>
                makeTarget(target.source, `EQ${target.id}`, target.next === null ? null : start + 1 + target.next)
              )
            )
            yield* commitTo(org, { upserts: [t] })
            indexModel.upsert(model, t)
          } else if (op._tag === "Delete") {
            yield* commitTo(orgs[op.org]!, { deletes: [`TF-${op.ref}`] })
            indexModel.remove(model, orgs[op.org]!, `TF-${op.ref}`)
          } else {
            const now = start + 1 + op.at
            const claimed = yield* tracking.claim({ now, limit: op.limit, leaseMillis: op.lease, exclude: op.exclude })
            expect(claimed.map((d) => rowKey(d.organisation_id, d.tradeflow_reference, d.target_id)))
              .toEqual(indexModel.claim(model, { now, limit: op.limit, leaseMillis: op.lease, exclude: op.exclude }))
            for (const d of claimed) {
              expect(d.next_check_at).toBeLessThanOrEqual(now)
              expect(d.query).toEqual({ equipment: d.target_id.split("\"")[1] })
            }
          }
        }
      }), { fastCheck: { numRuns: options.numRuns } })
  })

  describe("tracking: targets about references", () => {
    it.effect("targetsAbout: the targets of the source asking about a container, a booking or a bill of lading, of every organisation, stopped ones flagged, each once", () =>
      Effect.gen(function*() {
        const [a, b] = [freshId("org-a"), freshId("org-b")]
        const run = freshId("ref")
        const [eq1, eq2, eq3, bk1, bk2, bl1, bl2] = ["EQ1", "EQ2", "EQ3", "BK1", "BK2", "BL1", "BL2"]
          .map((r) => `${run}-${r}`) as [string, string, string, string, string, string, string]
        const byEquipment = makeTarget("carrier-a", eq1, 1e15, { high_water: 5 })
        const byBooking = makeKindTarget("carrier-a", "booking", { booking: bk1 })
        const byBoth = makeKindTarget("carrier-a", "booking+equipment", { booking: bk2, equipment: eq2 })
        const stopped = TrackingTarget.stop(makeTarget("carrier-a", eq3, 1e15, { high_water: 9 }), "not_found")
        const ofOtherSource = makeTarget("carrier-b", eq1, 1e15)
        const byBillAndEquipment = makeKindTarget("carrier-a", "bill_of_lading+equipment", {
          bill_of_lading: bl2,
          equipment: eq1
        })
        const otherOrg = makeTarget("carrier-a", eq1, 2e15)
        const byBill = makeKindTarget("carrier-a", "bill_of_lading", { bill_of_lading: bl1 })
        yield* commitTo(a, {
          upserts: [
            makeTracked(a, "TF-1", [byEquipment, byBooking, byBoth, stopped]),
            makeTracked(a, "TF-2", [byBillAndEquipment]),
            makeTracked(a, "TF-3", [ofOtherSource]),
            makeTradeflow(a, "TF-plain", [eq1])
          ]
        })
        yield* commitTo(b, { upserts: [makeTracked(b, "TF-1", [otherOrg, byBill])] })

        expect(yield* about("carrier-a", { equipment: [eq1] })).toEqual(byTarget([
          aboutOf(a, "TF-1", byEquipment),
          aboutOf(a, "TF-2", byBillAndEquipment),
          aboutOf(b, "TF-1", otherOrg)
        ]))
        expect(yield* about("carrier-b", { equipment: [eq1] })).toEqual([aboutOf(a, "TF-3", ofOtherSource)])
        expect(yield* about("carrier-c", { equipment: [eq1], booking: [bk1], bill_of_lading: [bl1] })).toEqual([])
        expect(yield* about("carrier-a", { booking: [bk1] })).toEqual([aboutOf(a, "TF-1", byBooking)])
        expect(yield* about("carrier-a", { booking: [bk2] })).toEqual([aboutOf(a, "TF-1", byBoth)])
        expect(yield* about("carrier-a", { equipment: [eq2] })).toEqual([aboutOf(a, "TF-1", byBoth)])
        expect(yield* about("carrier-a", { equipment: [eq2, eq2], booking: [bk2] })).toEqual([
          aboutOf(a, "TF-1", byBoth)
        ])
        expect(yield* about("carrier-a", { bill_of_lading: [bl1] })).toEqual([aboutOf(b, "TF-1", byBill)])
        expect(yield* about("carrier-a", { bill_of_lading: [bl2], equipment: [eq1] })).toEqual(byTarget([
          aboutOf(a, "TF-1", byEquipment),
          aboutOf(a, "TF-2", byBillAndEquipment),
          aboutOf(b, "TF-1", otherOrg)
        ]))
        expect(yield* about("carrier-a", { equipment: [eq3] })).toEqual([
          { ...aboutOf(a, "TF-1", stopped), next_check_at: 0, stopped: true, high_water: 9 }
        ])
        expect(yield* about("carrier-a", { equipment: [eq1] })).toContainEqual({
          ...aboutOf(a, "TF-1", byEquipment),
          next_check_at: 1e15,
          stopped: false,
          high_water: 5
        })
        // a reference of one kind does not find a target asking about another kind with the same text
        expect(yield* about("carrier-a", { booking: [eq1, eq2], bill_of_lading: [bk1, eq3], equipment: [bl1, bk2] }))
          .toEqual([])
        expect(yield* about("carrier-a", {})).toEqual([])
        expect(
          yield* about("carrier-a", {
            equipment: [eq1, eq2, eq3, `${run}-unknown`],
            booking: [bk1, bk2],
            bill_of_lading: [bl1, bl2]
          })
        ).toEqual(byTarget([
          aboutOf(a, "TF-1", byEquipment),
          aboutOf(a, "TF-1", byBooking),
          aboutOf(a, "TF-1", byBoth),
          aboutOf(a, "TF-1", stopped),
          aboutOf(a, "TF-2", byBillAndEquipment),
          aboutOf(b, "TF-1", otherOrg),
          aboutOf(b, "TF-1", byBill)
        ]))
      }))

    it.effect("targetsAbout follows the documents: a target stopped, dropped, or gone with a hard delete; long lists find each target once; a lone surrogate is found", () =>
      Effect.gen(function*() {
        const org = freshId("org")
        const run = freshId("ref")
        const byEquipment = makeTarget("carrier-a", `${run}-EQ1`, 1e15)
        const byBooking = makeKindTarget("carrier-a", "booking", { booking: `${run}-BK1` })
        const byBoth = makeKindTarget("carrier-a", "booking+equipment", {
          booking: `${run}-BK2`,
          equipment: `${run}-EQ2`
        })
        const surrogate = makeKindTarget("carrier-a", "bill_of_lading", { bill_of_lading: `${run}-BL\uDC00` })
        const deleted = makeTarget("carrier-a", `${run}-EQ1`, 1e15)
        yield* commitTo(org, {
          upserts: [
            makeTracked(org, "TF-1", [byEquipment, byBooking, byBoth]),
            makeTracked(org, "TF-2", [deleted]),
            makeTracked(org, "TF-3", [surrogate])
          ]
        })
        expect(yield* about("carrier-a", { bill_of_lading: [`${run}-BL\uDC00`] })).toEqual([
          aboutOf(org, "TF-3", surrogate)
        ])
        const everything = {
          equipment: [`${run}-EQ1`, `${run}-EQ2`],
          booking: [`${run}-BK1`, `${run}-BK2`]
        }
        expect(yield* about("carrier-a", everything)).toEqual(byTarget([
          aboutOf(org, "TF-1", byEquipment),
          aboutOf(org, "TF-1", byBooking),
          aboutOf(org, "TF-1", byBoth),
          aboutOf(org, "TF-2", deleted)
        ]))

        const stopped = TrackingTarget.stop({ ...byEquipment, high_water: 3 }, "deactivated")
        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [stopped, byBoth])] })
        expect(yield* about("carrier-a", { booking: [`${run}-BK1`] })).toEqual([])
        expect(yield* about("carrier-a", everything)).toEqual(byTarget([
          { ...aboutOf(org, "TF-1", byEquipment), high_water: 3, next_check_at: 0, stopped: true },
          aboutOf(org, "TF-1", byBoth),
          aboutOf(org, "TF-2", deleted)
        ]))

        yield* commitTo(org, { deletes: ["TF-2"] })
        expect(yield* about("carrier-a", everything)).toEqual(byTarget([
          aboutOf(org, "TF-1", stopped),
          aboutOf(org, "TF-1", byBoth)
        ]))

        // thousands of references, the two of one target far apart in the asked lists
        const unknown = (kind: string) => Array.from({ length: 1_500 }, (_, i) => `${run}-${kind}-unknown-${i}`)
        expect(
          yield* about("carrier-a", {
            equipment: [`${run}-EQ2`, ...unknown("EQ"), `${run}-EQ1`],
            booking: [...unknown("BK"), `${run}-BK2`],
            bill_of_lading: unknown("BL")
          })
        ).toEqual(byTarget([aboutOf(org, "TF-1", stopped), aboutOf(org, "TF-1", byBoth)]))

        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [])] })
        expect(yield* about("carrier-a", everything)).toEqual([])
      }))

    it.effect.prop("targetsAbout: after any commits and hard deletes, any references find what the documents hold", [
      fc.array(arbitraryAboutOp, { maxLength: 8 }),
      fc.array(arbitraryAsked, { minLength: 1, maxLength: 4 })
    ], ([ops, asked]) =>
      Effect.gen(function*() {
        const run = freshId("run")
        const orgs = [0, 1].map((i) => `${run}-org${i}`)
        const named = (r: string) => `${run}-${r}`
        const documents = new Map<string, Tradeflow>()
        for (const op of ops) {
          const org = orgs[op.org]!
          const reference = `TF-${op.ref}`
          if (op._tag === "Delete") {
            yield* commitTo(org, { deletes: [reference] })
            documents.delete(JSON.stringify([org, reference]))
            continue
          }
          const targets = new Map<string, TrackingTarget.TrackingTarget>()
          for (const t of op.targets) {
            const query = Object.fromEntries(kindReferences[t.kind].map((k) => [k, named(t.references[k]!)]))
            const target = makeKindTarget(t.source, t.kind, query)
            targets.set(target.id, t.stopped ? TrackingTarget.stop(target, "not_found") : target)
          }
          const t = makeTracked(org, reference, [...targets.values()])
          yield* commitTo(org, { upserts: [t] })
          documents.set(JSON.stringify([org, reference]), t)
        }
        for (const { source, ...references } of asked) {
          const wanted = {
            equipment: references.equipment.map(named),
            booking: references.booking.map(named),
            bill_of_lading: references.bill_of_lading.map(named)
          }
          const expected = [...documents.values()].flatMap((t) =>
            (t.tracking?.targets ?? []).filter((target) =>
              target.source === source &&
              referenceKinds.some((k) => {
                const value = target[k]
                return value !== undefined && wanted[k].includes(value)
              })
            ).map((target) => aboutOf(t.organisation_id, t.reference, target))
          )
          expect(yield* about(source, wanted)).toEqual(byTarget(expected))
        }
      }), { fastCheck: { numRuns: options.numRuns } })
  })

  describe("tracking: subscriptions", () => {
    it.effect("subscriptions: kept by source and id, replaced, listed per tradeflow of an organisation, removed", () =>
      Effect.gen(function*() {
        const tracking = yield* TrackingStore
        const [org, other] = [freshId("org"), freshId("org")]
        const [t1, t2] = [makeTarget("carrier-a", "MSCU1234565", 1).id, makeTarget("carrier-b", "TGHU0000001", 1).id]
        const a = makeSubscription(org, "TF-1", t1, { created_at: 10 })
        const b = makeSubscription(org, "TF-1", t2, { source: "carrier-b", created_at: 5 })
        const sameId = makeSubscription(other, "TF-1", t2, { source: "carrier-b", subscription_id: a.subscription_id })
        const c = makeSubscription(org, "TF-2", t1)
        for (const s of [a, b, sameId, c]) yield* tracking.putSubscription(s)
        expect(yield* tracking.subscription(a.source, a.subscription_id)).toEqual(Option.some(a))
        expect(yield* tracking.subscription("carrier-b", a.subscription_id)).toEqual(Option.some(sameId))
        expect(yield* tracking.subscription("carrier-c", a.subscription_id)).toEqual(Option.none())
        expect(sorted(yield* tracking.subscriptionsOf(org, "TF-1"))).toEqual(sorted([a, b]))
        expect(yield* tracking.subscriptionsOf(org, "TF-2")).toEqual([c])
        expect(yield* tracking.subscriptionsOf(other, "TF-1")).toEqual([sameId])
        expect(yield* tracking.subscriptionsOf(other, "TF-2")).toEqual([])
        expect(yield* tracking.subscriptionsOf(org, "TF-3")).toEqual([])

        const moved = { ...a, tradeflow_reference: "TF-2", target_id: t2, secret: btoa("replaced"), created_at: 20 }
        yield* tracking.putSubscription(moved)
        expect(yield* tracking.subscription(a.source, a.subscription_id)).toEqual(Option.some(moved))
        expect(yield* tracking.subscriptionsOf(org, "TF-1")).toEqual([b])
        expect(sorted(yield* tracking.subscriptionsOf(org, "TF-2"))).toEqual(sorted([moved, c]))
        expect(yield* tracking.subscription("carrier-b", a.subscription_id)).toEqual(Option.some(sameId))

        yield* tracking.removeSubscription(a.source, a.subscription_id)
        expect(yield* tracking.subscription(a.source, a.subscription_id)).toEqual(Option.none())
        expect(yield* tracking.subscriptionsOf(org, "TF-2")).toEqual([c])
        expect(yield* tracking.subscription("carrier-b", a.subscription_id)).toEqual(Option.some(sameId))
        yield* tracking.removeSubscription(a.source, a.subscription_id)
        yield* tracking.removeSubscription("carrier-z", freshId("unknown"))
        expect(sorted(yield* tracking.subscriptionsOf(org, "TF-1"))).toEqual([b])
      }))

    it.effect("subscriptions: stale once their target stops, leaves the document or goes with a hard delete, not while it is due or scheduled", () =>
      Effect.gen(function*() {
        const start = yield* freshWindow
        const tracking = yield* TrackingStore
        const org = freshId("org")
        const stale = Effect.map(
          tracking.staleSubscriptions(1_000_000),
          (all) => all.filter((s) => s.organisation_id === org)
        )
        const due = makeTarget("carrier-a", "MSCU1234565", start + 1)
        const scheduled = makeTarget("carrier-a", "TGHU0000001", start + 1e9)
        const deleted = makeTarget("carrier-a", "CSQU3054383", start + 5)
        yield* commitTo(org, {
          upserts: [makeTracked(org, "TF-1", [due, scheduled]), makeTracked(org, "TF-2", [deleted])]
        })
        const ofDue = makeSubscription(org, "TF-1", due.id, { created_at: 1 })
        const ofScheduled = makeSubscription(org, "TF-1", scheduled.id, { created_at: 2 })
        const ofDeleted = makeSubscription(org, "TF-2", deleted.id, { source: "carrier-b", created_at: 3 })
        for (const s of [ofDeleted, ofScheduled, ofDue]) yield* tracking.putSubscription(s)
        expect(yield* stale).toEqual([])
        expect((yield* peek(start + 1, [org])).map((d) => d.target_id)).toEqual([due.id])
        yield* tracking.claim({ now: start + 1, limit: 1_000_000, leaseMillis: 1_000 })
        expect(yield* stale).toEqual([])

        yield* commitTo(org, {
          upserts: [makeTracked(org, "TF-1", [TrackingTarget.stop(due, "not_found"), scheduled])]
        })
        expect(yield* stale).toEqual([ofDue])
        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [TrackingTarget.stop(due, "not_found")])] })
        expect(yield* stale).toEqual([ofDue, ofScheduled])
        yield* commitTo(org, { deletes: ["TF-2"] })
        expect(yield* stale).toEqual([ofDue, ofScheduled, ofDeleted])
        expect(yield* tracking.subscriptionsOf(org, "TF-2")).toEqual([ofDeleted])

        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [{ ...due, next_check_at: start + 50 }])] })
        expect(yield* stale).toEqual([ofScheduled, ofDeleted])
      }))

    it.effect("stale subscriptions: oldest created first, at most the limit; removing one not kept is no failure", () =>
      Effect.gen(function*() {
        yield* freshStale
        const tracking = yield* TrackingStore
        const [org, other] = [freshId("org"), freshId("org")]
        const live = makeTarget("carrier-a", "MSCU1234565", 7e15)
        yield* commitTo(org, { upserts: [makeTracked(org, "TF-1", [live])] })
        const gone = makeTarget("carrier-a", "TGHU0000001", null).id
        const first = makeSubscription(org, "TF-9", gone, { created_at: 10 })
        const second = makeSubscription(other, "TF-1", live.id, { created_at: 15 })
        const third = makeSubscription(org, "TF-1", gone, { source: "carrier-b", created_at: 20 })
        const fourth = makeSubscription(org, "TF-9", gone, { created_at: 30 })
        const kept = makeSubscription(org, "TF-1", live.id, { created_at: 0 })
        for (const s of [fourth, kept, second, first, third]) yield* tracking.putSubscription(s)
        expect(yield* tracking.staleSubscriptions(2)).toEqual([first, second])
        expect(yield* tracking.staleSubscriptions(2.7)).toEqual([first, second])
        expect(yield* tracking.staleSubscriptions(10)).toEqual([first, second, third, fourth])
        expect(yield* tracking.staleSubscriptions(0)).toEqual([])

        yield* tracking.removeSubscription(first.source, first.subscription_id)
        expect(yield* tracking.staleSubscriptions(2)).toEqual([second, third])
        yield* tracking.removeSubscription(first.source, first.subscription_id)
        yield* tracking.removeSubscription("carrier-z", freshId("unknown"))
        expect(yield* tracking.staleSubscriptions(10)).toEqual([second, third, fourth])
        expect(yield* tracking.subscription(kept.source, kept.subscription_id)).toEqual(Option.some(kept))
      }))
  })

  describe("tracking: raw events", () => {
    it.effect("raw events: each version kept once, oldest received first, per tradeflow; a hard delete drops them", () =>
      Effect.gen(function*() {
        const tracking = yield* TrackingStore
        const [org, other] = [freshId("org"), freshId("org")]
        const v1 = makeRawEvent("TF-1", { received_at: 100 })
        const early = makeRawEvent("TF-1", { event_id: "event-2", received_at: 50 })
        yield* commitTo(org, {
          upserts: [makeTradeflow(org, "TF-1", []), makeTradeflow(org, "TF-2", [])],
          raw_events: [v1, early, { ...v1, received_at: 200, raw: "{\"again\":true}" }]
        })
        const v2 = makeRawEvent("TF-1", { updated_at: 1_001, received_at: 100, raw: "{\"version\":2}" })
        const otherSource = makeRawEvent("TF-1", { source: "carrier-b", received_at: 100 })
        const second = makeRawEvent("TF-2", { received_at: 10 })
        yield* commitTo(org, { raw_events: [{ ...v1, received_at: 300 }, v2, otherSource, second] })
        yield* commitTo(other, { raw_events: [makeRawEvent("TF-1", { received_at: 1 })] })
        expect(yield* tracking.rawEvents(org, "TF-1", 100)).toEqual([early, v1, v2, otherSource])
        expect(yield* tracking.rawEvents(org, "TF-1", 2)).toEqual([early, v1])
        expect(yield* tracking.rawEvents(org, "TF-1", 0)).toEqual([])
        expect(yield* tracking.rawEvents(org, "TF-2", 100)).toEqual([second])
        expect(yield* tracking.rawEvents(other, "TF-1", 100)).toEqual([makeRawEvent("TF-1", { received_at: 1 })])
        yield* commitTo(org, { deletes: ["TF-1"] })
        expect(yield* tracking.rawEvents(org, "TF-1", 100)).toEqual([])
        expect(yield* tracking.rawEvents(org, "TF-2", 100)).toEqual([second])
        expect(yield* tracking.rawEvents(other, "TF-1", 100)).toEqual([makeRawEvent("TF-1", { received_at: 1 })])
        yield* commitTo(org, { raw_events: [v1] })
        expect(yield* tracking.rawEvents(org, "TF-1", 100)).toEqual([v1])
      }))
  })
}
