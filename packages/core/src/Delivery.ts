/**
 * Webhook deliveries: the outbox rows written in the same transaction as the messages they carry
 * (DECISIONS.md §6), their attempts, and the pure rules the storage adapters share.
 *
 * A commit carries an {@link Outbox}: the automations enabled when its job was processed. Of the
 * messages the commit actually inserts (a hash the organisation already has is skipped), each
 * one of an automation's types becomes one delivery for a `message` automation; a `tradeflow`
 * automation gets one delivery per tradeflow and commit, carrying the V3 document after the
 * change and the hash of the newest of those messages as its `webhook-id`.
 *
 * @module
 */
import { Schema } from "effect"
import type { Automation, AutomationFormat, IntegrationType } from "./Automation.js"

/** `pending` (due, leased or waiting for a retry), `delivered`, or `dead` (retries exhausted). */
export type DeliveryStatus = "pending" | "delivered" | "dead"

/** What one attempt came to, in the delivery log. */
export const AttemptStatus = Schema.Literal("delivered", "failed", "dead").annotations({
  description: "failed: retried on the schedule; dead: retries exhausted (retryable from the console)"
})
export type AttemptStatus = typeof AttemptStatus.Type

/** An automation as a commit's outbox sees it. */
export interface OutboxTarget {
  readonly id: string
  readonly format: AutomationFormat
  readonly types: ReadonlyArray<IntegrationType>
}

/** The deliveries a commit writes, planned from the messages it actually inserts. */
export interface Outbox {
  /** The automations enabled when the job was processed. */
  readonly automations: ReadonlyArray<OutboxTarget>
  /** For `tradeflow` automations: the V3 document (JSON text) after the change, by tradeflow reference. */
  readonly documents: ReadonlyMap<string, string>
  /** When the deliveries are created and first due (epoch ms). */
  readonly at: number
}

/** A delivery to write. */
export interface NewDelivery {
  readonly automation_id: string
  readonly organisation_id: string
  readonly tradeflow_reference: string
  /** The `webhook-id`: the hash of the message carried (for a test send, of its body). */
  readonly message_hash: string
  /** The message's sequence number; null for a test send. */
  readonly seq: number | null
  /** The body to send; null: the stored message `seq`, as upstream serves it. */
  readonly body: string | null
  /** A console Send test: attempted whether or not the automation is enabled. */
  readonly test: boolean
  readonly created_at: number
}

/** A stored delivery. */
export interface Delivery extends NewDelivery {
  readonly id: number
  readonly status: DeliveryStatus
  /** Attempts made so far. */
  readonly attempt: number
  /** Failed attempts since the retry schedule (re)started. */
  readonly retries: number
  /** The first attempt of the current retry schedule (epoch ms); null before it. */
  readonly schedule_started_at: number | null
  /** Not attempted before this instant (epoch ms). */
  readonly next_attempt_at: number
}

/** A delivery leased to a worker: `claim` fences its {@link AttemptResult}; `body` is what to send. */
export interface ClaimedDelivery extends Delivery {
  readonly claim: number
  readonly body: string
}

/** The result of one attempt, as a worker records it. */
export interface AttemptResult {
  readonly delivery_id: number
  /** The claim the attempt was made under: a result of a superseded claim is not recorded. */
  readonly claim: number
  readonly at: number
  readonly status: AttemptStatus
  readonly response_status: number | null
  readonly error: string | null
  /** The receiver's answer, truncated for the log. */
  readonly response_body: string | null
  /** For `failed`: when to try again (epoch ms). */
  readonly retry_at: number | null
  /** Disables the automation, with this reason (410 from the receiver, failing for 5 days). */
  readonly disable: string | null
}

/**
 * The longest receiver answer an attempt keeps, in bytes of UTF-8.
 */
export const maxResponseBodyBytes = 4096

/**
 * The longest error text an attempt keeps, in bytes of UTF-8.
 */
export const maxErrorBytes = 1024

/**
 * How many attempts of a delivery, the newest, keep the receiver's answer; older attempts keep
 * their status, error and time, and lose `response_body`.
 */
export const keptResponseBodies = 3

/**
 * Which attempts lose their `response_body` once these deliveries have recorded their newest
 * attempt: per delivery, those numbered `up_to` or lower (only deliveries past
 * {@link keptResponseBodies} attempts are listed).
 */
export const expiredBodies = (
  recorded: Iterable<Pick<Delivery, "id" | "attempt">>
): Array<{ readonly delivery_id: number; readonly up_to: number }> => {
  const expired: Array<{ readonly delivery_id: number; readonly up_to: number }> = []
  for (const d of recorded) {
    if (d.attempt > keptResponseBodies) expired.push({ delivery_id: d.id, up_to: d.attempt - keptResponseBodies })
  }
  return expired
}

const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * Text from outside (a receiver's answer, an error message) as every storage keeps it: U+0000,
 * which PostgreSQL refuses in text, and lone surrogates, which are not UTF-8, become U+FFFD; the
 * result is cut to at most `maxBytes` bytes of UTF-8 on a character boundary.
 */
export const storableText = (text: string, maxBytes: number): string => {
  const clean = text.replace(unstorable, "\uFFFD")
  const limit = Math.max(0, Math.floor(maxBytes))
  if (clean.length * 3 <= limit) return clean
  let size = 0
  for (let i = 0; i < clean.length;) {
    const point = clean.codePointAt(i) as number
    const width = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4
    if (size + width > limit) return clean.slice(0, i)
    size += width
    i += point > 0xffff ? 2 : 1
  }
  return clean
}

/**
 * An attempt's result as storage keeps it: its texts made {@link storableText}, the answer cut
 * to {@link maxResponseBodyBytes}, the error and the disable reason to {@link maxErrorBytes}.
 */
export const storableResult = (r: AttemptResult): AttemptResult => ({
  ...r,
  response_body: r.response_body === null ? null : storableText(r.response_body, maxResponseBodyBytes),
  error: r.error === null ? null : storableText(r.error, maxErrorBytes),
  disable: r.disable === null ? null : storableText(r.disable, maxErrorBytes)
})

/** One attempt in the delivery log, `at` in epoch milliseconds. */
export const DeliveryLogEntry = Schema.Struct({
  id: Schema.Int.annotations({ description: "The delivery (what retry takes); one delivery has an entry per attempt" }),
  message_hash: Schema.String.annotations({ description: "The webhook-id: the hash of the message carried" }),
  attempt: Schema.Int.annotations({ description: "1 for the first attempt of the delivery" }),
  status: AttemptStatus,
  response_status: Schema.NullOr(Schema.Int).annotations({
    description: "The receiver's HTTP status; null when none was received"
  }),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why the attempt failed (timeout, connection, status)"
  }),
  at: Schema.Number.annotations({ description: "When the attempt was made (epoch milliseconds)" }),
  response_body: Schema.NullOr(Schema.String).annotations({
    description: "The receiver's answer, at most 4 KiB of it"
  }),
  test: Schema.Boolean.annotations({ description: "Whether the delivery was a Send test" }),
  tradeflow_reference: Schema.String.annotations({
    description: "The tradeflow the message is about (TEST_… for a Send test)"
  }),
  type: Schema.NullOr(Schema.String).annotations({
    description: "The message's type; null for a Send test, or once retention removed the message"
  })
})
export type DeliveryLogEntry = typeof DeliveryLogEntry.Type

/** The message columns the outbox plan reads. */
export interface InsertedMessage {
  readonly hash: string
  readonly seq: number
  readonly type: string
  readonly tradeflow_reference: string
}

/**
 * The deliveries of a commit, from the messages it inserted (ascending seq): per automation in
 * the outbox's order, ascending seq, so a (automation, tradeflow)'s deliveries get ascending ids.
 */
export const plan = (
  organisationId: string,
  outbox: Outbox | undefined,
  inserted: ReadonlyArray<InsertedMessage>
): Array<NewDelivery> => {
  if (outbox === undefined || inserted.length === 0) return []
  const rows: Array<NewDelivery> = []
  const base = { organisation_id: organisationId, test: false, created_at: outbox.at }
  for (const automation of outbox.automations) {
    const types: ReadonlyArray<string> = automation.types
    const matching = inserted.filter((m) => types.includes(m.type))
    if (automation.format === "message") {
      for (const m of matching) {
        rows.push({
          ...base,
          automation_id: automation.id,
          tradeflow_reference: m.tradeflow_reference,
          message_hash: m.hash,
          seq: m.seq,
          body: null
        })
      }
      continue
    }
    const newest = new Map<string, InsertedMessage>()
    for (const m of matching) newest.set(m.tradeflow_reference, m)
    for (const m of [...newest.values()].sort((a, b) => a.seq - b.seq)) {
      const document = outbox.documents.get(m.tradeflow_reference)
      if (document === undefined) continue
      rows.push({
        ...base,
        automation_id: automation.id,
        tradeflow_reference: m.tradeflow_reference,
        message_hash: m.hash,
        seq: m.seq,
        body: document
      })
    }
  }
  return rows
}

/**
 * The stored delivery after an attempt: one more attempt; `failed` waits until `retry_at` on the
 * current schedule, `dead` ends it, `delivered` too.
 */
export const afterAttempt = (d: Delivery, r: AttemptResult): Delivery => ({
  ...d,
  status: r.status === "failed" ? "pending" : r.status,
  attempt: d.attempt + 1,
  retries: r.status === "delivered" ? d.retries : d.retries + 1,
  schedule_started_at: d.schedule_started_at ?? r.at,
  next_attempt_at: r.status === "failed" ? (r.retry_at ?? r.at) : d.next_attempt_at
})

/** Whether the console may retry a delivery: dead, or pending after a failed attempt. */
export const retryable = (d: Delivery): boolean => d.status === "dead" || (d.status === "pending" && d.attempt > 0)

/** The delivery once retried from the console: due at `now`, on a fresh retry schedule. */
export const retried = (d: Delivery, now: number): Delivery => ({
  ...d,
  status: "pending",
  retries: 0,
  schedule_started_at: null,
  next_attempt_at: now
})

/**
 * The automation after an attempt of one of its (non-test) deliveries: a success clears
 * `failing_since`, a failure sets it if unset; `disable` turns it off with that reason.
 */
export const automationAfter = (a: Automation, r: AttemptResult): Automation => {
  const failing_since = r.status === "delivered" ? null : (a.failing_since ?? r.at)
  const disabled = r.disable !== null && a.enabled
  if (failing_since === a.failing_since && !disabled) return a
  return {
    ...a,
    failing_since,
    ...(disabled ? { enabled: false, disabled_reason: r.disable } : {}),
    updated_at: Math.max(a.updated_at, r.at)
  }
}

/** A delivery as `DeliveryStore.record` finds it: pending under a lease, at its `claim`. */
export interface LeasedDelivery extends Delivery {
  readonly claim: number
}

/** One row of the attempts table: an attempt as the delivery log keeps it. */
export interface AttemptRow {
  readonly delivery_id: number
  /** The attempt's number, from 1. */
  readonly attempt: number
  readonly automation_id: string
  readonly at: number
  readonly status: AttemptStatus
  readonly response_status: number | null
  readonly error: string | null
  readonly response_body: string | null
}

/** The writes of recording a batch of results (see {@link recording}). */
export interface Recording {
  /** Per result, in order: whether it was recorded. */
  readonly answers: ReadonlyArray<boolean>
  /** Each recorded delivery once, after its attempt; its lease is released. */
  readonly deliveries: ReadonlyArray<Delivery>
  /** The attempts to append to the log, one per recorded result, in order. */
  readonly attempts: ReadonlyArray<AttemptRow>
  /** The older attempts that lose their `response_body` (see {@link expiredBodies}). */
  readonly expired: ReadonlyArray<{ readonly delivery_id: number; readonly up_to: number }>
  /** The automations that changed, each once, as they end. */
  readonly automations: ReadonlyArray<Automation>
}

/**
 * What recording `results` writes, as recording them one after the other would: a result records
 * only if its delivery is among `leased` at the result's claim and no earlier result of the batch
 * recorded it; the delivery follows {@link afterAttempt}, and for a non-test delivery its
 * automation (when among `automations`) follows {@link automationAfter} over its recorded results,
 * in order. Every adapter writes these, so they record alike.
 */
export const recording = (
  results: ReadonlyArray<AttemptResult>,
  leased: ReadonlyMap<number, LeasedDelivery>,
  automations: ReadonlyMap<string, Automation>
): Recording => {
  const done = new Set<number>()
  const deliveries: Array<Delivery> = []
  const attempts: Array<AttemptRow> = []
  const current = new Map<string, Automation>()
  const answers = results.map((r) => {
    const d = leased.get(r.delivery_id)
    if (d === undefined || d.claim !== r.claim || done.has(d.id)) return false
    done.add(d.id)
    const { claim: _claim, ...delivery } = d
    const next = afterAttempt(delivery, r)
    deliveries.push(next)
    attempts.push({
      delivery_id: d.id,
      attempt: next.attempt,
      automation_id: d.automation_id,
      at: r.at,
      status: r.status,
      response_status: r.response_status,
      error: r.error,
      response_body: r.response_body
    })
    const automation = d.test ? undefined : current.get(d.automation_id) ?? automations.get(d.automation_id)
    if (automation !== undefined) current.set(automation.id, automationAfter(automation, r))
    return true
  })
  const changed = [...current.values()].filter((a) => a !== automations.get(a.id))
  return { answers, deliveries, attempts, expired: expiredBodies(deliveries), automations: changed }
}
