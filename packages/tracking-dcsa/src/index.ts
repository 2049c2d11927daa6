/**
 * @tradeflow/tracking-dcsa: carriers over DCSA Track & Trace 2.2 and 3.0 as `TrackingSource`s of
 * `@tradeflow/core`. Each module is exported as a namespace.
 *
 * @module @tradeflow/tracking-dcsa
 */
export * as DcsaProfile from "./DcsaProfile.js"
export * as DcsaSignature from "./DcsaSignature.js"
export * as DcsaSource from "./DcsaSource.js"
