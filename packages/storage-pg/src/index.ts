/**
 * @tradeflow/storage-pg: every storage port of `@tradeflow/core` on PostgreSQL, for one process or
 * many sharing a database.
 *
 * @since 0.1.0
 */
export * as PgStorage from "./PgStorage.js"
