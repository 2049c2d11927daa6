/**
 * The upstream contract: property tests of the paginated feed and its cursors over a storage
 * adapter (memory, SQLite, PostgreSQL). Pages must walk exactly the unpaginated list, resume after
 * new messages without duplicates or gaps (also while another fiber commits), respect every filter
 * on every page, and refuse every cursor that was not issued for the organisation and filters.
 *
 * @module
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, Layer } from "effect"
import type * as Job from "../src/Job.js"
import { JobQueue } from "../src/JobQueue.js"
import { MessageStore } from "../src/MessageStore.js"
import type { Settings } from "../src/Settings.js"
import type { MessageQuery, NewMessage, StoredMessage } from "../src/StoredMessage.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import * as Upstream from "../src/Upstream.js"
import { arbitraryMessage, expectedLog, freshId, selectMessages } from "./StorageContract.js"

/** Tuning of the upstream contract suite. */
export interface UpstreamContractOptions {
  /** Runs per property test (default 25). */
  readonly numRuns?: number
}

/** The ports the upstream contract needs from an adapter. */
export type UpstreamPorts = JobQueue | TradeflowStore | MessageStore | Settings

/** @inline */
type Filters = Omit<Upstream.UpstreamFilters, "organisation_id">

const utf8 = new TextEncoder()

const messageTypes = ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"] as const
const containerNumbers = ["MSCU1234565", "TGHU0000001", "CSQU3054383"] as const

/** An APIMessage-like body whose payload sometimes carries a `shipment`. */
const arbitraryBody = (m: NewMessage): fc.Arbitrary<string> =>
  fc.record({ shipment: fc.jsonValue(), status: fc.jsonValue() }, { requiredKeys: ["status"] })
    .map((payload) =>
      JSON.stringify({ hash: m.hash, type: m.type, tradeflow_reference: m.tradeflow_reference, payload })
    )

/** Messages of the storage contract pools, with bodies that `excludes=shipment` can change. */
export const arbitraryUpstreamMessage: fc.Arbitrary<NewMessage> = arbitraryMessage.chain((m) =>
  arbitraryBody(m).map((body) => ({ ...m, body }))
)

/** Any combination of the upstream filters over the pools of {@link arbitraryUpstreamMessage}. */
export const arbitraryFilters: fc.Arbitrary<Filters> = fc.record({
  tradeflow: fc.constantFrom("TF-1", "TF-2", "TF-3", "TF-none"),
  container: fc.constantFrom(...containerNumbers),
  types: fc.array(fc.constantFrom(...messageTypes), { minLength: 1, maxLength: 5 }),
  latest: fc.boolean(),
  exclude_shipment: fc.boolean()
}, { requiredKeys: [] })

/** The messages the filters select from a log, in order: the reference semantics of a walk. */
export const expectedFeed = (log: ReadonlyArray<StoredMessage>, filters: Filters): Array<StoredMessage> =>
  selectMessages(
    log,
    {
      organisation_id: "model",
      take: "oldest",
      limit: Number.MAX_SAFE_INTEGER,
      ...(filters.tradeflow === undefined ? {} : { tradeflow_reference: filters.tradeflow }),
      ...(filters.container === undefined
        ? {}
        : { container_reference: filters.container, exclude_types: ["SHIPMENT_CHANGE"] }),
      ...(filters.types === undefined ? {} : { types: filters.types }),
      ...(filters.latest === true ? { latest: true } : {})
    } satisfies MessageQuery
  )

/** The body as `excludes=shipment` must give it, compared as JSON values. */
const expectedBody = (body: string, filters: Filters): unknown => {
  const value = JSON.parse(body) as { payload?: Record<string, unknown> }
  if (filters.exclude_shipment === true && value.payload !== undefined) delete value.payload["shipment"]
  return value
}

const expectShaped = (got: ReadonlyArray<StoredMessage>, expected: ReadonlyArray<StoredMessage>, filters: Filters) => {
  expect(got.map((m) => [m.seq, m.hash])).toEqual(expected.map((m) => [m.seq, m.hash]))
  expect(got.map((m) => JSON.parse(m.body))).toEqual(expected.map((m) => expectedBody(m.body, filters)))
}

const enqueued = (outcome: Job.EnqueueOutcome): number => {
  if (outcome._tag !== "Enqueued") throw new Error(`expected Enqueued, got ${outcome._tag}`)
  return outcome.id
}

/** Enqueues a job for the organisation and commits these messages with it. */
export const commitMessages = (organisation_id: string, messages: ReadonlyArray<NewMessage>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const store = yield* TradeflowStore
    const job_id = enqueued(
      yield* queue.enqueue(
        {
          organisation_id,
          environment: "production",
          payload: { _tag: "Delete", reference: null, hard: false },
          received_at: 1_700_000_000_000
        } satisfies Job.NewJob
      )
    )
    expect(yield* store.commit({ job_id, organisation_id, upserts: [], deletes: [], messages, result: { count: 0 } }))
      .toBe(true)
  })

/** What a spy on a database driver counts: the result rows it handed over and the characters of their `body` fields. */
export interface DriverReads {
  readonly rows: number
  readonly bodyChars: number
}

/**
 * The byte cap at the driver (run it with a spy on the adapter's driver): of 40 messages with
 * 100,000-character bodies, a read capped at 350,000 bytes answers 3 (oldest, then newest) and
 * the driver hands over their bodies and no other, and size rows for at most `limit + 1` messages;
 * `readBodies` the same bodies, in rows for at most `limit + 1` messages.
 */
export const checkReadFetchesOnlyWhatItReturns = (
  measure: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<[A, DriverReads], E, R>
) =>
  Effect.gen(function*() {
    const org = `org_${globalThis.crypto.randomUUID()}`
    const body = (n: number) => JSON.stringify({ n, text: "x".repeat(100_000 - 16 - String(n).length) })
    yield* commitMessages(
      org,
      Array.from({ length: 40 }, (_, n) => ({
        hash: `big-${n}`,
        type: "BASIC_STATUS",
        tradeflow_reference: "TF-1",
        container_reference: null,
        generated_at: n,
        body: body(n)
      }))
    )
    const store = yield* MessageStore
    for (const take of ["oldest", "newest"] as const) {
      for (const limit of [500, 10]) {
        const [run, reads] = yield* measure(store.read({ organisation_id: org, take, limit, max_bytes: 350_000 }))
        expect(run.messages.map((m) => m.hash)).toEqual(
          take === "oldest" ? ["big-0", "big-1", "big-2"] : ["big-37", "big-38", "big-39"]
        )
        expect(run.more).toBe(true)
        expect(reads.bodyChars).toBe(3 * 100_000)
        expect(reads.rows).toBe(Math.min(40, limit + 1) + 3)
        const [bodies, bodyReads] = yield* measure(
          store.readBodies({ organisation_id: org, take, limit, max_bytes: 350_000 })
        )
        expect(bodies.messages.map((m) => JSON.parse(m.body).n)).toEqual(take === "oldest" ? [0, 1, 2] : [37, 38, 39])
        expect(bodies.more).toBe(true)
        expect(bodyReads.bodyChars).toBe(3 * 100_000)
        expect(bodyReads.rows).toBe(Math.min(40, limit + 1))
      }
    }
  })

/** Walks every page from `cursor` (or the first page); checks the page invariants on the way. */
export const walk = (query: Upstream.PageQuery, bound = 10_000) =>
  Effect.gen(function*() {
    const upstream = yield* Upstream.Upstream
    const data: Array<StoredMessage> = []
    let cursor = query.cursor
    for (let pages = 0; pages < bound; pages++) {
      const page = yield* upstream.page({ ...query, ...(cursor === undefined ? {} : { cursor }) })
      expect(page.data.length).toBeLessThanOrEqual(query.per_page)
      data.push(...page.data)
      cursor = page.next_cursor
      if (!page.has_more) return { data, cursor, pages: pages + 1 }
      expect(page.data.length).toBe(query.per_page)
    }
    throw new Error("the walk did not end")
  })

const invalid = (effect: Effect.Effect<unknown, unknown, Upstream.Upstream>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect((error as { _tag?: string })._tag).toBe("InvalidCursor")
    return error as Upstream.Cursor.InvalidCursor
  })

const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** Same selection, written differently: types reordered and repeated, other excludes. */
const equivalent = (filters: Filters): Filters => ({
  ...filters,
  ...(filters.types === undefined ? {} : { types: [...filters.types].reverse().concat(filters.types) }),
  exclude_shipment: filters.exclude_shipment !== true
})

const sameSelection = (a: Filters, b: Filters): boolean =>
  a.tradeflow === b.tradeflow && a.container === b.container && (a.latest === true) === (b.latest === true) &&
  JSON.stringify(a.types === undefined ? null : [...new Set(a.types)].sort()) ===
    JSON.stringify(b.types === undefined ? null : [...new Set(b.types)].sort())

/**
 * Registers the upstream contract tests for an adapter. `layer` is built once (one database);
 * `Upstream.layer` is built over it, and every test works on fresh organisation ids.
 */
export const upstreamContract = (
  name: string,
  layer: Layer.Layer<UpstreamPorts, unknown>,
  options: UpstreamContractOptions = {}
): void => {
  const numRuns = options.numRuns ?? 25
  const props = { fastCheck: { numRuns } }

  sharedLayer(Layer.provideMerge(Upstream.layer(), layer), { timeout: "60 seconds", excludeTestServices: true })(
    `upstream contract: ${name}`,
    (it) => {
      it.effect.prop("a walk returns exactly the unpaginated list, each page shaped by the filters", [
        fc.array(fc.array(arbitraryUpstreamMessage, { maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        arbitraryFilters,
        fc.integer({ min: 1, max: 7 })
      ], ([batches, filters, perPage]) =>
        Effect.gen(function*() {
          const org = freshId("org")
          for (const batch of batches) yield* commitMessages(org, batch)
          const expected = expectedFeed(expectedLog(batches), filters)
          const { cursor, data, pages } = yield* walk({ organisation_id: org, per_page: perPage, ...filters })
          expectShaped(data, expected, filters)
          expect(pages).toBe(Math.max(1, Math.ceil(expected.length / perPage)))
          const again = yield* Effect.flatMap(
            Upstream.Upstream,
            (u) => u.page({ organisation_id: org, per_page: perPage, cursor, ...filters })
          )
          expect([again.data, again.has_more, again.next_cursor]).toEqual([[], false, cursor])
        }), props)

      it.effect.prop(
        "under a byte cap a walk returns exactly the feed, each page all that fits, cursors right after it (pageBodies the same)",
        [
          fc.array(arbitraryUpstreamMessage, { maxLength: 25 }),
          arbitraryFilters,
          fc.integer({ min: 1, max: 7 }),
          fc.integer({ min: 0, max: 1_500 })
        ],
        ([batch, filters, perPage, maxBytes]) =>
          Effect.gen(function*() {
            const org = freshId("org")
            yield* commitMessages(org, batch)
            const feed = expectedFeed(expectedLog([batch]), filters)
            const upstream = yield* Effect.provide(Upstream.Upstream, Upstream.layer({ maxBytes }))
            const data: Array<StoredMessage> = []
            let cursor: string | undefined
            while (true) {
              const query = {
                organisation_id: org,
                per_page: perPage,
                ...filters,
                ...(cursor === undefined ? {} : { cursor })
              }
              const page = yield* upstream.page(query)
              expect(yield* upstream.pageBodies(query)).toEqual({
                data: page.data.map((m) => ({ seq: m.seq, body: m.body })),
                next_cursor: page.next_cursor,
                has_more: page.has_more
              })
              const expected: Array<StoredMessage> = []
              let total = 0
              for (const m of feed.slice(data.length, data.length + perPage)) {
                total += utf8.encode(m.body).length
                if (expected.length > 0 && total > maxBytes) break
                expected.push(m)
              }
              expect(page.data.map((m) => m.seq)).toEqual(expected.map((m) => m.seq))
              data.push(...page.data)
              expect(page.has_more).toBe(data.length < feed.length)
              cursor = page.next_cursor
              if (!page.has_more) break
            }
            expectShaped(data, feed, filters)
          }),
        props
      )

      it.effect.prop("a stored cursor resumes with exactly the messages committed since", [
        fc.array(arbitraryUpstreamMessage, { maxLength: 15 }),
        fc.array(arbitraryUpstreamMessage, { maxLength: 15 }),
        arbitraryFilters,
        fc.integer({ min: 1, max: 5 })
      ], ([before, after, filters, perPage]) =>
        Effect.gen(function*() {
          const org = freshId("org")
          yield* commitMessages(org, before)
          const first = yield* walk({ organisation_id: org, per_page: perPage, ...filters })
          yield* commitMessages(org, after)
          const seen = expectedLog([before]).length
          const resumed = yield* walk({ organisation_id: org, per_page: perPage, cursor: first.cursor, ...filters })
          expectShaped(
            resumed.data,
            expectedFeed(expectedLog([before, after]), filters).filter((m) => m.seq > seen),
            filters
          )
        }), props)

      it.effect.prop(
        "since starts the first page at the earliest message generated at or after it; later pages ignore it",
        [
          fc.array(arbitraryUpstreamMessage, { maxLength: 20 }),
          arbitraryFilters,
          fc.integer({ min: 0, max: 1_100 }),
          fc.integer({ min: 1, max: 6 }),
          fc.array(arbitraryUpstreamMessage, { minLength: 1, maxLength: 5 })
        ],
        ([batch, filters, since, perPage, later]) =>
          Effect.gen(function*() {
            const org = freshId("org")
            yield* commitMessages(org, batch)
            const log = expectedLog([batch])
            const feed = expectedFeed(log, filters)
            const start = log.filter((m) => m.generated_at >= since)
              .reduce<StoredMessage | undefined>(
                (first, m) => first === undefined || m.generated_at < first.generated_at ? m : first,
                undefined
              )
            const walked = yield* walk({ organisation_id: org, per_page: perPage, since, ...filters })
            expectShaped(walked.data, start === undefined ? [] : feed.filter((m) => m.seq >= start.seq), filters)
            yield* commitMessages(org, later)
            const seen = expectedLog([batch]).length
            const resumed = yield* walk({ organisation_id: org, per_page: perPage, cursor: walked.cursor, ...filters })
            expectShaped(
              resumed.data,
              expectedFeed(expectedLog([batch, later]), filters).filter((m) => m.seq > seen),
              filters
            )
          }),
        props
      )

      it.effect.prop("no duplicate and no gap while another fiber commits", [
        fc.array(fc.array(arbitraryUpstreamMessage, { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 12 }),
        arbitraryFilters.map((f): Filters => ({ ...f, latest: false })),
        fc.integer({ min: 1, max: 4 })
      ], ([batches, filters, perPage]) =>
        Effect.gen(function*() {
          const org = freshId("org")
          const writer = yield* Effect.fork(
            Effect.forEach(batches, (batch) => Effect.zipRight(commitMessages(org, batch), Effect.yieldNow()), {
              discard: true
            })
          )
          const upstream = yield* Upstream.Upstream
          const data: Array<StoredMessage> = []
          let cursor: string | undefined
          let done = false
          while (true) {
            const page = yield* upstream.page({
              organisation_id: org,
              per_page: perPage,
              ...filters,
              ...(cursor === undefined ? {} : { cursor })
            })
            data.push(...page.data)
            cursor = page.next_cursor
            if (page.has_more) continue
            if (done) break
            done = (yield* Fiber.poll(writer))._tag === "Some"
            yield* Effect.yieldNow()
          }
          yield* Fiber.join(writer)
          const seqs = data.map((m) => m.seq)
          expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b))
          expectShaped(data, expectedFeed(expectedLog(batches), filters), filters)
        }), { fastCheck: { numRuns: Math.max(5, Math.ceil(numRuns / 2)) } })

      it.effect.prop("any alteration or truncation of a cursor, and any garbage, is refused", [
        fc.array(arbitraryUpstreamMessage, { minLength: 1, maxLength: 8 }),
        arbitraryFilters,
        fc.string(),
        fc.nat(),
        fc.constantFrom(...base64url)
      ], ([batch, filters, garbage, at, replacement]) =>
        Effect.gen(function*() {
          const org = freshId("org")
          yield* commitMessages(org, batch)
          const upstream = yield* Upstream.Upstream
          const query = { organisation_id: org, per_page: 1, ...filters }
          const { next_cursor } = yield* upstream.page(query)
          expect(next_cursor).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
          const i = at % next_cursor.length
          const altered = next_cursor.slice(0, i) +
            (next_cursor[i] === replacement ? (replacement === "A" ? "B" : "A") : replacement) +
            next_cursor.slice(i + 1)
          for (const bad of [altered, next_cursor.slice(0, i), next_cursor + replacement, garbage]) {
            yield* invalid(upstream.page({ ...query, cursor: bad }))
          }
        }), props)

      it.effect.prop("a cursor is bound to its organisation and its filters, not to excludes or per_page", [
        fc.array(arbitraryUpstreamMessage, { minLength: 1, maxLength: 8 }),
        arbitraryFilters,
        arbitraryFilters,
        fc.integer({ min: 1, max: 5 })
      ], ([batch, filters, others, perPage]) =>
        Effect.gen(function*() {
          const org = freshId("org")
          const stranger = freshId("org")
          yield* commitMessages(org, batch)
          yield* commitMessages(stranger, batch)
          const upstream = yield* Upstream.Upstream
          const { next_cursor } = yield* upstream.page({ organisation_id: org, per_page: 1, ...filters })
          const foreign = yield* invalid(
            upstream.page({ organisation_id: stranger, per_page: 1, cursor: next_cursor, ...filters })
          )
          expect(foreign.detail).toContain("organisation")
          const rest = yield* upstream.page({
            organisation_id: org,
            per_page: perPage,
            cursor: next_cursor,
            ...equivalent(filters)
          })
          expect(rest.data.length).toBeLessThanOrEqual(perPage)
          if (sameSelection(filters, others)) {
            yield* upstream.page({ organisation_id: org, per_page: 1, cursor: next_cursor, ...others })
          } else {
            const other = yield* invalid(
              upstream.page({ organisation_id: org, per_page: 1, cursor: next_cursor, ...others })
            )
            expect(other.detail).toContain("filters")
          }
        }), props)

      it.effect("every instance over the same storage accepts the others' cursors (the secret is stored)", () =>
        Effect.gen(function*() {
          const org = freshId("org")
          yield* commitMessages(
            org,
            [0, 1, 2, 3].map((n) => ({
              hash: `shared-${n}`,
              type: "BASIC_STATUS",
              tradeflow_reference: "TF-1",
              container_reference: null,
              generated_at: n,
              body: JSON.stringify({ n })
            }))
          )
          const first = yield* Effect.flatMap(Upstream.Upstream, (u) => u.page({ organisation_id: org, per_page: 2 }))
          const second = yield* Effect.flatMap(
            Upstream.Upstream,
            (u) => u.page({ organisation_id: org, per_page: 2, cursor: first.next_cursor })
          ).pipe(Effect.provide(Upstream.layer()))
          expect([...first.data, ...second.data].map((m) => m.hash)).toEqual([
            "shared-0",
            "shared-1",
            "shared-2",
            "shared-3"
          ])
          expect(second.has_more).toBe(false)
        }))
    }
  )
}
