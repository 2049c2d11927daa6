import { Clock, Effect, Ref } from "effect"
import type { Rate } from "../DcsaProfile.js"

interface Bucket {
  readonly capacity: number
  readonly perMilli: number
  readonly tokens: number
}

interface State {
  readonly at: number
  readonly buckets: ReadonlyArray<Bucket>
  /** The carrier asked us to wait until then (a 429's Retry-After). */
  readonly blockedUntil: number
}

/** How long a request may wait for its turn in the budget before it fails instead. */
export const maxQueueMillis = 10_000

/** A source's request budget: a token bucket per minute and per day, and the carrier's own Retry-After. */
export interface RateBudget {
  /**
   * Takes one request from every bucket: at once when each has one; when the turn of this request
   * comes within {@link maxQueueMillis}, it is reserved and waited for (requests are paced in the
   * order they asked); otherwise, or while the carrier's Retry-After runs, it fails at once with the
   * milliseconds to wait.
   */
  readonly take: Effect.Effect<void, number>
  /** No request before `until` (epoch ms). */
  readonly blockUntil: (until: number) => Effect.Effect<void>
}

const refill = (state: State, now: number): State => {
  const elapsed = Math.max(0, now - state.at)
  return {
    ...state,
    at: Math.max(now, state.at),
    buckets: state.buckets.map((b) => ({ ...b, tokens: Math.min(b.capacity, b.tokens + elapsed * b.perMilli) }))
  }
}

/** A budget of `rate` (none: unlimited but for Retry-After), full at first. */
export const make = (rate: Rate | undefined): Effect.Effect<RateBudget> =>
  Effect.gen(function*() {
    const buckets = [
      ...(rate?.per_minute === undefined ? [] : [{ capacity: rate.per_minute, perMilli: rate.per_minute / 60_000 }]),
      ...(rate?.per_day === undefined ? [] : [{ capacity: rate.per_day, perMilli: rate.per_day / 86_400_000 }])
    ].map((b) => ({ ...b, tokens: b.capacity }))
    const state = yield* Ref.make<State>({ at: yield* Clock.currentTimeMillis, buckets, blockedUntil: 0 })
    return {
      take: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatten(Ref.modify(state, (before): [Effect.Effect<void, number>, State] => {
          const current = refill(before, now)
          if (current.blockedUntil > now) {
            return [Effect.fail(current.blockedUntil - now), current]
          }
          const wait = Math.max(
            0,
            ...current.buckets.map((b) =>
              b.tokens >= 1 ? 0 : Math.ceil((1 - b.tokens) / b.perMilli - 1e-6)
            )
          )
          if (wait > maxQueueMillis) return [Effect.fail(wait), current]
          return [
            wait > 0 ? Effect.sleep(wait) : Effect.void,
            { ...current, buckets: current.buckets.map((b) => ({ ...b, tokens: b.tokens - 1 })) }
          ]
        }))),
      blockUntil: (until) => Ref.update(state, (s) => ({ ...s, blockedUntil: Math.max(s.blockedUntil, until) }))
    }
  })
