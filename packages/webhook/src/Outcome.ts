/**
 * What one delivery attempt came to (issue 4): delivered on a 2xx within 15 s; redirects are
 * failures (never followed); 410 disables the automation; 429 and 503 may wait longer than the
 * schedule by `Retry-After` (capped at 1 hour); everything else, including timeouts, resets, DNS
 * errors and SSRF blocks, is a failure retried on the schedule. Also the truncation of receiver bodies for the log.
 *
 * @module
 */
import { Delivery } from "@tradeflow/core"
import { Data, Duration, Option } from "effect"
import * as RetrySchedule from "./RetrySchedule.js"

/**
 * A 2xx counts only if it arrives within this time.
 */
export const deliveryTimeout: Duration.Duration = Duration.seconds(15)

/**
 * Receiver response bodies kept in the delivery log, in bytes.
 */
export const maxLoggedBodyBytes: number = Delivery.maxResponseBodyBytes

/**
 * What happened on the wire: a response (status, time to its headers, its `Retry-After`), or
 * an error before any response (timeout, reset, DNS, SSRF block, …).
 */
export type Attempt =
  | {
    readonly _tag: "Response"
    readonly status: number
    readonly elapsed: Duration.DurationInput
    readonly retryAfter?: string | undefined
  }
  | { readonly _tag: "Error"; readonly error: unknown }

/**
 * The classified result of an attempt. `Failed` is retried on the retry schedule, or after
 * `retryAfter` when the receiver asked for a longer wait. `Gone` (410) disables the automation.
 */
export type Outcome = Data.TaggedEnum<{
  Delivered: { readonly status: number }
  Failed: {
    readonly status: Option.Option<number>
    readonly error: string
    readonly retryAfter: Option.Option<Duration.Duration>
  }
  Gone: { readonly status: 410; readonly error: string }
}>

/**
 * Constructors and matchers of {@link Outcome}.
 */
export const Outcome = Data.taggedEnum<Outcome>()

const codeKinds: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["timeout", [
    "ETIMEDOUT",
    "ESOCKETTIMEDOUT",
    "UND_ERR_CONNECT_TIMEOUT",
    "UND_ERR_HEADERS_TIMEOUT",
    "UND_ERR_BODY_TIMEOUT",
    "ABORT_ERR",
    "23"
  ]],
  ["connection reset", ["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "ERR_STREAM_PREMATURE_CLOSE"]],
  ["connection refused", ["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"]],
  ["dns error", ["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME"]]
]

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && key in value ? (value as Record<string, unknown>)[key] : undefined

const kindOf = (error: unknown): string | undefined => {
  const code = String(field(error, "code") ?? "")
  const tag = field(error, "_tag")
  const name = field(error, "name")
  if (code === "ERR_SSRF_BLOCKED" || tag === "SsrfBlocked") return "blocked destination"
  if (tag === "TimeoutException" || name === "TimeoutError" || name === "AbortError") return "timeout"
  for (const [kind, codes] of codeKinds) if (codes.includes(code)) return kind
  if (/^(CERT_|ERR_TLS_|ERR_SSL_)|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return "tls error"
  return undefined
}

const messageOf = (error: unknown): string => {
  const message = field(error, "message")
  return typeof message === "string" && message !== "" ? message : String(error)
}

/**
 * A one-line description of a transport error for the delivery log, looking through `cause`
 * chains (undici and @effect/platform wrap the socket error): `"<kind>: <message>"`.
 */
export const describeError = (error: unknown): string => {
  const chain: Array<unknown> = []
  for (let e: unknown = error; e !== undefined && e !== null && chain.length < 8; e = field(e, "cause")) chain.push(e)
  const found = chain.find((e) => kindOf(e) !== undefined)
  const text = found === undefined ? `error: ${messageOf(error)}` : `${kindOf(found)}: ${messageOf(found)}`
  return text.length > 500 ? `${text.slice(0, 497)}...` : text
}

/**
 * Classifies an attempt; `now` (epoch milliseconds) reads `Retry-After` dates.
 */
export const classify = (attempt: Attempt, now: number): Outcome => {
  if (attempt._tag === "Error") {
    return Outcome.Failed({ status: Option.none(), error: describeError(attempt.error), retryAfter: Option.none() })
  }
  const { status } = attempt
  const failed = (error: string, retryAfter: Option.Option<Duration.Duration> = Option.none()) =>
    Outcome.Failed({ status: Option.some(status), error, retryAfter })
  if (status >= 200 && status < 300) {
    const elapsed = Duration.decode(attempt.elapsed)
    return Duration.lessThanOrEqualTo(elapsed, deliveryTimeout)
      ? Outcome.Delivered({ status })
      : failed(
        `timeout: HTTP ${status} after ${Duration.format(elapsed)}, more than ${Duration.format(deliveryTimeout)}`
      )
  }
  if (status === 410) return Outcome.Gone({ status: 410, error: "HTTP 410 Gone: the automation is disabled" })
  if (status >= 300 && status < 400) return failed(`HTTP ${status}: redirects are not followed`)
  if (status === 429 || status === 503) {
    return failed(`HTTP ${status}`, RetrySchedule.retryAfter(attempt.retryAfter, now))
  }
  return failed(`HTTP ${status}`)
}

/**
 * A receiver's response body as kept in the delivery log: at most `max` bytes of UTF-8, cut on
 * a character boundary (invalid sequences read as U+FFFD), and whether anything was dropped.
 */
export const truncateBody = (
  bytes: Uint8Array,
  max: number = maxLoggedBodyBytes
): { readonly text: string; readonly truncated: boolean } => {
  const limit = Math.max(0, Math.floor(max))
  let end = Math.min(bytes.length, limit)
  if (end < bytes.length) {
    let back = end
    while (back > 0 && end - back < 3 && ((bytes[back] as number) & 0xc0) === 0x80) back--
    if (((bytes[back] as number) & 0xc0) !== 0x80) end = back
  }
  const text = new TextDecoder("utf-8").decode(bytes.subarray(0, end))
  let size = 0
  for (let i = 0; i < text.length;) {
    const point = text.codePointAt(i) as number
    const width = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4
    if (size + width > limit) return { text: text.slice(0, i), truncated: true }
    size += width
    i += point > 0xffff ? 2 : 1
  }
  return { text, truncated: end < bytes.length }
}
