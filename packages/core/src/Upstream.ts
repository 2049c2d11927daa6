/**
 * Service: the upstream feed.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer } from "effect"
import { MessageStore } from "./MessageStore.js"
import type { StorageError } from "./StorageError.js"
import type { StoredMessage } from "./StoredMessage.js"

/** The filters of `GET /upstream` (already parsed). */
export interface UpstreamQuery {
  readonly organisation_id: string
  readonly since?: number
  readonly tradeflow?: string
  readonly container?: string
  readonly types?: ReadonlyArray<string>
  /** Keep only the newest message per (tradeflow, type, container). */
  readonly latest?: boolean
  /** Remove `payload.shipment` from every message (`excludes=shipment`). */
  readonly exclude_shipment?: boolean
}

/** @since 0.1.0 */
export class Upstream extends Context.Tag("@tradeflow/core/Upstream")<Upstream, {
  /**
   * The 500 most recent matching messages of the last 24 hours, oldest first. `body` of each is
   * the APIMessage as JSON text.
   */
  readonly list: (query: UpstreamQuery) => Effect.Effect<ReadonlyArray<StoredMessage>, StorageError>
}>() {}

/** Messages per poll without pagination (SERVICE.md: the 500 most recent datapoints). */
export const pollLimit = 500

/** The window of a poll without pagination (SERVICE.md: the last 24 hours). */
export const pollWindowMillis = 24 * 60 * 60 * 1000

/** Rows read to apply `latest=true` before the 500-message cut. */
const latestScanLimit = 20_000

const withoutShipment = (message: StoredMessage): StoredMessage => {
  const parsed = JSON.parse(message.body) as { payload?: Record<string, unknown> }
  if (parsed.payload === undefined || !("shipment" in parsed.payload)) return message
  delete parsed.payload["shipment"]
  return { ...message, body: JSON.stringify(parsed) }
}

const newestPerKey = (messages: ReadonlyArray<StoredMessage>): ReadonlyArray<StoredMessage> => {
  const seen = new Set<string>()
  const kept: Array<StoredMessage> = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    const key = JSON.stringify([m.tradeflow_reference, m.type, m.container_reference])
    if (seen.has(key)) continue
    seen.add(key)
    kept.push(m)
  }
  return kept.reverse()
}

/** The upstream feed over the {@link MessageStore} port. */
export const layer: Layer.Layer<Upstream, never, MessageStore> = Layer.effect(Upstream, Effect.gen(function*() {
  const store = yield* MessageStore
  return Upstream.of({
    list: Effect.fn("Upstream.list")(function*(query: UpstreamQuery) {
      const windowStart = (yield* Clock.currentTimeMillis) - pollWindowMillis
      const rows = yield* store.list({
        organisation_id: query.organisation_id,
        since: Math.max(windowStart, query.since ?? windowStart),
        take: "newest",
        limit: query.latest === true ? latestScanLimit : pollLimit,
        ...(query.tradeflow === undefined ? {} : { tradeflow_reference: query.tradeflow }),
        ...(query.container === undefined ? {} : { container_reference: query.container, exclude_types: ["SHIPMENT_CHANGE"] }),
        ...(query.types === undefined ? {} : { types: query.types })
      })
      const selected = query.latest === true ? newestPerKey(rows).slice(-pollLimit) : rows
      return query.exclude_shipment === true ? selected.map(withoutShipment) : selected
    })
  })
}))
