/**
 * Service: the upstream feed.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect } from "effect"
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
