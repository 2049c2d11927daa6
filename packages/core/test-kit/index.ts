/**
 * @tradeflow/core/test-kit: shared test suites and fixtures for adapters of the core ports.
 *
 * @module @tradeflow/core/test-kit
 */
export * from "./Counted.js"
export * from "./DeliveryContract.js"
export * from "./KeyRevocationContract.js"
export * from "./RateLimitContract.js"
export * from "./SecretsContract.js"
export * from "./StorageContract.js"
export * from "./TrackingContract.js"
export * from "./UpstreamContract.js"
export * from "./UserContract.js"
