/**
 * @tradeflow/storage-sqlite: every storage port of `@tradeflow/core` on SQLite.
 *
 * @module @tradeflow/storage-sqlite
 */
export * as SqliteStorage from "./SqliteStorage.js"
