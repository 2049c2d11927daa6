/**
 * A location of the UN/LOCODE directory, in the shape upstream messages carry.
 *
 * @module
 */
import { Schema } from "effect"

export const Country = Schema.Struct({ name: Schema.String, iso_a2: Schema.String })

export const Coordinates = Schema.Struct({ lat: Schema.Number, lng: Schema.Number })

export const Location = Schema.Struct({
  name: Schema.String,
  country: Country,
  timezone: Schema.String,
  unlocode: Schema.String,
  coordinates: Coordinates
})
export type Location = typeof Location.Type
