/**
 * Every storage port of `@tradeflow/core` implemented once over `@effect/sql`'s `SqlClient`, for
 * the SQLite and PostgreSQL dialects; where they differ, a statement is chosen with
 * `sql.onDialectOrElse`. The driver packages open the database, migrate it and build the ports
 * with this module.
 *
 * @module
 */
import type { SqlClient, SqlConnection, Statement } from "@effect/sql"
import {
  AutomationStore,
  DeliveryStore,
  JobQueue,
  MessageStore,
  OrganisationStore,
  RateLimitStore,
  RetentionStore,
  Storage,
  StorageHealth,
  TrackingStore,
  TradeflowStore,
  UserStore
} from "@tradeflow/core"
import { Context, Effect, PubSub, Stream } from "effect"
import * as automationStore from "./internal/automations.js"
import * as deliveryStore from "./internal/deliveries.js"
import * as storageHealth from "./internal/health.js"
import * as jobQueue from "./internal/jobs.js"
import * as messageStore from "./internal/messages.js"
import type { SqlStorageOptions, Wakeup } from "./internal/options.js"
import * as organisationStore from "./internal/organisations.js"
import * as rateLimitStore from "./internal/rateLimits.js"
import * as retentionStore from "./internal/retention.js"
import * as settingsStore from "./internal/settings.js"
import * as trackingStore from "./internal/tracking.js"
import * as tradeflowStore from "./internal/tradeflows.js"
import * as userStore from "./internal/users.js"

export { advisoryNamespace } from "./internal/options.js"
export type { SqlStorageOptions, Wakeup } from "./internal/options.js"

/** The adapters of every storage port, sharing one SQL client. */
export interface SqlStorage {
  readonly organisations: OrganisationStore.OrganisationStore["Type"]
  readonly jobs: JobQueue.JobQueue["Type"]
  readonly tradeflows: TradeflowStore.TradeflowStore["Type"]
  readonly messages: MessageStore.MessageStore["Type"]
  readonly settings: Storage.Settings["Type"]
  readonly automations: AutomationStore.AutomationStore["Type"]
  readonly deliveries: DeliveryStore.DeliveryStore["Type"]
  readonly retention: RetentionStore.RetentionStore["Type"]
  readonly tracking: TrackingStore.TrackingStore["Type"]
  readonly users: UserStore.UserStore["Type"]
  readonly health: StorageHealth.StorageHealth["Type"]
  readonly rateLimits: RateLimitStore.RateLimitStore["Type"]
}

/** A {@link Wakeup} within this process (SQLite: one process writes at a time, so one process is told). */
export const inProcess: Effect.Effect<Wakeup> = Effect.map(PubSub.sliding<void>(1), (hub) => ({
  notify: PubSub.publish(hub, undefined),
  stream: Stream.fromPubSub(hub)
}))

/**
 * The statement `TradeflowStore.lookup` runs: the tradeflows of the organisation having any of the
 * keys, read from one covering index of `tradeflow_keys` (by organisation and key).
 */
export const lookupStatement: (
  sql: SqlClient.SqlClient,
  organisationId: string,
  keys: ReadonlyArray<string>
) => Statement.Statement<SqlConnection.Row> = tradeflowStore.lookupStatement

/**
 * Every port over the `SqlClient` (already migrated), with the driver's wake-ups and, on SQLite,
 * its relaxed lease writes: what a driver package builds once it has opened the database. A commit
 * that writes deliveries, an enqueued or retried delivery signal `options.deliveryWakeups`; an
 * enqueued or retried job `options.jobWakeups`. Removing an automation, deleting a tradeflow or
 * pruning a dead delivery removes the deliveries' attempts too.
 */
export const make = (options: SqlStorageOptions): Effect.Effect<SqlStorage, never, SqlClient.SqlClient> =>
  Effect.all({
    organisations: organisationStore.make,
    jobs: jobQueue.make(options),
    tradeflows: tradeflowStore.make(options),
    messages: messageStore.make,
    settings: settingsStore.make,
    automations: automationStore.make,
    deliveries: deliveryStore.make(options),
    retention: retentionStore.make,
    tracking: trackingStore.make(options),
    users: userStore.make,
    health: storageHealth.make(options),
    rateLimits: rateLimitStore.make(options)
  })

/** The storage ports as a context. */
export const toContext = (storage: SqlStorage): Context.Context<Storage.Storage> =>
  Context.make(OrganisationStore.OrganisationStore, storage.organisations).pipe(
    Context.add(JobQueue.JobQueue, storage.jobs),
    Context.add(TradeflowStore.TradeflowStore, storage.tradeflows),
    Context.add(MessageStore.MessageStore, storage.messages),
    Context.add(Storage.Settings, storage.settings),
    Context.add(AutomationStore.AutomationStore, storage.automations),
    Context.add(DeliveryStore.DeliveryStore, storage.deliveries),
    Context.add(RetentionStore.RetentionStore, storage.retention),
    Context.add(TrackingStore.TrackingStore, storage.tracking),
    Context.add(UserStore.UserStore, storage.users),
    Context.add(StorageHealth.StorageHealth, storage.health),
    Context.add(RateLimitStore.RateLimitStore, storage.rateLimits)
  )
