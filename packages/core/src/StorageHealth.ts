/**
 * Port: whether the storage can serve, for readiness probes: it answers, and its schema has every
 * migration this build knows.
 *
 * @module
 */
import { Context, Effect, Layer } from "effect"

/** Something that keeps the process from being ready: the part (`database`, `migrations`, a loop's name) and why. */
export interface Missing {
  readonly component: string
  readonly reason: string
}

export class StorageHealth extends Context.Tag("@tradeflow/core/StorageHealth")<StorageHealth, {
  /**
   * What keeps the storage from serving: nothing when it answers and its schema is the one this
   * build expects. Never fails; an unreachable database is reported as missing.
   */
  readonly check: Effect.Effect<ReadonlyArray<Missing>>
}>() {}

/** In memory the storage is always there. */
export const layerMemory: Layer.Layer<StorageHealth> = Layer.succeed(
  StorageHealth,
  StorageHealth.of({ check: Effect.succeed([]) })
)
