/**
 * Port: whether a webhook destination may be used, checked when an automation is created (the
 * console answers a refusal with 422 naming `/url`) and by the delivery worker before every
 * attempt (a refusal is a failed attempt). `@tradeflow/webhook` implements it
 * (`Ssrf.layer`): https only, no credentials, no well-known service port, no private address.
 *
 * @module
 */
import { Context, Data, Effect, Layer } from "effect"

/** A destination the check refuses; `message` says why. */
export class DestinationRefused extends Data.TaggedError("DestinationRefused")<{
  readonly url: string
  readonly message: string
}> {}

export class WebhookDestination extends Context.Tag("@tradeflow/core/WebhookDestination")<WebhookDestination, {
  /** Succeeds when deliveries may be sent to `url`. */
  readonly check: (url: string) => Effect.Effect<void, DestinationRefused>
}>() {}

/**
 * Accepts every destination: for tests and in-memory demos. A service whose console creates
 * automations for others needs a real check (`Ssrf.layer` of `@tradeflow/webhook`).
 */
export const layerMemory: Layer.Layer<WebhookDestination> = Layer.succeed(
  WebhookDestination,
  WebhookDestination.of({ check: () => Effect.void })
)
