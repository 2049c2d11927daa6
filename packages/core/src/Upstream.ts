/**
 * Service: the upstream feed (DECISIONS.md §5), as a poll of recent messages and as pages that a
 * client walks and resumes with signed cursors.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema, SynchronizedRef } from "effect"
import { ApiMessage } from "./ApiMessage.js"
import * as Cursor from "./Cursor.js"
import { withoutShipment } from "./internal/withoutShipment.js"
import { MessageStore } from "./MessageStore.js"
import type { Settings } from "./Settings.js"
import type { StorageError } from "./StorageError.js"
import type { MessageBody, MessageQuery, MessageRead, StoredMessage } from "./StoredMessage.js"

/** The cursor module (`InvalidCursor`, `CursorSecret`, `layerConfig`), reachable through this one. */
export * as Cursor from "./Cursor.js"

/** The filters of `GET /upstream` (already parsed). They combine with AND. */
export interface UpstreamFilters {
  readonly organisation_id: string
  /** Only messages of this tradeflow reference. */
  readonly tradeflow?: string
  /** Only messages about this container; never SHIPMENT_CHANGE. */
  readonly container?: string
  /** Only these message types. */
  readonly types?: ReadonlyArray<string>
  /** Keep only the newest message per (tradeflow, type, container) among all messages. */
  readonly latest?: boolean
  /** Remove `payload.shipment` from every message (`excludes=shipment`). */
  readonly exclude_shipment?: boolean
}

/** A poll without pagination. */
export interface UpstreamQuery extends UpstreamFilters {
  /** Narrows the 24-hour window (epoch ms); never widens it. */
  readonly since?: number
}

/** A page of the paginated feed. */
export interface PageQuery extends UpstreamFilters {
  /** Messages per page, 1 to {@link maxPerPage} (values outside are clamped). */
  readonly per_page: number
  /** The `next_cursor` of a previous page; it resumes there. Without it, this is the first page. */
  readonly cursor?: string
  /** First page only (ignored with a cursor): the page starts at the first message generated at or after it. */
  readonly since?: number
}

/**
 * A page as `GET /upstream?per_page=…` answers it: {@link Page} with each stored body as the
 * APIMessage it holds.
 */
export const UpstreamPage = Schema.Struct({
  data: Schema.Array(ApiMessage),
  next_cursor: Schema.String.annotations({ description: "Resumes after the last message of data; always present" }),
  has_more: Schema.Boolean.annotations({ description: "Whether more matching messages follow right now" })
}).annotations({ identifier: "UpstreamPage" })
export type UpstreamPage = typeof UpstreamPage.Type

/** One page: `next_cursor` is always present and resumes after the last message of `data`. */
export interface Page {
  readonly data: ReadonlyArray<StoredMessage>
  readonly next_cursor: string
  /** Whether more matching messages follow right now (the page was cut by `per_page` or by the byte cap). */
  readonly has_more: boolean
}

/** A page as {@link Upstream} `pageBodies` answers it: {@link Page} with each message as its seq and body. */
export interface BodyPage {
  readonly data: ReadonlyArray<MessageBody>
  readonly next_cursor: string
  readonly has_more: boolean
}

export class Upstream extends Context.Tag("@tradeflow/core/Upstream")<Upstream, {
  /**
   * The 500 most recent matching messages generated in the last 24 hours (`since` narrows the
   * window), oldest first, fewer when their bodies would pass the byte cap ({@link UpstreamOptions}):
   * then the most recent that fit. `body` of each is the APIMessage as JSON text. The window is a
   * stretch of the log: from the earliest message generated in it (`MessageStore.startOf`) on, the
   * messages generated in it; the newest are read back from the end, so a busy organisation's
   * window of millions of rows costs what a quiet one's does.
   */
  readonly list: (query: UpstreamQuery) => Effect.Effect<ReadonlyArray<StoredMessage>, StorageError>
  /**
   * One page of the matching messages in ascending sequence, at most `per_page` and at most the
   * byte cap ({@link UpstreamOptions}; the first message always comes), walked by keyset over the
   * organisation's sequence numbers (never an offset). The first page (no cursor) starts at the
   * beginning of the retained history, or with `since` where the log reaches it: at the earliest
   * message generated at or after it (`MessageStore.startOf`), or after the last message when none
   * was; neither `since` nor the 24-hour window applies to later pages, so a cursor reaches the
   * whole retained history. `next_cursor` resumes after the last message returned (after an empty
   * page it stays where it was), so a client that stores it and polls again later gets exactly the
   * messages generated since: no duplicates, no gaps. A cursor is bound to the organisation and
   * to `tradeflow`, `container`, `types` (as a set) and `latest`; anything else fails with
   * {@link Cursor.InvalidCursor}.
   */
  readonly page: (query: PageQuery) => Effect.Effect<Page, StorageError | Cursor.InvalidCursor>
  /**
   * The same page as `page` (the same messages, `next_cursor` and `has_more`), each message as its
   * seq and body alone (`MessageStore.readBodies`): what `GET /upstream?per_page=…` writes out.
   */
  readonly pageBodies: (query: PageQuery) => Effect.Effect<BodyPage, StorageError | Cursor.InvalidCursor>
}>() {}

/** Messages per poll without pagination (SERVICE.md: the 500 most recent datapoints). */
export const pollLimit = 500

/** The window of a poll without pagination (SERVICE.md: the last 24 hours). */
export const pollWindowMillis = 24 * 60 * 60 * 1000

/** The largest `per_page`. */
export const maxPerPage = 500

/** The default of {@link UpstreamOptions.maxBytes}: 8 MiB. */
export const defaultMaxBytes = 8 * 1024 * 1024

/** Options of {@link layer}. */
export interface UpstreamOptions {
  /**
   * The most message bytes one answer (a page or a poll) holds: the stored bodies, as UTF-8
   * (default {@link defaultMaxBytes}). The answer ends before the first message that would pass
   * it; the first message always comes, so a larger one is answered alone.
   */
  readonly maxBytes?: number
}

const storeFilters = (q: UpstreamFilters) => ({
  organisation_id: q.organisation_id,
  ...(q.tradeflow === undefined ? {} : { tradeflow_reference: q.tradeflow }),
  ...(q.container === undefined ? {} : { container_reference: q.container, exclude_types: ["SHIPMENT_CHANGE"] }),
  ...(q.types === undefined ? {} : { types: Cursor.normaliseTypes(q.types) }),
  ...(q.latest === true ? { latest: true } : {})
} satisfies Partial<MessageQuery>)

const scopeOf = (q: UpstreamFilters): Cursor.CursorScope => ({
  organisation_id: q.organisation_id,
  tradeflow: q.tradeflow,
  container: q.container,
  types: q.types,
  latest: q.latest
})

const shaped = <A extends { readonly body: string }>(
  q: UpstreamFilters,
  messages: ReadonlyArray<A>
): ReadonlyArray<A> =>
  q.exclude_shipment === true ? messages.map((m) => ({ ...m, body: withoutShipment(m.body) })) : messages

/**
 * The cursor signer: over the configured {@link Cursor.CursorSecret} when the context has one,
 * otherwise over the secret stored through the Settings port, read at the first use (a failed read
 * is retried on the next use).
 */
const signerOf = Effect.gen(function*() {
  const configured = yield* Effect.serviceOption(Cursor.CursorSecret)
  if (Option.isSome(configured)) {
    const signer = yield* Cursor.makeSigner(configured.value)
    return Effect.succeed(signer)
  }
  const stored = yield* Effect.context<Settings>()
  const ref = yield* SynchronizedRef.make(Option.none<Cursor.Signer>())
  return SynchronizedRef.modifyEffect(ref, (current) =>
    Option.isSome(current)
      ? Effect.succeed([current.value, current] as const)
      : Cursor.storedSecret.pipe(
        Effect.flatMap(Cursor.makeSigner),
        Effect.map((signer) => [signer, Option.some(signer)] as const),
        Effect.provide(stored)
      ))
})

/**
 * The upstream feed over the {@link MessageStore} port. Cursors are signed with the
 * {@link Cursor.CursorSecret} of the context when one is provided (for example
 * `Cursor.layerSecret` or `Cursor.layerConfig`), otherwise with a secret generated once and stored
 * through the {@link Settings} port, so every process sharing the database accepts every cursor.
 */
export const layer = (options: UpstreamOptions = {}): Layer.Layer<Upstream, never, MessageStore | Settings> =>
  Layer.effect(
    Upstream,
    Effect.gen(function*() {
      const store = yield* MessageStore
      const signer = yield* signerOf
      const max_bytes = options.maxBytes ?? defaultMaxBytes
      const pageOf = <A extends { readonly seq: number; readonly body: string }>(
        query: PageQuery,
        read: (
          query: MessageRead
        ) => Effect.Effect<{ readonly messages: ReadonlyArray<A>; readonly more: boolean }, StorageError>
      ) =>
        Effect.gen(function*() {
          const perPage = Math.min(maxPerPage, Math.max(1, Math.floor(query.per_page)))
          const filters = storeFilters(query)
          const cursors = yield* (yield* signer).scoped(scopeOf(query))
          let after = 0
          if (query.cursor !== undefined) {
            after = yield* cursors.verify(query.cursor)
          } else if (query.since !== undefined) {
            after = yield* store.startOf(query.organisation_id, query.since)
          }
          const run = yield* read({ ...filters, after_seq: after, take: "oldest", limit: perPage, max_bytes })
          const last = run.messages[run.messages.length - 1]
          return {
            data: shaped(query, run.messages),
            next_cursor: yield* cursors.sign(last === undefined ? after : last.seq),
            has_more: run.more
          }
        })
      return Upstream.of({
        list: Effect.fn("Upstream.list")(function*(query: UpstreamQuery) {
          const windowStart = (yield* Clock.currentTimeMillis) - pollWindowMillis
          const since = Math.max(windowStart, query.since ?? windowStart)
          const after_seq = yield* store.startOf(query.organisation_id, since)
          const run = yield* store.read({
            ...storeFilters(query),
            since,
            after_seq,
            take: "newest",
            limit: pollLimit,
            max_bytes
          })
          return shaped(query, run.messages)
        }),
        page: Effect.fn("Upstream.page")(function*(query: PageQuery) {
          return yield* pageOf(query, store.read)
        }),
        pageBodies: Effect.fn("Upstream.pageBodies")(function*(query: PageQuery) {
          return yield* pageOf(query, store.readBodies)
        })
      })
    })
  )
