import type { SqlClient } from "@effect/sql"

/**
 * The candidates of `TradeflowStore.lookup`: the tradeflows of the organisation having any of the
 * keys, read from the primary key of `tradeflow_keys` alone (a covering index, `WITHOUT ROWID`).
 */
export const lookupStatement = (sql: SqlClient.SqlClient, organisationId: string, keys: ReadonlyArray<string>) =>
  sql`SELECT tradeflow_reference AS reference, created_at, updated_at FROM tradeflow_keys
    WHERE organisation_id = ${organisationId} AND ${sql.in("key", keys)}`
