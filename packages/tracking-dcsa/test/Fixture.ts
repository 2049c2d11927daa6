import { NodeHttpClient } from "@effect/platform-node"
import { TrackingSource } from "@tradeflow/core"
import { Effect, Schema, TestClock } from "effect"
import * as DcsaProfile from "../src/DcsaProfile.js"
import * as DcsaSource from "../src/DcsaSource.js"
import * as FakeCarrier from "../test-kit/FakeCarrier.js"

/** The instant the tests start at: a Monday morning (the TestClock is set to it). */
export const T0 = Date.parse("2026-03-02T08:00:00Z")

export const hour = 3_600_000
export const day = 24 * hour

/** A shipment of two containers on the `ocean_basic` journey, departing in 3 days and arriving in 25. */
export const shipment = {
  booking: "ABC709951",
  bill_of_lading: "HHL71800000",
  containers: ["MSKU9070323", "CSQU3054383"]
} as const

/** A profile of the fake (2.2 unless said), decoded as configuration is. */
export const profileOf = (fake: FakeCarrier.FakeCarrier, input: Partial<DcsaProfile.DcsaProfileInput> = {}) =>
  Schema.decodeUnknownSync(DcsaProfile.DcsaProfile)({ id: "fake", version: "2.2", base_url: fake.url, ...input })

/** A fake carrier and a source of it, at {@link T0}. */
export const setup = (
  fakeOptions: FakeCarrier.FakeCarrierOptions = { shipments: [shipment] },
  profile: Partial<DcsaProfile.DcsaProfileInput> = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    const fake = yield* FakeCarrier.make(fakeOptions)
    const source = yield* DcsaSource.make(profileOf(fake, profile))
    return { fake, source }
  })

/** The HttpClient of the tests: undici, over real loopback connections. */
export const Http = NodeHttpClient.layerUndici

/** The query parameters of the fake's requests to a path, each request's as a list. */
export const paramsOf = (fake: FakeCarrier.FakeCarrier, path: string) =>
  fake.received.filter((r) => r.path === path).map((r) => r.params)

export { FakeCarrier, TrackingSource }
