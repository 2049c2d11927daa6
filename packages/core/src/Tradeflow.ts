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
import { TrackingTarget } from "./TrackingTarget.js"
import { ContainerEntry, MockSpeed } from "./TradeflowRecord.js"

/**
 * One entry of a predicted-date history: one reading of a milestone. Readings of a source that
 * names its events carry the event's id and version (`TrackingEvent`); a retracted one stays in
 * the history, marked, and no longer counts.
 */
export const Prediction = Schema.Struct({
  actual: Schema.Boolean,
  source: Schema.String,
  event_date: Schema.Number,
  predicted_at: Schema.Number,
  event_id: Schema.optional(Schema.String),
  updated_at: Schema.optional(Schema.Number),
  retracted: Schema.optional(Schema.Boolean)
})
export type Prediction = typeof Prediction.Type

/**
 * A milestone of a tradeflow and its current reading. `key` identifies the same fact across
 * re-posts and versions (container, status or message, location, source, and voyage when the
 * source names one: `TradeflowMerge.eventKey`); a new date for the same key is a new prediction.
 * The current reading is the latest actual one, else the latest one (see `TradeflowMerge`).
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
  /** `import` (posted by the client), `mock` (a UAT journey) or the id of a `TrackingSource`. */
  source: Schema.String,
  predicted_at: Schema.Number,
  history: Schema.Array(Prediction),
  /** The vessel of the event when it is not the tradeflow's own (see `MockJourneys`), or as its source names it. */
  vessel: Schema.optional(Schema.String),
  /** The carrier's voyage number, as the event's source names it. */
  voyage: Schema.optional(Schema.String),
  /** The vessel's IMO number (seven digits), as a carrier names it: how its AIS positions are found. */
  vessel_imo: Schema.optional(Schema.String),
  /** The vessel's MMSI (nine digits), as a carrier names it. */
  vessel_mmsi: Schema.optional(Schema.String)
})
export type TrackedEvent = typeof TrackedEvent.Type

/** A retraction of every version of an event of a source up to `updated_at`. */
export const Retraction = Schema.Struct({
  source: Schema.String,
  event_id: Schema.String,
  updated_at: Schema.Number
})
export type Retraction = typeof Retraction.Type

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

/** The tracking of a tradeflow by a source: the source's id and the targets it is asked about. */
export const TradeflowTracking = Schema.Struct({
  source: Schema.String,
  targets: Schema.Array(TrackingTarget)
})
export type TradeflowTracking = typeof TradeflowTracking.Type

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
  /**
   * Milestones whose every reading its source retracted: out of the journey, kept (nothing is
   * ever deleted); absent (empty) in documents stored before retractions existed.
   */
  retracted_events: Schema.optionalWith(Schema.Array(TrackedEvent), { default: () => [] }),
  /**
   * Retractions by source and event id, with the version that retracted: a version of such an
   * event that is not newer is ignored, even when it arrives after the retraction.
   */
  retractions: Schema.optionalWith(Schema.Array(Retraction), { default: () => [] }),
  /**
   * Its tracking by a source (production, or UAT without a mock journey, when a configured source
   * routes it); null when none tracks it. Absent (null) in documents stored before tracking existed.
   */
  tracking: Schema.optionalWith(Schema.NullOr(TradeflowTracking), { default: () => null }),
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
  /**
   * The AIS observation time of the last LOCATION_UPDATE rendered from a real position (a tracked
   * tradeflow's vessel under way); absent (none) before the first.
   */
  ais_position_at: Schema.optional(Schema.Number),
  created_at: Schema.Number,
  updated_at: Schema.Number
})
export type Tradeflow = typeof Tradeflow.Type
