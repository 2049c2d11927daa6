/**
 * Port: small settings shared by every process of one database (for example the secret that signs
 * upstream cursors).
 *
 * @module
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "./StorageError.js"

export class Settings extends Context.Tag("@tradeflow/core/Settings")<Settings, {
  /**
   * The stored value of `name`; when there is none, stores `initial` and answers it. Atomic: every
   * process racing on the same name gets the one value that was stored first.
   */
  readonly getOrCreate: (name: string, initial: string) => Effect.Effect<string, StorageError>
  /** The stored value of `name`, if any. */
  readonly get: (name: string) => Effect.Effect<Option.Option<string>, StorageError>
  /** Stores `value` under `name`, replacing any value stored before. */
  readonly set: (name: string, value: string) => Effect.Effect<void, StorageError>
}>() {}
