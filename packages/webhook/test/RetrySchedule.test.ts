import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, FastCheck as fc, Fiber, Option, Random, TestClock } from "effect"
import { RetrySchedule } from "../src/index.js"

const HOUR = 3_600_000
const DAY = 24 * HOUR
const bases = [5_000, 30_000, 120_000, 600_000, 1_800_000, HOUR, 3 * HOUR, 6 * HOUR]
const baseMs = (attempt: number) => bases[Math.min(attempt, 8) - 1] as number

const run = <A>(effect: Effect.Effect<A>, seed: number): A =>
  Effect.runSync(Effect.withRandom(effect, Random.make(seed)))

/** Fails every attempt: returns the instants (ms) of all attempts, the first at `start`. */
const simulate = (start: number) =>
  Effect.gen(function*() {
    const instants = [start]
    for (let attempt = 1;; attempt++) {
      const delay = yield* RetrySchedule.nextDelay(attempt, start, instants[instants.length - 1] as number)
      if (Option.isNone(delay)) return instants
      instants.push((instants[instants.length - 1] as number) + Duration.toMillis(delay.value))
    }
  })

describe("RetrySchedule", () => {
  it("base schedule: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, then 6 h", () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      assert.strictEqual(Duration.toMillis(RetrySchedule.baseDelay(attempt)), baseMs(attempt))
    }
  })

  it.prop(
    "the base schedule is monotone",
    [fc.integer({ min: -5, max: 100 }), fc.integer({ min: 0, max: 100 })],
    ([a, d]) => {
      assert.isAtMost(Duration.toMillis(RetrySchedule.baseDelay(a)), Duration.toMillis(RetrySchedule.baseDelay(a + d)))
    }
  )

  it.prop("jitter stays within ±20 % of the base delay", [
    fc.integer({ min: 1, max: 40 }),
    fc.integer(),
    fc.integer({ min: 0, max: 1e12 })
  ], ([attempt, seed, first]) => {
    const delay = run(RetrySchedule.nextDelay(attempt, first, first + DAY), seed)
    const ms = Duration.toMillis(Option.getOrThrow(delay))
    assert.isAtLeast(ms, Math.floor(baseMs(attempt) * 0.8))
    assert.isAtMost(ms, Math.ceil(baseMs(attempt) * 1.2))
  })

  it.prop("no attempt after 3 days: dead once the next instant would pass the horizon", [
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 0, max: 10 * DAY }),
    fc.integer()
  ], ([attempt, elapsed, seed]) => {
    const delay = run(RetrySchedule.nextDelay(attempt, 1_000, 1_000 + elapsed), seed)
    if (elapsed + baseMs(attempt) * 1.2 <= 3 * DAY) assert.isTrue(Option.isSome(delay))
    if (elapsed + baseMs(attempt) * 0.8 > 3 * DAY) assert.isTrue(Option.isNone(delay))
    if (Option.isSome(delay)) assert.isAtMost(elapsed + Duration.toMillis(delay.value), 3 * DAY)
  })

  it.prop("a Retry-After is a lower bound: the wait is the schedule's, or the Retry-After when longer", [
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 0, max: 4 * DAY }),
    fc.integer({ min: 0, max: 2 * HOUR }),
    fc.integer()
  ], ([attempt, elapsed, asked, seed]) => {
    const scheduled = run(RetrySchedule.nextDelay(attempt, 0, elapsed), seed)
    const delay = run(RetrySchedule.nextDelay(attempt, 0, elapsed, Option.some(Duration.millis(asked))), seed)
    if (Option.isNone(scheduled)) return assert.isTrue(Option.isNone(delay))
    const wait = Math.max(Duration.toMillis(scheduled.value), asked)
    assert.deepStrictEqual(
      Option.map(delay, Duration.toMillis),
      elapsed + wait <= 3 * DAY ? Option.some(wait) : Option.none()
    )
  })

  it.prop("a delivery failing forever spans about 3 days and then is dead", [
    fc.integer(),
    fc.integer({ min: 0, max: 1e12 })
  ], ([seed, start]) => {
    const instants = run(simulate(start), seed)
    const last = instants[instants.length - 1] as number
    assert.isAtMost(last - start, 3 * DAY)
    assert.isAbove(last - start, 3 * DAY - 1.2 * 6 * HOUR)
    assert.isAtLeast(instants.length, 17)
    assert.isAtMost(instants.length, 22)
    for (let i = 1; i < instants.length; i++) assert.isAbove(instants[i] as number, instants[i - 1] as number)
  })

  it.effect("TestClock: failures driven through Effect.sleep happen at the scheduled instants", () =>
    Effect.gen(function*() {
      const attempts: Array<number> = []
      const delays: Array<number> = []
      const deliver = Effect.gen(function*() {
        const first = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        for (let attempt = 1;; attempt++) {
          const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
          attempts.push(now)
          const delay = yield* RetrySchedule.nextDelay(attempt, first, now)
          if (Option.isNone(delay)) return "dead" as const
          delays.push(Duration.toMillis(delay.value))
          yield* Effect.sleep(delay.value)
        }
      })
      const fiber = yield* Effect.fork(deliver)
      yield* TestClock.adjust(Duration.seconds(3))
      assert.deepStrictEqual(attempts, [0])
      yield* TestClock.adjust(Duration.seconds(4))
      assert.deepStrictEqual(attempts.length, 2)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      for (let i = 0; i < 30 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* TestClock.adjust(Duration.hours(4))
      assert.strictEqual(yield* Fiber.join(fiber), "dead")
      for (let i = 0; i < delays.length; i++) {
        assert.strictEqual((attempts[i + 1] as number) - (attempts[i] as number), delays[i])
        assert.isAtLeast(delays[i] as number, baseMs(i + 1) * 0.8)
        assert.isAtMost(delays[i] as number, baseMs(i + 1) * 1.2)
      }
      assert.isAtMost(attempts[attempts.length - 1] as number, 3 * DAY)
      assert.strictEqual(attempts.length, delays.length + 1)
    }))

  describe("retryAfter", () => {
    const now = Date.parse("2026-11-22T12:00:00Z")
    const ms = (header: string | undefined) => Option.map(RetrySchedule.retryAfter(header, now), Duration.toMillis)

    it("delta-seconds and the three HTTP date forms, capped at 1 hour", () => {
      assert.deepStrictEqual(ms("120"), Option.some(120_000))
      assert.deepStrictEqual(ms(" 0 "), Option.some(0))
      assert.deepStrictEqual(ms("86400"), Option.some(HOUR))
      assert.deepStrictEqual(ms("Sun, 22 Nov 2026 12:05:00 GMT"), Option.some(300_000))
      assert.deepStrictEqual(ms("Sunday, 22-Nov-26 12:00:30 GMT"), Option.some(30_000))
      assert.deepStrictEqual(ms("Sun Nov 22 12:00:10 2026"), Option.some(10_000))
      assert.deepStrictEqual(ms("Mon, 23 Nov 2026 12:00:00 GMT"), Option.some(HOUR))
      assert.deepStrictEqual(ms("Sat, 21 Nov 2026 12:00:00 GMT"), Option.some(0))
    })

    it("missing or unreadable headers are none", () => {
      for (const header of [undefined, "", "soon", "-5", "1.5", "Xyz, 99 Foo 2026", "2026-11-22T12:05:00Z"]) {
        assert.isTrue(Option.isNone(RetrySchedule.retryAfter(header, now)), String(header))
      }
    })

    it.prop("delta-seconds: min(value, 1 h)", [fc.nat()], ([seconds]) => {
      assert.deepStrictEqual(ms(String(seconds)), Option.some(Math.min(seconds * 1000, HOUR)))
    })

    it.prop("HTTP dates: clamped to [0, 1 h] from now", [fc.integer({ min: -10 * DAY, max: 10 * DAY })], ([offset]) => {
      const at = Math.floor((now + offset) / 1000) * 1000
      assert.deepStrictEqual(ms(new Date(at).toUTCString()), Option.some(Math.min(Math.max(at - now, 0), HOUR)))
    })
  })
})
