/**
 * The stored state of a tradeflow: the merge of every record posted under its reference, and
 * the journey events known for it (imported and mock).
 *
 * Storage adapters persist it as JSON (`Schema.encode(Tradeflow)`) next to the columns they
 * index: `organisation_id`, `reference`, `active` and the container numbers.
 *
 * @module
 */
import { Schema } from "effect"
import { StatusCode } from "./StatusCode.js"
import { ContainerEntry, MockSpeed } from "./TradeflowRecord.js"

/** One entry of a predicted-date history. */
export const Prediction = Schema.Struct({
  actual: Schema.Boolean,
  source: Schema.String,
  event_date: Schema.Number,
  predicted_at: Schema.Number
})
export type Prediction = typeof Prediction.Type

/**
 * A journey event of a tradeflow. `key` identifies the same fact across re-posts (container,
 * status or message, location, source); a new date for the same key is a new prediction.
 */
export const TrackedEvent = Schema.Struct({
  key: Schema.String,
  message: Schema.String,
  status_code: Schema.NullOr(Schema.String),
  container_reference: Schema.NullOr(Schema.String),
  /** A UN/LOCODE where the input named one, else the location text as sent. */
  location: Schema.NullOr(Schema.String),
  event_date: Schema.NullOr(Schema.Number),
  actual: Schema.Boolean,
  source: Schema.Literal("import", "mock"),
  predicted_at: Schema.Number,
  history: Schema.Array(Prediction),
  /** The vessel of a mock event when it is not the tradeflow's own (see `MockJourneys`). */
  vessel: Schema.optional(Schema.String)
})
export type TrackedEvent = typeof TrackedEvent.Type

/**
 * An event of a generated mock journey (see `MockJourneys`). `container_reference` null is a vessel
 * move of the shipment (a departure or an arrival), which renders as a SHIPMENT_CHANGE.
 */
export const MockEvent = Schema.Struct({
  /** The journey step (0, 1, ...): the events of one step are released together. */
  step: Schema.Number,
  status_code: StatusCode,
  message: Schema.String,
  container_reference: Schema.NullOr(Schema.String),
  /** UN/LOCODE. */
  location: Schema.String,
  /** Epoch milliseconds. */
  event_date: Schema.Number,
  actual: Schema.Boolean,
  /** The vessel, when it is not the tradeflow's own (a transshipment's second vessel, a vessel cargo was rolled from). */
  vessel: Schema.optional(Schema.String)
})
export type MockEvent = typeof MockEvent.Type

/**
 * A mock journey being released over time (`mock_tracking.speed` other than `instant`): step k is
 * due at `started_at` + k · the speed's interval; `pending` holds the events not released yet, in
 * journey order.
 */
export const MockRelease = Schema.Struct({
  speed: MockSpeed.pipe(Schema.pickLiteral("fast", "normal", "slow")),
  started_at: Schema.Number,
  pending: Schema.Array(MockEvent)
})
export type MockRelease = typeof MockRelease.Type

/** The scalar fields of the merged records (last value sent wins). */
export const TradeflowDetails = Schema.Struct({
  port_of_loading: Schema.optional(Schema.String),
  port_of_discharge: Schema.optional(Schema.String),
  estimated_time_of_departure: Schema.optional(Schema.String),
  explicit_departure_confirmation: Schema.optional(Schema.Boolean),
  estimated_time_of_arrival: Schema.optional(Schema.String),
  explicit_arrival_confirmation: Schema.optional(Schema.Boolean),
  actual_time_of_departure: Schema.optional(Schema.String),
  actual_time_of_arrival: Schema.optional(Schema.String),
  vessel: Schema.optional(Schema.String),
  customer_name: Schema.optional(Schema.String),
  customer_reference: Schema.optional(Schema.String),
  carrier_name: Schema.optional(Schema.String),
  carrier_scac: Schema.optional(Schema.String),
  lead_contact: Schema.optional(Schema.String),
  incoterms: Schema.optional(Schema.String),
  configuration: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  references: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type TradeflowDetails = typeof TradeflowDetails.Type

/**
 * A link of the tradeflow to a partner organisation of its organisation (DECISIONS.md §3,
 * production only), identified by (`name`, `role`). The partner itself is not stored: its id is
 * derived from the organisation and the name (`RenderDocument.partnerId`).
 */
export const PartnerLink = Schema.Struct({
  name: Schema.String,
  role: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String)
})
export type PartnerLink = typeof PartnerLink.Type

/** The stored tradeflow. */
export const Tradeflow = Schema.Struct({
  organisation_id: Schema.String,
  reference: Schema.String,
  active: Schema.Boolean,
  containers: Schema.Array(ContainerEntry),
  bill_of_lading_references: Schema.Array(Schema.String),
  booking_references: Schema.Array(Schema.String),
  details: TradeflowDetails,
  events: Schema.Array(TrackedEvent),
  /** The partner links in first-linked order; absent (empty) in documents stored before partners existed. */
  partners: Schema.optionalWith(Schema.Array(PartnerLink), { default: () => [] }),
  /** Digest of the mock inputs last used; the same inputs do not generate a journey again. */
  mock_signature: Schema.NullOr(Schema.String),
  /** The mock journey still being released; null when none is (every `instant` journey). */
  mock_release: Schema.optionalWith(Schema.NullOr(MockRelease), { default: () => null }),
  /**
   * When the tradeflow next needs an Advance (epoch ms): the earlier of its next LOCATION_UPDATE
   * (`next_location_at`) and its next mock release; null when neither is due ever. Storage
   * adapters index it (`TradeflowStore.due`).
   */
  next_position_at: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  /**
   * When the next LOCATION_UPDATE of the voyage is due (epoch ms); null when none is. Absent in
   * documents stored before mock releases existed, where `next_position_at` meant just that.
   */
  next_location_at: Schema.optional(Schema.NullOr(Schema.Number)),
  created_at: Schema.Number,
  updated_at: Schema.Number
})
export type Tradeflow = typeof Tradeflow.Type
