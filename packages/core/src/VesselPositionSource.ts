/**
 * Port: a live feed of vessel reports (AIS): positions, and the static data that ties a vessel's
 * MMSI to its IMO number and name. `@tradeflow/tracking-ais` implements it over raw NMEA 0183
 * (`!AIVDM` / `!AIVDO`) on TCP.
 *
 * A feed is a stream that runs for as long as it is consumed: an adapter reconnects by itself
 * (with backoff) when its connection drops or falls silent, so the stream fails only on a
 * configuration it can never use.
 *
 * @module
 */
import { Context, Data, Layer, Stream } from "effect"

/** A position report (AIS message types 1, 2, 3, 18, 19). */
export interface VesselPosition {
  readonly _tag: "Position"
  /** Nine digits. */
  readonly mmsi: string
  /** Degrees, −90 … 90. Reports of an unavailable or impossible position (91, 181) are not emitted. */
  readonly lat: number
  /** Degrees, −180 … 180. */
  readonly lng: number
  /**
   * When the position was observed (epoch ms): the receive time, moved back to the report's UTC
   * second when it carries one.
   */
  readonly observed_at: number
  /** Speed over ground in knots, when reported. */
  readonly sog?: number | undefined
  /** Course over ground in degrees, when reported. */
  readonly cog?: number | undefined
}

/** Static and voyage data of a vessel (AIS message types 5, 19, 24). */
export interface VesselStatic {
  readonly _tag: "Static"
  readonly mmsi: string
  /** Seven digits, when reported (type 5 only). */
  readonly imo?: string | undefined
  readonly name?: string | undefined
  readonly call_sign?: string | undefined
  /** When the report was received (epoch ms). */
  readonly observed_at: number
}

/** One report of a feed. */
export type VesselReport = VesselPosition | VesselStatic

/** A feed that cannot run at all (a malformed address, say). */
export class VesselFeedError extends Data.TaggedError("VesselFeedError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export class VesselPositionSource extends Context.Tag("@tradeflow/core/VesselPositionSource")<VesselPositionSource, {
  /** The reports, as they arrive. */
  readonly reports: Stream.Stream<VesselReport, VesselFeedError>
}>() {}

/** No feed: production vessels get no positions. */
export const layerEmpty: Layer.Layer<VesselPositionSource> = Layer.succeed(
  VesselPositionSource,
  VesselPositionSource.of({ reports: Stream.never })
)
