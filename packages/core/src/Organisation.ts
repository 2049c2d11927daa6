/**
 * Organisations, their API keys and their widget keys.
 *
 * @module
 */
import { Schema } from "effect"
import { Environment } from "./Environment.js"

/**
 * An organisation. Console-created organisations are `production`; the companion
 * `<name> (UAT)` organisation is `uat` and points at its live organisation.
 */
export const Organisation = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  environment: Environment,
  live_organisation_id: Schema.NullOr(Schema.String),
  created_at: Schema.Number
})
export type Organisation = typeof Organisation.Type

/**
 * A stored API key: never the key itself, only its SHA-256 (hex). `organisation_id` is the
 * organisation the key reads and writes (the companion organisation for `uat` keys).
 */
export const ApiKeyRecord = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  environment: Environment,
  key_hash: Schema.String,
  /** A name for people; empty when none was given. */
  name: Schema.String,
  /** Who created it: a user's e-mail or `operator token`; null for keys made before this was kept. */
  created_by: Schema.NullOr(Schema.String),
  /** When it was last used, to the minute; null when never (or not since this was kept). */
  last_used_at: Schema.NullOr(Schema.Number),
  created_at: Schema.Number,
  revoked_at: Schema.NullOr(Schema.Number)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/**
 * A stored widget key (the deprecated widget search): never the key itself, only its SHA-256
 * (hex). It reads exactly one organisation, `organisation_id` (a live organisation or a `(UAT)`
 * companion).
 */
export const WidgetKeyRecord = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  key_hash: Schema.String,
  /** A name for people; empty when none was given. */
  name: Schema.String,
  /** Who created it: a user's e-mail or `operator token`; null for keys made before this was kept. */
  created_by: Schema.NullOr(Schema.String),
  /** When it was last used, to the minute; null when never (or not since this was kept). */
  last_used_at: Schema.NullOr(Schema.Number),
  created_at: Schema.Number,
  revoked_at: Schema.NullOr(Schema.Number)
})
export type WidgetKeyRecord = typeof WidgetKeyRecord.Type
