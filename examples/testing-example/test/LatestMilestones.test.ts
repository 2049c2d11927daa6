import { assert, describe, it } from "@effect/vitest"
import { apiMessage, drain, layer, messages, post, trackedRecord } from "@tradeflow/core/testing"
import { Effect, FastCheck as fc, TestClock } from "effect"
import { latestMilestones, update } from "../src/LatestMilestones.js"

const day = 86_400_000
const now = Date.UTC(2026, 0, 1)

describe("latestMilestones", () => {
  it.effect("keeps, per container, an actual milestone with the latest event date, in any order of arrival", () =>
    Effect.gen(function*() {
      const message = yield* apiMessage()
      fc.assert(fc.property(fc.array(message, { maxLength: 40 }), (received) => {
        const latest = latestMilestones(received)
        const actual = received.flatMap((m) => m.type === "CONTAINER_MILESTONE" && m.payload.actual ? [m.payload] : [])
        assert.deepStrictEqual(
          [...latest.keys()].sort(),
          [...new Set(actual.map((p) => p.transport_unit_reference))].sort()
        )
        for (const [container, kept] of latest) {
          const dates = actual.filter((p) => p.transport_unit_reference === container).map((p) =>
            Date.parse(p.event_date)
          )
          assert.strictEqual(Date.parse(kept.event_date), Math.max(...dates))
        }
        const reversed = latestMilestones([...received].reverse())
        assert.deepStrictEqual(
          [...reversed].map(([c, m]) => [c, m.event_date]).sort(),
          [...latest].map(([c, m]) => [c, m.event_date]).sort()
        )
      }))
    }))

  it.effect.prop(
    "fed message by message while the sandbox releases a fast journey, it ends where the whole log does",
    [trackedRecord, fc.integer({ min: -20, max: 20 })],
    ([record, offsetDays]) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        let state = latestMilestones(
          yield* post([{
            ...record,
            estimated_time_of_departure: new Date(now + offsetDays * day).toISOString(),
            estimated_time_of_arrival: new Date(now + (offsetDays + 30) * day).toISOString(),
            mock_tracking: { scenario: record.mock_tracking?.scenario ?? "ocean_basic", speed: "fast" }
          }])
        )
        let seen = (yield* messages()).length
        for (let minute = 0; minute < 15; minute++) {
          yield* TestClock.adjust("1 minute")
          yield* drain
          const all = yield* messages()
          state = all.slice(seen).reduce(update, state)
          seen = all.length
        }
        assert.deepStrictEqual(state, latestMilestones(yield* messages()))
      }).pipe(Effect.provide(layer)),
    { fastCheck: { numRuns: 15 } }
  )
})
