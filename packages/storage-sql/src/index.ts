/**
 * @tradeflow/storage-sql: every storage port of `@tradeflow/core` implemented once over
 * `@effect/sql`'s `SqlClient`, for the SQLite and PostgreSQL dialects.
 *
 * @module @tradeflow/storage-sql
 */
export * as SqlStorage from "./SqlStorage.js"
export * as StorageRows from "./StorageRows.js"
