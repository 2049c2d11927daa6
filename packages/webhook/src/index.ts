/**
 * @tradeflow/webhook: webhook push of the tradeflow service (Node only): Standard Webhooks
 * signing, destination safety (SSRF), the retry schedule and the classification of delivery
 * attempts. Each module is exported as a namespace.
 *
 * @since 0.1.0
 */
export * as Outcome from "./Outcome.js"
export * as RetrySchedule from "./RetrySchedule.js"
export * as Signing from "./Signing.js"
export * as Ssrf from "./Ssrf.js"
