import { SqlClient } from "@effect/sql"
import { TrackingStore } from "@tradeflow/core"
import { Effect, Option } from "effect"
import {
  chunks,
  decodeDueTargets,
  decodeRawEvents,
  decodeSubscriptions,
  decodeTargetsAbout,
  roundRobin,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"
import type { SqlStorageOptions } from "./options.js"

/**
 * `TrackingStore` over the `SqlClient`. The index rows are written by the commits
 * (`TradeflowStore`); a claim ranks the due rows (next check at or before `now`, not leased, source
 * not excluded) round-robin across organisations with a window function over the due index
 * (`tracking_targets_due`) and leases the first `limit` in one `UPDATE … RETURNING`. On PostgreSQL the
 * rows are locked `FOR UPDATE SKIP LOCKED` in ranked order before the limit applies (a row another
 * claimer holds is passed over, not counted), and the update checks again that each row is due and
 * not leased: the ranking reads the statement's snapshot, the lock the row's newest version. SQLite
 * has one writer, and the statement is its own transaction; its lease write may skip durability
 * (`options.relaxed`).
 *
 * Subscriptions are rows of `tracking_subscriptions` by source and id, which no commit touches: a
 * hard delete of their tradeflow leaves them (they are removed at their source first), and they
 * become stale. The stale search walks them oldest first (`tracking_subscriptions_created`) and
 * probes each one's target by primary key, up to the limit: a subscription joined to no target that
 * has a next check. Written so (the next check in the join, the key tested for null), PostgreSQL
 * plans it as an anti join, which it takes, without statistics, to keep most subscriptions, and so
 * walks them in order; with `t.next_check_at IS NULL` after the join it took the filter for 0.5 %
 * of the rows, and scanned and sorted both tables.
 *
 * `targetsAbout` searches the references a commit writes beside each target's query, one statement
 * for up to a chunk of references of any kinds: `source = ? AND (equipment IN (…) OR booking IN (…)
 * OR bill_of_lading IN (…))`, each kind a search of its own partial index by (source, reference)
 * (`tracking_targets_equipment`, `_booking`, `_bill_of_lading`), the rows found read by primary key.
 * A target found by several references (or chunks) is answered once.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<TrackingStore.TrackingStore["Type"], never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { chunk, insertionOrder, pg } = dialectOf(sql)
    const relaxed = options.relaxed ?? ((effect) => effect)
    const indexColumns = [
      "organisation_id",
      "tradeflow_reference",
      "target_id",
      "source",
      "query",
      "high_water",
      "next_check_at"
    ]
    const returned = sql.literal(indexColumns.map((c) => pg ? `t.${c}` : c).join(", "))

    /**
     * The condition of a claimable row of `alias` at `now`. "Has a next check" is written as a range
     * from the lowest number (every stored next check is finite) rather than `IS NOT NULL`: PostgreSQL
     * without statistics (a table filled since its last ANALYZE) takes a range for a small part of the
     * table, and searches the due index; `IS NOT NULL AND <= now` it took for a third, and scanned it.
     */
    const claimable = (alias: string, now: number, exclude: ReadonlyArray<string>) => {
      const c = (column: string) => sql.literal(`${alias}.${column}`)
      return sql`${c("next_check_at")} >= ${-Number.MAX_VALUE} AND ${c("next_check_at")} <= ${now}
        AND (${c("lease_until")} IS NULL OR ${c("lease_until")} <= ${now})${
        exclude.length === 0 ? sql`` : sql` AND ${c("source")} NOT IN ${sql.in(exclude)}`
      }`
    }

    /** Every claimable row with its turn: its rank among its organisation's claimable rows, soonest first. */
    const ranked = (now: number, exclude: ReadonlyArray<string>) =>
      sql`SELECT d.organisation_id, d.tradeflow_reference, d.target_id, d.next_check_at,
        ROW_NUMBER() OVER (PARTITION BY d.organisation_id ORDER BY d.next_check_at, d.tradeflow_reference, d.target_id)
          AS turn
      FROM tracking_targets d WHERE ${claimable("d", now, exclude)}`

    const order = sql.literal(
      "r.turn, r.next_check_at, r.organisation_id, r.tradeflow_reference, r.target_id"
    )

    const claimStatement = (now: number, limit: number, until: number, exclude: ReadonlyArray<string>) =>
      pg
        ? sql`WITH picked AS (
            SELECT c.organisation_id, c.tradeflow_reference, c.target_id
            FROM (${ranked(now, exclude)}) r
            JOIN tracking_targets c ON c.organisation_id = r.organisation_id
              AND c.tradeflow_reference = r.tradeflow_reference AND c.target_id = r.target_id
            WHERE ${claimable("c", now, exclude)}
            ORDER BY ${order} LIMIT ${limit}
            FOR UPDATE OF c SKIP LOCKED
          )
          UPDATE tracking_targets t SET lease_until = ${until}
          FROM picked p
          WHERE t.organisation_id = p.organisation_id AND t.tradeflow_reference = p.tradeflow_reference
            AND t.target_id = p.target_id AND ${claimable("t", now, exclude)}
          RETURNING ${returned}`
        : relaxed(sql`UPDATE tracking_targets SET lease_until = ${until}
          WHERE (organisation_id, tradeflow_reference, target_id) IN (
            SELECT r.organisation_id, r.tradeflow_reference, r.target_id FROM (${ranked(now, exclude)}) r
            ORDER BY ${order} LIMIT ${limit})
          RETURNING ${returned}`)

    /** The columns of the references a target asks about, in the order of the port's parameter. */
    const referenceColumns = ["equipment", "booking", "bill_of_lading"] as const
    const targetColumns = sql.literal(indexColumns.join(", "))

    const subscriptionColumns = sql.literal(
      ["source", "subscription_id", "organisation_id", "tradeflow_reference", "target_id", "secret", "created_at"]
        .map((c) => `s.${c}`).join(", ")
    )

    return TrackingStore.TrackingStore.of({
      claim: Effect.fn("TrackingStore.claim")(function*(claim: TrackingStore.ClaimTargets) {
        const limit = Math.max(0, Math.floor(claim.limit))
        if (limit === 0) return []
        const until = claim.now + claim.leaseMillis
        const rows = yield* decodeDueTargets(
          yield* claimStatement(claim.now, limit, until, [...new Set(claim.exclude ?? [])])
        )
        return roundRobin(rows)
      }, storageError("TrackingStore.claim")),
      putSubscription: Effect.fn("TrackingStore.putSubscription")(
        function*(s: TrackingStore.StoredSubscription) {
          yield* sql`INSERT INTO tracking_subscriptions ${
            sql.insert({
              source: s.source,
              subscription_id: s.subscription_id,
              organisation_id: s.organisation_id,
              tradeflow_reference: s.tradeflow_reference,
              target_id: s.target_id,
              secret: s.secret,
              created_at: s.created_at
            })
          }
          ON CONFLICT (source, subscription_id) DO UPDATE SET organisation_id = excluded.organisation_id,
            tradeflow_reference = excluded.tradeflow_reference, target_id = excluded.target_id,
            secret = excluded.secret, created_at = excluded.created_at`
        },
        storageError("TrackingStore.putSubscription")
      ),
      subscription: Effect.fn("TrackingStore.subscription")(function*(source: string, subscriptionId: string) {
        const rows = yield* decodeSubscriptions(
          yield* sql`SELECT ${subscriptionColumns} FROM tracking_subscriptions s
          WHERE s.source = ${source} AND s.subscription_id = ${subscriptionId}`
        )
        return Option.fromNullable(rows[0])
      }, storageError("TrackingStore.subscription")),
      subscriptionsOf: Effect.fn("TrackingStore.subscriptionsOf")(function*(organisationId: string, reference: string) {
        return yield* decodeSubscriptions(
          yield* sql`SELECT ${subscriptionColumns} FROM tracking_subscriptions s
          WHERE s.organisation_id = ${organisationId} AND s.tradeflow_reference = ${reference}
          ORDER BY s.source, s.subscription_id`
        )
      }, storageError("TrackingStore.subscriptionsOf")),
      staleSubscriptions: Effect.fn("TrackingStore.staleSubscriptions")(function*(limit: number) {
        return yield* decodeSubscriptions(
          yield* sql`SELECT ${subscriptionColumns} FROM tracking_subscriptions s
          LEFT JOIN tracking_targets t ON t.organisation_id = s.organisation_id
            AND t.tradeflow_reference = s.tradeflow_reference AND t.target_id = s.target_id
            AND t.next_check_at IS NOT NULL
          WHERE t.target_id IS NULL
          ORDER BY s.created_at, s.source, s.subscription_id LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("TrackingStore.staleSubscriptions")),
      removeSubscription: Effect.fn("TrackingStore.removeSubscription")(
        function*(source: string, subscriptionId: string) {
          yield* sql`DELETE FROM tracking_subscriptions WHERE source = ${source} AND subscription_id = ${subscriptionId}`
        },
        storageError("TrackingStore.removeSubscription")
      ),
      targetsAbout: Effect.fn("TrackingStore.targetsAbout")(function*(
        source: string,
        references: Parameters<TrackingStore.TrackingStore["Type"]["targetsAbout"]>[1]
      ) {
        const asked = referenceColumns.flatMap((column) =>
          [...new Set(references[column])].map((value) => [column, value] as const)
        )
        const found = new Map<string, TrackingStore.DueTarget & { readonly stopped: boolean }>()
        for (const part of chunks(asked, chunk)) {
          const any = referenceColumns.flatMap((column) => {
            const values = part.filter(([c]) => c === column).map(([, value]) => value)
            return values.length === 0 ? [] : [sql.in(column, values)]
          })
          for (
            const row of yield* decodeTargetsAbout(
              yield* sql`SELECT ${targetColumns} FROM tracking_targets WHERE source = ${source} AND ${sql.or(any)}`
            )
          ) found.set(JSON.stringify([row.organisation_id, row.tradeflow_reference, row.target_id]), row)
        }
        return [...found.values()]
      }, storageError("TrackingStore.targetsAbout")),
      rawEvents: Effect.fn("TrackingStore.rawEvents")(
        function*(organisationId: string, reference: string, limit: number) {
          return yield* decodeRawEvents(
            yield* sql`SELECT tradeflow_reference, source, event_id, updated_at, received_at, raw FROM tracking_events
          WHERE organisation_id = ${organisationId} AND tradeflow_reference = ${reference}
          ORDER BY received_at, ${insertionOrder} LIMIT ${Math.max(0, Math.floor(limit))}`
          )
        },
        storageError("TrackingStore.rawEvents")
      )
    })
  })
