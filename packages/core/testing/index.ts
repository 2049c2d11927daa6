/**
 * @tradeflow/core/testing: what integrators need to property-test the code that consumes our
 * messages, without a server. Arbitraries (from `effect/FastCheck`) of valid tradeflow records,
 * ISO 6346 container numbers, UN/LOCODEs of the built-in directory, whole mock journeys and real
 * rendered APIMessages; and the whole service in memory, driven by `TestClock`.
 *
 * @example
 * import { assert, it } from "@effect/vitest"
 * import { Effect, TestClock } from "effect"
 * import { layer, post, trackedRecord } from "@tradeflow/core/testing"
 *
 * it.effect.prop("every posted record yields a BASIC_STATUS", [trackedRecord], ([record]) =>
 *   Effect.gen(function* () {
 *     yield* TestClock.setTime(Date.UTC(2026, 0, 1))
 *     const messages = yield* post([record])
 *     assert.isTrue(messages.some((m) => m.type === "BASIC_STATUS"))
 *   }).pipe(Effect.provide(layer)))
 *
 * @module @tradeflow/core/testing
 */
export * from "./Arbitraries.js"
export * from "./TestService.js"
