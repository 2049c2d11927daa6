/**
 * All storage ports together, and their in-memory adapter.
 *
 * The in-memory adapter keeps the same semantics as the SQL adapters (the storage contract
 * suite runs against it), but nothing survives the process. It suits tests and embedding.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, PubSub, Schema, Stream } from "effect"
import type { Automation } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import * as Delivery from "./Delivery.js"
import { type ClaimOptions, DeliveryStore, recordIndependently } from "./DeliveryStore.js"
import { type Enqueue, type EnqueueOutcome, type Job, JobPayload } from "./Job.js"
import {
  attemptLimit,
  attemptLimitReached,
  type ClaimedJob,
  type DeadJob,
  type JobOutcome,
  JobQueue,
  type JobSummary,
  withEnqueue
} from "./JobQueue.js"
import { MessageStore } from "./MessageStore.js"
import type { ApiKeyRecord, Organisation, WidgetKeyRecord } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import * as RateLimitStore from "./RateLimitStore.js"
import { RetentionStore } from "./RetentionStore.js"
import { Settings } from "./Settings.js"
import * as StorageHealth from "./StorageHealth.js"
import {
  type BodyRun,
  byteLength,
  fitting,
  type MessageQuery,
  type MessageRead,
  type MessageRun,
  type StoredMessage
} from "./StoredMessage.js"
import { type DueTarget, type RawEvent, type StoredSubscription, TrackingStore } from "./TrackingStore.js"
import * as TrackingTarget from "./TrackingTarget.js"
import type { Tradeflow } from "./Tradeflow.js"
import * as TradeflowKey from "./TradeflowKey.js"
import { type Candidate, type Commit, TradeflowStore, withCommit } from "./TradeflowStore.js"
import * as UserStore from "./UserStore.js"

export {
  /** The `Settings` port, re-exported so adapter packages reach it through `Storage`. */
  Settings
} from "./Settings.js"

/** Every storage port. */
export type Storage =
  | OrganisationStore
  | JobQueue
  | TradeflowStore
  | MessageStore
  | Settings
  | AutomationStore
  | DeliveryStore
  | RetentionStore
  | TrackingStore
  | UserStore.UserStore
  | StorageHealth.StorageHealth
  | RateLimitStore.RateLimitStore

interface StoredDelivery extends Delivery.Delivery {
  claim: number
  lease_until: number | null
}

interface Lease {
  attempt: number
  leased_by: string | null
  lease_until: number | null
  error: string | null
}

const encodePayload = Schema.encodeSync(Schema.parseJson(JobPayload))

/** The (tradeflow_reference, type, container_reference) key of the `latest` filter. */
const latestKey = (m: StoredMessage) => JSON.stringify([m.tradeflow_reference, m.type, m.container_reference])

const newestOf = (log: ReadonlyArray<StoredMessage>): Map<string, number> => {
  const newest = new Map<string, number>()
  for (const m of log) newest.set(latestKey(m), m.seq)
  return newest
}

/**
 * The semantics of `MessageStore.list` over one organisation's log (ascending seq): `latest` is
 * decided over the whole log, then the other filters select among those messages. `newestSeq`
 * (the highest seq per key of the log) is computed when not given.
 */
export const selectMessages = (
  log: ReadonlyArray<StoredMessage>,
  q: MessageQuery,
  newestSeq?: ReadonlyMap<string, number>
): Array<StoredMessage> => {
  const latest = q.latest === true ? new Set((newestSeq ?? newestOf(log)).values()) : undefined
  const matching = log.filter((m) =>
    (latest === undefined || latest.has(m.seq)) &&
    (q.since === undefined || m.generated_at >= q.since) &&
    (q.tradeflow_reference === undefined || m.tradeflow_reference === q.tradeflow_reference) &&
    (q.container_reference === undefined || m.container_reference === q.container_reference) &&
    (q.types === undefined || q.types.includes(m.type)) &&
    (q.exclude_types === undefined || !q.exclude_types.includes(m.type)) &&
    (q.after_seq === undefined || m.seq > q.after_seq)
  )
  const limit = Math.max(0, Math.floor(q.limit))
  return q.take === "oldest" ? matching.slice(0, limit) : matching.slice(Math.max(0, matching.length - limit))
}

/** The semantics of `MessageStore.startOf` over one organisation's log whose last seq used is `lastSeq`. */
export const startOfLog = (log: ReadonlyArray<StoredMessage>, lastSeq: number, since: number): number => {
  let first: StoredMessage | undefined
  for (const m of log) {
    if (m.generated_at >= since && (first === undefined || m.generated_at < first.generated_at)) first = m
  }
  return first === undefined ? lastSeq : first.seq - 1
}

/** The semantics of `MessageStore.read` over one organisation's log, as {@link selectMessages}. */
export const readMessages = (
  log: ReadonlyArray<StoredMessage>,
  q: MessageRead,
  newestSeq?: ReadonlyMap<string, number>
): MessageRun => {
  const limit = Math.max(0, Math.floor(q.limit))
  const candidates = selectMessages(log, { ...q, limit: limit + 1 }, newestSeq)
  if (q.take === "newest") candidates.reverse()
  const count = fitting(candidates.map((m) => byteLength(m.body)), limit, q.max_bytes)
  const messages = candidates.slice(0, count)
  if (q.take === "newest") messages.reverse()
  return { messages, more: candidates.length > count }
}

/** The semantics of `MessageStore.readBodies`: {@link readMessages}, each message as its seq and body. */
export const readMessageBodies = (
  log: ReadonlyArray<StoredMessage>,
  q: MessageRead,
  newestSeq?: ReadonlyMap<string, number>
): BodyRun => {
  const run = readMessages(log, q, newestSeq)
  return { messages: run.messages.map(({ body, seq }) => ({ seq, body })), more: run.more }
}

interface OrgMessages {
  seq: number
  readonly hashes: Set<string>
  messages: Array<StoredMessage>
  newest: Map<string, number>
}

/** A fresh in-memory store providing every storage port. */
export const makeMemory = Effect.gen(function*() {
  const organisations = new Map<string, Organisation>()
  const apiKeys = new Map<string, ApiKeyRecord>()
  const widgetKeys = new Map<string, WidgetKeyRecord>()
  const revocations: Array<string> = []
  const noticeRevocation = (keyHash: string) => void revocations.push(keyHash)
  const jobs = new Map<number, Job>()
  const leases = new Map<number, Lease>()
  const dead = new Map<number, { readonly job: Job; readonly attempt: number; readonly error: string }>()
  const settings = new Map<string, string>()
  const outcomes = new Map<number, JobOutcome>()
  const idempotency = new Map<
    string,
    { readonly request_hash: string; readonly response: string; readonly created_at: number }
  >()
  const receivedAt = new Map<number, number>()
  const owners = new Map<number, string>()
  const tradeflows = new Map<string, Tradeflow>()
  const byKey = new Map<string, Map<string, Candidate>>()
  const targets = new Map<
    string,
    Omit<DueTarget, "next_check_at"> & { next_check_at: number | null; lease_until: number | null }
  >()
  const rawEvents = new Map<string, Array<RawEvent>>()
  const subscriptions = new Map<string, StoredSubscription>()
  const logs = new Map<string, OrgMessages>()
  const automationsById = new Map<string, Automation>()
  const deliveries = new Map<number, StoredDelivery>()
  let attempts: Array<
    Omit<Delivery.DeliveryLogEntry, "type"> & { readonly automation_id: string; readonly seq: number | null }
  > = []
  const deliveryWakeups = yield* PubSub.sliding<void>(1)
  let nextJob = 1
  let nextDelivery = 1
  const insertDelivery = (d: Delivery.NewDelivery): Delivery.Delivery => {
    const stored: StoredDelivery = {
      ...d,
      id: nextDelivery++,
      status: "pending",
      attempt: 0,
      retries: 0,
      schedule_started_at: null,
      next_attempt_at: d.created_at,
      claim: 0,
      lease_until: null
    }
    deliveries.set(stored.id, stored)
    return publicDelivery(stored)
  }
  const publicDelivery = ({ claim: _claim, lease_until: _lease, ...d }: StoredDelivery): Delivery.Delivery => d
  const removeDeliveries = (keep: (d: StoredDelivery) => boolean) => {
    const removed = new Set<number>()
    for (const d of deliveries.values()) {
      if (!keep(d)) {
        deliveries.delete(d.id)
        removed.add(d.id)
      }
    }
    if (removed.size > 0) attempts = attempts.filter((a) => !removed.has(a.id))
  }
  const compare = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
  const tfKey = (organisationId: string, reference: string) => JSON.stringify([organisationId, reference])
  const log = (organisationId: string) => {
    let l = logs.get(organisationId)
    if (l === undefined) logs.set(organisationId, l = { seq: 0, hashes: new Set(), messages: [], newest: new Map() })
    return l
  }
  const targetKey = (organisationId: string, reference: string, id: string) =>
    JSON.stringify([organisationId, reference, id])
  const indexTargets = (t: Tradeflow) => {
    const keep = new Set<string>()
    for (const target of t.tracking?.targets ?? []) {
      const key = targetKey(t.organisation_id, t.reference, target.id)
      keep.add(key)
      const indexed = targets.get(key)
      targets.set(key, {
        organisation_id: t.organisation_id,
        tradeflow_reference: t.reference,
        target_id: target.id,
        source: target.source,
        query: TrackingTarget.queryOf(target),
        high_water: target.high_water,
        next_check_at: target.next_check_at,
        lease_until: indexed !== undefined && indexed.next_check_at === target.next_check_at
          ? indexed.lease_until
          : null
      })
    }
    for (const [key, indexed] of targets) {
      if (
        indexed.organisation_id === t.organisation_id && indexed.tradeflow_reference === t.reference && !keep.has(key)
      ) targets.delete(key)
    }
  }
  const putTradeflow = (t: Tradeflow) => {
    const had = tradeflows.get(tfKey(t.organisation_id, t.reference))
    removeTradeflow(t.organisation_id, t.reference)
    tradeflows.set(tfKey(t.organisation_id, t.reference), t)
    if (had?.tracking != null || t.tracking !== null) indexTargets(t)
    const candidate = { reference: t.reference, created_at: t.created_at, updated_at: t.updated_at }
    for (const key of TradeflowKey.ofTradeflow(t)) {
      const k = tfKey(t.organisation_id, key)
      const found = byKey.get(k)
      if (found === undefined) byKey.set(k, new Map([[t.reference, candidate]]))
      else found.set(t.reference, candidate)
    }
  }
  const removeTradeflow = (organisationId: string, reference: string) => {
    const old = tradeflows.get(tfKey(organisationId, reference))
    if (old === undefined) return
    tradeflows.delete(tfKey(organisationId, reference))
    for (const key of TradeflowKey.ofTradeflow(old)) {
      const k = tfKey(organisationId, key)
      const found = byKey.get(k)
      found?.delete(reference)
      if (found?.size === 0) byKey.delete(k)
    }
  }
  const orgTradeflows = (organisationId: string) =>
    [...tradeflows.values()].filter((t) => t.organisation_id === organisationId)
      .sort((a, b) => a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0)

  const orgs = OrganisationStore.of({
    insert: (o) => Effect.sync(() => void organisations.set(o.id, o)),
    get: (id) => Effect.sync(() => Option.fromNullable(organisations.get(id))),
    list: Effect.sync(() => [...organisations.values()].sort((a, b) => a.created_at - b.created_at)),
    companionOf: (liveId) =>
      Effect.sync(() =>
        Option.fromNullable([...organisations.values()].find((o) => o.live_organisation_id === liveId))
      ),
    ensureCompanion: (c) =>
      Effect.sync(() => {
        const existing = c.live_organisation_id === null
          ? undefined
          : [...organisations.values()].find((o) => o.live_organisation_id === c.live_organisation_id)
        if (existing) return existing
        organisations.set(c.id, c)
        return c
      }),
    insertApiKey: (k) =>
      Effect.sync(() => {
        apiKeys.set(k.id, k)
        if (k.revoked_at !== null) noticeRevocation(k.key_hash)
      }),
    findApiKeyByHash: (h) =>
      Effect.sync(() => Option.fromNullable([...apiKeys.values()].find((k) => k.key_hash === h))),
    listApiKeys: (ids) =>
      Effect.sync(() =>
        [...apiKeys.values()].filter((k) => ids.includes(k.organisation_id)).sort((a, b) => a.created_at - b.created_at)
      ),
    revokeApiKey: (id, at) =>
      Effect.sync(() => {
        const k = apiKeys.get(id)
        if (k === undefined) return false
        if (k.revoked_at === null) {
          apiKeys.set(id, { ...k, revoked_at: at })
          noticeRevocation(k.key_hash)
        }
        return true
      }),
    insertWidgetKey: (k) =>
      Effect.sync(() => {
        widgetKeys.set(k.id, k)
        if (k.revoked_at !== null) noticeRevocation(k.key_hash)
      }),
    findWidgetKeyByHash: (h) =>
      Effect.sync(() => Option.fromNullable([...widgetKeys.values()].find((k) => k.key_hash === h))),
    touchKey: (kind, id, at) =>
      Effect.sync(() => {
        const keys: Map<string, ApiKeyRecord | WidgetKeyRecord> = kind === "api" ? apiKeys : widgetKeys
        const key = keys.get(id)
        if (key !== undefined && (key.last_used_at === null || key.last_used_at < at)) {
          keys.set(id, { ...key, last_used_at: at })
        }
      }),
    listWidgetKeys: (id) =>
      Effect.sync(() =>
        [...widgetKeys.values()].filter((k) => k.organisation_id === id).sort((a, b) => a.created_at - b.created_at)
      ),
    revokeWidgetKey: (id, at) =>
      Effect.sync(() => {
        const k = widgetKeys.get(id)
        if (k === undefined) return false
        if (k.revoked_at === null) {
          widgetKeys.set(id, { ...k, revoked_at: at })
          noticeRevocation(k.key_hash)
        }
        return true
      }),
    revokedSince: (cursor) =>
      Effect.sync(() => ({
        cursor: revocations.length,
        key_hashes: cursor === null ? [] : revocations.slice(cursor)
      }))
  })

  const enqueueOne = ({ idempotency: idem, job }: Enqueue): EnqueueOutcome => {
    if (idem) {
      const key = JSON.stringify([job.organisation_id, idem.key])
      const seen = idempotency.get(key)
      if (seen) {
        return seen.request_hash === idem.request_hash
          ? { _tag: "Replayed" as const, response: seen.response }
          : { _tag: "KeyReused" as const }
      }
      idempotency.set(key, { request_hash: idem.request_hash, response: idem.response, created_at: job.received_at })
    }
    const id = nextJob++
    owners.set(id, job.organisation_id)
    receivedAt.set(id, job.received_at)
    jobs.set(id, { id, ...job })
    leases.set(id, { attempt: 0, leased_by: null, lease_until: null, error: null })
    return { _tag: "Enqueued" as const, id }
  }
  /** Pending jobs in ascending id: the map's insertion order (a retry re-inserts in order). */
  const inQueueOrder = () => [...jobs.values()]
  const markDead = (id: number, error: string) => {
    const job = jobs.get(id)
    if (job === undefined) return
    dead.set(id, { job, attempt: leases.get(id)?.attempt ?? 0, error })
    jobs.delete(id)
    leases.delete(id)
    outcomes.set(id, { _tag: "Failed", error })
  }
  const summary = (job: Job, attempt: number, error: string | null): JobSummary => ({
    id: job.id,
    organisation_id: job.organisation_id,
    environment: job.environment,
    kind: job.payload._tag,
    payload_bytes: byteLength(encodePayload(job.payload)),
    received_at: job.received_at,
    attempt,
    error
  })

  const queue = (wakeups: PubSub.PubSub<void>) =>
    JobQueue.of(withEnqueue({
      enqueueAll: (entries) =>
        Effect.tap(Effect.sync(() => entries.map(enqueueOne)), (outcomes) =>
          outcomes.some((o) => o._tag === "Enqueued") ? PubSub.publish(wakeups, undefined) : Effect.void),
      pending: (limit) =>
        Effect.sync(() => inQueueOrder().slice(0, Math.max(0, limit))),
      backlog: Effect.sync(() => {
        const byOrganisation = new Map<string, number>()
        let oldest: number | null = null
        for (const job of jobs.values()) {
          byOrganisation.set(job.organisation_id, (byOrganisation.get(job.organisation_id) ?? 0) + 1)
          oldest ??= job.received_at
        }
        return { pending: jobs.size, oldest_received_at: oldest, organisations: [...byOrganisation.values()] }
      }),
      claim: ({ follow, leaseMillis, limit, maxAttempts, worker }) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const max = attemptLimit(maxAttempts)
          const expired = (lease: Lease) => lease.lease_until === null || lease.lease_until <= now
          const killed: Array<DeadJob> = []
          for (const job of inQueueOrder()) {
            const lease = leases.get(job.id)!
            if (lease.attempt < max || !expired(lease)) continue
            const error = lease.error ?? attemptLimitReached(max)
            killed.push({ id: job.id, organisation_id: job.organisation_id, attempt: lease.attempt, error })
            markDead(job.id, error)
          }
          const heads = new Map<string, Job>()
          const held = new Set<string>()
          for (const job of inQueueOrder()) {
            if (!heads.has(job.organisation_id)) heads.set(job.organisation_id, job)
            if (!expired(leases.get(job.id)!)) held.add(job.organisation_id)
          }
          const candidates = [...heads.values()]
            .filter((job) => !held.has(job.organisation_id) && leases.get(job.id)!.attempt < max)
            .slice(0, Math.max(0, limit))
          const suspect = candidates.find((job) => leases.get(job.id)!.attempt > 0)
          const claimed: Array<ClaimedJob> = []
          const lease = (job: Job, counted = true) => {
            const held = leases.get(job.id)!
            if (counted) held.attempt++
            held.leased_by = worker
            held.lease_until = now + leaseMillis
            claimed.push({ ...job, attempt: held.attempt, payload_bytes: byteLength(encodePayload(job.payload)) })
          }
          const queued = inQueueOrder()
          for (const head of suspect === undefined ? candidates : [suspect]) {
            const fresh = leases.get(head.id)!.attempt === 0
            lease(head)
            if (!fresh || follow === undefined) continue
            let count = 1
            let bytes = byteLength(encodePayload(head.payload))
            for (const job of queued) {
              if (job.organisation_id !== head.organisation_id || job.id <= head.id) continue
              bytes += byteLength(encodePayload(job.payload))
              if (++count > follow.jobs || bytes > follow.bytes || leases.get(job.id)!.attempt > 0) break
              lease(job, false)
            }
          }
          return { jobs: claimed.sort((a, b) => a.id - b.id), dead: killed }
        }),
      heartbeat: ({ jobs: held, leaseMillis, worker }) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          for (const { attempt, id } of held) {
            const lease = leases.get(id)
            if (jobs.has(id) && lease !== undefined && lease.leased_by === worker && lease.attempt === attempt) {
              lease.lease_until = now + leaseMillis
            }
          }
        }),
      outcome: (id) => Effect.sync(() => Option.fromNullable(outcomes.get(id))),
      fail: (id, error, attempt) =>
        Effect.sync(() => {
          if (!jobs.has(id) || (attempt !== undefined && leases.get(id)?.attempt !== attempt)) return false
          markDead(id, error)
          return true
        }),
      recordFailure: (id, attempt, error) =>
        Effect.sync(() => {
          const lease = leases.get(id)
          if (!jobs.has(id) || lease?.attempt !== attempt) return false
          lease.error = error
          return true
        }),
      list: ({ limit, organisation_id, state }) =>
        Effect.sync(() => {
          const mine = state === "pending"
            ? inQueueOrder().filter((j) => j.organisation_id === organisation_id).map((j) => {
              const lease = leases.get(j.id)!
              return summary(j, lease.attempt, lease.error)
            })
            : [...dead.values()].filter((d) => d.job.organisation_id === organisation_id)
              .sort((a, b) => a.job.id - b.job.id).map((d) => summary(d.job, d.attempt, d.error))
          return mine.slice(0, Math.max(0, limit))
        }),
      organisationOf: (id) => Effect.sync(() => Option.fromNullable(owners.get(id))),
      retry: (id) =>
        Effect.tap(
          Effect.sync(() => {
            const found = dead.get(id)
            if (found === undefined) {
              return jobs.has(id) || outcomes.has(id)
                ? "not-dead" as const
                : "not-found" as const
            }
            dead.delete(id)
            outcomes.delete(id)
            const ordered = [...jobs.values(), found.job].sort((a, b) => a.id - b.id)
            jobs.clear()
            for (const job of ordered) jobs.set(job.id, job)
            leases.set(id, { attempt: 0, leased_by: null, lease_until: null, error: null })
            return "retried" as const
          }),
          (outcome) => outcome === "retried" ? PubSub.publish(wakeups, undefined) : Effect.void
        ),
      wakeups: Stream.fromPubSub(wakeups)
    }))

  const pendingAt = (c: Commit) =>
    jobs.has(c.job_id) && (c.attempt === undefined || leases.get(c.job_id)?.attempt === c.attempt)
  /** Applies one commit; answers whether it planned deliveries. */
  const apply = (c: Commit): boolean => {
    jobs.delete(c.job_id)
    leases.delete(c.job_id)
    outcomes.set(c.job_id, { _tag: "Done", result: c.result })
    const l = log(c.organisation_id)
    for (const reference of c.deletes) {
      removeTradeflow(c.organisation_id, reference)
      for (const [key, indexed] of targets) {
        if (indexed.organisation_id === c.organisation_id && indexed.tradeflow_reference === reference) {
          targets.delete(key)
        }
      }
      rawEvents.delete(tfKey(c.organisation_id, reference))
      removeDeliveries((d) => d.test || d.organisation_id !== c.organisation_id || d.tradeflow_reference !== reference)
      l.messages = l.messages.filter((m) => {
        if (m.tradeflow_reference !== reference) return true
        l.hashes.delete(m.hash)
        return false
      })
    }
    if (c.deletes.length > 0) l.newest = newestOf(l.messages)
    for (const t of c.upserts) putTradeflow(t)
    for (const e of c.raw_events ?? []) {
      const key = tfKey(c.organisation_id, e.tradeflow_reference)
      const kept = rawEvents.get(key) ?? []
      if (
        !kept.some((k) => k.source === e.source && k.event_id === e.event_id && k.updated_at === e.updated_at)
      ) kept.push(e)
      rawEvents.set(key, kept)
    }
    const inserted: Array<StoredMessage> = []
    for (const m of c.messages) {
      if (l.hashes.has(m.hash)) continue
      l.hashes.add(m.hash)
      const stored = { ...m, seq: ++l.seq }
      l.messages.push(stored)
      l.newest.set(latestKey(stored), stored.seq)
      inserted.push(stored)
    }
    let planned = false
    for (const d of Delivery.plan(c.organisation_id, c.outbox, inserted)) {
      if (!automationsById.has(d.automation_id)) continue
      insertDelivery(d)
      planned = true
    }
    return planned
  }

  const store = TradeflowStore.of(withCommit({
    get: (o, r) => Effect.sync(() => Option.fromNullable(tradeflows.get(tfKey(o, r)))),
    getMany: (o, references) =>
      Effect.sync(() => {
        const found = new Map<string, Tradeflow>()
        for (const r of references) {
          const t = tradeflows.get(tfKey(o, r))
          if (t !== undefined) found.set(r, t)
        }
        return found
      }),
    list: (o) => Effect.sync(() => orgTradeflows(o)),
    sizes: (o, references) =>
      Effect.sync(() => {
        const sizes = new Map<string, { readonly containers: number; readonly events: number }>()
        for (const r of references) {
          const t = tradeflows.get(tfKey(o, r))
          if (t !== undefined) sizes.set(r, { containers: t.containers.length, events: t.events.length })
        }
        return sizes
      }),
    lookup: (o, keys) =>
      Effect.sync(() => {
        const found = new Map<string, Candidate>()
        for (const key of keys) for (const [reference, c] of byKey.get(tfKey(o, key)) ?? []) found.set(reference, c)
        return [...found.values()]
      }),
    held: (o, r, identities) =>
      Effect.sync(() => {
        const t = tradeflows.get(tfKey(o, r))
        const containers = new Set(t?.containers.map((c) => c.reference))
        const events = new Set(t?.events.map((e) => e.key))
        return {
          containers: [...new Set(identities.containers)].filter((c) => containers.has(c)),
          events: [...new Set(identities.events)].filter((k) => events.has(k))
        }
      }),
    containers: (o) =>
      Effect.sync(() => [...new Set(orgTradeflows(o).flatMap((t) => t.containers.map((c) => c.reference)))].sort()),
    due: (now, limit) =>
      Effect.sync(() => {
        const soonest = (a: Tradeflow & { readonly next_position_at: number }, b: typeof a) =>
          a.next_position_at - b.next_position_at || compare(a.organisation_id, b.organisation_id) ||
          compare(a.reference, b.reference)
        const turns = new Map<string, number>()
        return [...tradeflows.values()]
          .filter((t): t is Tradeflow & { readonly next_position_at: number } =>
            t.next_position_at !== null && t.next_position_at <= now
          )
          .sort(soonest)
          .map((t) => {
            const turn = (turns.get(t.organisation_id) ?? 0) + 1
            turns.set(t.organisation_id, turn)
            return { t, turn }
          })
          .sort((a, b) => a.turn - b.turn || soonest(a.t, b.t))
          .slice(0, Math.max(0, limit))
          .map(({ t }) => ({ organisation_id: t.organisation_id, reference: t.reference }))
      }),
    commitAll: (commits) =>
      Effect.tap(
        Effect.sync(() => {
          if (!commits.every(pendingAt)) return false
          let planned = false
          for (const c of commits) if (apply(c)) planned = true
          return planned ? "wake" : true
        }),
        (done) => done === "wake" ? PubSub.publish(deliveryWakeups, undefined) : Effect.void
      ).pipe(
        Effect.map((done) => done !== false)
      )
  }))

  const messages = MessageStore.of({
    list: (q) =>
      Effect.sync(() => {
        const l = logs.get(q.organisation_id)
        return l === undefined ? [] : selectMessages(l.messages, q, l.newest)
      }),
    read: (q) =>
      Effect.sync(() => {
        const l = logs.get(q.organisation_id)
        return l === undefined ? { messages: [], more: false } : readMessages(l.messages, q, l.newest)
      }),
    readBodies: (q) =>
      Effect.sync(() => {
        const l = logs.get(q.organisation_id)
        return l === undefined ? { messages: [], more: false } : readMessageBodies(l.messages, q, l.newest)
      }),
    startOf: (organisationId, since) =>
      Effect.sync(() => {
        const l = logs.get(organisationId)
        return l === undefined ? 0 : startOfLog(l.messages, l.seq, since)
      })
  })

  const shared = Settings.of({
    getOrCreate: (name, initial) =>
      Effect.sync(() => {
        const stored = settings.get(name)
        if (stored !== undefined) return stored
        settings.set(name, initial)
        return initial
      }),
    get: (name) => Effect.sync(() => Option.fromNullable(settings.get(name))),
    set: (name, value) => Effect.sync(() => void settings.set(name, value))
  })

  const ofOrganisation = (organisationId: string, enabledOnly: boolean) =>
    [...automationsById.values()]
      .filter((a) => a.organisation_id === organisationId && (!enabledOnly || a.enabled))
      .sort((a, b) => a.created_at - b.created_at)

  const automations = AutomationStore.of({
    put: (automation) => Effect.sync(() => void automationsById.set(automation.id, automation)),
    get: (id) => Effect.sync(() => Option.fromNullable(automationsById.get(id))),
    list: (organisationId) => Effect.sync(() => ofOrganisation(organisationId, false)),
    enabled: (organisationId) => Effect.sync(() => ofOrganisation(organisationId, true)),
    remove: (id) =>
      Effect.sync(() => {
        removeDeliveries((d) => d.automation_id !== id)
        return automationsById.delete(id)
      })
  })

  const bodyOf = (d: StoredDelivery): string | undefined =>
    d.body ?? logs.get(d.organisation_id)?.messages.find((m) => m.seq === d.seq)?.body

  const claimDeliveries = (
    { leaseMillis, limit, now, worker: _worker }: ClaimOptions
  ): Effect.Effect<Array<Delivery.ClaimedDelivery>> =>
    Effect.sync(() => {
      const seen = new Set<string>()
      const claimed: Array<Delivery.ClaimedDelivery> = []
      for (const d of deliveries.values()) {
        if (claimed.length >= limit) break
        if (d.status !== "pending") continue
        const pair = JSON.stringify([d.automation_id, d.organisation_id, d.tradeflow_reference])
        if (seen.has(pair)) continue
        seen.add(pair)
        const automation = automationsById.get(d.automation_id)
        const body = bodyOf(d)
        if (
          d.next_attempt_at > now || (d.lease_until !== null && d.lease_until > now) ||
          automation === undefined || !(automation.enabled || d.test) || body === undefined
        ) continue
        d.claim++
        d.lease_until = now + leaseMillis
        claimed.push({ ...publicDelivery(d), claim: d.claim, body })
      }
      return claimed
    })

  const recordDeliveries = recordIndependently((results) =>
    Effect.sync(() => {
      const leased = new Map<number, Delivery.LeasedDelivery>()
      for (const r of results) {
        const d = deliveries.get(r.delivery_id)
        if (d !== undefined && d.status === "pending" && d.lease_until !== null) leased.set(d.id, d)
      }
      const writes = Delivery.recording(results, leased, automationsById)
      for (const next of writes.deliveries) {
        const d = deliveries.get(next.id) as StoredDelivery
        deliveries.set(next.id, { ...next, claim: d.claim, lease_until: null })
      }
      for (const { delivery_id, up_to } of writes.expired) {
        attempts.forEach((a, i) => {
          if (a.id === delivery_id && a.attempt <= up_to && a.response_body !== null) {
            attempts[i] = { ...a, response_body: null }
          }
        })
      }
      for (const { delivery_id, ...attempt } of writes.attempts) {
        const d = deliveries.get(delivery_id) as StoredDelivery
        attempts.push({
          id: delivery_id,
          ...attempt,
          message_hash: d.message_hash,
          test: d.test,
          tradeflow_reference: d.tradeflow_reference,
          seq: d.seq
        })
      }
      for (const a of writes.automations) automationsById.set(a.id, a)
      return writes.answers
    })
  )

  const outbox = DeliveryStore.of({
    claim: claimDeliveries,
    record: recordDeliveries,
    recordAndClaim: (results, options) =>
      Effect.zipWith(
        recordDeliveries(results),
        claimDeliveries(options),
        (recorded, claimed) => ({ recorded, claimed })
      ),
    backlog: Effect.sync(() => {
      let pending = 0
      let oldest: number | null = null
      for (const d of deliveries.values()) {
        if (d.status !== "pending") continue
        pending++
        oldest ??= d.created_at
      }
      return { pending, oldest_created_at: oldest }
    }),
    enqueue: (d) => Effect.tap(Effect.sync(() => insertDelivery(d)), () => PubSub.publish(deliveryWakeups, undefined)),
    get: (id) => Effect.sync(() => Option.map(Option.fromNullable(deliveries.get(id)), publicDelivery)),
    list: (automationId, limit) =>
      Effect.sync(() =>
        [...deliveries.values()].filter((d) => d.automation_id === automationId).slice(0, Math.max(0, limit))
          .map(publicDelivery)
      ),
    retry: (id, now) =>
      Effect.tap(
        Effect.sync(() => {
          const d = deliveries.get(id)
          if (d === undefined) return "not-found" as const
          if (!Delivery.retryable(d)) return "not-retryable" as const
          deliveries.set(id, { ...Delivery.retried(d, now), claim: d.claim, lease_until: d.lease_until })
          return "retried" as const
        }),
        (outcome) => outcome === "retried" ? PubSub.publish(deliveryWakeups, undefined) : Effect.void
      ),
    log: (automationId, limit) =>
      Effect.sync(() => {
        const organisationId = automationsById.get(automationId)?.organisation_id
        const typeOf = (seq: number | null): string | null => {
          const log = organisationId === undefined || seq === null ? undefined : logs.get(organisationId)?.messages
          if (log === undefined) return null
          let low = 0
          let high = log.length - 1
          while (low <= high) {
            const middle = (low + high) >> 1
            const m = log[middle]!
            if (m.seq === seq) return m.type
            if (m.seq < seq!) low = middle + 1
            else high = middle - 1
          }
          return null
        }
        return attempts.filter((a) => a.automation_id === automationId)
          .sort((a, b) => b.at - a.at || b.id - a.id || b.attempt - a.attempt)
          .slice(0, Math.max(0, limit))
          .map(({ automation_id: _automation, seq, ...entry }) => ({ ...entry, type: typeOf(seq) }))
      }),
    wakeups: Stream.fromPubSub(deliveryWakeups)
  })

  const pruneMap = <K, V>(map: Map<K, V>, old: (key: K, value: V) => boolean, limit: number): number => {
    const doomed = [...map].filter(([k, v]) => old(k, v)).slice(0, limit)
    for (const [k] of doomed) map.delete(k)
    return doomed.length
  }
  const retention = RetentionStore.of({
    prune: (kind, before, limit) =>
      Effect.sync(() => {
        const n = Math.max(0, Math.floor(limit))
        const received = (id: number) => receivedAt.get(id) ?? Infinity
        switch (kind) {
          case "idempotency_keys":
            return pruneMap(idempotency, (_, v) => v.created_at < before, n)
          case "done_jobs":
          case "dead_jobs": {
            const tag = kind === "done_jobs" ? "Done" : "Failed"
            const pruned = [...outcomes].filter(([id, o]) => o._tag === tag && received(id) < before)
              .sort(([a], [b]) => a - b).slice(0, n)
            for (const [id] of pruned) {
              outcomes.delete(id)
              receivedAt.delete(id)
              dead.delete(id)
            }
            return pruned.length
          }
          case "delivery_attempts": {
            const doomed = new Set(attempts.filter((a) => a.at < before).sort((a, b) => a.at - b.at).slice(0, n))
            attempts = attempts.filter((a) => !doomed.has(a))
            return doomed.size
          }
          case "dead_deliveries": {
            const doomed = new Set(
              [...deliveries.values()].filter((d) => d.status === "dead" && d.created_at < before)
                .sort((a, b) => a.id - b.id).slice(0, n).map((d) => d.id)
            )
            removeDeliveries((d) => !doomed.has(d.id))
            return doomed.size
          }
        }
      })
  })

  const tracking = TrackingStore.of({
    claim: ({ exclude, leaseMillis, limit, now }) =>
      Effect.sync(() => {
        const skipped = new Set(exclude ?? [])
        const due = [...targets.values()]
          .filter((t): t is typeof t & { next_check_at: number } =>
            t.next_check_at !== null && t.next_check_at <= now && (t.lease_until === null || t.lease_until <= now) &&
            !skipped.has(t.source)
          )
        const soonest = (a: (typeof due)[number], b: (typeof due)[number]) =>
          a.next_check_at - b.next_check_at || compare(a.organisation_id, b.organisation_id) ||
          compare(a.tradeflow_reference, b.tradeflow_reference) || compare(a.target_id, b.target_id)
        const turns = new Map<string, number>()
        const claimed = due.sort(soonest)
          .map((t) => {
            const turn = (turns.get(t.organisation_id) ?? 0) + 1
            turns.set(t.organisation_id, turn)
            return { t, turn }
          })
          .sort((a, b) => a.turn - b.turn || soonest(a.t, b.t))
          .slice(0, Math.max(0, Math.floor(limit)))
          .map(({ t }) => t)
        for (const t of claimed) t.lease_until = now + leaseMillis
        return claimed.map((t): DueTarget => ({
          organisation_id: t.organisation_id,
          tradeflow_reference: t.tradeflow_reference,
          target_id: t.target_id,
          source: t.source,
          query: t.query,
          high_water: t.high_water,
          next_check_at: t.next_check_at
        }))
      }),
    putSubscription: (subscription) =>
      Effect.sync(() =>
        void subscriptions.set(JSON.stringify([subscription.source, subscription.subscription_id]), subscription)
      ),
    subscription: (source, subscriptionId) =>
      Effect.sync(() => Option.fromNullable(subscriptions.get(JSON.stringify([source, subscriptionId])))),
    subscriptionsOf: (organisationId, reference) =>
      Effect.sync(() =>
        [...subscriptions.values()].filter((s) =>
          s.organisation_id === organisationId && s.tradeflow_reference === reference
        )
      ),
    staleSubscriptions: (limit) =>
      Effect.sync(() =>
        [...subscriptions.values()]
          .filter((s) =>
            (targets.get(targetKey(s.organisation_id, s.tradeflow_reference, s.target_id))?.next_check_at ?? null) ===
              null
          )
          .sort((a, b) => a.created_at - b.created_at)
          .slice(0, Math.max(0, Math.floor(limit)))
      ),
    removeSubscription: (source, subscriptionId) =>
      Effect.sync(() => void subscriptions.delete(JSON.stringify([source, subscriptionId]))),
    targetsAbout: (source, references) =>
      Effect.sync(() => {
        const asked = {
          equipment: new Set(references.equipment),
          booking: new Set(references.booking),
          bill_of_lading: new Set(references.bill_of_lading)
        }
        const about = (kind: keyof typeof asked, value: string | undefined) =>
          value !== undefined && asked[kind].has(value)
        return [...targets.values()]
          .filter((t) =>
            t.source === source &&
            (about("equipment", t.query.equipment) || about("booking", t.query.booking) ||
              about("bill_of_lading", t.query.bill_of_lading))
          )
          .map(({ lease_until: _lease, next_check_at, ...t }) => ({
            ...t,
            next_check_at: next_check_at ?? 0,
            stopped: next_check_at === null
          }))
      }),
    rawEvents: (organisationId, reference, limit) =>
      Effect.sync(() =>
        [...rawEvents.get(tfKey(organisationId, reference)) ?? []].sort((a, b) => a.received_at - b.received_at)
          .slice(0, Math.max(0, limit))
      )
  })

  const wakeups = yield* PubSub.sliding<void>(1)
  return {
    orgs,
    queue: queue(wakeups),
    store,
    messages,
    settings: shared,
    automations,
    deliveries: outbox,
    retention,
    tracking
  }
})

/** Every storage port, in memory. */
export const layerMemory: Layer.Layer<Storage> = Layer.effectContext(
  Effect.map(makeMemory, (m) =>
    Context.make(OrganisationStore, m.orgs).pipe(
      Context.add(JobQueue, m.queue),
      Context.add(TradeflowStore, m.store),
      Context.add(MessageStore, m.messages),
      Context.add(Settings, m.settings),
      Context.add(AutomationStore, m.automations),
      Context.add(DeliveryStore, m.deliveries),
      Context.add(RetentionStore, m.retention),
      Context.add(TrackingStore, m.tracking)
    ))
).pipe(
  Layer.merge(UserStore.layerMemory),
  Layer.merge(StorageHealth.layerMemory),
  Layer.merge(RateLimitStore.layerMemory)
)
