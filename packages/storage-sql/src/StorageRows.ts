/**
 * Row codecs and helpers shared by the SQL storage adapters (SQLite, PostgreSQL): how jobs,
 * tradeflows, messages and automations are read from and written to their tables. Adapter-independent: it
 * knows nothing of a driver.
 *
 * @module
 */
import {
  Automation,
  type Delivery,
  Job,
  type JobQueue,
  Organisation,
  StorageError,
  StoredMessage,
  type TrackingStore,
  TrackingTarget,
  Tradeflow,
  TradeflowKey,
  User
} from "@tradeflow/core"
import { Effect, Option, type ParseResult, Predicate, Schema } from "effect"

/**
 * Maps any failure of `self` to a {@link StorageError.StorageError} of `operation`, and so a driver error that
 * `@effect/sql` raises as a defect (`SqlError`): a transaction's BEGIN, COMMIT or ROLLBACK on a
 * lost connection dies rather than fails. That is an outage to retry, not a bug in the work.
 */
export const storageError = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(
    Effect.catchSomeDefect((defect) =>
      Predicate.isTagged(defect, "SqlError") ? Option.some(Effect.fail(defect)) : Option.none()
    ),
    Effect.mapError((cause) => new StorageError.StorageError({ operation, cause }))
  )

/** `items` in slices of at most `size` (multi-row statements stay under the drivers' parameter limits). */
export const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** A row of `message_heads`: the newest seq of one (tradeflow, type, container), what `latest` serves. */
export interface HeadRow {
  readonly organisation_id: string
  readonly tradeflow_reference: string
  readonly type: string
  readonly container_reference: string | null
  readonly seq: number
}

/**
 * The rows of the messages to append after `lastSeq`: each message whose hash is neither stored
 * (`stored`) nor earlier in `batch`, numbered on from `lastSeq` in batch order; with what was
 * numbered (for the outbox), the new last seq (`lastSeq` when nothing is new), and the
 * `message_heads` rows they make (one per key, the newest), to upsert.
 */
export const numberMessages = (
  organisation_id: string,
  batch: ReadonlyArray<StoredMessage.NewMessage>,
  stored: ReadonlySet<string>,
  lastSeq: number
) => {
  const seen = new Set(stored)
  const rows: Array<Record<string, string | number | null>> = []
  const inserted: Array<Delivery.InsertedMessage> = []
  const heads = new Map<string, HeadRow>()
  let seq = lastSeq
  for (const m of batch) {
    if (seen.has(m.hash)) continue
    seen.add(m.hash)
    seq++
    inserted.push({ hash: m.hash, seq, type: m.type, tradeflow_reference: m.tradeflow_reference })
    rows.push({
      organisation_id,
      seq,
      hash: m.hash,
      type: m.type,
      tradeflow_reference: m.tradeflow_reference,
      container_reference: m.container_reference,
      generated_at: m.generated_at,
      body: m.body
    })
    const { container_reference, tradeflow_reference, type } = m
    heads.set(JSON.stringify([tradeflow_reference, type, container_reference]), {
      organisation_id,
      tradeflow_reference,
      type,
      container_reference,
      seq
    })
  }
  return { rows, inserted, lastSeq: seq, heads: [...heads.values()] }
}

/** What the rows of the key index are made of: a tradeflow, or the fields of a stored document it needs. */
export type Keyed = TradeflowKey.Identified & {
  readonly organisation_id: string
  readonly created_at: number
  readonly updated_at: number
}

/** The rows of the key index (`tradeflow_keys`) of a tradeflow (see `TradeflowKey`). */
export const keyRows = (t: Keyed): Array<Record<string, string | number>> =>
  TradeflowKey.ofTradeflow(t).map((key) => ({
    organisation_id: t.organisation_id,
    key,
    tradeflow_reference: t.reference,
    created_at: t.created_at,
    updated_at: t.updated_at
  }))

/** The references of these tradeflows by organisation, in order. */
const referencesByOrganisation = (tradeflows: ReadonlyArray<Tradeflow.Tradeflow>): Map<string, Array<string>> => {
  const byOrganisation = new Map<string, Array<string>>()
  for (const t of tradeflows) {
    const references = byOrganisation.get(t.organisation_id)
    if (references === undefined) byOrganisation.set(t.organisation_id, [t.reference])
    else references.push(t.reference)
  }
  return byOrganisation
}

/**
 * The tradeflows of a commit to write, one per organisation and reference (the last state wins, so
 * a multi-row upsert never meets its own key twice), with the rows of their container and key indexes.
 */
export const tradeflowWrites = <A>(upserts: ReadonlyArray<readonly [Tradeflow.Tradeflow, A]>) => {
  const latest = [
    ...new Map(upserts.map((u) => [`${u[0].organisation_id}\u0000${u[0].reference}`, u] as const)).values()
  ]
  const byOrganisation = referencesByOrganisation(latest.map(([t]) => t))
  const containers = latest.flatMap(([t]) =>
    [...new Set(t.containers.map((c) => c.reference))].map((container_reference) => ({
      organisation_id: t.organisation_id,
      tradeflow_reference: t.reference,
      container_reference
    }))
  )
  return { latest, byOrganisation, containers, keys: latest.flatMap(([t]) => keyRows(t)) }
}

/** A row of the target index (`tracking_targets`) as a commit writes it; `lease_until` is the store's own. */
export interface TargetRow {
  readonly organisation_id: string
  readonly tradeflow_reference: string
  readonly target_id: string
  readonly source: string
  /** The JSON text of the target's `TargetQuery`. */
  readonly query: string
  /** The references of the query, each in a column of its own (`TrackingStore.targetsAbout` searches them). */
  readonly equipment: string | null
  readonly booking: string | null
  readonly bill_of_lading: string | null
  readonly high_water: number | null
  readonly next_check_at: number | null
}

/**
 * The target index rows of these tradeflows, one per target id of each tradeflow's tracking (the
 * last of a repeated id wins, as it does in the memory adapter), and the references of the
 * tradeflows they index by organisation: only the tracked ones, so a commit of untracked tradeflows
 * writes nothing to the index.
 */
export const targetRows = (tradeflows: ReadonlyArray<Tradeflow.Tradeflow>) => {
  const tracked: Array<Tradeflow.Tradeflow> = []
  const rows: Array<TargetRow> = []
  for (const t of tradeflows) {
    const tracking = t.tracking ?? null
    if (tracking === null) continue
    tracked.push(t)
    const byId = new Map<string, TargetRow>()
    for (const target of tracking.targets) {
      const query = TrackingTarget.queryOf(target)
      byId.set(target.id, {
        organisation_id: t.organisation_id,
        tradeflow_reference: t.reference,
        target_id: target.id,
        source: target.source,
        query: JSON.stringify(query),
        equipment: query.equipment ?? null,
        booking: query.booking ?? null,
        bill_of_lading: query.bill_of_lading ?? null,
        high_water: target.high_water,
        next_check_at: target.next_check_at
      })
    }
    rows.push(...byId.values())
  }
  return { byOrganisation: referencesByOrganisation(tracked), rows }
}

/** The rows of `tracking_events` of a commit's raw events. */
export const rawEventRows = (organisation_id: string, events: ReadonlyArray<TrackingStore.RawEvent>) =>
  events.map((e) => ({
    organisation_id,
    tradeflow_reference: e.tradeflow_reference,
    source: e.source,
    event_id: e.event_id,
    updated_at: e.updated_at,
    received_at: e.received_at,
    raw: e.raw
  }))

/**
 * UTF-16 strings in code point order, the order of PostgreSQL's `COLLATE "C"` and SQLite's `BINARY`
 * over UTF-8 (JavaScript's `<` orders code units, which differs where a surrogate meets U+E000..U+FFFF).
 */
export const compareCodePoints = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

/** A UTF-16 code unit ranked so that surrogates (which start code points above U+FFFF) sort after U+E000..U+FFFF. */
const codePointRank = (unit: number): number => unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800

/**
 * Claimed targets in the order of `TrackingStore.claim`: each organisation's most overdue first,
 * then each one's second, and so on; within a turn by next check, organisation, tradeflow and
 * target id. A claim leases each organisation's first targets, so the turns among what it leased
 * are the turns among every due target.
 */
export const roundRobin = <A extends Omit<TrackingStore.DueTarget, "query" | "source" | "high_water">>(
  claimed: ReadonlyArray<A>
): Array<A> => {
  const soonest = (a: A, b: A) =>
    a.next_check_at - b.next_check_at || compareCodePoints(a.organisation_id, b.organisation_id) ||
    compareCodePoints(a.tradeflow_reference, b.tradeflow_reference) || compareCodePoints(a.target_id, b.target_id)
  const turns = new Map<string, number>()
  return [...claimed].sort(soonest)
    .map((t) => {
      const turn = (turns.get(t.organisation_id) ?? 0) + 1
      turns.set(t.organisation_id, turn)
      return { t, turn }
    })
    .sort((a, b) => a.turn - b.turn || soonest(a.t, b.t))
    .map(({ t }) => t)
}

/** A row of the jobs table. */
export const JobRow = Schema.Struct({
  id: Schema.Number,
  organisation_id: Schema.String,
  environment: Job.NewJob.fields.environment,
  payload: Schema.parseJson(Job.JobPayload),
  received_at: Schema.Number,
  /** Read only where a claim answers it (`JobQueue.ClaimedJob.payload_bytes`). */
  payload_bytes: Schema.optionalWith(Schema.Number, { nullable: true, exact: true })
})

/** What a claim writes: the attempt of each job it leased. */
export const LeasedRow = Schema.Struct({ id: Schema.Number, attempt: Schema.Number })

/** A job queued after an organisation's oldest one: whether and how much of it a claim may follow with. */
export const FollowerRow = Schema.Struct({
  id: Schema.Number,
  attempt: Schema.Number,
  payload_bytes: Schema.NullOr(Schema.Number)
})

/** A job a claim marked dead. */
export const DeadRow = Schema.Struct({
  id: Schema.Number,
  organisation_id: Schema.String,
  attempt: Schema.Number,
  error: Schema.NullOr(Schema.String)
})

/**
 * A claim's answer from what its statements returned: the rows of the jobs it leased (in
 * ascending id) with the attempts `leased` answered, and the jobs it marked dead in ascending id.
 */
export const claimOf = (
  leased: ReadonlyArray<typeof LeasedRow.Type>,
  jobs: ReadonlyArray<typeof JobRow.Type>,
  dead: ReadonlyArray<typeof DeadRow.Type>
): JobQueue.Claim => {
  const attempts = new Map(leased.map((l) => [l.id, l.attempt]))
  return {
    jobs: jobs.map((job) => ({ ...job, attempt: attempts.get(job.id) ?? 0 })),
    dead: [...dead].sort((a, b) => a.id - b.id)
  }
}

/** A job as the console lists it (no payload). */
export const SummaryRow = Schema.Struct({
  id: Schema.Number,
  organisation_id: Schema.String,
  environment: Job.NewJob.fields.environment,
  kind: Schema.optionalWith(Schema.String, { nullable: true, default: () => "unknown" }),
  payload_bytes: Schema.optionalWith(Schema.Number, { nullable: true, default: () => 0 }),
  received_at: Schema.Number,
  attempt: Schema.Number,
  error: Schema.NullOr(Schema.String)
})

/** How a job row ended. */
export const OutcomeRow = Schema.Struct({
  status: Schema.Literal("pending", "done", "dead"),
  result: Schema.NullOr(Schema.parseJson(Job.JobResult)),
  error: Schema.NullOr(Schema.String)
})

/** A tradeflow row: the document column. */
export const TradeflowRow = Schema.Struct({ doc: Schema.parseJson(Tradeflow.Tradeflow) })

/** A stored tradeflow document, read for its key index rows only (other fields are skipped). */
export const KeyedRow = Schema.Struct({
  doc: Schema.parseJson(Schema.Struct({
    organisation_id: Schema.String,
    reference: Schema.String,
    containers: Schema.Array(Schema.Struct({ reference: Schema.String })),
    bill_of_lading_references: Schema.Array(Schema.String),
    booking_references: Schema.Array(Schema.String),
    created_at: Schema.Number,
    updated_at: Schema.Number
  }))
})

/** An automation row: the document column. */
export const AutomationRow = Schema.Struct({ doc: Schema.parseJson(Automation.Automation) })

/** A row of the messages table. */
export const MessageRow = Schema.Struct({
  seq: Schema.Number,
  hash: Schema.String,
  type: Schema.String,
  tradeflow_reference: Schema.String,
  container_reference: Schema.NullOr(Schema.String),
  generated_at: Schema.Number,
  body: Schema.String
})

const bool = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Literal(0, 1), Schema.Boolean, {
    strict: true,
    decode: (n) => n === 1,
    encode: (b) => (b ? 1 : 0)
  })
)

/** An epoch-ms column: PostgreSQL's BIGINT arrives as a string. */
const millis = Schema.Union(Schema.Number, Schema.NumberFromString)

/**
 * A row of the deliveries table (columns named as the fields of `Delivery.Delivery`; `test` as a
 * boolean or 0/1; epoch-ms and id columns as numbers or numeric strings).
 */
export const DeliveryRow = Schema.Struct({
  id: millis,
  automation_id: Schema.String,
  organisation_id: Schema.String,
  tradeflow_reference: Schema.String,
  message_hash: Schema.String,
  seq: Schema.NullOr(millis),
  body: Schema.NullOr(Schema.String),
  test: bool,
  created_at: millis,
  status: Schema.Literal("pending", "delivered", "dead"),
  attempt: Schema.Number,
  retries: Schema.Number,
  schedule_started_at: Schema.NullOr(millis),
  next_attempt_at: millis
})

/** A claimed delivery row: a delivery row with its `claim` and the body to send (never null). */
export const ClaimedDeliveryRow = Schema.Struct({ ...DeliveryRow.fields, claim: Schema.Number, body: Schema.String })

/** A row of the delivery log (the attempts table joined with its delivery). */
export const DeliveryLogRow = Schema.Struct({
  id: millis,
  message_hash: Schema.String,
  attempt: Schema.Number,
  status: Schema.Literal("delivered", "failed", "dead"),
  response_status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  response_body: Schema.NullOr(Schema.String),
  at: millis,
  test: bool,
  tradeflow_reference: Schema.String,
  type: Schema.NullOr(Schema.String)
})

const rows = <A, I>(row: Schema.Schema<A, I>) => Schema.decodeUnknown(Schema.Array(row))

export const decodeIdempotency = rows(Schema.Struct({ request_hash: Schema.String, response: Schema.String }))
export const decodeIds = rows(Schema.Struct({ id: Schema.Number }))
export const decodeLastSeq = rows(Schema.Struct({ last_seq: Schema.Number }))
export const decodeHashes = rows(Schema.Struct({ hash: Schema.String }))
export const decodeCounts = rows(Schema.Struct({ n: Schema.Number }))
export const decodeReceived = rows(Schema.Struct({ received_at: Schema.Number }))
export const decodeCreated = rows(Schema.Struct({ created_at: Schema.Number }))
export const decodeValues = rows(Schema.Struct({ value: Schema.String }))
export const decodeContainers = rows(Schema.Struct({ container_reference: Schema.String }))
export const decodeDue = rows(Schema.Struct({ organisation_id: Schema.String, reference: Schema.String }))
const decodeSizeRows = rows(
  Schema.Struct({ reference: Schema.String, container_count: Schema.Number, event_count: Schema.Number })
)
/** Rows of `reference, container_count, event_count` into `TradeflowStore.sizes`' answer. */
export const decodeSizes = (raw: unknown) =>
  Effect.map(
    decodeSizeRows(raw),
    (found) =>
      new Map(found.map((r) => [r.reference, { containers: r.container_count, events: r.event_count }] as const))
  )
/** The size columns of a tradeflow row (see `TradeflowStore.sizes`). */
export const sizeColumns = (t: Tradeflow.Tradeflow) => ({
  container_count: t.containers.length,
  event_count: t.events.length
})
export const decodeKeyed = rows(KeyedRow)
export const decodeCandidates = rows(
  Schema.Struct({ reference: Schema.String, created_at: millis, updated_at: millis })
)
export const decodeOrganisations = rows(Organisation.Organisation)
export const decodeApiKeys = rows(Organisation.ApiKeyRecord)
export const decodeWidgetKeys = rows(Organisation.WidgetKeyRecord)
const decodeJobRows = rows(Schema.Struct({ ...JobRow.fields, payload: Schema.String }))

/**
 * Job rows with their payloads. A payload is read with `JSON.parse`: every payload is written as
 * the JSON of a validated request's payload (the text the schema's encoding writes), which the
 * schema decodes to what `JSON.parse` reads (a property test shows both), so walking the schema
 * again for every record of every claimed job would only repeat the validation the request passed.
 * A payload that is not the JSON of a known job kind is decoded with the schema (and fails).
 */
export const decodeJobs = (
  input: unknown
): Effect.Effect<ReadonlyArray<typeof JobRow.Type>, ParseResult.ParseError> =>
  Effect.flatMap(decodeJobRows(input), (found) =>
    Effect.forEach(found, (row) => {
      const payload = parsedPayload(row.payload)
      return payload === undefined
        ? Effect.map(decodePayload(row.payload), (decoded) => ({ ...row, payload: decoded }))
        : Effect.succeed({ ...row, payload })
    }))

const decodePayload = Schema.decodeUnknown(Schema.parseJson(Job.JobPayload))
const jobKinds: ReadonlySet<unknown> = new Set(["Upsert", "Delete", "Advance"])

const parsedPayload = (text: string): Job.JobPayload | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && jobKinds.has((value as { _tag?: unknown })._tag)
      ? value as Job.JobPayload
      : undefined
  } catch {
    return undefined
  }
}
export const decodeLeased = rows(LeasedRow)
export const decodeFollowers = rows(FollowerRow)
export const decodeDead = rows(DeadRow)
export const decodeSummaries = rows(SummaryRow)
export const decodeOutcomes = rows(OutcomeRow)
export const decodeTradeflows = rows(TradeflowRow)
const decodeMessageRows = rows(MessageRow)

const isMessageRow = (row: unknown): boolean => {
  if (typeof row !== "object" || row === null) return false
  const r = row as { readonly [K in keyof typeof MessageRow.Type]?: unknown }
  return typeof r.seq === "number" && typeof r.hash === "string" && typeof r.type === "string" &&
    typeof r.tradeflow_reference === "string" && typeof r.generated_at === "number" && typeof r.body === "string" &&
    (r.container_reference === null || typeof r.container_reference === "string")
}

/**
 * Rows of the messages table. The hot path of the upstream feed: the rows are checked by hand and
 * returned as they are (a row holds only the selected columns); only when one is malformed does
 * the Schema decode run, for its ParseError.
 */
export const decodeMessages = (
  input: unknown
): Effect.Effect<ReadonlyArray<typeof MessageRow.Type>, ParseResult.ParseError> =>
  Array.isArray(input) && input.every(isMessageRow)
    ? Effect.succeed(input as ReadonlyArray<typeof MessageRow.Type>)
    : decodeMessageRows(input)
/**
 * How an SQL adapter reads what a {@link StoredMessage.MessageQuery} selects: one walk of an index in seq order
 * per type (merged), over `message_heads` for `latest`, with the filters marked here as the
 * index's equalities and the others read off the rows walked. The indexes: on messages one per
 * combination of tradeflow, container and type; on the heads one per filter, the tradeflow's
 * (whose heads the stored caps bound) taking the others as read, and one for container and type.
 */
export interface MessageWalk {
  /** Walk `message_heads` (the newest message of each key) instead of `messages`. */
  readonly heads: boolean
  /** Whether the index takes the tradeflow (when the query has one). */
  readonly tradeflow: boolean
  /** Whether the index takes the container (when the query has one). */
  readonly container: boolean
  /** The type of each walk, `[undefined]` for a single walk that takes none. */
  readonly walks: ReadonlyArray<string | undefined>
  /** The types read off the rows walked, when the index does not take them. */
  readonly readTypes: ReadonlyArray<string> | undefined
}

/** The {@link MessageWalk} of a query. */
export const messageWalk = (query: StoredMessage.MessageQuery): MessageWalk => {
  const heads = query.latest === true
  const types = query.types === undefined ? undefined : [...new Set(query.types)]
  const byTradeflow = heads && query.tradeflow_reference !== undefined
  return {
    heads,
    tradeflow: query.tradeflow_reference !== undefined,
    container: query.container_reference !== undefined && !byTradeflow,
    walks: types !== undefined && !byTradeflow ? types : [undefined],
    readTypes: byTradeflow ? types : undefined
  }
}

const decodeBodySizeRows = rows(Schema.Struct({ seq: Schema.Number, bytes: Schema.Number }))

/**
 * Rows of `seq, bytes` (a page's candidates, up to 501 of them per `GET /upstream`): checked by
 * hand and returned as they are, as {@link decodeMessages} does; the Schema decode runs only for a
 * malformed row, for its ParseError.
 */
export const decodeBodySizes = (
  input: unknown
): Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly bytes: number }>, ParseResult.ParseError> =>
  Array.isArray(input) &&
    input.every((row: { readonly seq?: unknown; readonly bytes?: unknown } | null) =>
      typeof row === "object" && row !== null && typeof row.seq === "number" && typeof row.bytes === "number"
    )
    ? Effect.succeed(input as ReadonlyArray<{ readonly seq: number; readonly bytes: number }>)
    : decodeBodySizeRows(input)

const decodePageBodyRows = rows(Schema.Struct({ seq: Schema.Number, body: Schema.NullOr(Schema.String) }))

/**
 * Rows of `seq, body` (`MessageStore.readBodies`: a body is null where it is not returned): checked
 * by hand and returned as they are, as {@link decodeMessages} does; the Schema decode runs only for
 * a malformed row, for its ParseError.
 */
export const decodePageBodies = (
  input: unknown
): Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly body: string | null }>, ParseResult.ParseError> =>
  Array.isArray(input) &&
    input.every((row: { readonly seq?: unknown; readonly body?: unknown } | null) =>
      typeof row === "object" && row !== null && typeof row.seq === "number" &&
      (typeof row.body === "string" || row.body === null)
    )
    ? Effect.succeed(input as ReadonlyArray<{ readonly seq: number; readonly body: string | null }>)
    : decodePageBodyRows(input)

/** The separator of the bodies of a page read as one text: a JSON text never holds U+0001 unescaped. */
export const bodySeparator = "\u0001"

const decodeJoinedPageRows = rows(Schema.Struct({
  n: Schema.Number,
  seqs: Schema.NullOr(Schema.String),
  bodies: Schema.NullOr(Schema.String)
}))

/**
 * The answer of a page read as one text (`MessageStore.readBodies` on SQLite when every candidate is small):
 * no row (some candidate is too large), or one row of the candidates' count, their seqs joined by
 * `,` and their bodies joined by {@link bodySeparator}, in one order. Answers the candidates in
 * ascending seq, or undefined when there is no row or the texts do not split into `n` parts.
 */
export const decodeJoinedPage = (
  input: unknown
): Effect.Effect<ReadonlyArray<StoredMessage.MessageBody> | undefined, ParseResult.ParseError> =>
  Effect.map(decodeJoinedPageRows(input), (found) => {
    const row = found[0]
    if (row === undefined) return undefined
    if (row.n === 0) return []
    const seqs = row.seqs?.split(",") ?? []
    const bodies = row.bodies?.split(bodySeparator) ?? []
    if (seqs.length !== row.n || bodies.length !== row.n) return undefined
    const messages = new Array<StoredMessage.MessageBody>(row.n)
    let ascending = true
    for (let i = 0; i < row.n; i++) {
      messages[i] = { seq: Number(seqs[i]), body: bodies[i]! }
      if (i > 0 && messages[i]!.seq <= messages[i - 1]!.seq) ascending = false
    }
    return ascending ? messages : messages.sort((a, b) => a.seq - b.seq)
  })

/**
 * `MessageStore.read` over two statements of an SQL adapter: `sizes(n)` answers the seq and body
 * size of the first `n` matching messages in the order of `take` (no body read; the rows in any
 * order), and `bodies(seqs)` the rows of those seqs in any order. Only the bodies of the messages
 * returned are read.
 */
export const readRun = <E, R>(
  query: StoredMessage.MessageRead,
  sizes: (n: number) => Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly bytes: number }>, E, R>,
  bodies: (seqs: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<StoredMessage.StoredMessage>, E, R>
): Effect.Effect<StoredMessage.MessageRun, E, R> =>
  Effect.gen(function*() {
    if (query.types !== undefined && query.types.length === 0) return { messages: [], more: false }
    const limit = Math.max(0, Math.floor(query.limit))
    const candidates = [...yield* sizes(limit + 1)].sort((a, b) =>
      query.take === "oldest" ? a.seq - b.seq : b.seq - a.seq
    )
    const count = StoredMessage.fitting(candidates.map((c) => c.bytes), limit, query.max_bytes)
    const seqs = candidates.slice(0, count).map((c) => c.seq).sort((a, b) => a - b)
    const bySeq = new Map<number, StoredMessage.StoredMessage>()
    for (const part of chunks(seqs, 500)) for (const m of yield* bodies(part)) bySeq.set(m.seq, m)
    const messages: Array<StoredMessage.StoredMessage> = []
    for (const seq of seqs) {
      const m = bySeq.get(seq)
      if (m !== undefined) messages.push(m)
    }
    return { messages, more: candidates.length > count }
  })

/** What a target asks its source, as `tracking_targets.query` holds it (JSON text). */
const TargetQueryText = Schema.parseJson(Schema.Struct({
  equipment: Schema.optional(Schema.String),
  booking: Schema.optional(Schema.String),
  bill_of_lading: Schema.optional(Schema.String)
}))

/** The columns of a `tracking_targets` row that the ports answer, but its next check. */
const indexedTarget = {
  organisation_id: Schema.String,
  tradeflow_reference: Schema.String,
  target_id: Schema.String,
  source: Schema.String,
  query: TargetQueryText,
  high_water: Schema.NullOr(Schema.Number)
}

/** Rows of `tracking_targets` as a claim answers them. */
export const decodeDueTargets = rows(Schema.Struct({ ...indexedTarget, next_check_at: Schema.Number }))

const decodeIndexedTargets = rows(Schema.Struct({ ...indexedTarget, next_check_at: Schema.NullOr(Schema.Number) }))

/**
 * Rows of `tracking_targets` as `TrackingStore.targetsAbout` answers them: a row without a next
 * check is a stopped target, answered with `next_check_at` 0.
 */
export const decodeTargetsAbout = (input: ReadonlyArray<unknown>) =>
  Effect.map(
    decodeIndexedTargets(input),
    (decoded) =>
      decoded.map(({ next_check_at, ...t }) => ({
        ...t,
        next_check_at: next_check_at ?? 0,
        stopped: next_check_at === null
      }))
  )

/** Rows of `tracking_events`. */
export const decodeRawEvents = rows(Schema.Struct({
  tradeflow_reference: Schema.String,
  source: Schema.String,
  event_id: Schema.String,
  updated_at: Schema.Number,
  received_at: Schema.Number,
  raw: Schema.String
}))

/** Rows of `tracking_subscriptions`. */
export const decodeSubscriptions = rows(Schema.Struct({
  source: Schema.String,
  subscription_id: Schema.String,
  organisation_id: Schema.String,
  tradeflow_reference: Schema.String,
  target_id: Schema.String,
  secret: Schema.String,
  created_at: Schema.Number
}))

/** Rows of `users` (`operator` as a boolean or 0/1). */
export const decodeUsers = rows(Schema.Struct({ ...User.User.fields, operator: bool }))
/** Rows of `memberships`. */
export const decodeMemberships = rows(User.Membership)
/** Rows of `sessions`. */
export const decodeSessions = rows(User.SessionRecord)
/** Rows of `invitations` (`uat` as a boolean or 0/1). */
export const decodeInvitations = rows(Schema.Struct({ ...User.Invitation.fields, uat: bool }))
/** Rows of `audit_log` (`seq` as a number or, a PostgreSQL `bigint`, a numeric string). */
export const decodeAuditEntries = rows(Schema.Struct({ ...User.AuditEntry.fields, seq: millis }))

export const decodeAutomations = rows(AutomationRow)
export const decodeDeliveries = rows(DeliveryRow)
export const decodeClaimedDeliveries = rows(ClaimedDeliveryRow)
export const decodeDeliveryLog = rows(DeliveryLogRow)
export const encodeResult = Schema.encode(Schema.parseJson(Job.JobResult))
const encodeTradeflow = Schema.encodeSync(Schema.parseJson(Tradeflow.Tradeflow))

/**
 * A tradeflow's stored document: its JSON text. The schema has no transformation (its defaults
 * are values the state always holds), so this is what encoding it with the schema writes (shown
 * by a property test), without walking the schema for every tradeflow of a commit. A tradeflow
 * holding a `__proto__` key (which validated input never does) is encoded by the schema itself,
 * which leaves such a key out of the objects it walks and keeps it in the values it does not.
 */
export const tradeflowDocument = (t: Tradeflow.Tradeflow): string => {
  const text = JSON.stringify(t)
  return text.includes("\"__proto__\":") ? encodeTradeflow(t) : text
}
export const encodeAutomation = Schema.encode(Schema.parseJson(Automation.Automation))
