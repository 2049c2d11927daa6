/**
 * Upstream messages as the storage ports see them: the rendered APIMessage as JSON text plus
 * the columns the upstream filters need.
 *
 * @since 0.1.0
 */

/** A rendered message, not yet stored. */
export interface NewMessage {
  readonly hash: string
  readonly type: string
  readonly tradeflow_reference: string
  /** The container a message is about; null for SHIPMENT_CHANGE and tradeflow-level messages. */
  readonly container_reference: string | null
  /** Epoch milliseconds (`message_generated_event_date`). */
  readonly generated_at: number
  /** The APIMessage, JSON-encoded. */
  readonly body: string
}

/** A stored message with its per-organisation sequence number (ascending = oldest first). */
export interface StoredMessage extends NewMessage {
  readonly seq: number
}

/** What `MessageStore.list` selects. Every filter is optional; they combine with AND. */
export interface MessageQuery {
  readonly organisation_id: string
  /** Only messages generated at or after this instant (epoch ms). */
  readonly since?: number
  readonly tradeflow_reference?: string
  readonly container_reference?: string
  /** Only these types. */
  readonly types?: ReadonlyArray<string>
  /** Never these types. */
  readonly exclude_types?: ReadonlyArray<string>
  /**
   * Only messages that are, at query time, the newest (highest seq) of their
   * (tradeflow_reference, type, container_reference) among ALL the organisation's messages.
   */
  readonly latest?: boolean
  /** Only messages with a sequence number greater than this. */
  readonly after_seq?: number
  /** `newest` returns the `limit` highest sequence numbers; either way results are ascending. */
  readonly take: "oldest" | "newest"
  readonly limit: number
}
