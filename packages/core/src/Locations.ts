/**
 * Port: the UN/LOCODE directory. The built-in adapter knows the world's largest container
 * ports; a host application can plug in the full UN/LOCODE list with {@link layerFromList} or
 * an adapter of its own.
 *
 * @module
 */
import { Context, Effect, Layer, Option } from "effect"
import { builtinPorts } from "./internal/builtinPorts.js"
import type { Location } from "./Location.js"
import type { StorageError } from "./StorageError.js"

export class Locations extends Context.Tag("@tradeflow/core/Locations")<Locations, {
  /** The location of an upper-case UN/LOCODE, if the directory knows it. */
  readonly lookup: (unlocode: string) => Effect.Effect<Option.Option<Location>, StorageError>
  /** Every known location (used to pick mock ports and in tests). */
  readonly all: Effect.Effect<ReadonlyArray<Location>, StorageError>
}>() {}

/** A directory over a fixed list of locations. */
export const layerFromList = (locations: ReadonlyArray<Location>): Layer.Layer<Locations> => {
  const byCode = new Map(locations.map((l) => [l.unlocode, l] as const))
  return Layer.succeed(
    Locations,
    Locations.of({
      lookup: (unlocode) => Effect.succeed(Option.fromNullable(byCode.get(unlocode))),
      all: Effect.succeed(locations)
    })
  )
}

/** The built-in directory: the largest container ports by throughput. */
export const layerBuiltin: Layer.Layer<Locations> = layerFromList(builtinPorts)
