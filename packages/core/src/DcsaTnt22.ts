/**
 * DCSA Track & Trace 2.2 events: effect/Schema models of the event shapes (the fields the tracking
 * uses), the decoder of a `GET /v2/events` answer or a subscription callback into
 * `TrackingEvent`s, and the encoder back.
 *
 * Two forms of an event:
 * - the **answer** form ({@link TransportEvent}, {@link EquipmentEvent}, {@link ShipmentEvent}):
 *   what a carrier answers, typed as the 2.2 OpenAPI document types it (`eventCreatedDateTime`,
 *   `modeOfTransport`, `emptyIndicatorCode`, a vessel's IMO number and a SHIPMENT event's document
 *   are required, codes are the document's enumerations, date-times are RFC 3339 with an offset,
 *   `eventID` a UUID);
 * - the **posted** form ({@link PostedTransportEvent}, …): what the `dcsa-tnt` integration scheme
 *   accepts from a client, which reads only what it uses (`eventID` and `eventCreatedDateTime` may
 *   be left out, as may the fields above; dates may be any ISO 8601 date-time).
 *
 * Beyond the document's types, an event is malformed when it is an actual (ACT) event whose
 * `eventDateTime` lies more than a day after its `eventCreatedDateTime` (an event is recorded once
 * it happened), when its `eventCreatedDateTime` lies more than a day in the future (with
 * `now`), when it repeats the `eventID` of an earlier event of the same answer (an `eventID`
 * names one event message), or when it names another container, booking or bill of lading than
 * the query it answers. One malformed event fails alone.
 *
 * @module
 */
import { Either, type ParseResult, Schema } from "effect"
import { sha256HexSync } from "./internal/crypto.js"
import {
  DateTime,
  decodeList,
  describe,
  type EventIssues,
  futureIssue,
  isObject,
  notAnObject,
  oneIssue,
  repeatedId,
  schemaIssues,
  skewMillis,
  text,
  unknownType
} from "./internal/dcsaDecoding.js"
import {
  compact,
  emptyIndicatorFor,
  encodedLocation,
  equipmentCodes22,
  firstText,
  imoOf,
  isoOf,
  messageOf as milestoneMessage,
  type MilestoneEvent,
  referencesOf,
  shipmentCodes22,
  shipmentMessageOf,
  statusCodeOf as milestoneStatus
} from "./internal/dcsaMapping.js"
import type { StatusCode } from "./StatusCode.js"
import type { Classifier, TrackingEvent, TransportCall as TrackedCall } from "./TrackingEvent.js"
import type { PushedEvents, TargetQuery } from "./TrackingSource.js"
import {
  IsoDateTime,
  limitedArray,
  normaliseContainerNumber,
  parseIsoDateTime,
  tooManyEntries,
  UnLocode
} from "./TradeflowRecord.js"

/** The problems of one event: the first ones found (each at its pointer), and how many there are in all. */
export type { EventIssues } from "./internal/dcsaDecoding.js"

/** At most this many `documentReferences` per event, refused before any of them is decoded. */
export const maxDocumentReferences = 100

/** The event types of 2.2. */
export const eventTypes = ["TRANSPORT", "EQUIPMENT", "SHIPMENT"] as const

/** PLN (planned), EST (estimated), ACT (actual). */
export const EventClassifierCode = Schema.Literal("PLN", "EST", "ACT")

/** Whether a container is empty or laden. */
export const EmptyIndicatorCode = Schema.Literal("EMPTY", "LADEN")

/** The modes of transport of 2.2. */
export const ModeOfTransport = Schema.Literal("VESSEL", "RAIL", "TRUCK", "BARGE")

/** ARRI (arrived), DEPA (departed). */
export const TransportEventTypeCode = Schema.Literal("ARRI", "DEPA")

/** What happened to a container. */
export const EquipmentEventTypeCode = Schema.Literal(...equipmentCodes22)

/** What happened to a shipment's document. */
export const ShipmentEventTypeCode = Schema.Literal(...shipmentCodes22)

/** The document a SHIPMENT event's `documentID` names. */
export const DocumentTypeCode = Schema.Literal(
  "CBR",
  "BKG",
  "SHI",
  "SRM",
  "TRD",
  "ARN",
  "VGM",
  "CAS",
  "CUS",
  "DGD",
  "OOG"
)

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** An event's id: a UUID (`format: uuid`). */
export const EventId = Schema.String.pipe(Schema.pattern(uuid, { message: () => "must be a UUID" }))

const NonEmpty = Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "must not be empty" }))

const containerNumber = { message: () => "must be a container number" }
const hasContainerCharacter = (s: string) => /[^\s-]/.test(s)

/** A location (the fields used). */
export const Location = Schema.Struct({
  UNLocationCode: Schema.optional(UnLocode),
  locationName: Schema.optional(text(100))
})

/** A vessel: its IMO number, and its name. */
export const Vessel = Schema.Struct({
  vesselIMONumber: text(7),
  vesselName: Schema.optional(text(35))
})

/** A transport call (the fields used). */
export const TransportCall = Schema.Struct({
  modeOfTransport: ModeOfTransport,
  UNLocationCode: Schema.optional(UnLocode),
  location: Schema.optional(Location),
  carrierVoyageNumber: Schema.optional(text(50)),
  exportVoyageNumber: Schema.optional(text(50)),
  importVoyageNumber: Schema.optional(text(50)),
  vessel: Schema.optional(Vessel)
})

/** A document reference: a booking (BKG) or a transport document (TRD). */
export const DocumentReference = Schema.Struct({
  documentReferenceType: Schema.optional(Schema.Literal("BKG", "TRD")),
  documentReferenceValue: Schema.optional(Schema.String)
})

const answered = {
  eventID: Schema.optional(EventId),
  eventCreatedDateTime: DateTime,
  eventClassifierCode: EventClassifierCode,
  eventDateTime: DateTime
}

/** A TRANSPORT event as a carrier answers it: a vessel (or other means of transport) arriving or departing. */
export const TransportEvent = Schema.Struct({
  eventType: Schema.Literal("TRANSPORT"),
  ...answered,
  transportEventTypeCode: TransportEventTypeCode,
  transportCall: TransportCall,
  documentReferences: Schema.optional(limitedArray(DocumentReference, maxDocumentReferences, "event"))
})
export type TransportEvent = typeof TransportEvent.Type

/** An EQUIPMENT event as a carrier answers it: something happening to a container. */
export const EquipmentEvent = Schema.Struct({
  eventType: Schema.Literal("EQUIPMENT"),
  ...answered,
  equipmentEventTypeCode: EquipmentEventTypeCode,
  equipmentReference: Schema.optional(
    text(15).pipe(Schema.filter(hasContainerCharacter, containerNumber))
  ),
  emptyIndicatorCode: EmptyIndicatorCode,
  eventLocation: Schema.optional(Location),
  transportCall: Schema.optional(TransportCall),
  documentReferences: Schema.optional(limitedArray(DocumentReference, maxDocumentReferences, "event"))
})
export type EquipmentEvent = typeof EquipmentEvent.Type

/** A SHIPMENT event as a carrier answers it: something happening to a document of the shipment. */
export const ShipmentEvent = Schema.Struct({
  eventType: Schema.Literal("SHIPMENT"),
  ...answered,
  shipmentEventTypeCode: ShipmentEventTypeCode,
  documentID: Schema.String,
  documentTypeCode: DocumentTypeCode
})
export type ShipmentEvent = typeof ShipmentEvent.Type

/** A DCSA Track & Trace 2.2 event as a carrier answers it. */
export type Event = TransportEvent | EquipmentEvent | ShipmentEvent

/** A document reference as the `dcsa-tnt` scheme reads it; BKG, TRD and BOL are used, other types are ignored. */
export const PostedDocumentReference = Schema.Struct({
  documentReferenceType: Schema.String,
  documentReferenceValue: NonEmpty
})

/** A location as the `dcsa-tnt` scheme reads it. */
export const PostedLocation = Schema.Struct({
  UNLocationCode: Schema.optional(UnLocode),
  locationName: Schema.optional(Schema.String)
})

/** A transport call as the `dcsa-tnt` scheme reads it. */
export const PostedTransportCall = Schema.Struct({
  UNLocationCode: Schema.optional(UnLocode),
  modeOfTransport: Schema.optional(Schema.String),
  location: Schema.optional(PostedLocation),
  vessel: Schema.optional(Schema.Struct({ vesselName: Schema.optional(Schema.String) }))
})

const PostedDocumentReferences = limitedArray(PostedDocumentReference, maxDocumentReferences, "event")

const posted = {
  eventID: Schema.optional(Schema.String),
  eventCreatedDateTime: Schema.optional(IsoDateTime)
}

const postedTimed = {
  eventClassifierCode: EventClassifierCode,
  eventDateTime: IsoDateTime,
  documentReferences: Schema.optional(PostedDocumentReferences)
}

/** A TRANSPORT event as the `dcsa-tnt` scheme reads it. */
export const PostedTransportEvent = Schema.Struct({
  eventType: Schema.Literal("TRANSPORT"),
  ...posted,
  ...postedTimed,
  transportEventTypeCode: TransportEventTypeCode,
  transportCall: PostedTransportCall
})
export type PostedTransportEvent = typeof PostedTransportEvent.Type

/** An EQUIPMENT event as the `dcsa-tnt` scheme reads it. */
export const PostedEquipmentEvent = Schema.Struct({
  eventType: Schema.Literal("EQUIPMENT"),
  ...posted,
  ...postedTimed,
  equipmentEventTypeCode: EquipmentEventTypeCode,
  equipmentReference: Schema.optional(NonEmpty.pipe(Schema.filter(hasContainerCharacter, containerNumber))),
  emptyIndicatorCode: Schema.optional(EmptyIndicatorCode),
  eventLocation: Schema.optional(PostedLocation),
  transportCall: Schema.optional(PostedTransportCall)
})
export type PostedEquipmentEvent = typeof PostedEquipmentEvent.Type

/** A SHIPMENT event as the `dcsa-tnt` scheme reads it: only its document references (and BKG/TRD `documentID`). */
export const PostedShipmentEvent = Schema.Struct({
  eventType: Schema.Literal("SHIPMENT"),
  ...posted,
  eventDateTime: Schema.optional(IsoDateTime),
  documentTypeCode: Schema.optional(Schema.String),
  documentID: Schema.optional(Schema.String),
  documentReferences: Schema.optional(PostedDocumentReferences)
})
export type PostedShipmentEvent = typeof PostedShipmentEvent.Type

/** A DCSA Track & Trace 2.2 event as the `dcsa-tnt` scheme reads it. */
export type PostedEvent = PostedTransportEvent | PostedEquipmentEvent | PostedShipmentEvent

/** A TRANSPORT or EQUIPMENT event of either form. */
export type MovementEvent = TransportEvent | EquipmentEvent | PostedTransportEvent | PostedEquipmentEvent

const milestoneOf = (event: MovementEvent): MilestoneEvent =>
  event.eventType === "TRANSPORT"
    ? {
      eventType: "TRANSPORT",
      code: event.transportEventTypeCode,
      modeOfTransport: event.transportCall.modeOfTransport
    }
    : { eventType: "EQUIPMENT", code: event.equipmentEventTypeCode, emptyIndicatorCode: event.emptyIndicatorCode }

/**
 * The status code of a TRANSPORT or EQUIPMENT event (docs/behaviour.md, `dcsa-tnt`), undefined
 * for the events none fits.
 */
export const statusCodeOf = (event: MovementEvent): StatusCode | undefined => milestoneStatus(milestoneOf(event))

/**
 * The message of a TRANSPORT or EQUIPMENT event: the SERVICE.md name of its status code
 * (`"Vessel departure"`), or for the events without one the DCSA name and code
 * (`"Stuffed (STUF)"`, `"Rail departure (DEPA)"`).
 */
export const messageOf = (event: MovementEvent): string => milestoneMessage(milestoneOf(event))

/**
 * The location of a TRANSPORT or EQUIPMENT event: the event's own UN/LOCODE, else its transport
 * call's, else the transport call location's, else the first location name given.
 */
export const locationOf = (event: MovementEvent): string | undefined => {
  const call = event.transportCall
  const own = event.eventType === "EQUIPMENT" ? event.eventLocation : undefined
  const named = [own?.locationName, call?.location?.locationName].find((n) => n !== undefined && n.trim() !== "")
  return own?.UNLocationCode ?? call?.UNLocationCode ?? call?.location?.UNLocationCode ?? named
}

/** What an event is read as: the answer form of a carrier, or the posted form of the `dcsa-tnt` scheme. */
export type Form = "answer" | "posted"

/** How events are read. */
export interface ElementOptions {
  readonly form: Form
  /** Classifier codes a carrier writes for DCSA's (`{ PLAN: "PLN" }`), replaced before decoding. */
  readonly classifierAliases?: Readonly<Record<string, Classifier>> | undefined
  /** The current instant (epoch ms): with it, an `eventCreatedDateTime` more than a day later is malformed. */
  readonly now?: number | undefined
}

type Decoder<A> = (raw: unknown) => Either.Either<A, ParseResult.ParseError>

const answerDecoders: Readonly<Record<Event["eventType"], Decoder<Event>>> = {
  TRANSPORT: Schema.decodeUnknownEither(TransportEvent, { errors: "all" }),
  EQUIPMENT: Schema.decodeUnknownEither(EquipmentEvent, { errors: "all" }),
  SHIPMENT: Schema.decodeUnknownEither(ShipmentEvent, { errors: "all" })
}

const postedDecoders: Readonly<Record<PostedEvent["eventType"], Decoder<PostedEvent>>> = {
  TRANSPORT: Schema.decodeUnknownEither(PostedTransportEvent, { errors: "all" }),
  EQUIPMENT: Schema.decodeUnknownEither(PostedEquipmentEvent, { errors: "all" }),
  SHIPMENT: Schema.decodeUnknownEither(PostedShipmentEvent, { errors: "all" })
}

const withAlias = (raw: Record<string, unknown>, aliases: ElementOptions["classifierAliases"]) => {
  const code = raw["eventClassifierCode"]
  return aliases !== undefined && typeof code === "string" && Object.hasOwn(aliases, code)
    ? { ...raw, eventClassifierCode: aliases[code] }
    : raw
}

const dateIssues = (event: Event | PostedEvent, input: Record<string, unknown>, index: number, now?: number) => {
  const created = event.eventCreatedDateTime
  if (created === undefined) return []
  const happened = event.eventDateTime
  const late = input["eventClassifierCode"] === "ACT" && happened !== undefined &&
    parseIsoDateTime(happened) > parseIsoDateTime(created) + skewMillis
  return [
    ...(late
      ? [{
        path: `/${index}/eventDateTime`,
        message: `eventDateTime ${happened} lies more than a day after eventCreatedDateTime ${created}, ` +
          "but an actual event is created once it has happened"
      }]
      : []),
    ...futureIssue(`/${index}/eventCreatedDateTime`, "eventCreatedDateTime", created, now)
  ]
}

/**
 * Reads one element of a list of 2.2 events (at `index`, which the problems' pointers start
 * with): the event, or its problems (at most `room` of them built, all counted).
 */
export function decodeElement(
  raw: unknown,
  index: number,
  options: ElementOptions & { readonly form: "answer" },
  room?: number
): Either.Either<Event, EventIssues>
export function decodeElement(
  raw: unknown,
  index: number,
  options: ElementOptions,
  room?: number
): Either.Either<PostedEvent, EventIssues>
export function decodeElement(
  raw: unknown,
  index: number,
  options: ElementOptions,
  room = 100
): Either.Either<Event | PostedEvent, EventIssues> {
  if (!isObject(raw)) return Either.left(notAnObject(raw, index))
  const type = raw["eventType"]
  if (type !== "TRANSPORT" && type !== "EQUIPMENT" && type !== "SHIPMENT") {
    return Either.left(unknownType("eventType", type, eventTypes, `/${index}/eventType`))
  }
  const refs = raw["documentReferences"]
  if (Array.isArray(refs) && refs.length > maxDocumentReferences) {
    return Either.left(oneIssue(
      `/${index}/documentReferences`,
      `documentReferences ${tooManyEntries(maxDocumentReferences, refs.length, "event")}`
    ))
  }
  const input = withAlias(raw, options.classifierAliases)
  const decoded: Either.Either<Event | PostedEvent, ParseResult.ParseError> =
    (options.form === "answer" ? answerDecoders : postedDecoders)[type](input)
  if (Either.isLeft(decoded)) return Either.left(schemaIssues(decoded.left, index, input, room))
  const issues = dateIssues(decoded.right, input, index, options.now)
  return issues.length > 0 ? Either.left({ issues, total: issues.length }) : Either.right(decoded.right)
}

const trackedCall = (call: TransportEvent["transportCall"] | undefined): TrackedCall | undefined =>
  call === undefined ? undefined : compact<TrackedCall>({
    mode: call.modeOfTransport,
    vessel_name: firstText(call.vessel?.vesselName),
    vessel_imo: imoOf(call.vessel?.vesselIMONumber),
    voyage: firstText(call.exportVoyageNumber, call.carrierVoyageNumber, call.importVoyageNumber)
  })

/** The id of an event that has no `eventID`: a digest of the event as received, so that a message repeated is the same event. */
export const derivedId = (raw: string): string => `sha256:${sha256HexSync(raw)}`

/** An answered event as a `TrackingEvent` of `source`; `raw` is the event as received (JSON text). */
export const toTrackingEvent = (event: Event, raw: string, source: string): TrackingEvent => {
  const common = {
    source,
    event_id: event.eventID ?? derivedId(raw),
    updated_at: parseIsoDateTime(event.eventCreatedDateTime),
    retracted: false,
    event_type: event.eventType,
    classifier: event.eventClassifierCode,
    event_date: parseIsoDateTime(event.eventDateTime),
    raw
  }
  if (event.eventType === "SHIPMENT") {
    const refs = referencesOf([[event.documentTypeCode, event.documentID]])
    return {
      ...common,
      event_code: event.shipmentEventTypeCode,
      status_code: null,
      message: shipmentMessageOf(event.shipmentEventTypeCode, event.documentTypeCode),
      container_reference: null,
      location: null,
      ...refs
    }
  }
  const call = trackedCall(event.transportCall)
  const container = event.eventType === "EQUIPMENT" ? event.equipmentReference : undefined
  return {
    ...common,
    event_code: event.eventType === "TRANSPORT" ? event.transportEventTypeCode : event.equipmentEventTypeCode,
    status_code: statusCodeOf(event) ?? null,
    message: messageOf(event),
    container_reference: container === undefined ? null : normaliseContainerNumber(container),
    location: locationOf(event) ?? null,
    ...(call === undefined ? {} : { transport_call: call }),
    ...referencesOf((event.documentReferences ?? []).map((r) => [r.documentReferenceType, r.documentReferenceValue]))
  }
}

/** How an answer is read. */
export interface DecodeOptions {
  /** The source the events are of (a `TrackingSource` id). */
  readonly source: string
  readonly classifierAliases?: Readonly<Record<string, Classifier>> | undefined
  /** The current instant (epoch ms), to find events created in the future. */
  readonly now?: number | undefined
  /** The query the answer is to: an event naming another container, booking or bill of lading is malformed. */
  readonly query?: TargetQuery | undefined
}

/**
 * Reads a list of 2.2 events (the elements of one or more answer pages, in order): each one
 * alone, as {@link decodeElement} in the answer form, then as a `TrackingEvent`; an event that
 * repeats an earlier one's `eventID` or contradicts the query is malformed too.
 */
export const decodeEvents = (elements: ReadonlyArray<unknown>, options: DecodeOptions): PushedEvents =>
  decodeList(elements, {
    element: (raw, index) =>
      Either.map(
        decodeElement(raw, index, { form: "answer", classifierAliases: options.classifierAliases, now: options.now }),
        (event) => toTrackingEvent(event, JSON.stringify(raw), options.source)
      ),
    identity: (event) => event.event_id,
    repeated: (event, index, first) => ({
      path: `/${index}/eventID`,
      message: repeatedId(event.event_id, first)
    }),
    paths: { container: "/equipmentReference", references: "/documentReferences" }
  }, options.query)

/**
 * Reads an answer of `GET /v2/events` (or a subscription callback's body), already parsed from
 * JSON: a JSON array of events (see {@link decodeEvents}); anything else is unreadable as a whole
 * (the message says why).
 */
export const decode = (body: unknown, options: DecodeOptions): Either.Either<PushedEvents, string> =>
  Array.isArray(body)
    ? Either.right(decodeEvents(body, options))
    : Either.left(`the answer must be a JSON array of DCSA Track & Trace 2.2 events, got ${describe(body)}`)

const callOf = (event: TrackingEvent, withPlace: boolean) => {
  const call = event.transport_call
  const place = withPlace ? encodedLocation(event.location) : undefined
  return compact({
    transportCallID: `${call?.voyage ?? "-"}/${event.location ?? "-"}`.slice(0, 100),
    modeOfTransport: call?.mode ?? "VESSEL",
    ...(place === undefined || "UNLocationCode" in place ? place : { location: place }),
    exportVoyageNumber: call?.voyage,
    vessel: call?.vessel_imo === undefined ? undefined : compact({
      vesselIMONumber: call.vessel_imo,
      vesselName: call.vessel_name
    })
  })
}

const documentReferencesOf = (event: TrackingEvent) => [
  ...event.bookings.map((value) => ({ documentReferenceType: "BKG", documentReferenceValue: value })),
  ...event.bills_of_lading.map((value) => ({ documentReferenceType: "TRD", documentReferenceValue: value }))
]

/**
 * A `TrackingEvent` as a 2.2 event of the answer form (JSON), which {@link decodeEvents} reads back
 * as the same event: the location is the transport call's (TRANSPORT) or the event's own
 * (EQUIPMENT), the voyage the export voyage; a SHIPMENT event's document is its first booking,
 * else its first bill of lading. `raw` is not used; `event_id` should be a UUID.
 */
export const encode = (event: TrackingEvent): Record<string, unknown> => {
  const common = {
    eventID: event.event_id,
    eventCreatedDateTime: isoOf(event.updated_at),
    eventType: event.event_type,
    eventClassifierCode: event.classifier,
    eventDateTime: isoOf(event.event_date)
  }
  const refs = documentReferencesOf(event)
  switch (event.event_type) {
    case "SHIPMENT": {
      const booking = event.bookings[0]
      return {
        ...common,
        shipmentEventTypeCode: event.event_code,
        documentTypeCode: booking === undefined ? "TRD" : "BKG",
        documentID: booking ?? event.bills_of_lading[0] ?? ""
      }
    }
    case "TRANSPORT":
      return compact({
        ...common,
        transportEventTypeCode: event.event_code,
        transportCall: callOf(event, true),
        documentReferences: refs.length > 0 ? refs : undefined
      })
    case "EQUIPMENT":
      return compact({
        ...common,
        equipmentEventTypeCode: event.event_code,
        equipmentReference: event.container_reference ?? undefined,
        emptyIndicatorCode: emptyIndicatorFor(event.event_code, event.status_code),
        eventLocation: encodedLocation(event.location),
        transportCall: event.transport_call === undefined ? undefined : callOf(event, false),
        documentReferences: refs.length > 0 ? refs : undefined
      })
  }
}
