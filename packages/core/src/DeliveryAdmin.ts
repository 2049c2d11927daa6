/**
 * Service: the administration of webhook deliveries (DECISIONS.md §4): Send test, the delivery
 * log, and retrying a failed or dead delivery. The deliveries themselves (`Delivery`) are written
 * by `TradeflowStore.commit`, kept by the `DeliveryStore` port and attempted by a delivery worker
 * (`@tradeflow/webhook`).
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { AutomationNotFound } from "./AutomationAdmin.js"
import { AutomationStore } from "./AutomationStore.js"
import { DeliveryLogEntry } from "./Delivery.js"
import { type DeliveryBacklog, DeliveryStore } from "./DeliveryStore.js"
import { randomId } from "./internal/crypto.js"
import type { Locations } from "./Locations.js"
import { deliveryDocument, processGroup } from "./Processor.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** No delivery with this id. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", {
  id: Schema.Number
}) {}

/** Only a failed (pending after a failed attempt) or dead delivery can be retried. */
export class DeliveryNotRetryable extends Schema.TaggedError<DeliveryNotRetryable>()("DeliveryNotRetryable", {
  id: Schema.Number
}) {}

/** One attempt in the console's delivery log: a `Delivery.DeliveryLogEntry` with `at` as ISO 8601. */
export const DeliveryLogInfo = Schema.Struct({
  ...DeliveryLogEntry.fields,
  at: Schema.String.annotations({ description: "When the attempt was made (ISO 8601)" })
}).annotations({ identifier: "DeliveryAttempt" })
export type DeliveryLogInfo = typeof DeliveryLogInfo.Type

/** A queued Send test. */
export const TestSend = Schema.Struct({
  delivery_id: Schema.Int.annotations({ description: "The queued delivery (what retry takes)" }),
  tradeflow_reference: Schema.String.annotations({
    description: "The sample tradeflow's reference (TEST_…, never stored)"
  }),
  message_hash: Schema.String.annotations({ description: "The webhook-id the delivery is signed with" })
}).annotations({ identifier: "TestDelivery" })
export type TestSend = typeof TestSend.Type

/** The longest delivery log the console returns. */
export const maxLogEntries = 1000

export class DeliveryAdmin extends Context.Tag("@tradeflow/core/DeliveryAdmin")<DeliveryAdmin, {
  /**
   * Queues one delivery of a sample `ocean_basic` tradeflow (`TEST_…`, Rotterdam to Singapore,
   * never stored or served upstream) to the automation, enabled or not: the first of its messages
   * of the automation's types, or for the `tradeflow` format its V3 document.
   */
  readonly sendTest: (automationId: string) => Effect.Effect<TestSend, AutomationNotFound | StorageError>
  /** The automation's attempts, newest first, at most `limit` (capped at {@link maxLogEntries}). */
  readonly log: (automationId: string, limit?: number) => Effect.Effect<
    ReadonlyArray<DeliveryLogInfo>,
    AutomationNotFound | StorageError
  >
  /** Makes a failed or dead delivery due now, on a fresh retry schedule. */
  readonly retry: (deliveryId: number) => Effect.Effect<void, DeliveryNotFound | DeliveryNotRetryable | StorageError>
  /** The organisation whose automation a delivery goes to (what a permission check needs). */
  readonly organisationOf: (deliveryId: number) => Effect.Effect<string, DeliveryNotFound | StorageError>
  /** The outbox's backlog across automations (what metrics show). */
  readonly backlog: Effect.Effect<DeliveryBacklog, StorageError>
}>() {}

/** The delivery administration over the {@link DeliveryStore} and {@link AutomationStore} ports. */
export const layer: Layer.Layer<
  DeliveryAdmin,
  never,
  DeliveryStore | AutomationStore | TradeflowStore | Locations | TrackingConfig
> = Layer.effect(
  DeliveryAdmin,
  Effect.gen(function*() {
    const store = yield* DeliveryStore
    const automations = yield* AutomationStore
    const context = yield* Effect.context<TradeflowStore | Locations | TrackingConfig>()

    const automation = (id: string) =>
      automations.get(id).pipe(Effect.flatMap(Option.match({
        onNone: () => new AutomationNotFound({ id }),
        onSome: Effect.succeed
      })))

    return DeliveryAdmin.of({
      backlog: store.backlog,
      sendTest: Effect.fn("DeliveryAdmin.sendTest")(function*(automationId: string) {
        const target = yield* automation(automationId)
        const now = yield* Clock.currentTimeMillis
        const reference = randomId("TEST")
        const job = {
          id: 0,
          organisation_id: target.organisation_id,
          environment: "uat" as const,
          payload: { _tag: "Delete" as const, reference, hard: false },
          received_at: now
        }
        const record = {
          tradeflow_reference: reference,
          booking_reference: [reference],
          port_of_loading: "NLRTM",
          port_of_discharge: "SGSIN",
          mock_tracking: { scenario: "ocean_basic" }
        }
        const sample = yield* processGroup(job, { tradeflow_reference: reference, records: [record] }, Option.none())
          .pipe(
            Effect.provide(context)
          )
        const types: ReadonlyArray<string> = target.types
        const message = sample.messages.find((m) => types.includes(m.type)) ?? sample.messages[0]
        if (message === undefined) return yield* Effect.die(new Error("the ocean_basic sample rendered no message"))
        const body = target.format === "tradeflow" && Option.isSome(sample.upsert)
          ? yield* deliveryDocument(sample.upsert.value).pipe(Effect.provide(context))
          : message.body
        const delivery = yield* store.enqueue({
          automation_id: target.id,
          organisation_id: target.organisation_id,
          tradeflow_reference: reference,
          message_hash: message.hash,
          seq: null,
          body,
          test: true,
          created_at: now
        })
        return { delivery_id: delivery.id, tradeflow_reference: reference, message_hash: message.hash }
      }),
      log: Effect.fn("DeliveryAdmin.log")(function*(automationId: string, limit: number = 100) {
        yield* automation(automationId)
        const entries = yield* store.log(automationId, Math.min(Math.max(1, Math.floor(limit)), maxLogEntries))
        return entries.map((e) => ({ ...e, at: new Date(e.at).toISOString() }))
      }),
      retry: Effect.fn("DeliveryAdmin.retry")(function*(deliveryId: number) {
        const outcome = yield* store.retry(deliveryId, yield* Clock.currentTimeMillis)
        if (outcome === "not-found") return yield* new DeliveryNotFound({ id: deliveryId })
        if (outcome === "not-retryable") return yield* new DeliveryNotRetryable({ id: deliveryId })
      }),
      organisationOf: (deliveryId) =>
        Effect.gen(function*() {
          const delivery = yield* store.get(deliveryId)
          const owner = Option.isNone(delivery) ? Option.none() : yield* automations.get(delivery.value.automation_id)
          if (Option.isNone(owner)) return yield* new DeliveryNotFound({ id: deliveryId })
          return owner.value.organisation_id
        })
    })
  })
)
