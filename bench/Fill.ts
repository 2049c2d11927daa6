/**
 * The message fills of the upstream benchmarks: `total` messages of one organisation (4 types
 * round-robin, ~470 byte bodies, message i generated `total - i` ms before the fill started),
 * written through `TradeflowStore.commit` ({@link commitFill}) or with bulk `INSERT … SELECT`
 * statements ({@link bulkFill}, PostgreSQL and SQLite) that produce the same rows. No
 * environment variables: the scripts that use it pass the sizes.
 */
import { SqlClient } from "@effect/sql"
import { JobQueue, TradeflowStore } from "@tradeflow/core"
import { Effect } from "effect"

/** Queues a job that changes nothing, for the fill's commits to complete; answers its id. */
const markerJob = (organisationId: string, now: number) =>
  Effect.flatMap(JobQueue.JobQueue, (queue) =>
    queue.enqueue({
      organisation_id: organisationId,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: now
    })).pipe(Effect.flatMap((outcome) =>
      outcome._tag === "Enqueued" ? Effect.succeed(outcome.id) : Effect.dieMessage("enqueue failed")
    ))

/** The message types of the fill, message i having `messageTypes[i % 4]`. */
export const messageTypes = ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"] as const

/** The stored body of message i. */
export const messageBody = (i: number, type: string, generatedAt: number): string =>
  JSON.stringify({
    hash: `h${i}`,
    message_generated_event_date: new Date(generatedAt).toISOString(),
    type,
    tradeflow_reference: `TF-${i % 1000}`,
    payload: {
      type: type === "CONTAINER_MILESTONE" ? "CONTAINER_MILESTONES" : type,
      status_code: "VA",
      event_date: new Date(generatedAt).toISOString(),
      location: {
        name: "Rotterdam",
        unlocode: "NLRTM",
        timezone: "Europe/Amsterdam",
        country: { name: "Netherlands", iso_a2: "NL" }
      },
      shipment: {
        containers: [{ reference: "MSCU1234565", container_type: "45G1", container_length: 40 }],
        transport_plan_legs: []
      }
    }
  })

/** The SQLite fill: the messages go through TradeflowStore.commit, one enqueued job per batch of `batchSize`. */
export const commitFill = (organisationId: string, options: { readonly total: number; readonly batchSize: number }) =>
  Effect.gen(function*() {
    const { total, batchSize } = options
    const store = yield* TradeflowStore.TradeflowStore
    const now = Date.now()
    for (let from = 0; from < total; from += batchSize) {
      const jobId = yield* markerJob(organisationId, now)
      const batch = Array.from({ length: Math.min(batchSize, total - from) }, (_, k) => {
        const i = from + k
        const type = messageTypes[i % messageTypes.length]!
        const generatedAt = now - (total - i)
        return {
          hash: `h${i}`,
          type,
          tradeflow_reference: `TF-${i % 1000}`,
          container_reference: type === "CONTAINER_MILESTONE" ? "MSCU1234565" : null,
          generated_at: generatedAt,
          body: messageBody(i, type, generatedAt)
        }
      })
      yield* store.commit({
        job_id: jobId,
        organisation_id: organisationId,
        upserts: [],
        deletes: [],
        messages: batch,
        result: { count: 0 }
      })
      if ((from / batchSize) % 10 === 0) console.log(`filled ${from + batch.length} / ${total}`)
    }
  })

/** The ISO 8601 text of the epoch milliseconds `ms` (an integer SQL expression), as `Date.toISOString`. */
const isoSql = (pg: boolean, ms: string) =>
  pg
    ? `to_char(to_timestamp(div(${ms}, 1000)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad(mod(${ms}, 1000)::text, 3, '0') || 'Z'`
    : `strftime('%Y-%m-%dT%H:%M:%S', ${ms} / 1000, 'unixepoch') || '.' || printf('%03d', ${ms} % 1000) || 'Z'`

/**
 * The bulk fill, on PostgreSQL and SQLite: the same rows as {@link commitFill} (same hashes, types,
 * references, timestamps and byte-identical bodies; message i gets seq i + 1), written with bulk
 * `INSERT … SELECT` statements of `chunk` rows over `generate_series` (PostgreSQL) or a recursive
 * CTE (SQLite), then the organisation's `message_sequences` counter set to the last seq, the
 * `message_heads` of `latest` filled as the commits would have, one job marked done (so the queue
 * looks used), on PostgreSQL `VACUUM (ANALYZE)` (as autovacuum would; SQLite is left without
 * statistics, as the server leaves it). A sample of the rows is compared with the JavaScript ones.
 */
export const bulkFill = (organisationId: string, options: { readonly total: number; readonly chunk: number }) =>
  Effect.gen(function*() {
    const { total, chunk } = options
    const types = messageTypes
    const sql = yield* SqlClient.SqlClient
    const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    const names = ["", "organisation", "now", "total", "from", "to"]
    const p = (n: number) => pg ? `$${n}` : `@${names[n]}`
    const int = (n: number) => pg ? `$${n}::bigint` : `CAST(@${names[n]} AS INTEGER)`
    const params = (organisation: string, from: number, to: number): ReadonlyArray<unknown> =>
      pg ? [organisation, now, total, from, to] : [{ organisation, now, total, from, to }]
    const now = Date.now()
    const typeAt = pg
      ? `(ARRAY['${types.join("','")}'])[mod(g.i, ${types.length}) + 1]`
      : `CASE g.i % ${types.length} ${types.map((t, k) => `WHEN ${k} THEN '${t}'`).join(" ")} END`
    const rowsSql = pg
      ? `SELECT g.i, ${typeAt} AS type, (${int(2)} - (${int(3)} - g.i)) AS at
      FROM generate_series(${int(4)}, ${int(5)}) AS g(i)`
      : `WITH RECURSIVE g(i) AS (SELECT ${int(4)} UNION ALL SELECT i + 1 FROM g WHERE i < ${int(5)})
      SELECT g.i AS i, ${typeAt} AS type, (${int(2)} - (${int(3)} - g.i)) AS at FROM g`
    const location =
      `{"name":"Rotterdam","unlocode":"NLRTM","timezone":"Europe/Amsterdam","country":{"name":"Netherlands","iso_a2":"NL"}}`
    const shipment =
      `{"containers":[{"reference":"MSCU1234565","container_type":"45G1","container_length":40}],"transport_plan_legs":[]}`
    const mod = (a: string, b: number) => pg ? `mod(${a}, ${b})` : `(${a} % ${b})`
    const statement =
      `INSERT INTO messages (organisation_id, seq, hash, type, tradeflow_reference, container_reference, generated_at, body)
      SELECT ${p(1)}, r.i + 1, 'h' || r.i, r.type, 'TF-' || ${
        mod("r.i", 1000)
      }, CASE WHEN r.type = 'CONTAINER_MILESTONE' THEN 'MSCU1234565' END,
        ${pg ? "r.at::float8" : "r.at"},
        '{"hash":"h' || r.i || '","message_generated_event_date":"' || ${
        isoSql(pg, "r.at")
      } || '","type":"' || r.type ||
        '","tradeflow_reference":"TF-' || ${mod("r.i", 1000)} || '","payload":{"type":"' ||
        CASE WHEN r.type = 'CONTAINER_MILESTONE' THEN 'CONTAINER_MILESTONES' ELSE r.type END ||
        '","status_code":"VA","event_date":"' || ${
        isoSql(pg, "r.at")
      } || '","location":${location},"shipment":${shipment}}}'
      FROM (${rowsSql}) AS r`
    for (let from = 0; from < total; from += chunk) {
      const to = Math.min(total, from + chunk) - 1
      yield* sql.unsafe(statement, params(organisationId, from, to))
      console.log(`filled ${to + 1} / ${total}`)
    }
    yield* sql`INSERT INTO message_sequences (organisation_id, last_seq) VALUES (${organisationId}, ${total})
      ON CONFLICT (organisation_id) DO UPDATE SET last_seq = excluded.last_seq`
    yield* sql`INSERT INTO message_heads (organisation_id, tradeflow_reference, type, container_reference, seq)
      SELECT organisation_id, tradeflow_reference, type, container_reference, MAX(seq) FROM messages
      WHERE organisation_id = ${organisationId} GROUP BY organisation_id, tradeflow_reference, type, container_reference`
    const store = yield* TradeflowStore.TradeflowStore
    const jobId = yield* markerJob(organisationId, now)
    yield* store.commit({
      job_id: jobId,
      organisation_id: organisationId,
      upserts: [],
      deletes: [],
      messages: [],
      result: { count: 0 }
    })
    if (pg) {
      console.log("VACUUM (ANALYZE) messages, message_heads")
      yield* sql.unsafe("VACUUM (ANALYZE) messages, message_heads")
    }
    const samples = [0, 1, 2, 3, 999, 123_457, Math.floor(total / 2), total - 1].filter((i) => i >= 0 && i < total)
    const stored = yield* sql.unsafe<
      {
        seq: number
        hash: string
        type: string
        tradeflow_reference: string
        container_reference: string | null
        generated_at: number
        body: string
      }
    >(
      `SELECT ${
        pg ? "seq::float8" : "seq"
      } AS seq, hash, type, tradeflow_reference, container_reference, generated_at, body
        FROM messages WHERE organisation_id = ${p(1)} AND seq IN (${
        samples.map((i) => i + 1).join(", ")
      }) ORDER BY seq`,
      pg ? [organisationId] : [{ organisation: organisationId }]
    )
    if (stored.length !== samples.length) {
      return yield* Effect.dieMessage(`sample: ${stored.length} rows, expected ${samples.length}`)
    }
    for (const row of stored) {
      const i = row.seq - 1
      const type = types[i % types.length]!
      const at = now - (total - i)
      const expected = {
        hash: `h${i}`,
        type,
        tradeflow_reference: `TF-${i % 1000}`,
        container_reference: type === "CONTAINER_MILESTONE" ? "MSCU1234565" : null,
        generated_at: at,
        body: messageBody(i, type, at)
      }
      const actual = {
        hash: row.hash,
        type: row.type,
        tradeflow_reference: row.tradeflow_reference,
        container_reference: row.container_reference,
        generated_at: row.generated_at,
        body: row.body
      }
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        return yield* Effect.dieMessage(
          `row ${i} differs from the JavaScript fill:\n${JSON.stringify(actual)}\n${JSON.stringify(expected)}`
        )
      }
    }
    const counter = yield* sql.unsafe<{ last_seq: number; count: number }>(
      pg
        ? `SELECT (SELECT last_seq::float8 FROM message_sequences WHERE organisation_id = $1) AS last_seq,
          (SELECT count(*)::float8 FROM messages WHERE organisation_id = $1) AS count`
        : `SELECT (SELECT last_seq FROM message_sequences WHERE organisation_id = @organisation) AS last_seq,
          (SELECT count(*) FROM messages WHERE organisation_id = @organisation) AS count`,
      pg ? [organisationId] : [{ organisation: organisationId }]
    )
    if (counter[0]?.last_seq !== total || counter[0]?.count !== total) {
      return yield* Effect.dieMessage(`counter ${JSON.stringify(counter[0])}, expected ${total}`)
    }
  })
