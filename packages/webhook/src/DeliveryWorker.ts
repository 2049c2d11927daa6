/**
 * Service: the webhook delivery worker (issue 4). It leases due deliveries from the
 * `DeliveryStore` outbox, posts each one signed to its automation's URL and records the attempts
 * of a batch at once: delivered, failed with the time of the next attempt, or dead. The record of
 * one batch and the claim of the next are one `DeliveryStore.recordAndClaim` (one transaction on
 * SQL storage).
 *
 * The outbox only hands out the head of each (automation, tradeflow), so one tradeflow's
 * messages reach an automation one at a time, in sequence order, across processes. A worker
 * that dies mid-batch loses its leases; the deliveries are claimed again once the lease runs
 * out, and a late result of the old claim is not recorded.
 *
 * @module
 */
import {
  type Automation,
  AutomationStore,
  type Delivery,
  DeliveryStore,
  ServiceMetrics,
  type StorageError,
  WebhookDestination,
  Worker
} from "@tradeflow/core"
import { Clock, Context, Duration, Effect, Either, Exit, FiberSet, Layer, Option, Queue } from "effect"
import * as Outcome from "./Outcome.js"
import * as RetrySchedule from "./RetrySchedule.js"
import * as Signing from "./Signing.js"
import { type Response, WebhookClient } from "./WebhookClient.js"

export class DeliveryWorker extends Context.Tag("@tradeflow/webhook/DeliveryWorker")<DeliveryWorker, {
  /**
   * Claims and attempts deliveries until nothing is claimable now, then returns. Deliveries
   * leased by another live worker, or waiting for a retry, may still be pending.
   */
  readonly drain: Effect.Effect<void, StorageError.StorageError>
}>() {}

/**
 * Options of {@link layer}.
 */
export interface DeliveryWorkerOptions {
  /** Deliveries claimed, and attempted at once, per round (default 64). */
  readonly batchSize?: number
  /** How long a claim leases its deliveries (default 60 seconds; at least {@link minLeaseMillis}). */
  readonly leaseMillis?: number
  /** How often the outbox is polled when nothing wakes the worker (default 1 second). */
  readonly pollInterval?: Duration.DurationInput
  /** false: no background fiber; deliveries are attempted only on `drain` (default true). */
  readonly background?: boolean
  /** The background fiber starts only once this effect has completed (for example: the server listens). */
  readonly startAfter?: Effect.Effect<void>
  /**
   * How long after its first attempt a failing delivery is retried before it is dead (default
   * {@link RetrySchedule.horizon}, 3 days, as DECISIONS.md §6 says).
   */
  readonly retryHorizon?: Duration.DurationInput
}

/**
 * The shortest lease: an attempt's {@link Outcome.deliveryTimeout} and 5 seconds to record it, so
 * a live worker never loses a delivery to another one mid-attempt.
 */
export const minLeaseMillis = Duration.toMillis(Outcome.deliveryTimeout) + 5_000

/**
 * An automation whose deliveries have all failed for this long is disabled.
 */
export const failingLimit: Duration.Duration = Duration.days(5)

/**
 * Why an automation failing for {@link failingLimit} was disabled.
 */
export const failingReason = "every delivery has failed for 5 days"

/**
 * The secrets that sign a delivery at `now`: every valid one not expired, the current first.
 */
export const signingSecrets = (automation: Automation.Automation, now: number): Array<string> =>
  automation.secrets
    .filter((s) => (s.expires_at === null || s.expires_at > now) && Signing.isValidSecret(s.secret))
    .map((s) => s.secret)

interface Target {
  readonly automation: Automation.Automation
  readonly url: Either.Either<URL, WebhookDestination.DestinationRefused>
  readonly secrets: ReadonlyArray<Automation.Automation["secrets"][number]>
}

const refusal = (refused: WebhookDestination.DestinationRefused): Outcome.Attempt => ({
  _tag: "Error",
  error: { _tag: "SsrfBlocked", message: refused.message }
})

/** `url` once `WebhookDestination` accepted it; a destination it cannot parse is refused too. */
const parsed = (url: string): Either.Either<URL, WebhookDestination.DestinationRefused> => {
  try {
    return Either.right(new URL(url))
  } catch {
    return Either.left(new WebhookDestination.DestinationRefused({ url, message: "not a valid absolute URL" }))
  }
}

/**
 * Runs `effects` at once, each in a fiber of its own, and answers their exits in order once all
 * have ended. Unlike `Effect.all` with a concurrency, the fibers' `FiberRef`s are not joined back
 * into the caller's one fiber after the other, which took about a sixth of the worker's own CPU
 * per delivery. Interrupting it interrupts them.
 */
const concurrently = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>): Effect.Effect<Array<Exit.Exit<A, E>>> =>
  Effect.scoped(Effect.gen(function*() {
    const exits = new Array<Exit.Exit<A, E>>(effects.length)
    const fibers = yield* FiberSet.make()
    for (const [i, effect] of effects.entries()) {
      yield* FiberSet.run(fibers, Effect.map(Effect.exit(effect), (exit) => void (exits[i] = exit)))
    }
    yield* FiberSet.awaitEmpty(fibers)
    return exits
  }))

/**
 * The worker over the outbox, the automations, the destination check (`WebhookDestination`, made
 * before every attempt: `Ssrf.layer`) and the HTTP client; with `background` (default)
 * it drains on every `DeliveryStore.wakeups` element and every `pollInterval`, for the lifetime
 * of the layer, logging and surviving errors. A scoped layer: its fibers stop when the scope the
 * host builds it in closes (an attempt in flight is interrupted and records nothing; its delivery
 * is claimed again once the lease runs out); nothing outlives it.
 */
export const layer = (
  options: DeliveryWorkerOptions = {}
): Layer.Layer<
  DeliveryWorker,
  never,
  | DeliveryStore.DeliveryStore
  | AutomationStore.AutomationStore
  | WebhookDestination.WebhookDestination
  | WebhookClient
> =>
  Layer.scoped(
    DeliveryWorker,
    Effect.gen(function*() {
      const outbox = yield* DeliveryStore.DeliveryStore
      const automations = yield* AutomationStore.AutomationStore
      const destinations = yield* WebhookDestination.WebhookDestination
      const client = yield* WebhookClient
      const batchSize = Math.max(1, Math.floor(options.batchSize ?? 64))
      const leaseMillis = Math.max(options.leaseMillis ?? 60_000, minLeaseMillis)
      const horizonMillis = Duration.toMillis(options.retryHorizon ?? RetrySchedule.horizon)
      const pollInterval = options.pollInterval ?? Duration.seconds(1)
      const worker = `webhook-${globalThis.crypto.randomUUID()}`
      const lock = yield* Effect.makeSemaphore(1)

      /** What one round checks once per automation: the destination, and the valid secrets. */
      const targetOf = (automation: Automation.Automation): Effect.Effect<Target> =>
        Effect.map(Effect.either(destinations.check(automation.url)), (checked) => ({
          automation,
          url: Either.flatMap(checked, () => parsed(automation.url)),
          secrets: automation.secrets.filter((s) => Signing.isValidSecret(s.secret))
        }))

      const post = (d: Delivery.ClaimedDelivery, target: Target, now: number): Effect.Effect<Response> => {
        if (Either.isLeft(target.url)) return Effect.succeed({ ...refusal(target.url.left), body: "" })
        const [current, ...previous] = target.secrets
          .filter((s) => s.expires_at === null || s.expires_at > now)
          .map((s) => s.secret)
        if (current === undefined) {
          return Effect.succeed({
            _tag: "Error",
            error: new Error("the automation has no valid signing secret"),
            body: ""
          })
        }
        const headers = Signing.headers({
          secrets: [current, ...previous],
          id: d.message_hash,
          timestamp: now / 1000,
          body: d.body
        })
        return client.post({ url: target.url.right, headers, body: d.body })
      }

      const attempt = (d: Delivery.ClaimedDelivery, target: Target): Effect.Effect<Delivery.AttemptResult> =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) =>
            Effect.flatMap(post(d, target, now), (response) =>
              Effect.flatMap(Clock.currentTimeMillis, (at) => {
                const base = {
                  delivery_id: d.id,
                  claim: d.claim,
                  at,
                  response_status: response._tag === "Response" ? response.status : null,
                  response_body: response._tag === "Response" ? response.body : null
                }
                return Outcome.Outcome.$match(Outcome.classify(response, at), {
                  Delivered: () =>
                    Effect.succeed({
                      ...base,
                      status: "delivered" as const,
                      error: null,
                      retry_at: null,
                      disable: null
                    }),
                  Failed: ({ error, retryAfter }) => failed(d, target.automation, base, error, retryAfter, null),
                  Gone: ({ error }) =>
                    failed(d, target.automation, base, error, Option.none(), "the receiver answered 410 Gone")
                })
              }))
        )

      const failed = (
        d: Delivery.ClaimedDelivery,
        automation: Automation.Automation,
        base: Pick<Delivery.AttemptResult, "delivery_id" | "claim" | "at" | "response_status" | "response_body">,
        error: string,
        retryAfter: Option.Option<Duration.Duration>,
        gone: string | null
      ) =>
        Effect.gen(function*() {
          const at = base.at
          const started = d.schedule_started_at ?? at
          const delay = yield* RetrySchedule.nextDelay(d.retries + 1, started, at, retryAfter, horizonMillis)
          const failingFor = automation.failing_since === null ? 0 : at - automation.failing_since
          const disable = gone ?? (!d.test && failingFor >= Duration.toMillis(failingLimit) ? failingReason : null)
          return {
            ...base,
            status: Option.isSome(delay) ? "failed" as const : "dead" as const,
            error,
            retry_at: Option.isSome(delay) ? at + Duration.toMillis(delay.value) : null,
            disable
          }
        })

      const claimOptions = Effect.map(
        Clock.currentTimeMillis,
        (now) => ({ worker, limit: batchSize, leaseMillis, now })
      )

      /** Attempts a claimed batch at once: the results to record (none for a delivery it does not attempt). */
      const attemptAll = (claimed: ReadonlyArray<Delivery.ClaimedDelivery>) =>
        Effect.gen(function*() {
          const targets = new Map<string, Option.Option<Target>>()
          for (const id of new Set(claimed.map((d) => d.automation_id))) {
            const automation = yield* automations.get(id)
            targets.set(id, Option.isSome(automation) ? Option.some(yield* targetOf(automation.value)) : Option.none())
          }
          const attempts = claimed.flatMap((d) => {
            const target = targets.get(d.automation_id) ?? Option.none()
            return Option.isSome(target) && (target.value.automation.enabled || d.test)
              ? [attempt(d, target.value)]
              : []
          })
          const exits = yield* concurrently(attempts)
          const results = exits.flatMap((exit) => Exit.isSuccess(exit) ? [exit.value] : [])
          const broken = exits.find(Exit.isFailure)
          yield* ServiceMetrics.recordDeliveries(results.map((r) => r.status))
          if (broken !== undefined) {
            if (results.length > 0) {
              yield* outbox.record(results).pipe(
                Effect.catchAllCause((cause) =>
                  Effect.logWarning("webhook: the round's other attempts could not be recorded", cause)
                )
              )
            }
            return yield* Effect.failCause(broken.cause)
          }
          const notDelivered = results.filter((r) => r.status !== "delivered")
          if (notDelivered.length > 0) {
            yield* Effect.logDebug(
              "webhook: attempts not delivered",
              notDelivered.map((r) => ({
                delivery: r.delivery_id,
                status: r.status,
                response_status: r.response_status,
                error: r.error
              }))
            )
          }
          return results
        })

      /** Records a round's results and claims the next batch, in one transaction where the outbox can. */
      const recordAndClaim = (results: ReadonlyArray<Delivery.AttemptResult>) =>
        Effect.gen(function*() {
          const { claimed, recorded } = yield* outbox.recordAndClaim(results, yield* claimOptions)
          const lost = results.filter((_, i) => recorded[i] !== true).map((r) => r.delivery_id)
          if (lost.length > 0) yield* Effect.logWarning("webhook: lease lost, attempts not recorded", lost)
          return claimed
        })

      const drain: Effect.Effect<void, StorageError.StorageError> = Effect.gen(function*() {
        let claimed = yield* Effect.flatMap(claimOptions, outbox.claim)
        while (claimed.length > 0) {
          claimed = yield* attemptAll(claimed).pipe(
            Effect.flatMap(recordAndClaim),
            Effect.withSpan("DeliveryWorker.round")
          )
        }
      }).pipe(lock.withPermits(1), Effect.withSpan("DeliveryWorker.drain"))

      if (options.background ?? true) {
        const signal = yield* Queue.sliding<void>(1)
        yield* Worker.background({
          drain,
          wakeups: outbox.wakeups,
          signal,
          pollInterval,
          label: "webhook delivery worker",
          startAfter: options.startAfter
        })
      }

      return DeliveryWorker.of({ drain })
    })
  )
