/**
 * @tradeflow/webhook: webhook push of the tradeflow service (Node only): Standard Webhooks
 * signing, destination safety (SSRF), the retry schedule, the classification of delivery
 * attempts, the HTTP client and the delivery worker. Each module is exported as a namespace.
 *
 * @module @tradeflow/webhook
 */
export * as DeliveryWorker from "./DeliveryWorker.js"
export * as Outcome from "./Outcome.js"
export * as RetrySchedule from "./RetrySchedule.js"
export * as Signing from "./Signing.js"
export * as Ssrf from "./Ssrf.js"
export * as WebhookClient from "./WebhookClient.js"
