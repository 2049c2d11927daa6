/**
 * The upstream message (APIMessage) of SERVICE.md with every payload and shared shape, and the
 * widget search result. Field order is the order of SERVICE.md; rendered bodies are encoded with
 * these schemas, so JSON keys come out in this order.
 *
 * Where SERVICE.md gives a field as a plain string but the value can be unknown (a reading of a
 * journey side nobody has reported yet, a milestone without a location), the schema says
 * `NullOr` and the renderer writes `null`.
 *
 * @module
 */
import { Schema } from "effect"
import { Location } from "./Location.js"
import { StopReason, TargetState, TrackingTarget } from "./TrackingTarget.js"

export { Coordinates, Country, Location } from "./Location.js"

/** An ISO 8601 date-time as rendered (`Date.prototype.toISOString`, UTC). */
export const DateTimeString = Schema.String

/** `Carrier` / `Entity`: a named party. */
export const Carrier = Schema.Struct({ name: Schema.String })
export type Carrier = typeof Carrier.Type

export const Entity = Carrier

/** A container as messages describe it. */
export const Container = Schema.Struct({
  reference: Schema.String,
  container_type: Schema.String,
  container_length: Schema.Number,
  container_is_reefer: Schema.Boolean
})
export type Container = typeof Container.Type

/** A vessel: IMO number 7 digits, MMSI number 9 digits. */
export const Vessel = Schema.Struct({
  name: Schema.String,
  imo_number: Schema.String,
  mmsi_number: Schema.String
})
export type Vessel = typeof Vessel.Type

/**
 * One reading of a departure or arrival: `reading` is the date-time reported, `event_date` when it
 * was received. `is_provisional` is `!actual`.
 */
export const ReadingLog = Schema.Struct({
  actual: Schema.Boolean,
  reading: DateTimeString,
  is_latest: Schema.Boolean,
  event_date: DateTimeString,
  is_provisional: Schema.Boolean,
  is_latest_provisional: Schema.Boolean
})
export type ReadingLog = typeof ReadingLog.Type

const moveFields = {
  type: Schema.Literal("arrival", "departure"),
  actual: Schema.Boolean,
  is_pol: Schema.Boolean,
  carrier: Carrier,
  location: Location,
  containers: Schema.Array(Container),
  reading_log: Schema.Array(ReadingLog),
  is_final_pod: Schema.Boolean,
  latest_reading: Schema.NullOr(DateTimeString),
  first_known_reading: Schema.NullOr(DateTimeString),
  carrier_transport_unit: Vessel,
  first_confirmed_reading: Schema.NullOr(DateTimeString),
  latest_confirmed_reading: Schema.NullOr(DateTimeString),
  is_transshipment_location: Schema.Boolean,
  latest_provisional_reading: Schema.NullOr(DateTimeString)
}

/**
 * The arrival of a sea leg. `latest_reading` / `first_known_reading` are the last / first entry of
 * `reading_log`; the confirmed readings are the first / last actual entries, the provisional one
 * the last predicted entry (null when there is none).
 */
export const Arrival = Schema.Struct(moveFields)
export type Arrival = typeof Arrival.Type

/** The departure of a sea leg: as {@link Arrival}, `carrier` optional. */
export const Departure = Schema.Struct({ ...moveFields, carrier: Schema.optional(Carrier) })
export type Departure = typeof Departure.Type

export const SeaShipmentLeg = Schema.Struct({
  arrival: Arrival,
  departure: Departure,
  carrier: Carrier,
  carrier_transport_unit: Vessel
})
export type SeaShipmentLeg = typeof SeaShipmentLeg.Type

/** `booking_number` / `bill_of_lading_number`: the first booking / bill of lading, or null. */
export const TransportPlanLeg = Schema.Struct({
  carrier: Carrier,
  booking_number: Schema.optional(Schema.NullOr(Schema.String)),
  sequence_number: Schema.Number,
  sea_shipment_legs: Schema.Array(SeaShipmentLeg),
  bill_of_lading_number: Schema.optional(Schema.NullOr(Schema.String))
})
export type TransportPlanLeg = typeof TransportPlanLeg.Type

/** The full shipment: one transport plan leg once both the port of loading and of discharge are known. */
export const Shipment = Schema.Struct({
  containers: Schema.Array(Container),
  transport_plan_legs: Schema.Array(TransportPlanLeg)
})
export type Shipment = typeof Shipment.Type

/** The `change` of a SHIPMENT_CHANGE. */
export const ShipmentChangeDetails = Schema.Struct({
  actual: Schema.Boolean,
  is_pol: Schema.Boolean,
  booking_reference: Schema.NullOr(Schema.String),
  bill_of_lading_reference: Schema.NullOr(Schema.String),
  cargo_opening: Schema.NullOr(Schema.String),
  vessel: Vessel,
  carrier: Carrier,
  reading: DateTimeString,
  location: Schema.NullOr(Location),
  move_type: Schema.Literal("arrival", "departure"),
  containers: Schema.Array(Container),
  is_final_pod: Schema.Boolean,
  predicted_at: DateTimeString,
  is_transshipment_location: Schema.Boolean
})
export type ShipmentChangeDetails = typeof ShipmentChangeDetails.Type

/** Payload of SHIPMENT_CHANGE. */
export const ShipmentChange = Schema.Struct({
  type: Schema.Literal("SHIPMENT_CHANGE"),
  change: ShipmentChangeDetails,
  shipment: Schema.optional(Shipment)
}).annotations({ identifier: "ShipmentChange", description: "Payload of SHIPMENT_CHANGE" })
export type ShipmentChange = typeof ShipmentChange.Type

/** An entry of a milestone's predicted-date history. */
export const HistoryEntry = Schema.Struct({
  actual: Schema.Boolean,
  source: Schema.String,
  event_date: DateTimeString,
  predicted_at: DateTimeString
})
export type HistoryEntry = typeof HistoryEntry.Type

export const ContainerDetails = Schema.Struct({
  reference: Schema.String,
  container_type: Schema.String,
  container_length: Schema.Number,
  container_is_reefer: Schema.Boolean
})

/** Free time ends: discharge (UV) plus the demurrage free days, gate out full (GT) plus the detention free days. */
export const DwellDetails = Schema.Struct({
  demurrage_free_time_expires: Schema.NullOr(DateTimeString),
  detention_free_time_expires: Schema.NullOr(DateTimeString)
})
export type DwellDetails = typeof DwellDetails.Type

/**
 * Payload of CONTAINER_MILESTONE (`type` is `CONTAINER_MILESTONES`, as SERVICE.md writes it).
 * `location` is null when the event named none.
 */
export const ContainerMilestone = Schema.Struct({
  type: Schema.Literal("CONTAINER_MILESTONES"),
  actual: Schema.Boolean,
  history: Schema.Array(HistoryEntry),
  container_details: ContainerDetails,
  message: Schema.String,
  status_code: Schema.String,
  location: Schema.NullOr(Location),
  event_date: DateTimeString,
  predicted_at: Schema.NullOr(DateTimeString),
  transport_unit_reference: Schema.String,
  booking_reference: Schema.NullOr(Schema.String),
  bill_of_lading_reference: Schema.NullOr(Schema.String),
  shipment: Schema.optional(Shipment),
  dwell_details: DwellDetails
}).annotations({ identifier: "ContainerMilestone", description: "Payload of CONTAINER_MILESTONE" })
export type ContainerMilestone = typeof ContainerMilestone.Type

/** `YYYY-MM-DD HH:MM:SS.ffffff`, no offset (UTC). */
export const LocationUpdateDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/))

/** Payload of LOCATION_UPDATE: a periodic position of the vessel. */
export const LocationUpdate = Schema.Struct({
  type: Schema.Literal("LOCATION_UPDATE"),
  lat: Schema.Number,
  lng: Schema.Number,
  event_date: LocationUpdateDate,
  vessel_name: Schema.String
}).annotations({
  identifier: "LocationUpdate",
  description: "Payload of LOCATION_UPDATE: a periodic position of the vessel"
})
export type LocationUpdate = typeof LocationUpdate.Type

/** What a BASIC_STATUS records. */
export const BasicStatusKind = Schema.Literal(
  "TRADEFLOW_CREATED",
  "TRADEFLOW_UPDATED",
  "TRADEFLOW_DEACTIVATED",
  "TRADEFLOW_REACTIVATED",
  "TRACKING_STARTED",
  "TRACKING_STOPPED",
  "TRACKING_NOT_FOUND",
  "EVENT"
)
export type BasicStatusKind = typeof BasicStatusKind.Type

/**
 * Payload of BASIC_STATUS (our shape; SERVICE.md leaves it open).
 *
 * - `status`: a lifecycle change of the tradeflow (`TRADEFLOW_*`), of its tracking by a carrier
 *   (`TRACKING_STARTED`, `TRACKING_STOPPED`, `TRACKING_NOT_FOUND`) or a journey `EVENT`.
 * - `message`: for an event, its message as received or generated; for a lifecycle change a
 *   sentence ("Tradeflow created").
 * - `status_code`: the milestone code of an event (`ZZ` when unclassified); null for lifecycle changes.
 * - `event_date`: when the event happens (or happened); for a lifecycle change, when it was processed.
 * - `actual`: the event's actual flag; true for lifecycle changes.
 * - `container_reference`: the container of an event, else null.
 * - `location`: the event's location, else null.
 * - `predicted_at`: when the service recorded it.
 */
export const BasicStatus = Schema.Struct({
  type: Schema.Literal("BASIC_STATUS"),
  status: BasicStatusKind,
  message: Schema.String,
  status_code: Schema.NullOr(Schema.String),
  event_date: DateTimeString,
  actual: Schema.Boolean,
  container_reference: Schema.NullOr(Schema.String),
  location: Schema.NullOr(Location),
  predicted_at: DateTimeString
}).annotations({ identifier: "BasicStatus", description: "Payload of BASIC_STATUS" })
export type BasicStatus = typeof BasicStatus.Type

/** The APIMessage `type` values. */
export const MessageType = Schema.Literal("SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE", "BASIC_STATUS")
export type MessageType = typeof MessageType.Type

/** The APIMessage `type` values, in the order SERVICE.md lists them. */
export const messageTypes: ReadonlyArray<MessageType> = MessageType.literals

const envelope = <T extends MessageType, P extends Schema.Schema.Any>(type: T, payload: P, identifier: string) =>
  Schema.Struct({
    hash: Schema.String,
    message_generated_event_date: DateTimeString,
    type: Schema.Literal(type),
    tradeflow_reference: Schema.String,
    payload
  }).annotations({ identifier, description: `An upstream message of type ${type}` })

/** A SHIPMENT_CHANGE message. */
export const ShipmentChangeMessage = envelope("SHIPMENT_CHANGE", ShipmentChange, "ShipmentChangeMessage")
/** A CONTAINER_MILESTONE message. */
export const ContainerMilestoneMessage = envelope(
  "CONTAINER_MILESTONE",
  ContainerMilestone,
  "ContainerMilestoneMessage"
)
/** A LOCATION_UPDATE message. */
export const LocationUpdateMessage = envelope("LOCATION_UPDATE", LocationUpdate, "LocationUpdateMessage")
/** A BASIC_STATUS message. */
export const BasicStatusMessage = envelope("BASIC_STATUS", BasicStatus, "BasicStatusMessage")

/**
 * An upstream message. `payload.shipment` is optional only because `excludes=shipment` removes
 * it; the renderer always writes it for SHIPMENT_CHANGE and CONTAINER_MILESTONE.
 */
export const ApiMessage = Schema.Union(
  ShipmentChangeMessage,
  ContainerMilestoneMessage,
  LocationUpdateMessage,
  BasicStatusMessage
).annotations({ identifier: "APIMessage", description: "An upstream message; its payload depends on type" })
export type ApiMessage = typeof ApiMessage.Type

/** An APIMessage as JSON text. */
export const ApiMessageFromJson = Schema.parseJson(ApiMessage)

/** The location object of the widget search. */
export const WidgetLocation = Schema.Struct({
  name: Schema.String,
  unlocode: Schema.String,
  timezone: Schema.String,
  country: Schema.String
})
export type WidgetLocation = typeof WidgetLocation.Type

/** The departure or arrival of a widget result. */
export const WidgetMove = Schema.Struct({
  vessel: Schema.Struct({ name: Schema.String }),
  event_date: DateTimeString,
  actual: Schema.Boolean,
  location: WidgetLocation
})
export type WidgetMove = typeof WidgetMove.Type

/** A container entry of a widget result; `latest_actual_milestone` is null before the first actual event. */
export const WidgetContainer = Schema.Struct({
  reference: Schema.String,
  details: Schema.Struct({
    type_code: Schema.String,
    type_group: Schema.String,
    type_reefer: Schema.Boolean,
    length: Schema.Number
  }),
  latest_actual_milestone: Schema.NullOr(Schema.Struct({
    vessel: Schema.NullOr(Schema.Struct({ name: Schema.String })),
    location: WidgetLocation,
    event_date: DateTimeString,
    actual: Schema.Boolean,
    status_code: Schema.String
  }))
})
export type WidgetContainer = typeof WidgetContainer.Type

/**
 * The widget search result. References are null when the tradeflow has none; `departure` /
 * `arrival` are null while the port or date is unknown.
 */
export const WidgetSearchResult = Schema.Struct({
  carrier: Schema.String,
  booking_reference: Schema.NullOr(Schema.String),
  bill_of_lading_reference: Schema.NullOr(Schema.String),
  departure: Schema.NullOr(WidgetMove),
  arrival: Schema.NullOr(WidgetMove),
  containers: Schema.Array(WidgetContainer)
})
export type WidgetSearchResult = typeof WidgetSearchResult.Type

/** One tracked target of a tradeflow, as the V3 document's `tracking` block and the console show it. */
export const TrackingTargetInfo = Schema.Struct({
  source: Schema.String,
  kind: TrackingTarget.fields.kind,
  container_reference: Schema.NullOr(Schema.String),
  booking_reference: Schema.NullOr(Schema.String),
  bill_of_lading_reference: Schema.NullOr(Schema.String),
  state: TargetState,
  stop_reason: Schema.NullOr(StopReason),
  last_check: Schema.NullOr(DateTimeString),
  next_check: Schema.NullOr(DateTimeString),
  last_event: Schema.NullOr(DateTimeString),
  failures: Schema.Number,
  last_error: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "TrackingTargetInfo",
  description: "A target a tracking source is asked about for a tradeflow, with its freshness and schedule"
})
export type TrackingTargetInfo = typeof TrackingTargetInfo.Type

/** The `tracking` block of the V3 document's metadata: the source tracking the tradeflow and its targets. */
export const TrackingInfo = Schema.Struct({
  source: Schema.String,
  targets: Schema.Array(TrackingTargetInfo)
}).annotations({ identifier: "TrackingInfo", description: "How a tracking source tracks the tradeflow" })
export type TrackingInfo = typeof TrackingInfo.Type

/**
 * The `metadata` block of the V3 tradeflow document. `carrier_name` / `carrier_scac` are null when
 * never sent; `tracking` is present when a tracking source tracks the tradeflow.
 */
export const TradeflowMetadata = Schema.Struct({
  last_updated: DateTimeString,
  carrier_name: Schema.NullOr(Schema.String),
  carrier_scac: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  tracking: Schema.optional(TrackingInfo)
})
export type TradeflowMetadata = typeof TradeflowMetadata.Type

/**
 * One tracked event of the V3 tradeflow document: the fields the CONTAINER_MILESTONE of the
 * event carries (without `type` and `shipment`), for events of the whole shipment too.
 *
 * - `status_code` is `ZZ` when unclassified; `event_date` is the predicted date while none is known.
 * - `location` is the UN/LOCODE of the event's location (its Location object is in the document's
 *   `locations`); null when the event names no location or only free text. `location_name` is the
 *   location's name (the text as sent for free text), null without a location.
 * - `transport_unit_reference`, `container_details` and `dwell_details` are null for an event of
 *   the shipment (no container).
 */
export const TradeflowEvent = Schema.Struct({
  status_code: Schema.String,
  message: Schema.String,
  actual: Schema.Boolean,
  event_date: DateTimeString,
  predicted_at: DateTimeString,
  location: Schema.NullOr(Schema.String),
  location_name: Schema.NullOr(Schema.String),
  history: Schema.Array(HistoryEntry),
  transport_unit_reference: Schema.NullOr(Schema.String),
  container_details: Schema.NullOr(ContainerDetails),
  booking_reference: Schema.NullOr(Schema.String),
  bill_of_lading_reference: Schema.NullOr(Schema.String),
  dwell_details: Schema.NullOr(DwellDetails)
})
export type TradeflowEvent = typeof TradeflowEvent.Type

/**
 * A partner link of the V3 tradeflow document: the partner organisation (its id is derived from
 * the owning organisation and the name, see `RenderDocument.partnerId`), the role and the reference, each
 * null when never sent.
 */
export const TradeflowPartner = Schema.Struct({
  organisation: Schema.Struct({ id: Schema.String, name: Schema.String }),
  role: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String)
})
export type TradeflowPartner = typeof TradeflowPartner.Type

/**
 * The V3 tradeflow document (DECISIONS.md §6): the whole state of a tradeflow, as the console
 * download and the `tradeflow` webhook format deliver it.
 *
 * - `events`: every tracked event, in event-date order (see {@link TradeflowEvent}).
 * - `locations`: the distinct Location objects the events and the shipment's ports name by
 *   UN/LOCODE, sorted by UN/LOCODE.
 * - `containers`: the containers, as messages describe them.
 * - `shipment`: exactly the `shipment` of the tradeflow's messages.
 * - `partners`: the tradeflow's partner links in the order they were made (always present; empty
 *   in UAT, where `customer_name` and `partners` link nothing), see {@link TradeflowPartner}.
 * - `vessels`: the distinct vessels (only in the download; may be absent in webhooks).
 */
export const TradeflowDocument = Schema.Struct({
  version: Schema.Literal("3.0.0"),
  tradeflow_reference: Schema.String,
  metadata: TradeflowMetadata,
  events: Schema.Array(TradeflowEvent),
  locations: Schema.Array(Location),
  containers: Schema.Array(Container),
  shipment: Shipment,
  partners: Schema.Array(TradeflowPartner),
  vessels: Schema.optional(Schema.Array(Vessel))
}).annotations({ identifier: "TradeflowDocument" })
export type TradeflowDocument = typeof TradeflowDocument.Type
