/**
 * Port: webhook automations.
 *
 * @module
 */
import { Context, type Effect, type Option } from "effect"
import type { Automation } from "./Automation.js"
import type { StorageError } from "./StorageError.js"

export class AutomationStore extends Context.Tag("@tradeflow/core/AutomationStore")<AutomationStore, {
  /** Inserts or replaces (by id) the whole automation. */
  readonly put: (automation: Automation) => Effect.Effect<void, StorageError>
  readonly get: (id: string) => Effect.Effect<Option.Option<Automation>, StorageError>
  /** The organisation's automations, oldest first. */
  readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<Automation>, StorageError>
  /** The organisation's enabled automations, oldest first. */
  readonly enabled: (organisationId: string) => Effect.Effect<ReadonlyArray<Automation>, StorageError>
  /** Removes an automation with its deliveries and their log; false when there is none. */
  readonly remove: (id: string) => Effect.Effect<boolean, StorageError>
}>() {}
