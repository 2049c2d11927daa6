/**
 * @tradeflow/tracking-dcsa/test-kit: a fake DCSA Track & Trace carrier (2.2 and 3.0) on loopback,
 * releasing our mock journeys on a clock you pass in, with faults and carrier quirks.
 *
 * @module @tradeflow/tracking-dcsa/test-kit
 */
export * as FakeCarrier from "./FakeCarrier.js"
export * as FakeCarrierJourney from "./FakeCarrierJourney.js"
export * as Loopback from "./Loopback.js"
