import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option, Schema, TestClock } from "effect"
import { ApiMessageFromJson } from "../src/ApiMessage.js"
import * as Iso6346 from "../src/Iso6346.js"
import * as Locations from "../src/Locations.js"
import * as Scenarios from "../src/MockJourneys.js"
import { validateRequest } from "../src/Validation.js"
import {
  apiMessage,
  containerNumber,
  drain,
  journeyCase,
  layer,
  post,
  sampleMessages,
  trackedRecord,
  tradeflowRecord,
  unlocode
} from "../testing/index.js"

const day = 86_400_000
/** The status codes of each step of each scenario (docs/behaviour.md). */
const order: Record<string, ReadonlyArray<string>> = {
  ocean_basic: ["GE", "GN", "AE", "VD", "VA", "UV", "GT", "GR"],
  ocean_full: ["GE", "GN", "AE", "VD", "VA", "UV", "AE", "VD", "VA", "UV", "GT", "GR"],
  rolled_shipment: ["GE", "GN", "VA VD", "VA VD", "AE", "VD", "UV", "GT", "GR"],
  delayed_eta: ["GE", "GN", "AE", "VD", "VA", "VA", "VA", "UV", "GT", "GR"],
  empty: []
}
const problem = /ISO 6346|UN\/LOCODE|unknown scenario|without an offset/

describe("@tradeflow/core/testing", () => {
  it.effect.prop("generated records validate, without warnings about containers, ports, scenarios or dates", [
    fc.array(tradeflowRecord, { minLength: 1, maxLength: 4 }),
    fc.constantFrom("uat" as const, "production" as const)
  ], ([records, environment]) =>
    Effect.gen(function*() {
      const validated = yield* validateRequest(records, { environment, form: "array" })
      assert.isTrue(validated.groups.length >= 1)
      for (const w of validated.warnings.flat()) assert.notMatch(w, problem)
    }).pipe(Effect.provide(Locations.layerBuiltin)), { fastCheck: { numRuns: 200 } })

  it("records come with and without mock_tracking", () => {
    const sample = fc.sample(tradeflowRecord, { numRuns: 200, seed: 7 })
    assert.isTrue(sample.some((r) => r.mock_tracking !== undefined))
    assert.isTrue(sample.some((r) => r.mock_tracking === undefined))
    assert.isTrue(fc.sample(trackedRecord, 50).every((r) => r.mock_tracking !== undefined))
  })

  it.prop("container numbers pass ISO 6346", [containerNumber], ([c]) => {
    assert.isTrue(Iso6346.isValid(c), c)
  })

  it.effect.prop("UN/LOCODEs resolve in the built-in directory", [unlocode], ([code]) =>
    Effect.gen(function*() {
      const location = yield* Effect.flatMap(Locations.Locations, (l) => l.lookup(code))
      assert.isTrue(Option.isSome(location), code)
    }).pipe(Effect.provide(Locations.layerBuiltin)))

  for (const scenario of Scenarios.scenarioNames) {
    it.prop(`${scenario}: journeys follow the scenario order`, [journeyCase(scenario)], ([c]) => {
      const { events, containers } = c.journey
      const steps = Scenarios.steps(events)
      assert.deepStrictEqual(steps.map((s) => s[0]!.step), steps.map((_, i) => i))
      for (const e of events) if (e.container_reference !== null) assert.include(containers, e.container_reference)
      for (const container of containers) assert.isTrue(Iso6346.isValid(container), container)
      const signature = (step: ReadonlyArray<{ readonly status_code: string }>) =>
        [...new Set(step.map((e) => e.status_code))].sort()
      const table = order[scenario]!
      const seen = steps.flatMap(signature)
      if (c.input.port_of_loading !== undefined && c.input.port_of_discharge !== undefined) {
        assert.deepStrictEqual(steps.map((s) => signature(s).join(" ")), table)
      } else {
        const all = table.flatMap((s) => s.split(" "))
        let i = 0
        for (const code of seen) {
          while (i < all.length && all[i] !== code) i++
          assert.isBelow(i++, all.length, `${seen.join(",")} is not in the order of ${all.join(",")}`)
        }
      }
    }, { fastCheck: { numRuns: 50 } })
  }

  it.effect("sampled APIMessages cover every type and decode with ApiMessageFromJson", () =>
    Effect.gen(function*() {
      const sample = yield* sampleMessages(300)
      assert.strictEqual(sample.length, 300)
      assert.deepStrictEqual(
        new Set(sample.map((m) => m.type)),
        new Set(["SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE", "BASIC_STATUS"])
      )
      const arb = yield* apiMessage()
      fc.assert(fc.property(arb, (m) => {
        const decoded = Schema.decodeUnknownEither(ApiMessageFromJson)(JSON.stringify(m))
        assert.isTrue(Either.isRight(decoded))
        assert.deepStrictEqual(Either.getOrThrow(decoded), m)
      }))
    }))

  it.effect("the layer runs on the test clock: a fast journey is released as the test moves time", () =>
    Effect.gen(function*() {
      const now = Date.UTC(2026, 0, 1)
      yield* TestClock.setTime(now)
      const first = yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: "CSQU3054383",
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA",
        estimated_time_of_departure: new Date(now + 10 * day).toISOString(),
        estimated_time_of_arrival: new Date(now + 40 * day).toISOString(),
        mock_tracking: { scenario: "ocean_basic", speed: "fast" }
      }])
      const milestones = (ms: typeof first) => ms.filter((m) => m.type === "CONTAINER_MILESTONE").length
      assert.strictEqual(milestones(first), 1)
      yield* TestClock.adjust("1 minute")
      yield* drain
      const all = yield* post([{ tradeflow_reference: "PO-2", booking_reference: "BK-2" }])
      assert.strictEqual(milestones(all), 0)
    }).pipe(Effect.provide(layer)))
})
