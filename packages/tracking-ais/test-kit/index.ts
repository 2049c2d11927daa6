/**
 * @tradeflow/tracking-ais/test-kit: an AIS encoder and a fake AIS feed on loopback TCP, to test
 * anything that consumes a `VesselPositionSource` built on this package, without a receiver.
 *
 * @module @tradeflow/tracking-ais/test-kit
 */
export * as AisEncoder from "./AisEncoder.js"
export * as AisFakeFeed from "./AisFakeFeed.js"
