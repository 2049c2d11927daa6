/**
 * Settings of tracking and rendering.
 *
 * @module
 */
import { Context, Layer } from "effect"
import { type Cadence, defaultCadence } from "./TrackingTarget.js"

export interface TrackingSettings {
  /** Days after discharge (UV) before demurrage starts. */
  readonly demurrageFreeDays: number
  /** Days after gate out full (GT) before detention starts. */
  readonly detentionFreeDays: number
  /** Minutes of voyage time between two LOCATION_UPDATE messages. */
  readonly locationIntervalMinutes: number
  /** How often tracked targets are checked, and when they stop (see `TrackingTarget`). */
  readonly cadence: Cadence
}

export class TrackingConfig extends Context.Tag("@tradeflow/core/TrackingConfig")<TrackingConfig, TrackingSettings>() {}

/**
 * The defaults: 5 demurrage free days, 7 detention free days, a position every 60 minutes, the
 * cadence of `TrackingTarget.defaultCadence`.
 */
export const defaults: TrackingSettings = {
  demurrageFreeDays: 5,
  detentionFreeDays: 7,
  locationIntervalMinutes: 60,
  cadence: defaultCadence
}

/** Tracking settings, each defaulting to {@link defaults}. */
export const layer = (settings: Partial<TrackingSettings> = {}): Layer.Layer<TrackingConfig> =>
  Layer.succeed(TrackingConfig, { ...defaults, ...settings })
