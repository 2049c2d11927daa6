/**
 * A location of the UN/LOCODE directory, in the shape upstream messages carry.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/** @since 0.1.0 */
export const Country = Schema.Struct({ name: Schema.String, iso_a2: Schema.String })

/** @since 0.1.0 */
export const Coordinates = Schema.Struct({ lat: Schema.Number, lng: Schema.Number })

/** @since 0.1.0 */
export const Location = Schema.Struct({
  name: Schema.String,
  country: Country,
  timezone: Schema.String,
  unlocode: Schema.String,
  coordinates: Coordinates
})
/** @since 0.1.0 */
export type Location = typeof Location.Type
