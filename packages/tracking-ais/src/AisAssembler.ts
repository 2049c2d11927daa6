/**
 * Joins the sentences of multi-part AIS messages (type 5 takes two) into whole messages.
 *
 * The parts of one message share a sequential message id and a channel, and arrive in order. A
 * part that does not continue the message in progress under its id and channel (a part missing,
 * out of order, repeated, of another total, or a new first part) discards that message, as does
 * a message whose parts take longer than the timeout. A single-part sentence is a message by
 * itself and never disturbs the others.
 *
 * @module
 */
import { Duration, Option } from "effect"
import type { AisSentence } from "./AisSentence.js"

/** The payload of a whole message, its parts joined. */
export interface AisMessage {
  readonly payload: string
  /** The fill bits of the last part. */
  readonly fillBits: number
  readonly channel: string
}

/** Joins sentences into messages; each connection has its own. */
export interface AisAssembler {
  /**
   * Takes the next sentence, received at `now` (epoch ms): the message it completes, if any.
   */
  readonly push: (sentence: AisSentence, now: number) => Option.Option<AisMessage>
  /** How many messages are waiting for parts. */
  readonly pending: () => number
}

/** How long the parts of one message may take to arrive by default: 5 seconds. */
export const defaultTimeout: Duration.Duration = Duration.seconds(5)

interface Partial {
  readonly address: string
  readonly total: number
  readonly startedAt: number
  readonly payloads: Array<string>
}

/** A new assembler, with nothing pending. */
export const make = (options?: { readonly timeout?: Duration.DurationInput | undefined }): AisAssembler => {
  const timeout = Duration.toMillis(options?.timeout ?? defaultTimeout)
  const partials = new Map<string, Partial>()

  const expire = (now: number) => {
    for (const [key, partial] of partials) {
      if (now - partial.startedAt > timeout) partials.delete(key)
    }
  }

  const push = (sentence: AisSentence, now: number): Option.Option<AisMessage> => {
    if (sentence.total === 1) {
      return Option.some({ payload: sentence.payload, fillBits: sentence.fillBits, channel: sentence.channel })
    }
    expire(now)
    const key = `${sentence.sequenceId},${sentence.channel}`
    const last = sentence.index === sentence.total
    if (!last && sentence.fillBits !== 0) {
      partials.delete(key)
      return Option.none()
    }
    if (sentence.index === 1) {
      partials.set(key, {
        address: sentence.address,
        total: sentence.total,
        startedAt: now,
        payloads: [sentence.payload]
      })
      return Option.none()
    }
    const partial = partials.get(key)
    if (
      partial === undefined || partial.total !== sentence.total || partial.address !== sentence.address ||
      partial.payloads.length + 1 !== sentence.index
    ) {
      partials.delete(key)
      return Option.none()
    }
    partial.payloads.push(sentence.payload)
    if (!last) return Option.none()
    partials.delete(key)
    return Option.some({ payload: partial.payloads.join(""), fillBits: sentence.fillBits, channel: sentence.channel })
  }

  return { push, pending: () => partials.size }
}
