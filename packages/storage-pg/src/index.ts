/**
 * @tradeflow/storage-pg: every storage port of `@tradeflow/core` on PostgreSQL, for one process or
 * many sharing a database.
 *
 * @module @tradeflow/storage-pg
 */
export * as PgStorage from "./PgStorage.js"
