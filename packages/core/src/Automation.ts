/**
 * Webhook automations: where an organisation's messages are pushed (DECISIONS.md §4, §6).
 *
 * @module
 */
import { Schema } from "effect"

/** `message`: the body is one APIMessage; `tradeflow`: the V3 tradeflow document after the change. */
export const AutomationFormat = Schema.Literal("message", "tradeflow")
export type AutomationFormat = typeof AutomationFormat.Type

/** The message types an automation may receive (BASIC_STATUS is not an integration type). */
export const IntegrationType = Schema.Literal("SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE")
export type IntegrationType = typeof IntegrationType.Type

/** A signing secret (`whsec_…`); a rotated-out secret stays valid until `expires_at` (epoch ms). */
export const AutomationSecret = Schema.Struct({
  secret: Schema.String,
  expires_at: Schema.NullOr(Schema.Number)
})

/** A stored automation. `secrets[0]` is the current secret. */
export const Automation = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  url: Schema.String,
  format: AutomationFormat,
  types: Schema.Array(IntegrationType),
  enabled: Schema.Boolean,
  secrets: Schema.NonEmptyArray(AutomationSecret),
  /** Why the service disabled it (410 from the receiver, failing for 5 days); null when enabled or disabled by hand. */
  disabled_reason: Schema.NullOr(Schema.String),
  /** Since when every delivery failed (epoch ms); null while deliveries succeed. */
  failing_since: Schema.NullOr(Schema.Number),
  created_at: Schema.Number,
  updated_at: Schema.Number
})
export type Automation = typeof Automation.Type
