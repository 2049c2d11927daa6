/**
 * The delivery retry schedule of DECISIONS.md §6: about 5 s, 30 s, 2 min, 10 min, 30 min,
 * 1 h, 3 h, 6 h, then every 6 h up to 3 days after the first attempt, then dead; each delay
 * jittered by ±20 %. Also the `Retry-After` reading for 429 and 503 answers: a lower bound on the
 * wait (at most {@link maxRetryAfter}), never shorter than the schedule.
 *
 * @module
 */
import { Duration, Effect, Option, Random } from "effect"

/**
 * The un-jittered delays after the 1st, 2nd, … failed attempt; the last one repeats.
 */
export const baseDelays: readonly [Duration.Duration, ...Array<Duration.Duration>] = [
  Duration.seconds(5),
  Duration.seconds(30),
  Duration.minutes(2),
  Duration.minutes(10),
  Duration.minutes(30),
  Duration.hours(1),
  Duration.hours(3),
  Duration.hours(6)
]

/**
 * No attempt is made later than this after the first attempt.
 */
export const horizon: Duration.Duration = Duration.days(3)

/**
 * Relative jitter of each delay: the delay is drawn uniformly from `base × [1 - jitter, 1 + jitter)`.
 */
export const jitter = 0.2

/**
 * The longest wait a `Retry-After` header can impose (a longer one counts as this long).
 */
export const maxRetryAfter: Duration.Duration = Duration.hours(1)

/**
 * The un-jittered delay after `attempt` failed attempts (`attempt` ≥ 1; smaller counts as 1).
 */
export const baseDelay = (attempt: number): Duration.Duration => {
  const index = Math.min(Math.max(Math.floor(attempt), 1), baseDelays.length) - 1
  return baseDelays[index] ?? baseDelays[0]
}

/**
 * The wait before the next attempt after `attempt` failed attempts, the first made at
 * `firstAttemptAt` and the last failing at `now` (epoch milliseconds): the jittered delay of the
 * schedule, or the receiver's `retryAfter` when that is longer (a `Retry-After` never shortens the
 * schedule). `None` when the next attempt would fall after `horizonMillis` (default
 * {@link horizon}): the delivery is dead.
 */
export const nextDelay = (
  attempt: number,
  firstAttemptAt: number,
  now: number,
  retryAfter: Option.Option<Duration.Duration> = Option.none(),
  horizonMillis: number = Duration.toMillis(horizon)
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.map(Random.nextRange(1 - jitter, 1 + jitter), (factor) => {
    const scheduled = Math.round(Duration.toMillis(baseDelay(attempt)) * factor)
    const delay = Option.match(retryAfter, {
      onNone: () => scheduled,
      onSome: (asked) => Math.max(scheduled, Duration.toMillis(asked))
    })
    return now + delay > firstAttemptAt + horizonMillis
      ? Option.none()
      : Option.some(Duration.millis(delay))
  })

/**
 * Reads a `Retry-After` header (delta-seconds or an HTTP date, relative to `now` in epoch
 * milliseconds), capped at {@link maxRetryAfter}. A date in the past is zero; a missing or
 * unreadable header is `None`.
 */
export const retryAfter = (header: string | undefined, now: number): Option.Option<Duration.Duration> => {
  const text = header?.trim() ?? ""
  const cap = Duration.toMillis(maxRetryAfter)
  if (/^\d+$/.test(text)) return Option.some(Duration.millis(Math.min(Number(text) * 1000, cap)))
  if (!/^[A-Za-z]{3}/.test(text)) return Option.none()
  const asctime = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/.test(text)
  const at = Date.parse(asctime ? `${text} GMT` : text)
  if (Number.isNaN(at)) return Option.none()
  return Option.some(Duration.millis(Math.min(Math.max(at - now, 0), cap)))
}
