/**
 * What one job may render: at most {@link maxMessagesPerJob} messages and {@link maxBytesPerJob}
 * bytes (message bodies and webhook documents, UTF-8), and its share of the thread: rendering
 * lets the event loop turn every few milliseconds.
 *
 * @module
 */
import { Data, Effect } from "effect"
import { timeSlice } from "./internal/eventLoop.js"
import { byteLength } from "./StoredMessage.js"

/** At most this many messages are rendered by one job. */
export const maxMessagesPerJob = 100_000

/** At most this many bytes (UTF-8) of message bodies and webhook documents are rendered by one job: 64 MiB. */
export const maxBytesPerJob = 64 * 1024 * 1024

/**
 * A job rendered more than its {@link Budget} allows. It is raised as a defect: the ingest refuses
 * what would come near the caps, so this is the safety net, and the worker fails the job without
 * committing anything of it.
 */
export class RenderCapExceeded extends Data.TaggedError("RenderCapExceeded")<{
  readonly cap: "messages" | "bytes"
  readonly limit: number
}> {
  override get message(): string {
    return `rendering exceeded the per-job cap of ${
      this.limit.toLocaleString("en")
    } ${this.cap}; nothing of the job was committed`
  }
}

/** What one job may render, and its share of the thread (see {@link budget}). */
export interface Budget {
  /**
   * Counts rendered text (`messages`: 1 for a message, 0 for a webhook document) against the caps,
   * dying with {@link RenderCapExceeded} past one, then lets the event loop turn when the time
   * slice is used up.
   */
  readonly take: (text: string, messages: 0 | 1) => Effect.Effect<void>
  /** Lets the event loop turn when the time slice is used up (for loops that render nothing). */
  readonly pause: Effect.Effect<void>
  /** How many more messages of `bytesEach` bytes fit under both caps. */
  readonly room: (bytesEach: number) => number
  /** Messages and bytes rendered so far. */
  readonly used: () => { readonly messages: number; readonly bytes: number }
}

/** The options of {@link budget}. */
export interface BudgetOptions {
  /** Default {@link maxMessagesPerJob}. */
  readonly maxMessages?: number
  /** Default {@link maxBytesPerJob}. */
  readonly maxBytes?: number
  /** The event loop turns once this many milliseconds of work have passed since the last turn (default 2). */
  readonly sliceMillis?: number
  /** How the event loop turns (default: one `setImmediate`); tests count turns with it. */
  readonly turn?: Effect.Effect<void>
}

/** A fresh budget for one job. */
export const budget = (options: BudgetOptions = {}): Budget => {
  const maxMessages = options.maxMessages ?? maxMessagesPerJob
  const maxBytes = options.maxBytes ?? maxBytesPerJob
  const pause = timeSlice(options.sliceMillis, options.turn)
  let messages = 0
  let bytes = 0
  return {
    take: (text, count) =>
      Effect.suspend(() => {
        messages += count
        bytes += byteLength(text)
        if (messages > maxMessages) return Effect.die(new RenderCapExceeded({ cap: "messages", limit: maxMessages }))
        if (bytes > maxBytes) return Effect.die(new RenderCapExceeded({ cap: "bytes", limit: maxBytes }))
        return pause
      }),
    pause,
    room: (bytesEach) => Math.max(0, Math.min(maxMessages - messages, Math.floor((maxBytes - bytes) / bytesEach))),
    used: () => ({ messages, bytes })
  }
}
