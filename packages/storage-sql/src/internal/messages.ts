import { SqlClient, type Statement } from "@effect/sql"
import { MessageStore, type StoredMessage } from "@tradeflow/core"
import { Effect } from "effect"
import {
  decodeBodySizes,
  decodeJoinedPage,
  decodeLastSeq,
  decodeMessages,
  decodePageBodies,
  messageWalk,
  readRun,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"

/**
 * `MessageStore` over the `SqlClient`: every read walks one index per type in seq order, as
 * `StorageRows.messageWalk` plans it. What the walked index does not take is read off the rows
 * (`x || ''`, `x + 0`: so the planner never trades the seq order for another index and a sort).
 */
export const make: Effect.Effect<MessageStore.MessageStore["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const { number, pg } = dialectOf(sql)

    /** The walks of `query`: their `FROM`, their conditions and the column each is ordered on. */
    const walksOf = (query: StoredMessage.MessageQuery) => {
      const walk = messageWalk(query)
      const on = (column: string) => sql.literal(`${walk.heads ? "h" : "m"}.${column}`)
      const read = (column: string) => sql.literal(`${walk.heads ? "h" : "m"}.${column} || ''`)
      const where = [sql`${on("organisation_id")} = ${query.organisation_id}`]
      if (query.after_seq !== undefined) where.push(sql`${on("seq")} > ${query.after_seq}`)
      if (query.tradeflow_reference !== undefined) {
        where.push(
          sql`${
            walk.tradeflow ? on("tradeflow_reference") : read("tradeflow_reference")
          } = ${query.tradeflow_reference}`
        )
      }
      if (query.container_reference !== undefined) {
        where.push(
          sql`${
            walk.container ? on("container_reference") : read("container_reference")
          } = ${query.container_reference}`
        )
      }
      if (walk.readTypes !== undefined) where.push(sql`${read("type")} IN ${sql.in(walk.readTypes)}`)
      if (query.exclude_types !== undefined && query.exclude_types.length > 0) {
        where.push(sql`${read("type")} NOT IN ${sql.in([...new Set(query.exclude_types)])}`)
      }
      if (query.since !== undefined) where.push(sql`m.generated_at + 0 >= ${query.since}`)
      const from = walk.heads
        ? sql`message_heads AS h JOIN messages AS m ON m.organisation_id = h.organisation_id AND m.seq = h.seq`
        : sql`messages AS m`
      const conditions = (type: string | undefined) =>
        sql.and(type === undefined ? where : [...where, sql`${on("type")} = ${type}`])
      return { walks: walk.walks, from, conditions, seq: on("seq") }
    }

    /**
     * The statement that selects `seq` and `walked` (columns of `m`) of the first `n` matching
     * messages in the order of `take`. On PostgreSQL each walk is ordered on its own, so that several
     * are merged, not sorted, and the rows come in any order; on SQLite in the order of `take`.
     */
    const matching = (query: StoredMessage.MessageQuery, walked: Statement.Fragment, n: number) => {
      const { conditions, from, seq, walks } = walksOf(query)
      const direction = sql.literal(query.take === "oldest" ? "ASC" : "DESC")
      if (!pg) {
        const walkOf = (type: string | undefined) =>
          sql`SELECT ${seq} AS seq, ${walked} FROM ${from} WHERE ${conditions(type)}`
        return sql`${sql.join(" UNION ALL ", false)(walks.map(walkOf))} ORDER BY seq ${direction}
      LIMIT ${n}`
      }
      const walkOf = (type: string | undefined) =>
        sql`SELECT ${seq} AS seq, ${walked} FROM ${from} WHERE ${conditions(type)} ORDER BY ${seq} ${direction}`
      return walks.length === 1
        ? sql`${walkOf(walks[0])} LIMIT ${n}`
        : sql`${
          sql.join(" UNION ALL ", false)(walks.map((type) => sql`(${walkOf(type)})`))
        } ORDER BY seq ${direction} LIMIT ${n}`
    }
    const messageColumns = sql`m.hash AS hash, m.type AS type, m.tradeflow_reference AS tradeflow_reference,
    m.container_reference AS container_reference, m.generated_at AS generated_at, m.body AS body`
    const ascending = <A extends { readonly seq: number }>(rows: ReadonlyArray<A>) =>
      [...rows].sort((a, b) => a.seq - b.seq)

    return MessageStore.MessageStore.of({
      list: Effect.fn("MessageStore.list")(function*(query: StoredMessage.MessageQuery) {
        if (query.types !== undefined && query.types.length === 0) return []
        const n = Math.max(0, Math.floor(query.limit))
        if (!pg) {
          const rows = yield* decodeMessages(yield* matching(query, messageColumns, n))
          return query.take === "oldest" ? rows : [...rows].reverse()
        }
        return ascending(
          yield* decodeMessages(
            yield* sql`SELECT u.seq::float8 AS seq, u.hash, u.type, u.tradeflow_reference, u.container_reference,
            u.generated_at, u.body FROM (${matching(query, messageColumns, n)}) u`
          )
        )
      }, storageError("MessageStore.list")),
      read: Effect.fn("MessageStore.read")(function*(query: StoredMessage.MessageRead) {
        return yield* readRun(
          query,
          (n) =>
            Effect.flatMap(
              pg
                ? sql`SELECT u.seq::float8 AS seq, u.bytes::float8 AS bytes
                FROM (${matching(query, sql`octet_length(m.body) AS bytes`, n)}) u`
                : matching(query, sql`octet_length(m.body) AS bytes`, n),
              decodeBodySizes
            ),
          (seqs) =>
            Effect.flatMap(
              sql`SELECT ${number("m.seq")} AS seq, ${messageColumns} FROM messages AS m
              WHERE m.organisation_id = ${query.organisation_id} AND m.seq IN ${sql.in(seqs)}`,
              decodeMessages
            )
        )
      }, storageError("MessageStore.read")),
      readBodies: Effect.fn("MessageStore.readBodies")(function*(query: StoredMessage.MessageRead) {
        if (query.types !== undefined && query.types.length === 0) return { messages: [], more: false }
        const limit = Math.max(0, Math.floor(query.limit))
        const maxBytes = Math.floor(Math.min(query.max_bytes, Number.MAX_SAFE_INTEGER))
        if (!pg) {
          const small = Math.min(Math.floor(maxBytes / (limit + 1)), 2 ** 31 - 1)
          const joined = yield* decodeJoinedPage(
            yield* sql`SELECT count(*) AS n, group_concat(w.seq, ',') AS seqs, group_concat(CASE WHEN octet_length(w.body) <= ${small} THEN w.body END, char(1)) AS bodies
            FROM (${matching(query, sql`m.body AS body`, limit + 1)}) w
            HAVING count(*) = 0 OR max(octet_length(w.body)) <= ${small}`
          )
          if (joined !== undefined) {
            const more = joined.length > limit
            return {
              messages: more
                ? (query.take === "oldest" ? joined.slice(0, limit) : joined.slice(joined.length - limit))
                : joined,
              more
            }
          }
        }
        const direction = sql.literal(query.take === "oldest" ? "ASC" : "DESC")
        const rows = yield* decodePageBodies(
          yield* sql`SELECT ${number("u.seq")} AS seq,
          CASE WHEN u.n < ${limit} AND (u.n = 0 OR u.before + u.bytes <= ${maxBytes}) THEN u.body END AS body
          FROM (SELECT w.seq AS seq, w.bytes AS bytes, w.body AS body, count(*) OVER f AS n, sum(w.bytes) OVER f AS before
            FROM (${matching(query, sql`octet_length(m.body) AS bytes, m.body AS body`, limit + 1)}) w
            WINDOW f AS (ORDER BY w.seq ${direction} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) u`
        )
        const messages: Array<StoredMessage.MessageBody> = []
        for (const row of rows) if (row.body !== null) messages.push(row as StoredMessage.MessageBody)
        return { messages: messages.sort((a, b) => a.seq - b.seq), more: rows.length > messages.length }
      }, storageError("MessageStore.readBodies")),
      startOf: Effect.fn("MessageStore.startOf")(function*(organisationId: string, since: number) {
        const rows = yield* decodeLastSeq(
          yield* sql`SELECT ${pg ? sql.literal("(") : sql.literal("")}COALESCE(
          (SELECT seq - 1 FROM messages WHERE organisation_id = ${organisationId} AND generated_at >= ${since}
            ORDER BY generated_at, seq LIMIT 1),
          (SELECT last_seq FROM message_sequences WHERE organisation_id = ${organisationId}),
          0)${pg ? sql.literal(")::float8") : sql.literal("")} AS last_seq`
        )
        return rows[0]?.last_seq ?? 0
      }, storageError("MessageStore.startOf"))
    })
  }
)
