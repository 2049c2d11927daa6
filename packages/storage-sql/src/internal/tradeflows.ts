import { SqlClient, type SqlConnection, type Statement } from "@effect/sql"
import { Delivery, type StoredMessage, type TrackingStore, type Tradeflow, TradeflowStore } from "@tradeflow/core"
import { Data, Effect, Option } from "effect"
import {
  chunks,
  decodeCandidates,
  decodeContainers,
  decodeDue,
  decodeHashes,
  decodeLastSeq,
  decodeSizes,
  decodeTradeflows,
  decodeValues,
  encodeResult,
  type HeadRow,
  numberMessages,
  rawEventRows,
  sizeColumns,
  storageError,
  targetRows,
  tradeflowDocument,
  tradeflowWrites
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"
import type { SqlStorageOptions } from "./options.js"

/** A commit whose job is no longer pending at its attempt: the transaction rolls back. */
class Fenced extends Data.TaggedError("Fenced") {}

/**
 * The candidates of `TradeflowStore.lookup`: the tradeflows of the organisation having any of the
 * keys, read from one covering index of `tradeflow_keys` (by organisation and key).
 */
export const lookupStatement = (
  sql: SqlClient.SqlClient,
  organisationId: string,
  keys: ReadonlyArray<string>
): Statement.Statement<SqlConnection.Row> =>
  sql`SELECT tradeflow_reference AS reference, created_at, updated_at FROM tradeflow_keys
    WHERE organisation_id = ${organisationId} AND ${sql.in("key", keys)}`

/**
 * `TradeflowStore` over the `SqlClient`. A commit takes the organisation's message numbers from its
 * counter row (on PostgreSQL locked by an upsert until the transaction ends; SQLite has one writer),
 * writes deliveries only for automations that exist (on PostgreSQL locked `FOR KEY SHARE` first)
 * and signals `options.deliveryWakeups` when it wrote any.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<TradeflowStore.TradeflowStore["Type"], never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { bool, chunk, insertRows, ofOrganisation, pg, recordset } = dialectOf(sql)
    const slice = pg
      ? { tradeflows: 1000, containers: 1000, keys: 1000, targets: 1000, events: 1000 }
      : { tradeflows: 200, containers: 300, keys: 180, targets: 140, events: 100 }
    const same = sql.literal(pg ? "IS NOT DISTINCT FROM" : "IS")
    const differs = sql.literal(pg ? "IS DISTINCT FROM" : "IS NOT")
    const notTest = sql.literal(pg ? "NOT test" : "test = 0")
    const columns = {
      tradeflows: [
        ["organisation_id", "text"],
        ["reference", "text"],
        ["active", "boolean"],
        ["doc", "text"],
        ["next_position_at", "float8"],
        ["container_count", "integer"],
        ["event_count", "integer"]
      ],
      containers: [["organisation_id", "text"], ["tradeflow_reference", "text"], ["container_reference", "text"]],
      keys: [
        ["organisation_id", "text"],
        ["key", "text"],
        ["tradeflow_reference", "text"],
        ["created_at", "float8"],
        ["updated_at", "float8"]
      ],
      messages: [
        ["organisation_id", "text"],
        ["seq", "bigint"],
        ["hash", "text"],
        ["type", "text"],
        ["tradeflow_reference", "text"],
        ["container_reference", "text"],
        ["generated_at", "float8"],
        ["body", "text"]
      ],
      heads: [
        ["organisation_id", "text"],
        ["tradeflow_reference", "text"],
        ["type", "text"],
        ["container_reference", "text"],
        ["seq", "bigint"]
      ],
      targets: [
        ["organisation_id", "text"],
        ["tradeflow_reference", "text"],
        ["target_id", "text"],
        ["source", "text"],
        ["query", "text"],
        ["equipment", "text"],
        ["booking", "text"],
        ["bill_of_lading", "text"],
        ["high_water", "float8"],
        ["next_check_at", "float8"]
      ],
      kept: [["tradeflow_reference", "text"], ["target_id", "text"]],
      events: [
        ["organisation_id", "text"],
        ["tradeflow_reference", "text"],
        ["source", "text"],
        ["event_id", "text"],
        ["updated_at", "float8"],
        ["received_at", "float8"],
        ["raw", "text"]
      ]
    } as const

    /** Upserts the tradeflows and replaces their container and key index rows, a statement per slice, not per tradeflow. */
    const writeTradeflows = (upserts: ReadonlyArray<readonly [Tradeflow.Tradeflow, string]>) =>
      Effect.gen(function*() {
        const { byOrganisation, containers, keys, latest } = tradeflowWrites(upserts)
        const tradeflowRows = latest.map(([t, doc]) => ({
          organisation_id: t.organisation_id,
          reference: t.reference,
          active: bool(t.active),
          doc,
          next_position_at: t.next_position_at,
          ...sizeColumns(t)
        }))
        for (const rows of insertRows(tradeflowRows, columns.tradeflows, slice.tradeflows)) {
          yield* sql`INSERT INTO tradeflows ${rows}
          ON CONFLICT (organisation_id, reference) DO UPDATE SET active = excluded.active, doc = excluded.doc,
          next_position_at = excluded.next_position_at, container_count = excluded.container_count,
          event_count = excluded.event_count`
        }
        for (const [org, references] of byOrganisation) {
          for (const part of chunks(references, chunk)) {
            yield* sql`DELETE FROM tradeflow_containers
            WHERE ${ofOrganisation("tradeflow_containers", org, "tradeflow_reference", part)}`
            yield* sql`DELETE FROM tradeflow_keys
            WHERE ${ofOrganisation("tradeflow_keys", org, "tradeflow_reference", part)}`
          }
        }
        for (const rows of insertRows(containers, columns.containers, slice.containers)) {
          yield* sql`INSERT INTO tradeflow_containers ${rows}`
        }
        for (const rows of insertRows(keys, columns.keys, slice.keys)) yield* sql`INSERT INTO tradeflow_keys ${rows}`
        yield* writeTargets(latest.map(([t]) => t))
      })

    /**
     * Writes the target index of the tracked tradeflows among these (nothing for the others): deletes
     * the rows of targets their documents no longer hold, then upserts one row per target, with its
     * query and each of its references in a column of its own. A row keeps its lease while its next
     * check stays the same (null-safe), and loses it when the next check moves.
     */
    const writeTargets = (tradeflows: ReadonlyArray<Tradeflow.Tradeflow>) =>
      Effect.gen(function*() {
        const { byOrganisation, rows } = targetRows(tradeflows)
        for (const [org, references] of byOrganisation) {
          for (const part of chunks(references, chunk)) {
            const within = new Set(part)
            const kept = rows.filter((r) => r.organisation_id === org && within.has(r.tradeflow_reference))
            yield* sql`DELETE FROM tracking_targets
            WHERE ${ofOrganisation("tracking_targets", org, "tradeflow_reference", part)}
            AND (tradeflow_reference, target_id) NOT IN (
              SELECT k.tradeflow_reference, k.target_id FROM ${recordset(kept, columns.kept)})`
          }
        }
        for (const part of insertRows(rows, columns.targets, slice.targets)) {
          yield* sql`INSERT INTO tracking_targets ${part}
          ON CONFLICT (organisation_id, tradeflow_reference, target_id) DO UPDATE SET source = excluded.source,
            query = excluded.query, equipment = excluded.equipment, booking = excluded.booking,
            bill_of_lading = excluded.bill_of_lading, high_water = excluded.high_water,
            next_check_at = excluded.next_check_at,
            lease_until = CASE WHEN tracking_targets.next_check_at ${same} excluded.next_check_at
              THEN tracking_targets.lease_until END
          WHERE tracking_targets.next_check_at ${differs} excluded.next_check_at
            OR tracking_targets.high_water ${differs} excluded.high_water
            OR tracking_targets.source <> excluded.source OR tracking_targets.query <> excluded.query`
        }
      })

    /** Keeps these raw events of the organisation, each version once (a version kept already is skipped). */
    const writeRawEvents = (org: string, events: ReadonlyArray<TrackingStore.RawEvent>) =>
      Effect.forEach(
        insertRows(rawEventRows(org, events), columns.events, slice.events),
        (rows) => sql`INSERT INTO tracking_events ${rows} ON CONFLICT DO NOTHING`,
        { discard: true }
      )

    /** Moves the `latest` heads of these keys to their new messages (the key without a container is another index). */
    const upsertHeads = (heads: ReadonlyArray<HeadRow>) =>
      Effect.gen(function*() {
        for (const rows of insertRows(heads.filter((h) => h.container_reference !== null), columns.heads, chunk)) {
          yield* sql`INSERT INTO message_heads ${rows}
          ON CONFLICT (organisation_id, tradeflow_reference, type, container_reference) WHERE container_reference IS NOT NULL
          DO UPDATE SET seq = excluded.seq`
        }
        for (const rows of insertRows(heads.filter((h) => h.container_reference === null), columns.heads, chunk)) {
          yield* sql`INSERT INTO message_heads ${rows}
          ON CONFLICT (organisation_id, tradeflow_reference, type) WHERE container_reference IS NULL
          DO UPDATE SET seq = excluded.seq`
        }
      })

    /** The organisation's last message number; on PostgreSQL its counter row stays locked until the transaction ends. */
    const takeCounter = (org: string) =>
      pg
        ? Effect.flatMap(
          Effect.flatMap(
            sql`INSERT INTO message_sequences (organisation_id, last_seq)
            VALUES (${org}, 0)
            ON CONFLICT (organisation_id) DO UPDATE SET last_seq = message_sequences.last_seq
            RETURNING last_seq::float8 AS last_seq`,
            decodeLastSeq
          ),
          (rows) =>
            rows[0] === undefined ? Effect.fail("message_sequences answered no row") : Effect.succeed(rows[0].last_seq)
        )
        : Effect.map(
          Effect.flatMap(sql`SELECT last_seq FROM message_sequences WHERE organisation_id = ${org}`, decodeLastSeq),
          (rows) => rows[0]?.last_seq ?? 0
        )

    /** Sets the organisation's counter to `lastSeq` (PostgreSQL: the row {@link takeCounter} created and locked). */
    const advanceCounter = (org: string, lastSeq: number) =>
      pg
        ? sql`UPDATE message_sequences SET last_seq = ${lastSeq} WHERE organisation_id = ${org}`
        : sql`INSERT INTO message_sequences (organisation_id, last_seq) VALUES (${org}, ${lastSeq})
          ON CONFLICT (organisation_id) DO UPDATE SET last_seq = excluded.last_seq`

    /** Appends the messages not stored yet; answers those inserted, ascending seq. */
    const appendMessages = (org: string, batch: ReadonlyArray<StoredMessage.NewMessage>) =>
      Effect.gen(function*() {
        const first = yield* takeCounter(org)
        const stored = new Set<string>()
        for (const part of chunks([...new Set(batch.map((m) => m.hash))], chunk)) {
          for (
            const row of yield* decodeHashes(
              yield* sql`SELECT hash FROM messages WHERE ${ofOrganisation("messages", org, "hash", part)}`
            )
          ) stored.add(row.hash)
        }
        const append = numberMessages(org, batch, stored, first)
        for (const rows of insertRows(append.rows, columns.messages, 500)) yield* sql`INSERT INTO messages ${rows}`
        yield* upsertHeads(append.heads)
        if (append.lastSeq !== first) yield* advanceCounter(org, append.lastSeq)
        return append.inserted
      })

    /** The automations among `ids` that exist; on PostgreSQL locked `FOR KEY SHARE` until the transaction ends. */
    const existingAutomations = (ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const existing = new Set<string>()
        for (const part of chunks(ids, chunk)) {
          for (
            const row of yield* decodeValues(
              pg
                ? yield* sql`SELECT id AS value FROM automations WHERE ${sql.in("id", part)} ORDER BY id FOR KEY SHARE`
                : yield* sql`SELECT id AS value FROM automations WHERE ${sql.in("id", part)}`
            )
          ) existing.add(row.value)
        }
        return existing
      })

    /** The events of the tradeflow among `events`. */
    const heldEvents = (organisationId: string, reference: string, events: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const wanted = new Set(events)
        if (!pg) {
          if (wanted.size === 0) return []
          const keys = (yield* decodeValues(
            yield* sql`SELECT json_extract(e.value, '$.key') AS value
            FROM tradeflows t, json_each(t.doc, '$.events') e
            WHERE t.organisation_id = ${organisationId} AND t.reference = ${reference}`
          )).map((r) => r.value).filter((k) => wanted.has(k))
          return [...new Set(keys)]
        }
        const held: Array<string> = []
        for (const part of chunks([...wanted], chunk)) {
          for (
            const r of yield* decodeValues(
              yield* sql`SELECT DISTINCT e ->> 'key' AS value
              FROM tradeflows t, json_array_elements(t.doc::json -> 'events') e
              WHERE t.organisation_id = ${organisationId} AND t.reference = ${reference}
              AND (e ->> 'key') IN ${sql.in(part)}`
            )
          ) held.push(r.value)
        }
        return held
      })

    /**
     * Deletes these tradeflows with their messages, their messages' deliveries (and log), containers,
     * keys, tracked targets and raw events.
     */
    const deleteTradeflows = (org: string, deletes: ReadonlyArray<string>) =>
      Effect.forEach(chunks([...new Set(deletes)], chunk), (references) =>
        Effect.gen(function*() {
          const ofTradeflows = sql`SELECT id FROM deliveries
          WHERE organisation_id = ${org} AND ${notTest} AND ${sql.in("tradeflow_reference", references)}`
          yield* sql`DELETE FROM delivery_attempts WHERE delivery_id IN (${ofTradeflows})`
          yield* sql`DELETE FROM deliveries WHERE id IN (${ofTradeflows})`
          for (
            const table of [
              "messages",
              "message_heads",
              "tradeflow_containers",
              "tradeflow_keys",
              "tracking_targets",
              "tracking_events"
            ]
          ) {
            yield* sql`DELETE FROM ${sql(table)} WHERE ${ofOrganisation(table, org, "tradeflow_reference", references)}`
          }
          yield* sql`DELETE FROM tradeflows WHERE ${ofOrganisation("tradeflows", org, "reference", references)}`
        }), { discard: true })

    /**
     * Writes the upserts and messages of consecutive commits of one organisation with no deletes
     * among them but the first's (already applied): a statement per kind of write, not per commit.
     * Answers the deliveries of each commit, planned from the messages it inserted.
     */
    const writeSegment = (
      segment: ReadonlyArray<{
        readonly commit: TradeflowStore.Commit
        readonly upserts: ReadonlyArray<readonly [Tradeflow.Tradeflow, string]>
      }>
    ) =>
      Effect.gen(function*() {
        yield* writeTradeflows(segment.flatMap((e) => e.upserts))
        const org = segment[0]!.commit.organisation_id
        const events = segment.flatMap((e) => e.commit.raw_events ?? [])
        if (events.length > 0) yield* writeRawEvents(org, events)
        const messages = segment.flatMap((e) => e.commit.messages)
        if (messages.length === 0) return []
        const inserted = new Map((yield* appendMessages(org, messages)).map((m) => [m.hash, m]))
        const planned: Array<Delivery.NewDelivery> = []
        for (const { commit } of segment) {
          const mine: Array<Delivery.InsertedMessage> = []
          for (const m of commit.messages) {
            const row = inserted.get(m.hash)
            if (row === undefined) continue
            inserted.delete(m.hash)
            mine.push(row)
          }
          planned.push(...Delivery.plan(org, commit.outbox, mine))
        }
        return planned
      })

    const commitAll = (commits: ReadonlyArray<TradeflowStore.Commit>) =>
      Effect.gen(function*() {
        if (commits.length === 0) return true
        const encoded = yield* Effect.forEach(commits, (commit) =>
          Effect.all({
            commit: Effect.succeed(commit),
            result: encodeResult(commit.result),
            upserts: Effect.succeed(commit.upserts.map((t) => [t, tradeflowDocument(t)] as const))
          }))
        const targets = [...new Set(commits.flatMap((c) => c.outbox?.automations.map((a) => a.id) ?? []))].sort()
        const anyMessages = commits.some((c) => c.messages.length > 0)
        return yield* sql.withTransaction(Effect.gen(function*() {
          for (const part of chunks(encoded, 300)) {
            const results = sql.join(" ", false)(
              part.map(({ commit, result }) => sql`WHEN ${commit.job_id} THEN ${result}`)
            )
            const fences = sql.or(part.map(({ commit }) =>
              commit.attempt === undefined
                ? sql`id = ${commit.job_id}`
                : sql`(id = ${commit.job_id} AND attempt = ${commit.attempt})`
            ))
            const claimed = yield* sql`UPDATE jobs SET status = 'done', result = CASE id ${results} END,
              leased_by = NULL, lease_until = NULL
              WHERE status = 'pending' AND (${fences}) RETURNING id`
            if (claimed.length !== new Set(part.map((e) => e.commit.job_id)).size) {
              return yield* Effect.fail(new Fenced())
            }
          }
          const locked = pg && anyMessages ? yield* existingAutomations(targets) : undefined
          let delivered = false
          const insertDeliveries = (planned: ReadonlyArray<Delivery.NewDelivery>) =>
            Effect.gen(function*() {
              if (planned.length === 0) return
              const existing = locked ?? (yield* existingAutomations([...new Set(planned.map((d) => d.automation_id))]))
              const rows = planned.filter((d) => existing.has(d.automation_id)).map((d) => ({
                automation_id: d.automation_id,
                organisation_id: d.organisation_id,
                tradeflow_reference: d.tradeflow_reference,
                message_hash: d.message_hash,
                seq: d.seq,
                body: d.body,
                test: bool(d.test),
                created_at: d.created_at,
                next_attempt_at: d.created_at
              }))
              for (const part of chunks(rows, 500)) yield* sql`INSERT INTO deliveries ${sql.insert(part)}`
              if (rows.length > 0) delivered = true
            })
          let segment: Array<(typeof encoded)[number]> = []
          const flush = Effect.suspend(() => {
            const part = segment
            segment = []
            return part.length === 0 ? Effect.void : Effect.flatMap(writeSegment(part), insertDeliveries)
          })
          for (const entry of encoded) {
            const last = segment.at(-1)
            if (entry.commit.deletes.length > 0 || last?.commit.organisation_id !== entry.commit.organisation_id) {
              yield* flush
            }
            if (entry.commit.deletes.length > 0) {
              yield* deleteTradeflows(entry.commit.organisation_id, entry.commit.deletes)
            }
            segment.push(entry)
          }
          yield* flush
          if (delivered) yield* options.deliveryWakeups.notify
          return true
        })).pipe(Effect.catchIf((e): e is Fenced => e instanceof Fenced, () => Effect.succeed(false)))
      })

    return TradeflowStore.TradeflowStore.of({
      get: Effect.fn("TradeflowStore.get")(function*(organisationId: string, reference: string) {
        const rows = yield* decodeTradeflows(
          yield* sql`SELECT doc FROM tradeflows
          WHERE organisation_id = ${organisationId} AND reference = ${reference}`
        )
        return Option.map(Option.fromNullable(rows[0]), (r) => r.doc)
      }, storageError("TradeflowStore.get")),
      getMany: Effect.fn("TradeflowStore.getMany")(
        function*(organisationId: string, references: ReadonlyArray<string>) {
          const found = new Map<string, Tradeflow.Tradeflow>()
          for (const part of chunks([...new Set(references)], chunk)) {
            for (
              const row of yield* decodeTradeflows(
                yield* sql`SELECT doc FROM tradeflows WHERE ${
                  ofOrganisation("tradeflows", organisationId, "reference", part)
                }`
              )
            ) found.set(row.doc.reference, row.doc)
          }
          return found
        },
        storageError("TradeflowStore.getMany")
      ),
      list: Effect.fn("TradeflowStore.list")(function*(organisationId: string) {
        const rows = yield* decodeTradeflows(
          yield* sql`SELECT doc FROM tradeflows
          WHERE organisation_id = ${organisationId} ORDER BY reference`
        )
        return rows.map((r) => r.doc)
      }, storageError("TradeflowStore.list")),
      sizes: Effect.fn("TradeflowStore.sizes")(function*(organisationId: string, references: ReadonlyArray<string>) {
        const sizes = new Map<string, TradeflowStore.TradeflowSize>()
        for (const part of chunks([...new Set(references)], chunk)) {
          for (
            const [reference, size] of yield* decodeSizes(
              yield* sql`SELECT reference, container_count, event_count
              FROM tradeflows WHERE ${ofOrganisation("tradeflows", organisationId, "reference", part)}`
            )
          ) sizes.set(reference, size)
        }
        return sizes
      }, storageError("TradeflowStore.sizes")),
      lookup: Effect.fn("TradeflowStore.lookup")(function*(organisationId: string, keys: ReadonlyArray<string>) {
        if (keys.length === 0) return []
        const found = new Map<string, TradeflowStore.Candidate>()
        for (const part of chunks([...new Set(keys)], chunk)) {
          for (const c of yield* decodeCandidates(yield* lookupStatement(sql, organisationId, part))) {
            found.set(c.reference, c)
          }
        }
        return [...found.values()]
      }, storageError("TradeflowStore.lookup")),
      held: Effect.fn("TradeflowStore.held")(function*(
        organisationId: string,
        reference: string,
        identities: { readonly containers: ReadonlyArray<string>; readonly events: ReadonlyArray<string> }
      ) {
        const containers: Array<string> = []
        for (const part of chunks([...new Set(identities.containers)], chunk)) {
          for (
            const r of yield* decodeContainers(
              yield* sql`SELECT container_reference FROM tradeflow_containers
              WHERE organisation_id = ${organisationId} AND tradeflow_reference = ${reference}
              AND ${sql.in("container_reference", part)}`
            )
          ) containers.push(r.container_reference)
        }
        return { containers, events: yield* heldEvents(organisationId, reference, identities.events) }
      }, storageError("TradeflowStore.held")),
      containers: Effect.fn("TradeflowStore.containers")(function*(organisationId: string) {
        const rows = yield* decodeContainers(
          yield* sql`SELECT DISTINCT container_reference
          FROM tradeflow_containers WHERE organisation_id = ${organisationId} ORDER BY container_reference`
        )
        return rows.map((r) => r.container_reference)
      }, storageError("TradeflowStore.containers")),
      due: Effect.fn("TradeflowStore.due")(function*(now: number, limit: number) {
        return yield* decodeDue(
          yield* sql`SELECT organisation_id, reference FROM (
            SELECT organisation_id, reference, next_position_at,
              ROW_NUMBER() OVER (PARTITION BY organisation_id ORDER BY next_position_at, reference) AS turn
            FROM tradeflows WHERE next_position_at IS NOT NULL AND next_position_at <= ${now}
          ) due
          ORDER BY turn, next_position_at, organisation_id, reference LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("TradeflowStore.due")),
      commit: (commit) =>
        commitAll([commit]).pipe(storageError("TradeflowStore.commit"), Effect.withSpan("TradeflowStore.commit")),
      commitAll: (commits) =>
        commitAll(commits).pipe(storageError("TradeflowStore.commitAll"), Effect.withSpan("TradeflowStore.commitAll"))
    })
  })
