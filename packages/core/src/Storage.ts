/**
 * All storage ports together, and their in-memory adapter.
 *
 * The in-memory adapter keeps the same semantics as the SQL adapters (the storage contract
 * suite runs against it), but nothing survives the process. It suits tests and embedding.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Job } from "./Job.js"
import { JobQueue, type JobOutcome } from "./JobQueue.js"
import { MessageStore } from "./MessageStore.js"
import type { ApiKeyRecord, Organisation } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StoredMessage } from "./StoredMessage.js"
import type { Tradeflow } from "./Tradeflow.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** Every storage port. */
export type Storage = OrganisationStore | JobQueue | TradeflowStore | MessageStore

interface OrgMessages {
  seq: number
  readonly hashes: Set<string>
  messages: Array<StoredMessage>
}

/** A fresh in-memory store providing every storage port. */
export const makeMemory = Effect.sync(() => {
  const organisations = new Map<string, Organisation>()
  const apiKeys = new Map<string, ApiKeyRecord>()
  const jobs = new Map<number, Job>()
  const outcomes = new Map<number, JobOutcome>()
  const idempotency = new Map<string, { readonly request_hash: string; readonly response: string }>()
  const tradeflows = new Map<string, Tradeflow>()
  const logs = new Map<string, OrgMessages>()
  let nextJob = 1
  const tfKey = (organisationId: string, reference: string) => JSON.stringify([organisationId, reference])
  const log = (organisationId: string) => {
    let l = logs.get(organisationId)
    if (l === undefined) logs.set(organisationId, l = { seq: 0, hashes: new Set(), messages: [] })
    return l
  }
  const orgTradeflows = (organisationId: string) =>
    [...tradeflows.values()].filter((t) => t.organisation_id === organisationId)
      .sort((a, b) => a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0)

  const orgs = OrganisationStore.of({
    insert: (o) => Effect.sync(() => void organisations.set(o.id, o)),
    get: (id) => Effect.sync(() => Option.fromNullable(organisations.get(id))),
    list: Effect.sync(() => [...organisations.values()].sort((a, b) => a.created_at - b.created_at)),
    ensureCompanion: (c) => Effect.sync(() => {
      const existing = c.live_organisation_id === null
        ? undefined
        : [...organisations.values()].find((o) => o.live_organisation_id === c.live_organisation_id)
      if (existing) return existing
      organisations.set(c.id, c)
      return c
    }),
    insertApiKey: (k) => Effect.sync(() => void apiKeys.set(k.id, k)),
    findApiKeyByHash: (h) => Effect.sync(() => Option.fromNullable([...apiKeys.values()].find((k) => k.key_hash === h))),
    listApiKeys: (ids) => Effect.sync(() =>
      [...apiKeys.values()].filter((k) => ids.includes(k.organisation_id)).sort((a, b) => a.created_at - b.created_at)
    ),
    revokeApiKey: (id, at) => Effect.sync(() => {
      const k = apiKeys.get(id)
      if (k === undefined) return false
      if (k.revoked_at === null) apiKeys.set(id, { ...k, revoked_at: at })
      return true
    })
  })

  const queue = JobQueue.of({
    enqueue: (job, idem) => Effect.sync(() => {
      if (idem) {
        const key = JSON.stringify([job.organisation_id, idem.key])
        const seen = idempotency.get(key)
        if (seen) return seen.request_hash === idem.request_hash
          ? { _tag: "Replayed" as const, response: seen.response }
          : { _tag: "KeyReused" as const }
        idempotency.set(key, { request_hash: idem.request_hash, response: idem.response })
      }
      const id = nextJob++
      jobs.set(id, { id, ...job })
      return { _tag: "Enqueued" as const, id }
    }),
    pending: (limit) => Effect.sync(() => [...jobs.values()].slice(0, limit)),
    outcome: (id) => Effect.sync(() => Option.fromNullable(outcomes.get(id))),
    fail: (id, error) => Effect.sync(() => {
      if (jobs.delete(id)) outcomes.set(id, { _tag: "Failed", error })
    })
  })

  const store = TradeflowStore.of({
    get: (o, r) => Effect.sync(() => Option.fromNullable(tradeflows.get(tfKey(o, r)))),
    list: (o) => Effect.sync(() => orgTradeflows(o)),
    containers: (o) => Effect.sync(() =>
      [...new Set(orgTradeflows(o).flatMap((t) => t.containers.map((c) => c.reference)))].sort()),
    commit: (c) => Effect.sync(() => {
      if (!jobs.has(c.job_id)) return false
      jobs.delete(c.job_id)
      outcomes.set(c.job_id, { _tag: "Done", result: c.result })
      const l = log(c.organisation_id)
      for (const reference of c.deletes) {
        tradeflows.delete(tfKey(c.organisation_id, reference))
        l.messages = l.messages.filter((m) => {
          if (m.tradeflow_reference !== reference) return true
          l.hashes.delete(m.hash)
          return false
        })
      }
      for (const t of c.upserts) tradeflows.set(tfKey(t.organisation_id, t.reference), t)
      for (const m of c.messages) {
        if (l.hashes.has(m.hash)) continue
        l.hashes.add(m.hash)
        l.messages.push({ ...m, seq: ++l.seq })
      }
      return true
    })
  })

  const messages = MessageStore.of({
    list: (q) => Effect.sync(() => {
      const matching = (logs.get(q.organisation_id)?.messages ?? []).filter((m) =>
        (q.since === undefined || m.generated_at >= q.since) &&
        (q.tradeflow_reference === undefined || m.tradeflow_reference === q.tradeflow_reference) &&
        (q.container_reference === undefined || m.container_reference === q.container_reference) &&
        (q.types === undefined || q.types.includes(m.type)) &&
        (q.exclude_types === undefined || !q.exclude_types.includes(m.type)) &&
        (q.after_seq === undefined || m.seq > q.after_seq)
      )
      return q.take === "oldest" ? matching.slice(0, q.limit) : matching.slice(Math.max(0, matching.length - q.limit))
    })
  })

  return { orgs, queue, store, messages }
})

/** Every storage port, in memory. */
export const layerMemory: Layer.Layer<Storage> = Layer.effectContext(Effect.map(makeMemory, (m) =>
  Context.make(OrganisationStore, m.orgs).pipe(
    Context.add(JobQueue, m.queue),
    Context.add(TradeflowStore, m.store),
    Context.add(MessageStore, m.messages)
  )
))
