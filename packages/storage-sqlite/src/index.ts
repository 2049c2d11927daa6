/**
 * @tradeflow/storage-sqlite: every storage port of `@tradeflow/core` on SQLite.
 *
 * @since 0.1.0
 */
export * as SqliteStorage from "./SqliteStorage.js"
