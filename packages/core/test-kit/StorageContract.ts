/**
 * The storage contract: one suite of @effect/vitest tests that every adapter of the storage
 * ports (memory, SQLite, PostgreSQL) must pass.
 *
 * The suite shares one layer for all its tests and uses fresh random organisation ids, so one
 * database serves the whole run. `JobQueue.pending`, `JobQueue.claim` and `TradeflowStore.due`
 * are global, so tests only look at their own organisations' rows. Claim tests lease whatever
 * is pending, so give the suite a database no live worker uses.
 *
 * The suite runs on the live clock (no TestClock): PostgreSQL leases use the database's clock,
 * so lease expiry is tested with short real leases and real sleeps.
 *
 * @module
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import { Arbitrary, Duration, Effect, Either, FastCheck as fc, Fiber, type Layer, Option, Schema, Stream } from "effect"
import { Automation } from "../src/Automation.js"
import { AutomationStore } from "../src/AutomationStore.js"
import * as Job from "../src/Job.js"
import { attemptLimitReached, type Claim, type ClaimedJob, JobQueue, type JobSummary } from "../src/JobQueue.js"
import { MessageStore } from "../src/MessageStore.js"
import type { ApiKeyRecord, Organisation, WidgetKeyRecord } from "../src/Organisation.js"
import { OrganisationStore, type Revocations } from "../src/OrganisationStore.js"
import { RetentionStore } from "../src/RetentionStore.js"
import { Settings } from "../src/Settings.js"
import type { Storage } from "../src/Storage.js"
import type { MessageQuery, MessageRead, MessageRun, NewMessage, StoredMessage } from "../src/StoredMessage.js"
import { Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowKey from "../src/TradeflowKey.js"
import { type Candidate, type Commit, TradeflowStore } from "../src/TradeflowStore.js"
import { matches } from "../src/WidgetSearch.js"
import { trackingContract } from "./TrackingContract.js"

/** Tuning of the contract suite. */
export interface StorageContractOptions {
  /** Runs per property test (default 25). */
  readonly numRuns?: number
  /** Lease of the lease-expiry tests, in ms (default 500); they sleep about twice that. */
  readonly shortLeaseMillis?: number
}

/** A fresh random id, so tests never see each other's rows. */
export const freshId = (prefix: string): string => `${prefix}_${globalThis.crypto.randomUUID()}`

const tradeflowCodec = Schema.parseJson(Tradeflow)

const survivesJson = <A, I>(codec: Schema.Schema<A, I>) => (value: A): boolean =>
  Either.isRight(Schema.encodeEither(codec)(value).pipe(Either.flatMap(Schema.decodeEither(codec))))

/**
 * Any tradeflow that survives its JSON codec (NaN and the like do not): what a storage adapter
 * must give back unchanged. `next_position_at`, an indexed epoch-ms column, is null or a safe
 * integer.
 */
export const arbitraryTradeflow: fc.Arbitrary<Tradeflow> = fc.tuple(
  Arbitrary.make(Tradeflow),
  fc.option(fc.integer({ min: 0, max: 2 ** 45 }), { nil: null })
).map(([t, next_position_at]) => ({ ...t, next_position_at })).filter(survivesJson(tradeflowCodec))

let template: Tradeflow | undefined

/** An untracked tradeflow with these indexed fields; the other fields come from a fixed arbitrary sample. */
export const makeTradeflow = (
  organisation_id: string,
  reference: string,
  containers: ReadonlyArray<string>,
  active = true
): Tradeflow => {
  template ??= fc.sample(arbitraryTradeflow, { numRuns: 1, seed: 42 })[0]
  if (template === undefined) throw new Error("no tradeflow sample")
  return {
    ...template,
    organisation_id,
    reference,
    active,
    containers: containers.map((reference) => ({ reference })),
    next_position_at: null,
    tracking: null
  }
}

/** The JSON form of a tradeflow, for comparisons that ignore what JSON cannot tell apart. */
export const canonicalTradeflow = (t: Tradeflow): unknown => JSON.parse(Schema.encodeSync(tradeflowCodec)(t))

/** A message with defaults for what a test does not care about. */
export const makeMessage = (hash: string, fields: Partial<NewMessage> = {}): NewMessage => ({
  hash,
  type: "BASIC_STATUS",
  tradeflow_reference: "TF-1",
  container_reference: null,
  generated_at: 0,
  body: JSON.stringify({ hash }),
  ...fields
})

/** The log a sequence of message batches must produce: first hash wins, seq 1..n. */
export const expectedLog = (batches: ReadonlyArray<ReadonlyArray<NewMessage>>): Array<StoredMessage> => {
  const seen = new Set<string>()
  const log: Array<StoredMessage> = []
  for (const batch of batches) {
    for (const m of batch) {
      if (seen.has(m.hash)) continue
      seen.add(m.hash)
      log.push({ ...m, seq: log.length + 1 })
    }
  }
  return log
}

/**
 * The reference semantics of `MessageStore.list` over one organisation's log (ascending seq):
 * `latest` keeps the highest seq of each (tradeflow_reference, type, container_reference) of the
 * whole log, and the other filters then select among those.
 */
export const selectMessages = (log: ReadonlyArray<StoredMessage>, q: MessageQuery): Array<StoredMessage> => {
  const isLatest = (m: StoredMessage) =>
    !log.some((n) =>
      n.seq > m.seq && n.tradeflow_reference === m.tradeflow_reference && n.type === m.type &&
      n.container_reference === m.container_reference
    )
  const matching = log.filter((m) =>
    (q.latest !== true || isLatest(m)) &&
    (q.since === undefined || m.generated_at >= q.since) &&
    (q.tradeflow_reference === undefined || m.tradeflow_reference === q.tradeflow_reference) &&
    (q.container_reference === undefined || m.container_reference === q.container_reference) &&
    (q.types === undefined || q.types.includes(m.type)) &&
    (q.exclude_types === undefined || !q.exclude_types.includes(m.type)) &&
    (q.after_seq === undefined || m.seq > q.after_seq)
  )
  return q.take === "oldest" ? matching.slice(0, q.limit) : matching.slice(Math.max(0, matching.length - q.limit))
}

const utf8 = new TextEncoder()

/**
 * The reference semantics of `MessageStore.read`: what `list` selects without its limit, taken in
 * the order of `take` up to `limit` messages, and ended before the first message whose body would
 * take the UTF-8 total past `max_bytes` (never the first one).
 */
export const readModel = (log: ReadonlyArray<StoredMessage>, q: MessageRead): MessageRun => {
  const all = selectMessages(log, { ...q, limit: Number.MAX_SAFE_INTEGER })
  const ordered = q.take === "oldest" ? all : [...all].reverse()
  const taken: Array<StoredMessage> = []
  let total = 0
  for (const m of ordered) {
    if (taken.length >= Math.max(0, Math.floor(q.limit))) break
    total += utf8.encode(m.body).length
    if (taken.length > 0 && total > q.max_bytes) break
    taken.push(m)
  }
  return { messages: q.take === "oldest" ? taken : taken.reverse(), more: taken.length < ordered.length }
}

/** Bodies of any size from a few bytes to a few KB, with 2-, 3- and 4-byte UTF-8 characters. */
export const arbitrarySizedBody: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "binary", minLength: 200, maxLength: 2_000 }),
  fc.tuple(fc.constantFrom("a", "é", "€", "😀"), fc.integer({ min: 0, max: 1_500 })).map(([c, n]) => c.repeat(n))
).map((text) => JSON.stringify({ text }))

const messageTypes = ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"] as const
const references = ["TF-1", "TF-2", "TF-3"] as const
const containerNumbers = ["MSCU1234565", "TGHU0000001", "CSQU3054383"] as const

/** Messages drawn from small pools, so hashes repeat and every filter has something to match. */
export const arbitraryMessage: fc.Arbitrary<NewMessage> = fc.record({
  hash: fc.integer({ min: 0, max: 24 }).map((n) => `hash-${n}`),
  type: fc.constantFrom(...messageTypes),
  tradeflow_reference: fc.constantFrom(...references),
  container_reference: fc.option(fc.constantFrom(...containerNumbers), { nil: null }),
  generated_at: fc.integer({ min: 0, max: 1_000 }),
  body: fc.jsonValue().map((v) => JSON.stringify({ v }))
})

/** Queries over the pools of {@link arbitraryMessage}, every filter optional. */
export const arbitraryQuery = (organisation_id: string): fc.Arbitrary<MessageQuery> =>
  fc.record({
    since: fc.integer({ min: 0, max: 1_000 }),
    tradeflow_reference: fc.constantFrom(...references, "TF-none"),
    container_reference: fc.constantFrom(...containerNumbers),
    types: fc.subarray([...messageTypes]),
    exclude_types: fc.subarray([...messageTypes]),
    after_seq: fc.integer({ min: 0, max: 30 }),
    latest: fc.boolean(),
    take: fc.constantFrom("oldest" as const, "newest" as const),
    limit: fc.integer({ min: 0, max: 40 })
  }, { requiredKeys: ["take", "limit"] }).map((q) => ({ ...q, organisation_id }))

/**
 * Jobs with any payload: deletes of any reference, and upserts of records with containers and
 * free-form configuration (built through the record schema, so they are what the API enqueues).
 */
export const arbitraryNewJob: fc.Arbitrary<Job.NewJob> = fc.record({
  organisation_id: fc.string(),
  environment: fc.constantFrom("production" as const, "uat" as const),
  payload: fc.oneof(
    Arbitrary.make(Job.DeleteJob),
    fc.array(
      fc.record({
        reference: fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/),
        containers: fc.array(fc.constantFrom(...containerNumbers), { minLength: 1, maxLength: 3 }),
        configuration: fc.dictionary(fc.string().filter((k) => k !== "enroll_insurance"), fc.jsonValue(), {
          maxKeys: 3
        })
      }),
      { maxLength: 3 }
    ).map((groups) =>
      Schema.decodeUnknownSync(Job.UpsertJob)({
        _tag: "Upsert",
        groups: groups.map((g) => ({
          tradeflow_reference: g.reference,
          records: [{
            tradeflow_reference: g.reference,
            container_reference: g.containers,
            configuration: g.configuration
          }]
        }))
      })
    )
  ),
  received_at: fc.integer({ min: 0, max: 2 ** 45 })
})

const automationCodec = Schema.parseJson(Automation)

/**
 * Any automation that survives its JSON codec, with fresh ids (so a run never meets another's
 * rows) and epoch-ms integer timestamps (what the indexed `created_at` column holds).
 */
export const arbitraryAutomation: fc.Arbitrary<Automation> = fc.tuple(
  Arbitrary.make(Automation),
  fc.integer({ min: 0, max: 2 ** 45 }),
  fc.integer({ min: 0, max: 2 ** 45 })
).map(([a, created_at, updated_at]) => ({
  ...a,
  id: freshId("automation"),
  organisation_id: freshId("org"),
  created_at,
  updated_at
})).filter(survivesJson(automationCodec))

/** The JSON form of an automation, for comparisons that ignore what JSON cannot tell apart. */
export const canonicalAutomation = (a: Automation): unknown => JSON.parse(Schema.encodeSync(automationCodec)(a))

/** An automation with defaults for what a test does not care about. */
export const makeAutomation = (organisation_id: string, fields: Partial<Automation> = {}): Automation => ({
  id: freshId("automation"),
  organisation_id,
  url: "https://receiver.example/hook",
  format: "message",
  types: ["SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE"],
  enabled: false,
  secrets: [{ secret: `whsec_${"A".repeat(43)}=`, expires_at: null }],
  disabled_reason: null,
  failing_since: null,
  created_at: 1_000,
  updated_at: 1_000,
  ...fields
})

/** One step of the automation model test: put (a new or replacing automation) or remove, over small pools. */
type AutomationOp =
  | {
    readonly _tag: "Put"
    readonly id: number
    readonly org: number
    readonly enabled: boolean
    readonly created_at: number
  }
  | { readonly _tag: "Remove"; readonly id: number }

const arbitraryAutomationOp: fc.Arbitrary<AutomationOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Put" as const),
      id: fc.integer({ min: 0, max: 5 }),
      org: fc.integer({ min: 0, max: 1 }),
      enabled: fc.boolean(),
      created_at: fc.integer({ min: 0, max: 3 })
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Remove" as const), id: fc.integer({ min: 0, max: 5 }) }) }
)

/**
 * One commit of the lookup model test: deletes, then upserts (a new or replacing tradeflow), over
 * small pools whose values meet across kinds and differ only in case or spacing.
 *
 * @inline
 */
interface LookupStep {
  readonly deletes: ReadonlyArray<string>
  readonly upserts: ReadonlyArray<{
    readonly reference: string
    readonly containers: ReadonlyArray<string>
    readonly bills: ReadonlyArray<string>
    readonly bookings: ReadonlyArray<string>
    readonly created_at: number
    readonly updated_at: number
  }>
}

const lookupReferences = ["TF-1", "tf-1", "MSCU1234565", "BL-9", " TF-2"] as const
const lookupDocuments = ["BL-9", "bl-9", "Straße", "STRASSE", "TF-1", "tgHU0000001"] as const
/** Queries over the pools of {@link arbitraryLookupStep}, with the spellings a search normalises. */
export const lookupQueries = [
  ...lookupReferences,
  ...containerNumbers,
  ...lookupDocuments,
  "mscu 123456-5",
  " tf-1 ",
  "strasse",
  "TF-2",
  "",
  "  ",
  "nothing"
] as const

/** A commit of the lookup model test. */
export const arbitraryLookupStep: fc.Arbitrary<LookupStep> = fc.record({
  deletes: fc.subarray([...lookupReferences], { maxLength: 2 }),
  upserts: fc.array(
    fc.record({
      reference: fc.constantFrom(...lookupReferences),
      containers: fc.subarray([...containerNumbers]),
      bills: fc.subarray([...lookupDocuments], { maxLength: 3 }),
      bookings: fc.subarray([...lookupDocuments], { maxLength: 3 }),
      created_at: fc.integer({ min: 0, max: 3 }),
      updated_at: fc.integer({ min: 0, max: 3 })
    }),
    { maxLength: 3 }
  )
})

const byReference = (a: Candidate, b: Candidate) => a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0

const candidateOf = (t: Tradeflow): Candidate => ({
  reference: t.reference,
  created_at: t.created_at,
  updated_at: t.updated_at
})

const ports = Effect.all({
  orgs: OrganisationStore,
  queue: JobQueue,
  store: TradeflowStore,
  messages: MessageStore,
  settings: Settings,
  automations: AutomationStore
})

const newJob = (organisation_id: string, reference: string | null = null): Job.NewJob => ({
  organisation_id,
  environment: "production",
  payload: { _tag: "Delete", reference, hard: false },
  received_at: 1_700_000_000_000
})

const enqueued = (outcome: Job.EnqueueOutcome): number => {
  if (outcome._tag !== "Enqueued") throw new Error(`expected Enqueued, got ${outcome._tag}`)
  return outcome.id
}

const pendingOf = (organisationId: string) =>
  Effect.map(
    Effect.flatMap(JobQueue, (q) => q.pending(1_000_000)),
    (jobs) => jobs.filter((j) => j.organisation_id === organisationId)
  )

/**
 * Claims with a large limit and keeps what concerns these organisations (the queue is shared):
 * the jobs it leased and the ones it marked dead.
 */
const claimAll = (
  worker: string,
  organisations: ReadonlyArray<string>,
  leaseMillis: number,
  limit = 10_000,
  maxAttempts?: number
): Effect.Effect<Claim, unknown, JobQueue> =>
  Effect.map(
    Effect.flatMap(JobQueue, (q) =>
      q.claim({ worker, limit, leaseMillis, ...(maxAttempts === undefined ? {} : { maxAttempts }) })),
    ({ dead, jobs }) => {
      expect(jobs.length).toBeLessThanOrEqual(limit)
      for (const list of [jobs, dead]) {
        expect(list.map((j) =>
          j.id
        )).toEqual([...list.map((j) => j.id)].sort((x, y) => x - y))
      }
      return {
        jobs: jobs.filter((j) => organisations.includes(j.organisation_id)),
        dead: dead.filter((j) => organisations.includes(j.organisation_id))
      }
    }
  )

/** {@link claimAll}, the leased jobs only. */
const claimMine = (
  worker: string,
  organisations: ReadonlyArray<string>,
  leaseMillis: number,
  limit = 10_000
): Effect.Effect<ReadonlyArray<ClaimedJob>, unknown, JobQueue> =>
  Effect.map(claimAll(worker, organisations, leaseMillis, limit), (claim) => claim.jobs)

/**
 * Marks every pending job of the shared queue dead, so a claim test starts from an empty queue:
 * a job left over by another test that was claimed before would be claimed alone.
 */
const sweep = Effect.gen(function*() {
  const queue = yield* JobQueue
  for (const j of yield* queue.pending(1_000_000)) yield* queue.fail(j.id, "swept")
})

/** Fails every pending job of these organisations. */
const cleanup = (organisations: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue
    for (const org of organisations) for (const j of yield* pendingOf(org)) yield* queue.fail(j.id, "cleanup")
  })

const logOf = (organisation_id: string) =>
  Effect.flatMap(MessageStore, (m) => m.list({ organisation_id, take: "oldest", limit: 1_000_000 }))

/** The commit of job `job_id` with these changes: by default it changes nothing and its result counts nothing. */
export const commitOf = (job_id: number, organisation_id: string, changes: Partial<Commit> = {}): Commit => ({
  job_id,
  organisation_id,
  upserts: [],
  deletes: [],
  messages: [],
  result: { count: 0 },
  ...changes
})

/** Enqueues a job for the organisation and commits it with these changes; answers the commit's answer. */
const commitNew = (
  organisation_id: string,
  changes: Partial<Pick<Commit, "upserts" | "deletes" | "messages" | "result">>
) =>
  Effect.gen(function*() {
    const { queue, store } = yield* ports
    const job_id = enqueued(yield* queue.enqueue(newJob(organisation_id)))
    const committed = yield* store.commit(commitOf(job_id, organisation_id, changes))
    return { job_id, committed }
  })

const organisation = (fields: Partial<Organisation> = {}): Organisation => ({
  id: freshId("org"),
  name: "Acme",
  environment: "production",
  live_organisation_id: null,
  created_at: 1_000,
  ...fields
})

const apiKey = (organisation_id: string, created_at: number): ApiKeyRecord => ({
  id: freshId("key"),
  organisation_id,
  environment: "production",
  key_hash: freshId("hash"),
  name: "a key's <name> 😀",
  created_by: "ops@example.com",
  last_used_at: null,
  created_at,
  revoked_at: null
})

const widgetKey = (organisation_id: string, created_at: number): WidgetKeyRecord => ({
  id: freshId("wkey"),
  organisation_id,
  key_hash: freshId("hash"),
  name: "",
  created_by: null,
  last_used_at: null,
  created_at,
  revoked_at: null
})

/**
 * Registers the storage contract tests for an adapter. `layer` is built once for the whole
 * suite (one database); every test works on fresh organisation ids.
 */
export const storageContract = (
  name: string,
  layer: Layer.Layer<Storage, unknown>,
  options: StorageContractOptions = {}
): void => {
  const numRuns = options.numRuns ?? 25
  const props = { fastCheck: { numRuns } }
  const shortLease = options.shortLeaseMillis ?? 500

  sharedLayer(layer, { timeout: "30 seconds", excludeTestServices: true })(`storage contract: ${name}`, (it) => {
    it.effect("organisations: insert, get, list oldest first", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const a = organisation({ name: "A", created_at: 1 })
        const b = organisation({ name: "B (UAT)", environment: "uat", live_organisation_id: a.id, created_at: 2 })
        yield* orgs.insert(a)
        yield* orgs.insert(b)
        expect(yield* orgs.get(a.id)).toEqual(Option.some(a))
        expect(yield* orgs.get(b.id)).toEqual(Option.some(b))
        expect(yield* orgs.get(freshId("org"))).toEqual(Option.none())
        const mine = (yield* orgs.list).filter((o) => o.id === a.id || o.id === b.id)
        expect(mine).toEqual([a, b])
      }))

    it.effect("organisations: ensureCompanion stores one companion per live organisation", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const live = organisation()
        yield* orgs.insert(live)
        const first = organisation({ name: "Acme (UAT)", environment: "uat", live_organisation_id: live.id })
        const second = organisation({ name: "Acme (UAT)", environment: "uat", live_organisation_id: live.id })
        expect(yield* orgs.ensureCompanion(first)).toEqual(first)
        expect(yield* orgs.ensureCompanion(second)).toEqual(first)
        expect(yield* orgs.get(second.id)).toEqual(Option.none())
        const racing = yield* Effect.all(
          Array.from({ length: 6 }, () => organisation({ environment: "uat", live_organisation_id: live.id }))
            .map((c) => orgs.ensureCompanion(c)),
          { concurrency: "unbounded" }
        )
        expect(racing.map((c) => c.id)).toEqual(racing.map(() => first.id))
        expect((yield* orgs.list).filter((o) => o.live_organisation_id === live.id)).toEqual([first])
        expect(yield* orgs.companionOf(live.id)).toEqual(Option.some(first))
        expect(yield* orgs.companionOf(first.id)).toEqual(Option.none())
        expect(yield* orgs.companionOf(freshId("org"))).toEqual(Option.none())
      }))

    it.effect("organisations: concurrent ensureCompanion on a new live organisation agrees", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const live = organisation()
        yield* orgs.insert(live)
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, () => organisation({ environment: "uat", live_organisation_id: live.id }))
            .map((c) => orgs.ensureCompanion(c)),
          { concurrency: "unbounded" }
        )
        expect(new Set(answers.map((c) => c.id)).size).toBe(1)
        expect((yield* orgs.list).filter((o) => o.live_organisation_id === live.id).length).toBe(1)
      }))

    it.effect("api keys: insert, find by hash, list per organisation oldest first", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const a = freshId("org")
        const b = freshId("org")
        const k1 = apiKey(a, 10)
        const k2 = apiKey(b, 20)
        const k3 = { ...apiKey(a, 30), environment: "uat" as const }
        for (const k of [k1, k2, k3]) yield* orgs.insertApiKey(k)
        expect(yield* orgs.findApiKeyByHash(k2.key_hash)).toEqual(Option.some(k2))
        expect(yield* orgs.findApiKeyByHash(freshId("hash"))).toEqual(Option.none())
        expect(yield* orgs.listApiKeys([a])).toEqual([k1, k3])
        expect(yield* orgs.listApiKeys([b])).toEqual([k2])
        expect(yield* orgs.listApiKeys([a, b])).toEqual([k1, k2, k3])
        expect(yield* orgs.listApiKeys([])).toEqual([])
        expect(yield* orgs.listApiKeys([freshId("org")])).toEqual([])
      }))

    it.effect("api keys: revoking keeps the first instant; unknown keys answer false", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const key = apiKey(freshId("org"), 1)
        yield* orgs.insertApiKey(key)
        expect(yield* orgs.revokeApiKey(key.id, 500)).toBe(true)
        expect(yield* orgs.revokeApiKey(key.id, 900)).toBe(true)
        expect(yield* orgs.findApiKeyByHash(key.key_hash)).toEqual(Option.some({ ...key, revoked_at: 500 }))
        expect(yield* orgs.listApiKeys([key.organisation_id])).toEqual([{ ...key, revoked_at: 500 }])
        expect(yield* orgs.revokeApiKey(freshId("key"), 1)).toBe(false)
      }))

    it.effect("widget keys: insert, find by hash; api keys and widget keys never mix", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const org = freshId("org")
        const k1 = widgetKey(org, 10)
        const k2 = widgetKey(freshId("org"), 20)
        for (const k of [k1, k2]) yield* orgs.insertWidgetKey(k)
        expect(yield* orgs.findWidgetKeyByHash(k1.key_hash)).toEqual(Option.some(k1))
        expect(yield* orgs.findWidgetKeyByHash(k2.key_hash)).toEqual(Option.some(k2))
        expect(yield* orgs.findWidgetKeyByHash(freshId("hash"))).toEqual(Option.none())
        const api = apiKey(org, 30)
        yield* orgs.insertApiKey(api)
        expect(yield* orgs.findWidgetKeyByHash(api.key_hash)).toEqual(Option.none())
        expect(yield* orgs.findApiKeyByHash(k1.key_hash)).toEqual(Option.none())
        expect(yield* orgs.listApiKeys([org])).toEqual([api])
        expect(yield* orgs.revokeApiKey(k1.id, 1)).toBe(false)
        expect(yield* orgs.revokeWidgetKey(api.id, 1)).toBe(false)
      }))

    it.effect("touchKey records a key's last use, never moving it back, for its own kind only", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const api = apiKey(freshId("org"), 1)
        const widget = { ...widgetKey(api.organisation_id, 2), id: api.id.replace("key", "wkey") }
        yield* orgs.insertApiKey(api)
        yield* orgs.insertWidgetKey(widget)
        yield* orgs.touchKey("api", api.id, 1_700_000_060_000)
        yield* orgs.touchKey("api", api.id, 1_700_000_000_000)
        yield* orgs.touchKey("widget", widget.id, 1_700_000_120_000)
        yield* orgs.touchKey("api", freshId("key"), 5)
        expect(yield* orgs.findApiKeyByHash(api.key_hash)).toEqual(
          Option.some({ ...api, last_used_at: 1_700_000_060_000 })
        )
        expect(yield* orgs.findWidgetKeyByHash(widget.key_hash)).toEqual(
          Option.some({ ...widget, last_used_at: 1_700_000_120_000 })
        )
      }))

    it.effect("widget keys: revoking keeps the first instant; unknown keys answer false", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const key = widgetKey(freshId("org"), 1_700_000_000_123)
        const other = widgetKey(key.organisation_id, 2)
        yield* orgs.insertWidgetKey(key)
        yield* orgs.insertWidgetKey(other)
        expect(yield* orgs.revokeWidgetKey(key.id, 1_700_000_000_500)).toBe(true)
        expect(yield* orgs.revokeWidgetKey(key.id, 1_700_000_000_900)).toBe(true)
        expect(yield* orgs.findWidgetKeyByHash(key.key_hash)).toEqual(
          Option.some({ ...key, revoked_at: 1_700_000_000_500 })
        )
        expect(yield* orgs.findWidgetKeyByHash(other.key_hash)).toEqual(Option.some(other))
        expect(yield* orgs.revokeWidgetKey(freshId("wkey"), 1)).toBe(false)
      }))

    it.effect("revocations: revokedSince answers every key revoked after the answer whose cursor it is given", () =>
      Effect.gen(function*() {
        const { orgs } = yield* ports
        const org = freshId("org")
        const start = yield* orgs.revokedSince(null)
        expect(start.key_hashes).toEqual([])
        const api = apiKey(org, 1)
        const widget = widgetKey(org, 2)
        const kept = apiKey(org, 3)
        const keptWidget = widgetKey(org, 4)
        yield* orgs.insertApiKey(api)
        yield* orgs.insertApiKey(kept)
        yield* orgs.insertWidgetKey(widget)
        yield* orgs.insertWidgetKey(keptWidget)
        const mine = (r: Revocations) =>
          new Set(r.key_hashes.filter((h) => [api, widget, kept, keptWidget].some((k) => k.key_hash === h)))
        expect(mine(yield* orgs.revokedSince(start.cursor))).toEqual(new Set())
        yield* orgs.revokeApiKey(api.id, 10)
        yield* orgs.revokeWidgetKey(widget.id, 10)
        const first = yield* orgs.revokedSince(start.cursor)
        expect(mine(first)).toEqual(new Set([api.key_hash, widget.key_hash]))
        const revokedAlready = { ...apiKey(org, 5), revoked_at: 20 }
        yield* orgs.insertApiKey(revokedAlready)
        yield* orgs.revokeApiKey(freshId("key"), 30)
        const second = yield* orgs.revokedSince(first.cursor)
        expect(second.key_hashes).toContain(revokedAlready.key_hash)
        expect(second.key_hashes).not.toContain(kept.key_hash)
        expect(second.key_hashes).not.toContain(keptWidget.key_hash)
      }))

    it.effect.prop(
      "revocations: whatever the interleaving, each answer holds every key revoked since the previous answer",
      [fc.array(fc.constantFrom("api", "widget", "check"), { minLength: 1, maxLength: 12 })],
      ([steps]) =>
        Effect.gen(function*() {
          const { orgs } = yield* ports
          const org = freshId("org")
          let previous = yield* orgs.revokedSince(null)
          let since: Array<string> = []
          const never = apiKey(org, 0)
          yield* orgs.insertApiKey(never)
          for (const step of [...steps, "check" as const]) {
            if (step === "check") {
              const answer = yield* orgs.revokedSince(previous.cursor)
              for (const hash of since) expect(answer.key_hashes).toContain(hash)
              expect(answer.key_hashes).not.toContain(never.key_hash)
              previous = answer
              since = []
            } else if (step === "api") {
              const key = apiKey(org, 1)
              yield* orgs.insertApiKey(key)
              expect(yield* orgs.revokeApiKey(key.id, 2)).toBe(true)
              since.push(key.key_hash)
            } else {
              const key = widgetKey(org, 1)
              yield* orgs.insertWidgetKey(key)
              expect(yield* orgs.revokeWidgetKey(key.id, 2)).toBe(true)
              since.push(key.key_hash)
            }
          }
        }),
      props
    )

    it.effect("queue: ascending ids, pending in queue order, limit takes a prefix", () =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        const org = freshId("org")
        const jobs = [newJob(org, "A"), newJob(org, null), { ...newJob(org, "C"), environment: "uat" as const }]
        const ids: Array<number> = []
        for (const job of jobs) ids.push(enqueued(yield* queue.enqueue(job)))
        expect([...ids].sort((x, y) => x - y)).toEqual(ids)
        expect(new Set(ids).size).toBe(3)
        expect(yield* pendingOf(org)).toEqual(jobs.map((job, i) => ({ id: ids[i], ...job })))
        const all = yield* queue.pending(1_000_000)
        expect(all.map((j) => j.id)).toEqual([...all.map((j) => j.id)].sort((x, y) => x - y))
        expect(yield* queue.pending(2)).toEqual(all.slice(0, 2))
        expect(yield* queue.pending(0)).toEqual([])
        for (const id of ids) yield* queue.fail(id, "cleanup")
      }))

    it.effect.prop(
      "queue: any job comes back from pending as it was enqueued",
      [arbitraryNewJob],
      ([job]) =>
        Effect.gen(function*() {
          const { queue } = yield* ports
          const org = freshId("org")
          const id = enqueued(yield* queue.enqueue({ ...job, organisation_id: org }))
          const codec = Schema.parseJson(Job.Job)
          const pending = yield* pendingOf(org)
          expect(pending.map((j) => JSON.parse(Schema.encodeSync(codec)(j))))
            .toEqual([JSON.parse(Schema.encodeSync(codec)({ ...job, id, organisation_id: org }))])
          yield* queue.fail(id, "cleanup")
        }),
      props
    )

    it.effect("retention: idempotency keys and done jobs older than the bound go, oldest first, in batches; pending jobs stay", () =>
      Effect.gen(function*() {
        const { queue, store } = yield* ports
        const retention = yield* RetentionStore
        const org = freshId("org")
        const base = -9e15 + Math.floor(Math.random() * 1e9)
        const at = (t: number) => ({ ...newJob(org), received_at: base + t })
        const keyed = (t: number, key: string) =>
          queue.enqueue(at(t), { key, request_hash: "h", response: `{"key":"${key}"}` })
        const j1 = enqueued(yield* keyed(100, "old"))
        const j2 = enqueued(yield* keyed(200, "new"))
        expect(yield* retention.prune("idempotency_keys", base + 150, 10)).toBe(1)
        const j3 = enqueued(yield* keyed(300, "old"))
        expect(yield* keyed(400, "new")).toEqual({ _tag: "Replayed", response: "{\"key\":\"new\"}" })
        expect(yield* retention.prune("idempotency_keys", base + 150, 10)).toBe(0)

        const done = (job_id: number) =>
          store.commit({ job_id, organisation_id: org, upserts: [], deletes: [], messages: [], result: { count: 0 } })
        for (const id of [j1, j2, j3]) expect(yield* done(id)).toBe(true)
        const pending = enqueued(yield* queue.enqueue(at(50)))
        expect(yield* retention.prune("done_jobs", base + 250, 1)).toBe(1)
        expect(Option.isNone(yield* queue.outcome(j1))).toBe(true)
        expect(Option.isSome(yield* queue.outcome(j2))).toBe(true)
        expect(yield* retention.prune("done_jobs", base + 250, 10)).toBe(1)
        expect(yield* retention.prune("done_jobs", base + 250, 10)).toBe(0)
        expect(Option.isSome(yield* queue.outcome(j3))).toBe(true)
        expect(yield* retention.prune("done_jobs", base + 10_000, 10)).toBe(1)
        expect((yield* pendingOf(org)).map((j) => j.id)).toEqual([pending])
        expect(yield* retention.prune("dead_jobs", base + 10_000, 10)).toBe(0)
        yield* cleanup([org])
        expect(Option.isSome(yield* queue.outcome(pending))).toBe(true)
        expect(yield* retention.prune("done_jobs", base + 10_000, 10)).toBe(0)
        expect(yield* retention.prune("dead_jobs", base + 10_000, 10)).toBe(1)
        expect(Option.isNone(yield* queue.outcome(pending))).toBe(true)
        expect(yield* queue.list({ organisation_id: org, state: "dead", limit: 10 })).toEqual([])
        expect(yield* queue.retry(pending)).toBe("not-found")
      }))

    it.effect("queue: idempotency keys replay, refuse reuse, and are per organisation", () =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        const org = freshId("org")
        const other = freshId("org")
        const first = yield* queue.enqueue(newJob(org), { key: "k1", request_hash: "h1", response: "{\"first\":true}" })
        expect(first._tag).toBe("Enqueued")
        expect(yield* queue.enqueue(newJob(org), { key: "k1", request_hash: "h1", response: "{\"second\":true}" }))
          .toEqual({ _tag: "Replayed", response: "{\"first\":true}" })
        expect(yield* queue.enqueue(newJob(org), { key: "k1", request_hash: "h2", response: "{}" }))
          .toEqual({ _tag: "KeyReused" })
        expect((yield* pendingOf(org)).map((j) => j.id)).toEqual([enqueued(first)])
        expect((yield* queue.enqueue(newJob(other), { key: "k1", request_hash: "h2", response: "{}" }))._tag).toBe(
          "Enqueued"
        )
        expect((yield* queue.enqueue(newJob(org), { key: "k2", request_hash: "h1", response: "{}" }))._tag).toBe(
          "Enqueued"
        )
        expect((yield* queue.enqueue(newJob(org)))._tag).toBe("Enqueued")
        expect((yield* pendingOf(org)).length).toBe(3)
        for (const j of [...yield* pendingOf(org), ...yield* pendingOf(other)]) yield* queue.fail(j.id, "cleanup")
      }))

    it.effect("queue: concurrent enqueues with one idempotency key queue one job", () =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        const org = freshId("org")
        const outcomes = yield* Effect.all(
          Array.from(
            { length: 8 },
            () => queue.enqueue(newJob(org), { key: "same", request_hash: "h", response: "r" })
          ),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o._tag === "Enqueued").length).toBe(1)
        expect(outcomes.filter((o) => o._tag === "Replayed").length).toBe(7)
        expect((yield* pendingOf(org)).length).toBe(1)
        for (const j of yield* pendingOf(org)) yield* queue.fail(j.id, "cleanup")
      }))

    it.effect.prop("queue: idempotency outcomes follow the first request of each key, alone or in groups", [
      fc.array(
        fc.record({
          key: fc.option(fc.constantFrom("a", "b", "c"), { nil: undefined }),
          hash: fc.constantFrom("h1", "h2"),
          response: fc.string(),
          endsGroup: fc.boolean()
        }),
        { maxLength: 12 }
      )
    ], ([requests]) =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        const org = freshId("org")
        const outcomes: Array<Job.EnqueueOutcome> = []
        let group: Array<Job.Enqueue> = []
        for (const [i, r] of requests.entries()) {
          group.push(
            r.key === undefined
              ? { job: newJob(org) }
              : { job: newJob(org), idempotency: { key: r.key, request_hash: r.hash, response: r.response } }
          )
          if (r.endsGroup || i === requests.length - 1) {
            outcomes.push(...yield* queue.enqueueAll(group))
            group = []
          }
        }
        expect(outcomes.length).toBe(requests.length)
        const first = new Map<string, { readonly hash: string; readonly response: string }>()
        const queued: Array<number> = []
        for (const [i, r] of requests.entries()) {
          const got = outcomes[i]!
          const seen = r.key === undefined ? undefined : first.get(r.key)
          if (seen === undefined) {
            if (r.key !== undefined) first.set(r.key, { hash: r.hash, response: r.response })
            queued.push(enqueued(got))
          } else if (seen.hash === r.hash) {
            expect(got).toEqual({ _tag: "Replayed", response: seen.response })
          } else {
            expect(got).toEqual({ _tag: "KeyReused" })
          }
        }
        const pending = yield* pendingOf(org)
        expect(pending.map((j) => j.id)).toEqual(queued)
        expect([...queued].sort((x, y) => x - y)).toEqual(queued)
        for (const j of pending) yield* queue.fail(j.id, "cleanup")
      }), props)

    it.effect("queue: the backlog counts pending jobs, the first one's acceptance and the jobs per organisation", () =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        yield* sweep
        expect(yield* queue.backlog).toEqual({ pending: 0, oldest_received_at: null, organisations: [] })
        const [a, b] = [freshId("org"), freshId("org")]
        const ids: Array<number> = []
        for (const [org, at] of [[a, 1_000], [a, 2_000], [b, 500], [a, 3_000]] as const) {
          ids.push(enqueued(yield* queue.enqueue({ ...newJob(org), received_at: at })))
        }
        const backlog = yield* queue.backlog
        expect(backlog.pending).toBe(4)
        expect(backlog.oldest_received_at).toBe(1_000)
        expect([...backlog.organisations].sort()).toEqual([1, 3])
        yield* queue.fail(ids[0]!, "done")
        const after = yield* queue.backlog
        expect([after.pending, after.oldest_received_at]).toEqual([3, 2_000])
        expect([...after.organisations].sort()).toEqual([1, 2])
        yield* cleanup([a, b])
        expect(yield* queue.backlog).toEqual({ pending: 0, oldest_received_at: null, organisations: [] })
      }))

    it.effect("queue: fail ends a job once; outcome of pending and unknown jobs is none", () =>
      Effect.gen(function*() {
        const { queue, store } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org)))
        expect(yield* queue.outcome(id)).toEqual(Option.none())
        expect(yield* queue.fail(id, "boom")).toBe(true)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Failed", error: "boom" }))
        expect(yield* pendingOf(org)).toEqual([])
        expect(yield* queue.fail(id, "again")).toBe(false)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Failed", error: "boom" }))
        const late = yield* store.commit({
          job_id: id,
          organisation_id: org,
          upserts: [makeTradeflow(org, "TF-1", [])],
          deletes: [],
          messages: [makeMessage("late")],
          result: { count: 1 }
        })
        expect(late).toBe(false)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Failed", error: "boom" }))
        expect(yield* store.list(org)).toEqual([])
        expect(yield* logOf(org)).toEqual([])
        expect(yield* queue.outcome(2_000_000_000)).toEqual(Option.none())
      }))

    it.effect("commit: applies everything, marks the job done, and only once", () =>
      Effect.gen(function*() {
        const { queue, store } = yield* ports
        const org = freshId("org")
        const tf = makeTradeflow(org, "TF-1", ["MSCU1234565", "TGHU0000001"])
        const messages = [
          makeMessage("m1"),
          makeMessage("m2", { container_reference: "MSCU1234565" }),
          makeMessage("m3")
        ]
        const { committed, job_id } = yield* commitNew(org, { upserts: [tf], messages, result: { count: 1 } })
        expect(committed).toBe(true)
        expect(yield* queue.outcome(job_id)).toEqual(Option.some({ _tag: "Done", result: { count: 1 } }))
        expect(yield* pendingOf(org)).toEqual([])
        expect(Option.map(yield* store.get(org, "TF-1"), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(tf))
        )
        expect(yield* logOf(org)).toEqual(messages.map((m, i) => ({ ...m, seq: i + 1 })))

        const again = yield* store.commit({
          job_id,
          organisation_id: org,
          upserts: [makeTradeflow(org, "TF-2", ["CSQU3054383"])],
          deletes: ["TF-1"],
          messages: [makeMessage("m4")],
          result: { count: 9 }
        })
        expect(again).toBe(false)
        expect(yield* queue.outcome(job_id)).toEqual(Option.some({ _tag: "Done", result: { count: 1 } }))
        expect((yield* store.list(org)).map((t) => t.reference)).toEqual(["TF-1"])
        expect(yield* store.containers(org)).toEqual(["MSCU1234565", "TGHU0000001"])
        expect((yield* logOf(org)).map((m) => m.hash)).toEqual(["m1", "m2", "m3"])
      }))

    it.effect("commit: concurrent commits of one job apply once", () =>
      Effect.gen(function*() {
        const { queue, store } = yield* ports
        const org = freshId("org")
        const job_id = enqueued(yield* queue.enqueue(newJob(org)))
        const answers = yield* Effect.all(
          Array.from({ length: 5 }, (_, i) =>
            store.commit(commitOf(job_id, org, { messages: [makeMessage(`m${i}`)], result: { count: i } }))),
          { concurrency: "unbounded" }
        )
        expect(
          answers.filter((a) =>
            a
          ).length
        ).toBe(1)
        expect((yield* logOf(org)).length).toBe(1)
      }))

    it.effect("commit: duplicate hashes are skipped, seq stays gap-free", () =>
      Effect.gen(function*() {
        const org = freshId("org")
        const batch1 = [
          makeMessage("h1", { body: "{\"first\":1}" }),
          makeMessage("h2"),
          makeMessage("h1", { body: "{\"dup\":1}" })
        ]
        const batch2 = [makeMessage("h2"), makeMessage("h3"), makeMessage("h4"), makeMessage("h3")]
        yield* commitNew(org, { messages: batch1 })
        yield* commitNew(org, { messages: batch2 })
        const log = yield* logOf(org)
        expect(log).toEqual(expectedLog([batch1, batch2]))
        expect(log.map((m) => [m.seq, m.hash])).toEqual([[1, "h1"], [2, "h2"], [3, "h3"], [4, "h4"]])
        expect(log[0]?.body).toBe("{\"first\":1}")
      }))

    it.effect("commit: deletes remove the tradeflow, its containers and messages; seq is never reused", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, {
          upserts: [makeTradeflow(org, "TF-1", ["MSCU1234565"]), makeTradeflow(org, "TF-2", ["TGHU0000001"])],
          messages: [
            makeMessage("a", { tradeflow_reference: "TF-1" }),
            makeMessage("b", { tradeflow_reference: "TF-2" }),
            makeMessage("c", { tradeflow_reference: "TF-1", container_reference: "MSCU1234565" })
          ]
        })
        yield* commitNew(org, {
          deletes: ["TF-1", "TF-unknown"],
          messages: [makeMessage("d", { tradeflow_reference: "TF-2" })]
        })
        expect(yield* store.get(org, "TF-1")).toEqual(Option.none())
        expect((yield* store.list(org)).map((t) => t.reference)).toEqual(["TF-2"])
        expect(yield* store.containers(org)).toEqual(["TGHU0000001"])
        expect((yield* logOf(org)).map((m) => [m.seq, m.hash])).toEqual([[2, "b"], [4, "d"]])
        yield* commitNew(org, {
          upserts: [makeTradeflow(org, "TF-1", [])],
          messages: [makeMessage("a", { tradeflow_reference: "TF-1" })]
        })
        expect((yield* logOf(org)).map((m) => [m.seq, m.hash])).toEqual([[2, "b"], [4, "d"], [5, "a"]])
      }))

    it.effect("commit: deletes apply before the upserts and messages of the same commit", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, {
          upserts: [makeTradeflow(org, "TF-1", ["MSCU1234565"])],
          messages: [makeMessage("old")]
        })
        const fresh = makeTradeflow(org, "TF-1", ["TGHU0000001"], false)
        yield* commitNew(org, { deletes: ["TF-1"], upserts: [fresh], messages: [makeMessage("new")] })
        expect(Option.map(yield* store.get(org, "TF-1"), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(fresh))
        )
        expect(yield* store.containers(org)).toEqual(["TGHU0000001"])
        expect((yield* logOf(org)).map((m) => [m.seq, m.hash])).toEqual([[2, "new"]])
      }))

    it.effect("commit: an upsert replaces the whole tradeflow and its containers", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, { upserts: [makeTradeflow(org, "TF-1", ["MSCU1234565", "TGHU0000001"])] })
        const replaced = { ...makeTradeflow(org, "TF-1", ["CSQU3054383"], false), updated_at: 99 }
        yield* commitNew(org, { upserts: [replaced] })
        expect(Option.map(yield* store.get(org, "TF-1"), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(replaced))
        )
        expect((yield* store.list(org)).map(canonicalTradeflow)).toEqual([canonicalTradeflow(replaced)])
        expect(yield* store.containers(org)).toEqual(["CSQU3054383"])
      }))

    it.effect("commit: a large commit writes every tradeflow, container and message; a reference twice keeps its last state", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const reference = (i: number) => `TF-${String(i).padStart(4, "0")}`
        const container = (i: number) => `CONT${String(i).padStart(7, "0")}`
        const tfs = Array.from(
          { length: 1_100 },
          (_, i) => makeTradeflow(org, reference(i), [container(2 * i), container(2 * i + 1)])
        )
        const last = { ...makeTradeflow(org, reference(7), [container(9_999)], false), updated_at: 99 }
        const messages = Array.from({ length: 1_300 }, (_, i) => makeMessage(`h${i % 1_200}`, { body: `{"i":${i}}` }))
        yield* commitNew(org, { upserts: [...tfs, last], messages })
        const stored = yield* store.list(org)
        expect(stored.map((t) => t.reference)).toEqual(tfs.map((t) => t.reference))
        expect(Option.map(yield* store.get(org, reference(7)), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(last))
        )
        expect(yield* store.containers(org)).toEqual(
          [
            ...tfs.filter((t) => t.reference !== reference(7)).flatMap((t) => t.containers.map((c) => c.reference)),
            container(9_999)
          ].sort()
        )
        expect((yield* logOf(org)).map((m) => [m.seq, m.body])).toEqual(
          messages.slice(0, 1_200).map((m, i) => [i + 1, m.body])
        )
      }))

    it.effect("tradeflows: list by reference incl. inactive; containers distinct and sorted", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const tfs = [
          makeTradeflow(org, "TF-b", ["TGHU0000001", "MSCU1234565"]),
          makeTradeflow(org, "TF-A", ["MSCU1234565", "CSQU3054383", "MSCU1234565"]),
          makeTradeflow(org, "TF-a", [], false)
        ]
        yield* commitNew(org, { upserts: tfs })
        expect((yield* store.list(org)).map((t) => [t.reference, t.active])).toEqual([["TF-A", true], ["TF-a", false], [
          "TF-b",
          true
        ]])
        expect(yield* store.containers(org)).toEqual(["CSQU3054383", "MSCU1234565", "TGHU0000001"])
        expect(yield* store.get(org, "TF-c")).toEqual(Option.none())
        expect(yield* store.list(freshId("org"))).toEqual([])
        expect(yield* store.containers(freshId("org"))).toEqual([])
      }))

    it.effect("tradeflows: sizes count the containers and events of the named tradeflows that exist", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const event = (i: number): Tradeflow["events"][number] => ({
          key: `k${i}`,
          message: "Gate out empty",
          status_code: "GE",
          container_reference: null,
          location: "NLRTM",
          event_date: i,
          actual: true,
          source: i % 2 === 0 ? "import" : "mock",
          predicted_at: 0,
          history: [{ actual: true, source: "import", event_date: i, predicted_at: 0 }]
        })
        const withEvents = (t: Tradeflow, n: number): Tradeflow => ({
          ...t,
          events: Array.from({ length: n }, (_, i) => event(i))
        })
        yield* commitNew(org, {
          upserts: [
            withEvents(makeTradeflow(org, "TF-1", ["MSCU1234565", "TGHU0000001"]), 3),
            withEvents(makeTradeflow(org, "TF-2", [], false), 0)
          ]
        })
        const other = freshId("org")
        yield* commitNew(other, { upserts: [withEvents(makeTradeflow(other, "TF-3", ["MSCU1234565"]), 1)] })
        const many = [...Array.from({ length: 1_200 }, (_, i) => `TF-x${i}`), "TF-2", "TF-1", "TF-1"]
        expect([...(yield* store.sizes(org, many))].sort()).toEqual([
          ["TF-1", { containers: 2, events: 3 }],
          ["TF-2", { containers: 0, events: 0 }]
        ])
        yield* commitNew(org, {
          upserts: [withEvents(makeTradeflow(org, "TF-2", ["CSQU3054383"]), 1_001)],
          deletes: ["TF-1"]
        })
        expect([...(yield* store.sizes(org, ["TF-1", "TF-2", "TF-3"]))]).toEqual([["TF-2", {
          containers: 1,
          events: 1_001
        }]])
        expect((yield* store.sizes(org, [])).size).toBe(0)
      }))

    it.effect("tradeflows: held answers which of the given containers and event keys a tradeflow holds", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const keys = Array.from({ length: 1_200 }, (_, i) => JSON.stringify([`C${i}`, "GE", "NLRTM", "import"]))
        const t: Tradeflow = {
          ...makeTradeflow(org, "TF-1", ["MSCU1234565", "TGHU0000001"]),
          events: keys.map((key, i) => ({
            key,
            message: "Gate out empty",
            status_code: "GE",
            container_reference: `C${i}`,
            location: "NLRTM",
            event_date: i,
            actual: true,
            source: "import",
            predicted_at: 0,
            history: []
          }))
        }
        yield* commitNew(org, { upserts: [t] })
        const asked = {
          containers: [
            "TGHU0000001",
            "CSQU3054383",
            "TGHU0000001",
            ...Array.from({ length: 1_100 }, (_, i) => `X${i}`)
          ],
          events: [keys[5]!, "[\"other\"]", keys[1_199]!, keys[5]!, ...Array.from({ length: 1_100 }, (_, i) => `K${i}`)]
        }
        const held = yield* store.held(org, "TF-1", asked)
        expect([...held.containers].sort()).toEqual(["TGHU0000001"])
        expect([...held.events].sort()).toEqual([keys[1_199]!, keys[5]!].sort())
        expect(yield* store.held(org, "TF-2", asked)).toEqual({ containers: [], events: [] })
        expect(yield* store.held(freshId("org"), "TF-1", asked)).toEqual({ containers: [], events: [] })
        expect(yield* store.held(org, "TF-1", { containers: [], events: [] })).toEqual({ containers: [], events: [] })
      }))

    it.effect.prop(
      "tradeflows: any tradeflow comes back as it was stored",
      [arbitraryTradeflow],
      ([tradeflow]) =>
        Effect.gen(function*() {
          const { store } = yield* ports
          const org = freshId("org")
          const t = { ...tradeflow, organisation_id: org }
          yield* commitNew(org, { upserts: [t] })
          expect(Option.map(yield* store.get(org, t.reference), canonicalTradeflow)).toEqual(
            Option.some(canonicalTradeflow(t))
          )
          expect((yield* store.list(org)).map(canonicalTradeflow)).toEqual([canonicalTradeflow(t)])
          expect(yield* store.containers(org)).toEqual([...new Set(t.containers.map((c) => c.reference))].sort())
        }),
      props
    )

    it.effect("lookup: by reference, container, bill of lading and booking; replaced and deleted keys are gone", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const found = (query: string) =>
          Effect.map(
            store.lookup(org, TradeflowKey.ofQuery(query)),
            (cs) => [...cs].sort(byReference).map((c) => c.reference)
          )
        const a = {
          ...makeTradeflow(org, "TF-A", ["MSCU1234565"]),
          bill_of_lading_references: ["bl-1"],
          booking_references: ["BK-1"]
        }
        const b = { ...makeTradeflow(org, "TF-B", ["MSCU1234565", "TGHU0000001"], false), booking_references: ["bl-1"] }
        yield* commitNew(org, { upserts: [a, b] })
        yield* commitNew(freshId("org"), { upserts: [{ ...a, organisation_id: freshId("org") }] })
        expect(yield* found("TF-A")).toEqual(["TF-A"])
        expect(yield* found("tf-a")).toEqual([])
        expect(yield* found("mscu 123456-5")).toEqual(["TF-A", "TF-B"])
        expect(yield* found("BL-1")).toEqual(["TF-A", "TF-B"])
        expect(yield* found("bk-1")).toEqual(["TF-A"])
        expect(yield* found("BK")).toEqual([])
        expect(yield* store.lookup(org, [])).toEqual([])
        expect(yield* store.lookup(freshId("org"), TradeflowKey.ofQuery("TF-A"))).toEqual([])
        yield* commitNew(org, { upserts: [{ ...a, containers: [], created_at: 5, updated_at: 6 }], deletes: ["TF-B"] })
        expect(yield* found("MSCU1234565")).toEqual([])
        expect(yield* store.lookup(org, TradeflowKey.ofQuery("bl-1"))).toEqual([{
          reference: "TF-A",
          created_at: 5,
          updated_at: 6
        }])
      }))

    it.effect.prop("lookup: agrees with a scan of the organisation across upserts, replacements and deletes", [
      fc.array(arbitraryLookupStep, { maxLength: 6 })
    ], ([steps]) =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const neighbour = freshId("org")
        const everything = {
          ...makeTradeflow(neighbour, "TF-1", [...containerNumbers]),
          bill_of_lading_references: [...lookupDocuments],
          booking_references: [...lookupDocuments],
          created_at: -1
        }
        yield* commitNew(neighbour, { upserts: [everything] })
        const model = new Map<string, Tradeflow>()
        for (const step of steps) {
          const upserts = step.upserts.map((u) => ({
            ...makeTradeflow(org, u.reference, u.containers),
            bill_of_lading_references: u.bills,
            booking_references: u.bookings,
            created_at: u.created_at,
            updated_at: u.updated_at
          }))
          yield* commitNew(org, { deletes: step.deletes, upserts })
          for (const reference of step.deletes) model.delete(reference)
          for (const t of upserts) model.set(t.reference, t)
        }
        for (const query of lookupQueries) {
          const expected = [...model.values()].filter((t) => matches(t, query)).map(candidateOf).sort(byReference)
          const got = [...yield* store.lookup(org, TradeflowKey.ofQuery(query))].sort(byReference)
          expect(got, JSON.stringify(query)).toEqual(expected)
        }
      }), props)

    it.effect("messages: every filter, their combinations, oldest and newest", () =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        const log = [
          makeMessage("m1", { type: "BASIC_STATUS", tradeflow_reference: "TF-1", generated_at: 100 }),
          makeMessage("m2", {
            type: "CONTAINER_MILESTONE",
            tradeflow_reference: "TF-1",
            container_reference: "C1",
            generated_at: 200
          }),
          makeMessage("m3", { type: "SHIPMENT_CHANGE", tradeflow_reference: "TF-1", generated_at: 300 }),
          makeMessage("m4", {
            type: "CONTAINER_MILESTONE",
            tradeflow_reference: "TF-2",
            container_reference: "C2",
            generated_at: 400
          }),
          makeMessage("m5", { type: "LOCATION_UPDATE", tradeflow_reference: "TF-2", generated_at: 500 }),
          makeMessage("m6", {
            type: "CONTAINER_MILESTONE",
            tradeflow_reference: "TF-1",
            container_reference: "C1",
            generated_at: 600
          })
        ]
        yield* commitNew(org, { messages: log })
        const list = (q: Partial<MessageQuery>) =>
          Effect.map(messages.list({ organisation_id: org, take: "oldest", limit: 100, ...q }), (ms) =>
            ms.map((m) => m.hash))
        expect(yield* list({})).toEqual(["m1", "m2", "m3", "m4", "m5", "m6"])
        expect(yield* list({ since: 300 })).toEqual(["m3", "m4", "m5", "m6"])
        expect(yield* list({ since: 301 })).toEqual(["m4", "m5", "m6"])
        expect(yield* list({ tradeflow_reference: "TF-1" })).toEqual(["m1", "m2", "m3", "m6"])
        expect(yield* list({ container_reference: "C1" })).toEqual(["m2", "m6"])
        expect(yield* list({ types: ["CONTAINER_MILESTONE", "LOCATION_UPDATE"] })).toEqual(["m2", "m4", "m5", "m6"])
        expect(yield* list({ types: [] })).toEqual([])
        expect(yield* list({ exclude_types: ["SHIPMENT_CHANGE"] })).toEqual(["m1", "m2", "m4", "m5", "m6"])
        expect(yield* list({ exclude_types: [] })).toEqual(["m1", "m2", "m3", "m4", "m5", "m6"])
        expect(yield* list({ after_seq: 4 })).toEqual(["m5", "m6"])
        expect(yield* list({ tradeflow_reference: "TF-1", types: ["CONTAINER_MILESTONE"], since: 250 })).toEqual(["m6"])
        expect(yield* list({ container_reference: "C1", exclude_types: ["CONTAINER_MILESTONE"] })).toEqual([])
        expect(yield* list({ types: ["CONTAINER_MILESTONE"], exclude_types: ["CONTAINER_MILESTONE"] })).toEqual([])
        expect(yield* list({ limit: 2 })).toEqual(["m1", "m2"])
        expect(yield* list({ take: "newest", limit: 2 })).toEqual(["m5", "m6"])
        expect(yield* list({ take: "newest", limit: 2, tradeflow_reference: "TF-1" })).toEqual(["m3", "m6"])
        expect(yield* list({ take: "newest", limit: 100, after_seq: 3 })).toEqual(["m4", "m5", "m6"])
        expect(yield* list({ limit: 0 })).toEqual([])
        expect(yield* list({ take: "newest", limit: 0 })).toEqual([])
        expect(yield* messages.list({ organisation_id: org, take: "oldest", limit: 1 }))
          .toEqual([{ ...log[0], seq: 1 }])
      }))

    it.effect("tenants: organisations never see each other's data", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const a = freshId("org")
        const b = freshId("org")
        const aTf = makeTradeflow(a, "TF-1", ["MSCU1234565"])
        const bTf = makeTradeflow(b, "TF-1", ["TGHU0000001"])
        yield* commitNew(a, { upserts: [aTf], messages: [makeMessage("h1"), makeMessage("h2")] })
        yield* commitNew(b, { upserts: [bTf], messages: [makeMessage("h2", { body: "{\"b\":1}" }), makeMessage("h1")] })
        expect((yield* logOf(a)).map((m) => [m.seq, m.hash])).toEqual([[1, "h1"], [2, "h2"]])
        expect((yield* logOf(b)).map((m) => [m.seq, m.hash, m.body])).toEqual([[1, "h2", "{\"b\":1}"], [
          2,
          "h1",
          "{\"hash\":\"h1\"}"
        ]])
        expect(yield* store.containers(a)).toEqual(["MSCU1234565"])
        expect(yield* store.containers(b)).toEqual(["TGHU0000001"])
        expect(Option.map(yield* store.get(b, "TF-1"), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(bTf))
        )
        yield* commitNew(b, { deletes: ["TF-1"] })
        expect(yield* logOf(b)).toEqual([])
        expect(yield* store.list(b)).toEqual([])
        expect((yield* logOf(a)).map((m) => m.hash)).toEqual(["h1", "h2"])
        expect(Option.map(yield* store.get(a, "TF-1"), canonicalTradeflow)).toEqual(
          Option.some(canonicalTradeflow(aTf))
        )
        expect(yield* logOf(freshId("org"))).toEqual([])
      }))

    it.effect.prop("messages: commits build the deduplicated log with seq 1..n, and every query matches the model", [
      fc.array(fc.array(arbitraryMessage, { maxLength: 10 }), { minLength: 1, maxLength: 4 }),
      fc.array(arbitraryQuery("placeholder"), { minLength: 1, maxLength: 6 })
    ], ([batches, queries]) =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        for (const batch of batches) yield* commitNew(org, { messages: batch })
        const expected = expectedLog(batches)
        const log = yield* logOf(org)
        expect(log).toEqual(expected)
        expect(log.map((m) => m.seq)).toEqual(expected.map((_, i) => i + 1))
        for (const q of queries) {
          const query = { ...q, organisation_id: org }
          expect(yield* messages.list(query)).toEqual(selectMessages(expected, query))
        }
      }), props)

    it.effect.prop("messages: latest follows commits and deletes of tradeflows (the newest of each key that remains)", [
      fc.array(
        fc.oneof(
          fc.array(arbitraryMessage, { minLength: 1, maxLength: 8 }).map((messages) => ({
            messages,
            deletes: [] as Array<string>
          })),
          fc.subarray<string>([...references], { minLength: 1 }).map((deletes) => ({
            messages: [] as Array<NewMessage>,
            deletes
          })),
          fc.tuple(
            fc.subarray<string>([...references], { minLength: 1 }),
            fc.array(arbitraryMessage, { minLength: 1, maxLength: 4 })
          )
            .map(([deletes, messages]) => ({ messages, deletes }))
        ),
        { minLength: 1, maxLength: 6 }
      ),
      fc.array(arbitraryQuery("placeholder"), { minLength: 1, maxLength: 4 })
    ], ([steps, queries]) =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        let log: Array<StoredMessage> = []
        let seq = 0
        for (const step of steps) {
          yield* commitNew(org, step)
          log = log.filter((m) => !step.deletes.includes(m.tradeflow_reference))
          for (const m of step.messages) if (!log.some((l) => l.hash === m.hash)) log.push({ ...m, seq: ++seq })
          for (const q of queries) {
            const query = { ...q, organisation_id: org, latest: true }
            expect(yield* messages.list(query)).toEqual(selectMessages(log, query))
          }
        }
      }), props)

    /** Batches of messages with bodies of any size. */
    const arbitrarySizedBatches = fc.array(
      fc.array(arbitraryMessage.chain((m) => arbitrarySizedBody.map((body) => ({ ...m, body }))), { maxLength: 12 }),
      { minLength: 1, maxLength: 3 }
    )
    /** Queries, each with a byte budget. */
    const arbitraryBudgetedQueries = fc.array(
      fc.tuple(arbitraryQuery("placeholder"), fc.integer({ min: 0, max: 6_000 })),
      { minLength: 1, maxLength: 6 }
    )

    it.effect.prop(
      "messages: read returns what fits in max_bytes (the first always) and whether more follow",
      [arbitrarySizedBatches, arbitraryBudgetedQueries],
      ([batches, queries]) =>
        Effect.gen(function*() {
          const { messages } = yield* ports
          const org = freshId("org")
          for (const batch of batches) yield* commitNew(org, { messages: batch })
          const expected = expectedLog(batches)
          for (const [q, max_bytes] of queries) {
            const query = { ...q, organisation_id: org, max_bytes }
            expect(yield* messages.read(query)).toEqual(readModel(expected, query))
          }
        }),
      props
    )

    it.effect.prop(
      "messages: readBodies answers what read answers, each message as its seq and body",
      [arbitrarySizedBatches, arbitraryBudgetedQueries],
      ([batches, queries]) =>
        Effect.gen(function*() {
          const { messages } = yield* ports
          const org = freshId("org")
          for (const batch of batches) yield* commitNew(org, { messages: batch })
          const expected = expectedLog(batches)
          for (const [q, max_bytes] of queries) {
            const query = { ...q, organisation_id: org, max_bytes }
            const run = readModel(expected, query)
            expect(yield* messages.readBodies(query)).toEqual({
              messages: run.messages.map((m) => ({ seq: m.seq, body: m.body })),
              more: run.more
            })
          }
        }),
      props
    )

    it.effect.prop("messages: paging with after_seq returns every matching message once, in order", [
      fc.array(arbitraryMessage, { maxLength: 30 }),
      fc.integer({ min: 1, max: 7 }),
      fc.option(fc.constantFrom(...references), { nil: undefined })
    ], ([batch, pageSize, tradeflow]) =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, { messages: batch })
        const filter = tradeflow === undefined ? {} : { tradeflow_reference: tradeflow }
        const pages: Array<ReadonlyArray<StoredMessage>> = []
        let after = 0
        while (true) {
          const page = yield* messages.list({
            organisation_id: org,
            take: "oldest",
            limit: pageSize,
            after_seq: after,
            ...filter
          })
          expect(page.length).toBeLessThanOrEqual(pageSize)
          if (page.length === 0) break
          pages.push(page)
          after = page[page.length - 1]!.seq
        }
        expect(pages.flat()).toEqual(selectMessages(expectedLog([batch]), {
          organisation_id: org,
          take: "oldest",
          limit: Number.MAX_SAFE_INTEGER,
          ...filter
        }))
        expect(pages.slice(0, -1).every((p) => p.length === pageSize)).toBe(true)
      }), props)

    it.effect("claim: only each organisation's oldest pending job, never one under a live lease", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const a = freshId("org")
        const b = freshId("org")
        const ids = { a: [] as Array<number>, b: [] as Array<number> }
        for (const n of [1, 2, 3]) {
          ids.a.push(enqueued(yield* queue.enqueue(newJob(a, `A${n}`))))
          ids.b.push(enqueued(yield* queue.enqueue(newJob(b, `B${n}`))))
        }
        const sizes = new Map(
          [
            ...yield* queue.list({ organisation_id: a, state: "pending", limit: 10 }),
            ...yield* queue.list({ organisation_id: b, state: "pending", limit: 10 })
          ].map((j) => [j.id, j.payload_bytes])
        )
        const first = yield* claimMine("w1", [a, b], 60_000)
        expect(first).toEqual([
          { id: ids.a[0], ...newJob(a, "A1"), attempt: 1, payload_bytes: sizes.get(ids.a[0]!) },
          { id: ids.b[0], ...newJob(b, "B1"), attempt: 1, payload_bytes: sizes.get(ids.b[0]!) }
        ])
        expect(first.every((j) => j.payload_bytes! > 0)).toBe(true)
        expect(yield* claimMine("w1", [a, b], 60_000)).toEqual([])
        expect(yield* claimMine("w2", [a, b], 60_000)).toEqual([])
        expect((yield* pendingOf(a)).map((j) => j.id)).toEqual(ids.a)

        expect(
          yield* store.commit(
            commitOf(ids.a[0]!, a, { attempt: 1, messages: [makeMessage("a1")], result: { count: 1 } })
          )
        ).toBe(true)
        const second = yield* claimMine("w2", [a, b], 60_000)
        expect(second.map((j) => [j.id, j.organisation_id, j.attempt])).toEqual([[ids.a[1], a, 1]])

        expect(yield* queue.fail(ids.b[0]!, "unprocessable", 1)).toBe(true)
        expect(yield* queue.outcome(ids.b[0]!)).toEqual(Option.some({ _tag: "Failed", error: "unprocessable" }))
        const third = yield* claimMine("w1", [a, b], 60_000)
        expect(third.map((j) => [j.id, j.organisation_id, j.attempt])).toEqual([[ids.b[1], b, 1]])
        expect(yield* claimMine("w1", [a, b], 60_000, 0)).toEqual([])
        yield* cleanup([a, b])
      }))

    it.effect("claim: an expired lease is claimable again with the next attempt; stale attempts write nothing", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org)))
        expect((yield* claimMine("w1", [org], shortLease)).map((j) => [j.id, j.attempt])).toEqual([[id, 1]])
        expect(yield* claimMine("w2", [org], shortLease)).toEqual([])
        yield* Effect.sleep(Duration.millis(shortLease * 2))
        expect((yield* claimMine("w2", [org], 60_000)).map((j) => [j.id, j.attempt])).toEqual([[id, 2]])

        expect(
          yield* store.commit({
            job_id: id,
            attempt: 1,
            organisation_id: org,
            upserts: [makeTradeflow(org, "TF-stale", ["MSCU1234565"])],
            deletes: [],
            messages: [makeMessage("stale")],
            result: { count: 1 }
          })
        ).toBe(false)
        expect(yield* queue.fail(id, "stale", 1)).toBe(false)
        expect(yield* queue.outcome(id)).toEqual(Option.none())
        expect(yield* store.list(org)).toEqual([])
        expect(yield* store.containers(org)).toEqual([])
        expect(yield* logOf(org)).toEqual([])
        expect((yield* pendingOf(org)).map((j) => j.id)).toEqual([id])

        expect(
          yield* store.commit(commitOf(id, org, { attempt: 2, messages: [makeMessage("fresh")], result: { count: 2 } }))
        ).toBe(true)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Done", result: { count: 2 } }))
        expect((yield* logOf(org)).map((m) => m.hash)).toEqual(["fresh"])
        expect(yield* queue.fail(id, "late", 2)).toBe(false)
        expect(yield* claimMine("w3", [org], 60_000)).toEqual([])
      }))

    it.effect("heartbeat: keeps a lease alive; only its holder at that attempt renews it", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org)))
        expect((yield* claimMine("w1", [org], shortLease)).map((j) => j.attempt)).toEqual([1])
        yield* Effect.sleep(Duration.millis(shortLease * 0.6))
        yield* queue.heartbeat({ worker: "w1", jobs: [{ id, attempt: 1 }], leaseMillis: shortLease })
        yield* queue.heartbeat({ worker: "w2", jobs: [{ id, attempt: 1 }], leaseMillis: shortLease * 20 })
        yield* queue.heartbeat({ worker: "w1", jobs: [{ id, attempt: 2 }], leaseMillis: shortLease * 20 })
        yield* queue.heartbeat({ worker: "w1", jobs: [], leaseMillis: shortLease * 20 })
        yield* Effect.sleep(Duration.millis(shortLease * 0.6))
        expect(yield* claimMine("w2", [org], 60_000)).toEqual([])
        yield* Effect.sleep(Duration.millis(shortLease))
        expect((yield* claimMine("w2", [org], 60_000)).map((j) => [j.id, j.attempt])).toEqual([[id, 2]])
        expect(
          yield* store.commit(commitOf(id, org))
        ).toBe(true)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Done", result: { count: 0 } }))
      }))

    it.effect("heartbeat with leaseMillis 0 releases a lease: claimable at once with the next attempt", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org)))
        expect((yield* claimMine("w1", [org], 600_000)).map((j) => j.attempt)).toEqual([1])
        yield* queue.heartbeat({ worker: "w2", jobs: [{ id, attempt: 1 }], leaseMillis: 0 })
        expect(yield* claimMine("w2", [org], 600_000)).toEqual([])
        yield* queue.heartbeat({ worker: "w1", jobs: [{ id, attempt: 1 }], leaseMillis: 0 })
        expect((yield* claimMine("w2", [org], 600_000)).map((j) => [j.id, j.attempt])).toEqual([[id, 2]])
        expect(
          yield* store.commit(commitOf(id, org, { attempt: 1 }))
        ).toBe(false)
        yield* cleanup([org])
      }))

    it.effect("claim: concurrent claimers never get the same job", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue } = yield* ports
        const orgs = Array.from({ length: 12 }, () => freshId("org"))
        const heads: Array<number> = []
        for (const org of orgs) heads.push(enqueued(yield* queue.enqueue(newJob(org, "first"))))
        for (const org of orgs) yield* queue.enqueue(newJob(org, "second"))
        const rounds = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => claimMine(`w${i}`, orgs, 60_000, 3)),
          { concurrency: "unbounded" }
        )
        const got = rounds.flat().map((j) => j.id)
        expect(new Set(got).size).toBe(got.length)
        expect(got.filter((id) => !heads.includes(id))).toEqual([])
        for (let i = 0; i < 50 && got.length < heads.length; i++) {
          got.push(...(yield* claimMine("w-rest", orgs, 60_000, 100)).map((j) => j.id))
        }
        expect([...got].sort((x, y) => x - y)).toEqual(heads)
        expect(yield* claimMine("w-rest", orgs, 60_000)).toEqual([])
        yield* cleanup(orgs)
      }))

    it.effect("attempt limit: a job claimed maxAttempts times is dead at its next claim; its organisation's next job goes on", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue } = yield* ports
        const a = freshId("org")
        const b = freshId("org")
        const poison = enqueued(yield* queue.enqueue(newJob(a, "poison")))
        const other = enqueued(yield* queue.enqueue(newJob(b, "other")))
        const later = enqueued(yield* queue.enqueue(newJob(a, "later")))
        const first = yield* claimAll("w1", [a, b], 0, 100, 2)
        expect(first.jobs.map((j) => [j.id, j.attempt])).toEqual([[poison, 1], [other, 1]])
        expect(first.dead).toEqual([])
        const second = yield* claimAll("w2", [a, b], 0, 100, 2)
        expect(second.jobs.map((j) => [j.id, j.attempt])).toEqual([[poison, 2]])
        const third = yield* claimAll("w3", [a, b], 0, 100, 2)
        expect(third.dead).toEqual([{ id: poison, organisation_id: a, attempt: 2, error: attemptLimitReached(2) }])
        expect(third.jobs.map((j) => [j.id, j.attempt])).toEqual([[other, 2]])
        expect(yield* queue.outcome(poison)).toEqual(Option.some({ _tag: "Failed", error: attemptLimitReached(2) }))
        expect((yield* pendingOf(a)).map((j) => j.id)).toEqual([later])
        const fourth = yield* claimAll("w4", [a, b], 60_000, 100, 2)
        expect(fourth.jobs.map((j) => [j.id, j.attempt])).toEqual([[later, 1]])
        expect((yield* queue.list({ organisation_id: a, state: "dead", limit: 10 })).map((j) => [j.id, j.attempt]))
          .toEqual([[poison, 2]])
        expect(yield* claimAll("w5", [a, b], 60_000, 100, 2)).toEqual({ jobs: [], dead: [] })
        yield* cleanup([a, b])
      }))

    it.effect("attempt limit: a job under a live lease is never marked dead; with no limit a job is claimed on and on", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org)))
        expect((yield* claimAll("w1", [org], 60_000, 10, 1)).jobs.map((j) => j.attempt)).toEqual([1])
        expect(yield* claimAll("w2", [org], 60_000, 10, 1)).toEqual({ jobs: [], dead: [] })
        yield* queue.heartbeat({ worker: "w1", jobs: [{ id, attempt: 1 }], leaseMillis: 0 })
        for (const attempt of [2, 3, 4, 5, 6, 7]) {
          expect((yield* claimAll("w1", [org], 0, 10)).jobs.map((j) => [j.id, j.attempt])).toEqual([[id, attempt]])
        }
        const killed = yield* claimAll("w1", [org], 0, 10, 7)
        expect(killed.dead.map((j) => [j.id, j.attempt])).toEqual([[id, 7]])
      }))

    it.effect("claim: a job that was claimed before is claimed alone, so a crash takes only its own attempts", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const orgs = [freshId("org"), freshId("org"), freshId("org")]
        const ids: Array<number> = []
        for (const org of orgs) ids.push(enqueued(yield* queue.enqueue(newJob(org))))
        expect((yield* claimMine("crashed", orgs, 0)).map((j) => [j.id, j.attempt])).toEqual(ids.map((id) => [id, 1]))
        for (const [i, id] of ids.entries()) {
          const alone = yield* claimMine("w", orgs, 60_000)
          expect(alone.map((j) => [j.id, j.attempt])).toEqual([[id, 2]])
          expect(
            yield* store.commit(commitOf(id, orgs[i]!, { attempt: 2 }))
          ).toBe(true)
        }
        const fresh: Array<number> = []
        for (const org of orgs) fresh.push(enqueued(yield* queue.enqueue(newJob(org))))
        expect((yield* claimMine("w", orgs, 60_000)).map((j) => [j.id, j.attempt])).toEqual(fresh.map((id) => [id, 1]))
        yield* cleanup(orgs)
      }))

    it.effect("claim with follow: a fresh oldest job brings the jobs queued after it, in order, within the count and the bytes", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const [a, b] = [freshId("org"), freshId("org")]
        const as: Array<number> = []
        for (let i = 0; i < 5; i++) as.push(enqueued(yield* queue.enqueue(newJob(a))))
        const bs: Array<number> = []
        for (let i = 0; i < 3; i++) bs.push(enqueued(yield* queue.enqueue(newJob(b))))
        const size = (yield* queue.list({ organisation_id: b, state: "pending", limit: 1 }))[0]!.payload_bytes
        expect(size).toBeGreaterThan(0)
        const claim = (worker: string, follow: { readonly jobs: number; readonly bytes: number }) =>
          Effect.map(
            queue.claim({ worker, limit: 100, leaseMillis: 60_000, follow }),
            (c) =>
              c.jobs.filter((j) => j.organisation_id === a || j.organisation_id === b).map((j) => [j.id, j.attempt])
          )
        expect(yield* claim("w1", { jobs: 3, bytes: 2 * size })).toEqual([
          [as[0], 1],
          [as[1], 0],
          [bs[0], 1],
          [bs[1], 0]
        ].sort((x, y) => x[0]! - y[0]!))
        expect(yield* claim("w2", { jobs: 3, bytes: 1_000_000 })).toEqual([])
        const done = (ids: ReadonlyArray<number>, organisation_id: string) =>
          store.commitAll(
            ids.map((job_id, i) =>
              commitOf(job_id, organisation_id, { attempt: i === 0 ? 1 : 0, result: { count: job_id } })
            )
          )
        expect(yield* done(as.slice(0, 2), a)).toBe(true)
        expect(yield* done(bs.slice(0, 2), b)).toBe(true)
        expect(yield* claim("w2", { jobs: 10, bytes: 1_000_000 })).toEqual([
          [as[2], 1],
          [as[3], 0],
          [as[4], 0],
          [bs[2], 1]
        ].sort((x, y) => x[0]! - y[0]!))
        for (const id of [...as, ...bs].slice(0, 2)) {
          expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Done", result: { count: id } }))
        }
        yield* cleanup([a, b])
      }))

    it.effect("claim with follow: no attempt counted for the followers; never past a job claimed before; a job claimed before comes alone", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue } = yield* ports
        const org = freshId("org")
        const ids: Array<number> = []
        for (let i = 0; i < 3; i++) ids.push(enqueued(yield* queue.enqueue(newJob(org))))
        const follow = { jobs: 10, bytes: 1_000_000 }
        const claim = (worker: string, leaseMillis: number) =>
          Effect.map(
            queue.claim({ worker, limit: 100, leaseMillis, follow }),
            (c) => c.jobs.filter((j) => j.organisation_id === org).map((j) => [j.id, j.attempt])
          )
        expect(yield* claim("crashed", 0)).toEqual(ids.map((id, i) => [id, i === 0 ? 1 : 0]))
        expect(yield* claim("w", 0)).toEqual([[ids[0], 2]])
        expect(yield* queue.fail(ids[0]!, "gave up")).toBe(true)
        expect(yield* claim("w", 0)).toEqual(ids.slice(1).map((id, i) => [id, i === 0 ? 1 : 0]))
        expect(yield* queue.retry(ids[0]!)).toBe("retried")
        expect(yield* claim("w", 60_000)).toEqual([[ids[0], 1]])
        yield* cleanup([org])
      }))

    it.effect("a tradeflow whose reference, keys and messages hold lone surrogates is stored, found, sized, looked up and deleted", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const reference = "PO-\uD800"
        const tradeflow = { ...makeTradeflow(org, reference, ["MSCU1234565"]), booking_references: ["BK-\uDC00"] }
        const written = yield* commitNew(org, {
          upserts: [tradeflow],
          messages: [makeMessage("lone", { tradeflow_reference: reference, container_reference: "MSCU1234565" })]
        })
        expect(written.committed).toBe(true)
        expect([...(yield* store.sizes(org, [reference])).keys()]).toHaveLength(1)
        expect([...(yield* store.getMany(org, [reference])).keys()]).toHaveLength(1)
        expect(yield* store.lookup(org, TradeflowKey.ofQuery("BK-\uDC00"))).toHaveLength(1)
        expect(yield* logOf(org)).toHaveLength(1)
        expect((yield* commitNew(org, { deletes: [reference] })).committed).toBe(true)
        expect([...(yield* store.getMany(org, [reference])).keys()]).toEqual([])
        expect(yield* logOf(org)).toEqual([])
      }))

    it.effect("commitAll: commits of consecutive jobs apply in order, numbered on; all or nothing", () =>
      Effect.gen(function*() {
        const { queue, store } = yield* ports
        const org = freshId("org")
        const ids: Array<number> = []
        for (let i = 0; i < 4; i++) ids.push(enqueued(yield* queue.enqueue(newJob(org))))
        const commit = (job_id: number, changes: Partial<Commit>) =>
          commitOf(job_id, org, { result: { count: job_id }, ...changes })
        const stale = [
          commit(ids[0]!, { upserts: [makeTradeflow(org, "TF-9", ["MSCU1234565"])], messages: [makeMessage("x")] }),
          commit(ids[3]!, { attempt: 7 })
        ]
        expect(yield* store.commitAll(stale)).toBe(false)
        expect(yield* store.get(org, "TF-9")).toEqual(Option.none())
        expect(yield* logOf(org)).toEqual([])
        expect(yield* queue.outcome(ids[0]!)).toEqual(Option.none())

        const first = makeTradeflow(org, "TF-1", ["MSCU1234565"])
        const second = { ...makeTradeflow(org, "TF-1", ["TGHU0000001"]), updated_at: 5 }
        const commits = [
          commit(ids[0]!, {
            upserts: [first, makeTradeflow(org, "TF-2", ["CSQU3054383"])],
            messages: [makeMessage("a"), makeMessage("b", { tradeflow_reference: "TF-2" })]
          }),
          commit(ids[1]!, { deletes: ["TF-2"], messages: [makeMessage("a"), makeMessage("c")] }),
          commit(ids[2]!, { upserts: [second], messages: [makeMessage("d"), makeMessage("c")] }),
          commit(ids[3]!, {})
        ]
        expect(yield* store.commitAll(commits)).toBe(true)
        expect(yield* store.commitAll(commits.slice(3))).toBe(false)
        for (const id of ids) {
          expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Done", result: { count: id } }))
        }
        expect((yield* store.list(org)).map(canonicalTradeflow)).toEqual([canonicalTradeflow(second)])
        expect(yield* store.containers(org)).toEqual(["TGHU0000001"])
        expect((yield* logOf(org)).map((m) => [m.seq, m.hash])).toEqual([[1, "a"], [3, "c"], [4, "d"]])
        const many = yield* store.getMany(org, ["TF-1", "TF-2", "TF-3", "TF-1"])
        expect([...many.keys()]).toEqual(["TF-1"])
        expect(canonicalTradeflow(many.get("TF-1")!)).toEqual(canonicalTradeflow(second))
      }))

    it.effect("fail: the job is dead, listed, and retryable; a retried job runs again from attempt 1", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const org = freshId("org")
        const id = enqueued(yield* queue.enqueue(newJob(org, "TF-dead")))
        expect((yield* claimMine("w", [org], 60_000)).map((j) => j.attempt)).toEqual([1])
        expect(yield* queue.fail(id, "render failed", 1)).toBe(true)
        expect(yield* queue.retry(id)).toBe("retried")
        expect(yield* queue.retry(id)).toBe("not-dead")
        expect(yield* queue.outcome(id)).toEqual(Option.none())
        const [summary] = yield* queue.list({ organisation_id: org, state: "pending", limit: 10 })
        expect([summary?.id, summary?.attempt, summary?.error]).toEqual([id, 0, null])
        expect((yield* claimMine("w", [org], 60_000)).map((j) => [j.id, j.attempt])).toEqual([[id, 1]])
        expect(
          yield* store.commit(commitOf(id, org, { attempt: 1, result: { count: 3 } }))
        ).toBe(true)
        expect(yield* queue.outcome(id)).toEqual(Option.some({ _tag: "Done", result: { count: 3 } }))
        expect(yield* queue.retry(id)).toBe("not-dead")
        expect(yield* queue.retry(2_000_000_000)).toBe("not-found")
        expect(yield* queue.list({ organisation_id: org, state: "dead", limit: 10 })).toEqual([])
      }))

    it.effect("retry: a retried job never runs next to a later job of its organisation that holds a lease", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue, store } = yield* ports
        const org = freshId("org")
        const first = enqueued(yield* queue.enqueue(newJob(org, "first")))
        const second = enqueued(yield* queue.enqueue(newJob(org, "second")))
        expect(yield* queue.fail(first, "boom")).toBe(true)
        expect((yield* claimMine("w1", [org], 60_000)).map((j) => j.id)).toEqual([second])
        const woke = yield* queue.wakeups.pipe(Stream.take(1), Stream.runDrain, Effect.fork)
        let signalled = false
        for (let i = 0; i < 25 && !signalled; i++) {
          if (i > 0) expect(yield* queue.fail(first, "again")).toBe(true)
          expect(yield* queue.retry(first)).toBe("retried")
          signalled = Option.isSome(yield* Fiber.join(woke).pipe(Effect.timeout("200 millis"), Effect.option))
        }
        expect(signalled).toBe(true)
        expect((yield* pendingOf(org)).map((j) => j.id)).toEqual([first, second])
        expect(yield* claimMine("w2", [org], 60_000)).toEqual([])
        expect(
          yield* store.commit(commitOf(second, org, { attempt: 1 }))
        ).toBe(true)
        expect((yield* claimMine("w2", [org], 60_000)).map((j) => [j.id, j.attempt])).toEqual([[first, 1]])
        yield* cleanup([org])
      }))

    it.effect("list: an organisation's pending or dead jobs in queue order, with kind, payload size, attempts and error", () =>
      Effect.gen(function*() {
        yield* sweep
        const { queue } = yield* ports
        const org = freshId("org")
        const other = freshId("org")
        const upsert = Schema.decodeUnknownSync(Job.UpsertJob)({
          _tag: "Upsert",
          groups: [{
            tradeflow_reference: "TF-ü",
            records: [{ tradeflow_reference: "TF-ü", booking_reference: "BK-ü", customer_name: "Zoë" }]
          }]
        })
        const jobs: ReadonlyArray<Job.NewJob> = [
          { ...newJob(org, "gone"), environment: "uat" },
          { ...newJob(org), payload: upsert, received_at: 5 },
          { ...newJob(org), payload: { _tag: "Advance", reference: "TF-1" } }
        ]
        const ids: Array<number> = []
        for (const job of jobs) ids.push(enqueued(yield* queue.enqueue(job)))
        yield* queue.enqueue(newJob(other))
        expect((yield* claimMine("w", [org], 60_000)).map((j) => j.id)).toEqual([ids[0]])
        expect(yield* queue.recordFailure(ids[0]!, 2, "not this attempt")).toBe(false)
        expect(yield* queue.recordFailure(ids[0]!, 1, "disk full")).toBe(true)
        expect(yield* queue.fail(ids[1]!, "cannot render")).toBe(true)
        const summary = (job: Job.NewJob, id: number, attempt: number, error: string | null): JobSummary => ({
          id,
          organisation_id: org,
          environment: job.environment,
          kind: job.payload._tag,
          payload_bytes:
            new TextEncoder().encode(Schema.encodeSync(Schema.parseJson(Job.JobPayload))(job.payload)).length,
          received_at: job.received_at,
          attempt,
          error
        })
        expect(yield* queue.list({ organisation_id: org, state: "pending", limit: 10 })).toEqual([
          summary(jobs[0]!, ids[0]!, 1, "disk full"),
          summary(jobs[2]!, ids[2]!, 0, null)
        ])
        expect(yield* queue.list({ organisation_id: org, state: "pending", limit: 1 })).toEqual([
          summary(jobs[0]!, ids[0]!, 1, "disk full")
        ])
        expect(yield* queue.list({ organisation_id: org, state: "dead", limit: 10 })).toEqual([
          summary(jobs[1]!, ids[1]!, 0, "cannot render")
        ])
        expect(yield* queue.list({ organisation_id: freshId("org"), state: "dead", limit: 10 })).toEqual([])
        yield* queue.heartbeat({ worker: "w", jobs: [{ id: ids[0]!, attempt: 1 }], leaseMillis: 0 })
        const killed = yield* claimAll("w", [org], 60_000, 100, 1)
        expect(killed.dead).toEqual([{ id: ids[0], organisation_id: org, attempt: 1, error: "disk full" }])
        yield* cleanup([org, other])
      }))

    it.effect("wakeups: a committed enqueue signals a subscriber", () =>
      Effect.gen(function*() {
        const { queue } = yield* ports
        const org = freshId("org")
        const fiber = yield* queue.wakeups.pipe(Stream.take(1), Stream.runDrain, Effect.fork)
        let woke = false
        for (let i = 0; i < 25 && !woke; i++) {
          yield* queue.enqueue(newJob(org))
          woke = Option.isSome(yield* Fiber.join(fiber).pipe(Effect.timeout("200 millis"), Effect.option))
        }
        expect(woke).toBe(true)
        yield* cleanup([org])
      }))

    it.effect("settings: getOrCreate stores the first value; concurrent callers agree", () =>
      Effect.gen(function*() {
        const { settings } = yield* ports
        const name = freshId("setting")
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => settings.getOrCreate(name, `value-${i}`)),
          { concurrency: "unbounded" }
        )
        expect(new Set(answers).size).toBe(1)
        expect(answers[0]).toMatch(/^value-[0-7]$/)
        expect(yield* settings.getOrCreate(name, "other")).toBe(answers[0])
        const other = freshId("setting")
        expect(yield* settings.getOrCreate(other, "x".repeat(300))).toBe("x".repeat(300))
        expect(yield* settings.getOrCreate(name, "other")).toBe(answers[0])
      }))

    it.effect("settings: get reads without creating; set replaces", () =>
      Effect.gen(function*() {
        const { settings } = yield* ports
        const name = freshId("setting")
        expect(yield* settings.get(name)).toEqual(Option.none())
        expect(yield* settings.get(name)).toEqual(Option.none())
        yield* settings.set(name, "first")
        expect(yield* settings.get(name)).toEqual(Option.some("first"))
        yield* settings.set(name, "second")
        expect(yield* settings.get(name)).toEqual(Option.some("second"))
        expect(yield* settings.getOrCreate(name, "third")).toBe("second")
      }))

    it.effect("due: tradeflows whose next_position_at has come, soonest first, following upserts and deletes", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const org = freshId("org")
        const at = (reference: string, next_position_at: number | null) => ({
          ...makeTradeflow(org, reference, []),
          next_position_at
        })
        const mine = (now: number) =>
          Effect.map(
            store.due(now, 100_000),
            (due) => due.filter((d) => d.organisation_id === org).map((d) => d.reference)
          )
        yield* commitNew(org, {
          upserts: [
            at("TF-c", 300),
            at("TF-none", null),
            at("TF-a", 100),
            at("TF-b2", 200),
            at("TF-b", 200),
            at("TF-late", 5_000)
          ]
        })
        expect(yield* mine(250)).toEqual(["TF-a", "TF-b", "TF-b2"])
        expect(yield* mine(300)).toEqual(["TF-a", "TF-b", "TF-b2", "TF-c"])
        expect(yield* mine(99)).toEqual([])
        expect((yield* store.due(250, 1)).length).toBeLessThanOrEqual(1)
        expect(yield* store.due(250, 0)).toEqual([])
        yield* commitNew(org, { upserts: [at("TF-a", null), at("TF-c", 150)] })
        expect(yield* mine(250)).toEqual(["TF-c", "TF-b", "TF-b2"])
        yield* commitNew(org, { deletes: ["TF-b"] })
        expect(yield* mine(10_000)).toEqual(["TF-c", "TF-b2", "TF-late"])
        expect(Option.map(yield* store.get(org, "TF-c"), (t) => t.next_position_at)).toEqual(Option.some(150))
      }))

    it.effect("due: round-robin across organisations, so one with many overdue tradeflows never takes another's turn", () =>
      Effect.gen(function*() {
        const { store } = yield* ports
        const base = -8e15 - Math.floor(Math.random() * 1e12)
        const [a, b, c] = [freshId("org-a"), freshId("org-b"), freshId("org-c")]
        const at = (org: string, reference: string, offset: number) => ({
          ...makeTradeflow(org, reference, []),
          next_position_at: base + offset
        })
        yield* commitNew(a, { upserts: [1, 2, 3, 4, 5].map((i) => at(a, `A${i}`, i)) })
        yield* commitNew(b, { upserts: [at(b, "B1", 10), at(b, "B2", 11)] })
        yield* commitNew(c, { upserts: [at(c, "C1", 20), at(c, "C-later", 1_000)] })
        const names = (limit: number) => Effect.map(store.due(base + 100, limit), (due) => due.map((d) => d.reference))
        expect(yield* names(4)).toEqual(["A1", "B1", "C1", "A2"])
        expect(yield* names(100)).toEqual(["A1", "B1", "C1", "A2", "B2", "A3", "A4", "A5"])
        yield* commitNew(a, {
          upserts: Array.from({ length: 200 }, (_, i) => at(a, `A-more-${String(i).padStart(3, "0")}`, -500 + i))
        })
        const fair = yield* names(3)
        expect(fair).toEqual(["A-more-000", "B1", "C1"])
      }))

    it.effect("messages: latest keeps the newest per (tradeflow, type, container) of the whole log, then filters", () =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, {
          messages: [
            makeMessage("m1", { type: "BASIC_STATUS", tradeflow_reference: "TF-1", generated_at: 100 }),
            makeMessage("m2", {
              type: "CONTAINER_MILESTONE",
              tradeflow_reference: "TF-1",
              container_reference: "C1",
              generated_at: 200
            }),
            makeMessage("m3", {
              type: "CONTAINER_MILESTONE",
              tradeflow_reference: "TF-1",
              container_reference: "C2",
              generated_at: 300
            }),
            makeMessage("m4", { type: "BASIC_STATUS", tradeflow_reference: "TF-1", generated_at: 400 }),
            makeMessage("m5", {
              type: "CONTAINER_MILESTONE",
              tradeflow_reference: "TF-1",
              container_reference: "C1",
              generated_at: 50
            }),
            makeMessage("m6", { type: "SHIPMENT_CHANGE", tradeflow_reference: "TF-1", generated_at: 600 }),
            makeMessage("m7", { type: "BASIC_STATUS", tradeflow_reference: "TF-2", generated_at: 700 }),
            makeMessage("m8", {
              type: "CONTAINER_MILESTONE",
              tradeflow_reference: "TF-2",
              container_reference: "C1",
              generated_at: 800
            }),
            makeMessage("m9", {
              type: "BASIC_STATUS",
              tradeflow_reference: "TF-2",
              container_reference: "C1",
              generated_at: 900
            })
          ]
        })
        const list = (q: Partial<MessageQuery>) =>
          Effect.map(
            messages.list({ organisation_id: org, take: "oldest", limit: 100, latest: true, ...q }),
            (ms) => ms.map((m) => m.hash)
          )
        expect(yield* list({})).toEqual(["m3", "m4", "m5", "m6", "m7", "m8", "m9"])
        expect(yield* list({ latest: false })).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"])
        expect(yield* list({ container_reference: "C1" })).toEqual(["m5", "m8", "m9"])
        expect(yield* list({ types: ["CONTAINER_MILESTONE"] })).toEqual(["m3", "m5", "m8"])
        expect(yield* list({ exclude_types: ["BASIC_STATUS"], tradeflow_reference: "TF-1" })).toEqual([
          "m3",
          "m5",
          "m6"
        ])
        expect(yield* list({ since: 100 })).toEqual(["m3", "m4", "m6", "m7", "m8", "m9"])
        expect(yield* list({ after_seq: 5 })).toEqual(["m6", "m7", "m8", "m9"])
        expect(yield* list({ take: "newest", limit: 2 })).toEqual(["m8", "m9"])
        expect(yield* list({ limit: 2 })).toEqual(["m3", "m4"])
        expect(yield* list({ types: [] })).toEqual([])
        yield* commitNew(org, {
          messages: [
            makeMessage("m10", { type: "CONTAINER_MILESTONE", tradeflow_reference: "TF-1", container_reference: "C1" })
          ]
        })
        expect(yield* list({ container_reference: "C1" })).toEqual(["m8", "m9", "m10"])
      }))

    it.effect("automations: put then get round-trips; unknown ids are none", () =>
      Effect.gen(function*() {
        const { automations } = yield* ports
        const org = freshId("org")
        const a = makeAutomation(org, {
          format: "tradeflow",
          types: ["CONTAINER_MILESTONE"],
          enabled: true,
          secrets: [{ secret: "whsec_new", expires_at: null }, { secret: "whsec_old", expires_at: 86_401_000 }],
          disabled_reason: null,
          failing_since: 5_000
        })
        yield* automations.put(a)
        expect(yield* automations.get(a.id)).toEqual(Option.some(a))
        expect(yield* automations.get(freshId("automation"))).toEqual(Option.none())
      }))

    it.effect.prop(
      "automations: any automation comes back as it was stored",
      [arbitraryAutomation],
      ([automation]) =>
        Effect.gen(function*() {
          const { automations } = yield* ports
          yield* automations.put(automation)
          const expected = canonicalAutomation(automation)
          expect(Option.map(yield* automations.get(automation.id), canonicalAutomation)).toEqual(Option.some(expected))
          expect((yield* automations.list(automation.organisation_id)).map(canonicalAutomation)).toEqual([expected])
          expect((yield* automations.enabled(automation.organisation_id)).map(canonicalAutomation))
            .toEqual(automation.enabled ? [expected] : [])
        }),
      props
    )

    it.effect("automations: put replaces the whole automation and keeps its place among equals", () =>
      Effect.gen(function*() {
        const { automations } = yield* ports
        const org = freshId("org")
        const first = makeAutomation(org, { id: freshId("z"), created_at: 10 })
        const second = makeAutomation(org, { id: freshId("a"), created_at: 10 })
        yield* automations.put(first)
        yield* automations.put(second)
        const replaced: Automation = {
          ...first,
          url: "https://other.example/in",
          format: "tradeflow",
          types: ["LOCATION_UPDATE"],
          enabled: true,
          secrets: [{ secret: "whsec_rotated", expires_at: null }, { secret: "whsec_first", expires_at: 99 }],
          disabled_reason: null,
          failing_since: null,
          updated_at: 20
        }
        yield* automations.put(replaced)
        expect(yield* automations.get(first.id)).toEqual(Option.some(replaced))
        expect(yield* automations.list(org)).toEqual([replaced, second])
        expect(yield* automations.enabled(org)).toEqual([replaced])
        const disabled: Automation = { ...replaced, enabled: false, disabled_reason: "410 Gone", updated_at: 30 }
        yield* automations.put(disabled)
        expect(yield* automations.enabled(org)).toEqual([])
        expect(yield* automations.list(org)).toEqual([disabled, second])
      }))

    it.effect("automations: list and enabled per organisation, oldest first, isolated between organisations", () =>
      Effect.gen(function*() {
        const { automations } = yield* ports
        const org = freshId("org")
        const other = freshId("org")
        const c = makeAutomation(org, { created_at: 300, enabled: true })
        const a = makeAutomation(org, { created_at: 100, enabled: true })
        const b = makeAutomation(org, { created_at: 200, enabled: false })
        const tie = makeAutomation(org, { created_at: 100, enabled: false })
        const foreign = makeAutomation(other, { created_at: 50, enabled: true })
        for (const x of [c, a, foreign, b, tie]) yield* automations.put(x)
        expect(yield* automations.list(org)).toEqual([a, tie, b, c])
        expect(yield* automations.enabled(org)).toEqual([a, c])
        expect(yield* automations.list(other)).toEqual([foreign])
        expect(yield* automations.enabled(other)).toEqual([foreign])
        expect(yield* automations.list(freshId("org"))).toEqual([])
        expect(yield* automations.enabled(freshId("org"))).toEqual([])
      }))

    it.effect("automations: remove answers true once, then false; the automation is gone everywhere", () =>
      Effect.gen(function*() {
        const { automations } = yield* ports
        const org = freshId("org")
        const keep = makeAutomation(org, { enabled: true, created_at: 1 })
        const gone = makeAutomation(org, { enabled: true, created_at: 2 })
        yield* automations.put(keep)
        yield* automations.put(gone)
        expect(yield* automations.remove(gone.id)).toBe(true)
        expect(yield* automations.remove(gone.id)).toBe(false)
        expect(yield* automations.remove(freshId("automation"))).toBe(false)
        expect(yield* automations.get(gone.id)).toEqual(Option.none())
        expect(yield* automations.list(org)).toEqual([keep])
        expect(yield* automations.enabled(org)).toEqual([keep])
        yield* automations.put(gone)
        expect(yield* automations.list(org)).toEqual([keep, gone])
      }))

    it.effect.prop("automations: any sequence of puts and removes matches the model", [
      fc.array(arbitraryAutomationOp, { maxLength: 25 })
    ], ([ops]) =>
      Effect.gen(function*() {
        const { automations } = yield* ports
        const run = freshId("run")
        const orgs = [`${run}-org0`, `${run}-org1`] as const
        const idOf = (n: number) => `${run}-automation${n}`
        const model = new Map<string, Automation>()
        for (const op of ops) {
          if (op._tag === "Remove") {
            expect(yield* automations.remove(idOf(op.id))).toBe(model.delete(idOf(op.id)))
          } else {
            const a = makeAutomation(orgs[op.org]!, {
              id: idOf(op.id),
              enabled: op.enabled,
              created_at: op.created_at,
              updated_at: op.created_at
            })
            model.set(a.id, a)
            yield* automations.put(a)
          }
        }
        for (const org of orgs) {
          const mine = [...model.values()].filter((a) => a.organisation_id === org)
            .sort((x, y) => x.created_at - y.created_at)
          expect(yield* automations.list(org)).toEqual(mine)
          expect(yield* automations.enabled(org)).toEqual(mine.filter((a) => a.enabled))
        }
        for (let n = 0; n <= 5; n++) {
          expect(yield* automations.get(idOf(n))).toEqual(Option.fromNullable(model.get(idOf(n))))
        }
      }), props)

    it.effect.prop("messages: latest pages with after_seq return each latest matching message once", [
      fc.array(arbitraryMessage, { maxLength: 30 }),
      fc.integer({ min: 1, max: 5 }),
      fc.option(fc.constantFrom(...containerNumbers), { nil: undefined })
    ], ([batch, pageSize, container]) =>
      Effect.gen(function*() {
        const { messages } = yield* ports
        const org = freshId("org")
        yield* commitNew(org, { messages: batch })
        const filter = container === undefined ? {} : { container_reference: container }
        const seen: Array<StoredMessage> = []
        let after = 0
        while (true) {
          const page = yield* messages.list({
            organisation_id: org,
            take: "oldest",
            limit: pageSize,
            after_seq: after,
            latest: true,
            ...filter
          })
          if (page.length === 0) break
          seen.push(...page)
          after = page[page.length - 1]!.seq
        }
        expect(seen).toEqual(selectMessages(expectedLog([batch]), {
          organisation_id: org,
          take: "oldest",
          limit: Number.MAX_SAFE_INTEGER,
          latest: true,
          ...filter
        }))
      }), props)

    trackingContract(it, { numRuns })
  })
}
