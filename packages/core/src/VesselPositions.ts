/**
 * Service: the latest AIS position of each vessel a `VesselPositionSource` feed reports, by MMSI,
 * and the IMO number ↔ MMSI of each vessel from its static data (AIS type 5). A production
 * tradeflow whose carrier names its vessel's IMO number or MMSI takes its positions from here (see
 * `Processor`); UAT mock voyages keep their synthetic positions.
 *
 * The feed is read in the background for the lifetime of the layer (a feed that fails is read
 * again after a pause). At most `maxVessels` vessels are remembered: the least recently reported
 * are forgotten first.
 *
 * @module
 */
import { Context, Duration, Effect, Layer, Option, Stream } from "effect"
import { type VesselPosition, VesselPositionSource } from "./VesselPositionSource.js"

/** How a vessel is named: its IMO number, its MMSI, or both. */
export interface VesselIds {
  readonly imo?: string | undefined
  readonly mmsi?: string | undefined
}

export class VesselPositions extends Context.Tag("@tradeflow/core/VesselPositions")<VesselPositions, {
  /** The latest position reported for the vessel (by MMSI, else by the MMSI its IMO number maps to). */
  readonly latest: (vessel: VesselIds) => Effect.Effect<Option.Option<VesselPosition>>
}>() {}

/** Options of {@link layer}. */
export interface VesselPositionsOptions {
  /** The most vessels remembered (default 200,000). */
  readonly maxVessels?: number | undefined
  /** How long to wait before reading a feed again after it failed (default 10 seconds). */
  readonly retryAfter?: Duration.DurationInput | undefined
}

/** A map that forgets its least recently set keys past `max`. */
const bounded = <V>(max: number) => {
  const map = new Map<string, V>()
  return {
    get: (key: string) => map.get(key),
    set: (key: string, value: V) => {
      map.delete(key)
      map.set(key, value)
      if (map.size > max) map.delete(map.keys().next().value!)
    }
  }
}

/** The positions of the feed of the context's `VesselPositionSource`, read in the background (a scoped layer). */
export const layer = (
  options: VesselPositionsOptions = {}
): Layer.Layer<VesselPositions, never, VesselPositionSource> =>
  Layer.scoped(
    VesselPositions,
    Effect.gen(function*() {
      const source = yield* VesselPositionSource
      const max = Math.max(1, options.maxVessels ?? 200_000)
      const positions = bounded<VesselPosition>(max)
      const mmsiOfImo = bounded<string>(max)
      yield* source.reports.pipe(
        Stream.runForEach((report) =>
          Effect.sync(() => {
            if (report._tag === "Position") {
              const known = positions.get(report.mmsi)
              if (known === undefined || known.observed_at <= report.observed_at) positions.set(report.mmsi, report)
            } else if (report.imo !== undefined) {
              mmsiOfImo.set(report.imo, report.mmsi)
            }
          })
        ),
        Effect.catchAllCause((cause) =>
          Effect.logWarning("vessel positions: the feed failed, reading it again", cause)
        ),
        Effect.zipRight(Effect.sleep(options.retryAfter ?? Duration.seconds(10))),
        Effect.forever,
        Effect.forkScoped
      )
      return VesselPositions.of({
        latest: (vessel) =>
          Effect.sync(() => {
            const mmsi = vessel.mmsi ?? (vessel.imo === undefined ? undefined : mmsiOfImo.get(vessel.imo))
            return Option.fromNullable(mmsi === undefined ? undefined : positions.get(mmsi))
          })
      })
    })
  )
