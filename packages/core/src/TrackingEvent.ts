/**
 * The neutral, DCSA-shaped form of a tracking event: what every source of events hands to the
 * merge (`TrackingMerge`), whether a carrier published it (DCSA Track & Trace 2.2 or 3.0), the
 * client posted it (`events`, the `dcsa-tnt` scheme) or a UAT mock journey generated it.
 *
 * An event is one version of one event of its source: `event_id` names the event at its source,
 * `updated_at` the version (DCSA 2.2 `eventCreatedDateTime`, 3.0 `eventUpdatedDateTime`). A later
 * version of the same `event_id` overrides an earlier one; a version with `retracted` discards
 * every version of its `event_id` (DCSA 3.0 `isRetracted`).
 *
 * The milestone an event reports is (`container_reference`, `status_code` or message,
 * `location`, `voyage`) within its source (see `TrackingMerge.milestoneKey`).
 *
 * @module
 */
import { Schema } from "effect"

/** DCSA's event classifier: planned, estimated or actual. */
export const Classifier = Schema.Literal("PLN", "EST", "ACT")
export type Classifier = typeof Classifier.Type

/** DCSA's event types that the merge uses; IoT and reefer events are not tracked. */
export const EventType = Schema.Literal("TRANSPORT", "EQUIPMENT", "SHIPMENT")
export type EventType = typeof EventType.Type

/** The vessel (or other means of transport) of a transport call, as far as the source names it. */
export const TransportCall = Schema.Struct({
  /** DCSA `modeOfTransport`: VESSEL, BARGE, RAIL, TRUCK; absent when not given. */
  mode: Schema.optional(Schema.String),
  vessel_name: Schema.optional(Schema.String),
  /** Seven digits. */
  vessel_imo: Schema.optional(Schema.String),
  /** Nine digits. */
  vessel_mmsi: Schema.optional(Schema.String),
  /** The carrier's voyage number (DCSA 2.2 `exportVoyageNumber` / `importVoyageNumber`, 3.0 `carrierExportVoyageNumber`…). */
  voyage: Schema.optional(Schema.String)
})
export type TransportCall = typeof TransportCall.Type

/** One version of one event of a source. */
export const TrackingEvent = Schema.Struct({
  /** The source: a `TrackingSource` id, `import` (posted by the client) or `mock` (a UAT journey). */
  source: Schema.String,
  /** The event's id at its source; versions of one event share it. */
  event_id: Schema.String,
  /** When the source last updated the event (epoch ms): orders the versions of one `event_id`. */
  updated_at: Schema.Number,
  /**
   * The source retracts the event: every version of `event_id` is to be discarded (the fields
   * below are then irrelevant; they are kept as received).
   */
  retracted: Schema.Boolean,
  event_type: EventType,
  /**
   * DCSA's code of the event within its type: `DEPA` / `ARRI` (TRANSPORT), `LOAD`, `DISC`,
   * `GTIN`, `GTOT`, `PICK`, `DROP`, … (EQUIPMENT), the shipment event code (SHIPMENT); for an event
   * posted as free text, the text.
   */
  event_code: Schema.String,
  classifier: Classifier,
  /** The SERVICE.md status code (`GE` … `GR`); null when the event maps onto none (rendered `ZZ`). */
  status_code: Schema.NullOr(Schema.String),
  /** The text rendered as the milestone's `message`. */
  message: Schema.String,
  /** The container (ISO 6346 form); null for an event of the shipment (a vessel move, a document). */
  container_reference: Schema.NullOr(Schema.String),
  /** A UN/LOCODE, else the location text as sent; null when the event names none. */
  location: Schema.NullOr(Schema.String),
  /** When the event happened or is expected to (epoch ms). */
  event_date: Schema.Number,
  transport_call: Schema.optional(TransportCall),
  /** The bookings the event names (DCSA document references BKG). */
  bookings: Schema.Array(Schema.String),
  /** The bills of lading the event names (DCSA document references TRD, BOL). */
  bills_of_lading: Schema.Array(Schema.String),
  /** The event as the source sent it (JSON text), kept with the tradeflow; null for posted and mock events. */
  raw: Schema.NullOr(Schema.String)
})
export type TrackingEvent = typeof TrackingEvent.Type

/** Whether two versions are the same version of the same event (an exact duplicate). */
export const sameVersion = (a: TrackingEvent, b: TrackingEvent): boolean =>
  a.source === b.source && a.event_id === b.event_id && a.updated_at === b.updated_at
