/**
 * Port: reading the upstream message log.
 *
 * @module
 */
import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"
import type { BodyRun, MessageQuery, MessageRead, MessageRun, StoredMessage } from "./StoredMessage.js"

export class MessageStore extends Context.Tag("@tradeflow/core/MessageStore")<MessageStore, {
  /** Matching messages in ascending sequence order (see {@link MessageQuery.take}). */
  readonly list: (query: MessageQuery) => Effect.Effect<ReadonlyArray<StoredMessage>, StorageError>
  /**
   * What `list` selects, cut short once the bodies reach `max_bytes` (see {@link MessageRead}),
   * and whether more matching messages follow: what one answer of the upstream feed reads.
   */
  readonly read: (query: MessageRead) => Effect.Effect<MessageRun, StorageError>
  /**
   * What `read` answers, each message as its seq and body alone: what the answers of the upstream
   * feed are written from (no other column is read). The SQLite store reads the `limit + 1`
   * candidates once: when each body is within `max_bytes / (limit + 1)` bytes, all of them leave the
   * database as one text (at most `max_bytes`); otherwise none does. Then, and always on
   * PostgreSQL, a statement ranking the candidates hands over only the bodies that fit.
   */
  readonly readBodies: (query: MessageRead) => Effect.Effect<BodyRun, StorageError>
  /**
   * Where the log of an organisation from the instant `since` on starts, as an `after_seq`: one
   * less than the seq of the earliest message generated at or after `since` (the lowest seq among
   * equal instants), or, when there is none, the last seq the organisation has used (0 before its
   * first message). One index lookup, however long the log.
   */
  readonly startOf: (organisation_id: string, since: number) => Effect.Effect<number, StorageError>
}>() {}
