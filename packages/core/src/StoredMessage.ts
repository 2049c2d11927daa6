/**
 * Upstream messages as the storage ports see them: the rendered APIMessage as JSON text plus
 * the columns the upstream filters need.
 *
 * @module
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

/** What `MessageStore.read` selects: a {@link MessageQuery} bounded in body bytes too. */
export interface MessageRead extends MessageQuery {
  /**
   * The bodies returned total at most this many bytes ({@link byteLength}), except that the first
   * matching message always comes back (alone when it is larger). The run ends before the first
   * message that does not fit; the store reads the bodies it returns and no others.
   */
  readonly max_bytes: number
}

/** What `MessageStore.read` answers: the messages, ascending seq, and whether the run was cut short. */
export interface MessageRun {
  readonly messages: ReadonlyArray<StoredMessage>
  /** Whether another matching message follows the run in the order of `take` (cut by `limit` or `max_bytes`). */
  readonly more: boolean
}

/** A stored message as an answer of the upstream feed needs it: its sequence number and its body. */
export interface MessageBody {
  readonly seq: number
  /** The APIMessage, JSON-encoded. */
  readonly body: string
}

/** What `MessageStore.readBodies` answers: a {@link MessageRun} of {@link MessageBody}s. */
export interface BodyRun {
  readonly messages: ReadonlyArray<MessageBody>
  /** Whether another matching message follows the run in the order of `take` (cut by `limit` or `max_bytes`). */
  readonly more: boolean
}

/** The size of a body as `max_bytes` counts it: its UTF-8 length (a lone surrogate counts 3, as its U+FFFD does). */
export const byteLength = (body: string): number => {
  let bytes = body.length
  for (let i = 0; i < body.length; i++) {
    const unit = body.charCodeAt(i)
    if (unit < 0x80) continue
    if (unit < 0x800) {
      bytes += 1
    } else if (unit >= 0xd800 && unit <= 0xdbff && (body.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2
      i++
    } else {
      bytes += 2
    }
  }
  return bytes
}

/**
 * How many of the messages whose body sizes are `sizes` (in the order of `take`) a run of
 * `MessageStore.read` returns: at most `limit`, the first always, then while the total stays at
 * most `maxBytes`. A store reads `limit + 1` sizes; `more` is whether it read more than this.
 */
export const fitting = (sizes: ReadonlyArray<number>, limit: number, maxBytes: number): number => {
  const end = Math.min(sizes.length, Math.max(0, Math.floor(limit)))
  let total = 0
  for (let i = 0; i < end; i++) {
    total += sizes[i]!
    if (i > 0 && total > maxBytes) return i
  }
  return end
}
