/**
 * DCSA Track & Trace 3.0 events: effect/Schema models of the event shape (the fields the tracking
 * uses, typed as the 3.0 OpenAPI document types them), the decoder of a `GET /events` answer or a
 * `POST /events` body (`{ "events": [...] }`) into `TrackingEvent`s, the encoder back, and the
 * `feedbackElements` a consumer answers a push with.
 *
 * The 3.0 document requires no field; the tracking needs an event's `eventID` and
 * `eventUpdatedDateTime`, and, unless the event is retracted (`isRetracted`), its
 * `eventClassification` (type, classifier and the code of its type) and `eventDateTime`. A
 * retraction may carry nothing else: the fields it leaves out are then empty in the
 * `TrackingEvent` (type SHIPMENT, code "", classifier ACT, no status code, message "Retracted",
 * the date its update's). IoT and reefer events are not tracked: they are skipped, not malformed.
 * Codes are those the document lists for each field.
 *
 * An event is also malformed when its `eventUpdatedDateTime` lies more than a day in the future
 * (with `now`), when it repeats an earlier event of the same answer with the same `eventID` and
 * `eventUpdatedDateTime` (a later update of an event may follow an earlier one), or when it names
 * another container, booking or bill of lading than the query it answers. One malformed event
 * fails alone.
 *
 * @module
 */
import { Either, Schema } from "effect"
import { maxDocumentReferences } from "./DcsaTnt22.js"
import {
  DateTime,
  decodeList,
  describe,
  type EventIssues,
  futureIssue,
  isObject,
  notAnObject,
  schemaIssues,
  text,
  unknownType
} from "./internal/dcsaDecoding.js"
import {
  compact,
  emptyIndicatorFor,
  encodedLocation,
  equipmentCodes30,
  firstText,
  imoOf,
  isoOf,
  messageOf,
  referencesOf,
  shipmentCodes30,
  shipmentMessageOf,
  statusCodeOf
} from "./internal/dcsaMapping.js"
import type { Classifier, TrackingEvent, TransportCall as TrackedCall } from "./TrackingEvent.js"
import type { MalformedEvent, PushedEvents, TargetQuery } from "./TrackingSource.js"
import { limitedArray, normaliseContainerNumber, parseIsoDateTime, UnLocode } from "./TradeflowRecord.js"

/** The event types of 3.0. */
export const eventTypes = ["SHIPMENT", "TRANSPORT", "EQUIPMENT", "IOT", "REEFER"] as const

/** The event types the tracking skips. */
export const untrackedTypes: ReadonlyArray<string> = ["IOT", "REEFER"]

/** PLN (planned), EST (estimated), ACT (actual). */
export const EventClassifierCode = Schema.Literal("PLN", "EST", "ACT")

/** ARRI (arrived), DEPA (departed). */
export const TransportEventTypeCode = Schema.Literal("ARRI", "DEPA")

/** What happened to a container. */
export const EquipmentEventTypeCode = Schema.Literal(...equipmentCodes30)

/** What happened to a shipment's document. */
export const ShipmentEventTypeCode = Schema.Literal(...shipmentCodes30)

/** The type, classifier and code of an event. */
export const EventClassification = Schema.Struct({
  eventTypeCode: Schema.Literal(...eventTypes),
  eventClassifierCode: EventClassifierCode,
  shipmentEventTypeCode: Schema.optional(ShipmentEventTypeCode),
  transportEventTypeCode: Schema.optional(TransportEventTypeCode),
  equipmentEventTypeCode: Schema.optional(EquipmentEventTypeCode)
})

/** A location (the fields used). */
export const Location = Schema.Struct({
  locationName: Schema.optional(text(100)),
  UNLocationCode: Schema.optional(UnLocode)
})

/** A referenced document: `typeCode` BKG (a booking) and TRD (a transport document) are used. */
export const DocumentReference = Schema.Struct({
  typeCode: Schema.optional(Schema.String),
  reference: Schema.optional(text(100))
})

/** Shipment-specific details (the fields used). */
export const ShipmentDetails = Schema.Struct({
  documentReference: Schema.optional(DocumentReference),
  additionalDocumentReferences: Schema.optional(limitedArray(DocumentReference, maxDocumentReferences, "event"))
})

/** A carrier voyage number and/or universal voyage reference. */
export const VoyageNumberOrReference = Schema.Struct({
  carrierVoyageNumber: Schema.optional(Schema.String),
  universalVoyageReference: Schema.optional(text(5))
})

/** Vessel or barge transport (the fields used). */
export const VesselTransport = Schema.Struct({
  vesselIMONumber: Schema.optional(text(8)),
  vesselName: Schema.optional(text(50))
})

/** A transport call (the fields used). */
export const TransportCall = Schema.Struct({
  modeOfTransport: Schema.optional(text(50)),
  exportVoyageNumberOrReference: Schema.optional(VoyageNumberOrReference),
  importVoyageNumberOrReference: Schema.optional(VoyageNumberOrReference),
  vesselTransport: Schema.optional(VesselTransport)
})

/** Transport-specific details (the fields used). */
export const TransportDetails = Schema.Struct({ transportCall: Schema.optional(TransportCall) })

/** Equipment-specific details (the fields used). */
export const EquipmentDetails = Schema.Struct({
  equipmentReference: Schema.optional(
    text(11).pipe(Schema.filter((s) => /[^\s-]/.test(s), { message: () => "must be a container number" }))
  ),
  emptyIndicatorCode: Schema.optional(Schema.Literal("EMPTY", "LADEN"))
})

const tooLong = "must be at most 30 characters long"

/** A DCSA Track & Trace 3.0 event (the fields used). */
export const Event = Schema.Struct({
  eventID: text(500).pipe(Schema.nonEmptyString({ message: () => "must not be empty" })),
  isRetracted: Schema.optional(Schema.Boolean),
  eventDateTime: Schema.optional(DateTime.pipe(Schema.maxLength(30, { message: () => tooLong }))),
  eventUpdatedDateTime: DateTime.pipe(Schema.maxLength(30, { message: () => tooLong })),
  eventLocation: Schema.optional(Location),
  eventClassification: Schema.optional(EventClassification),
  shipmentDetails: Schema.optional(ShipmentDetails),
  transportDetails: Schema.optional(TransportDetails),
  equipmentDetails: Schema.optional(EquipmentDetails)
})
export type Event = typeof Event.Type

const decodeEvent = Schema.decodeUnknownEither(Event, { errors: "all" })

/** How events are read. */
export interface ElementOptions {
  /** Classifier codes a carrier writes for DCSA's (`{ PLAN: "PLN" }`), replaced before decoding. */
  readonly classifierAliases?: Readonly<Record<string, Classifier>> | undefined
  /** The current instant (epoch ms): with it, an `eventUpdatedDateTime` more than a day later is malformed. */
  readonly now?: number | undefined
}

const codeFields = {
  SHIPMENT: "shipmentEventTypeCode",
  TRANSPORT: "transportEventTypeCode",
  EQUIPMENT: "equipmentEventTypeCode"
} as const

const withAlias = (raw: Record<string, unknown>, aliases: ElementOptions["classifierAliases"]) => {
  const classification = raw["eventClassification"]
  const code = isObject(classification) ? classification["eventClassifierCode"] : undefined
  return aliases !== undefined && typeof code === "string" && Object.hasOwn(aliases, code)
    ? { ...raw, eventClassification: { ...(classification as object), eventClassifierCode: aliases[code] } }
    : raw
}

const liveIssues = (event: Event, index: number): Array<{ path: string; message: string }> => {
  if (event.isRetracted === true) return []
  const classification = event.eventClassification
  const missing = (path: string, field: string) => ({ path: `/${index}${path}`, message: `${field} is required` })
  const issues = event.eventDateTime === undefined ? [missing("/eventDateTime", "eventDateTime")] : []
  if (classification === undefined) return [...issues, missing("/eventClassification", "eventClassification")]
  const type = classification.eventTypeCode
  if (type === "IOT" || type === "REEFER") return issues
  const field = codeFields[type]
  return classification[field] === undefined
    ? [...issues, {
      path: `/${index}/eventClassification/${field}`,
      message: `eventClassification.${field} is required for an event of type ${type}`
    }]
    : issues
}

/**
 * Reads one element of a list of 3.0 events (at `index`, which the problems' pointers start
 * with): the event, null for an IoT or reefer event (not tracked), or its problems (at most
 * `room` of them built, all counted).
 */
export const decodeElement = (
  raw: unknown,
  index: number,
  options: ElementOptions = {},
  room = 100
): Either.Either<Event | null, EventIssues> => {
  if (!isObject(raw)) return Either.left(notAnObject(raw, index))
  const classification = raw["eventClassification"]
  const type = isObject(classification) ? classification["eventTypeCode"] : undefined
  if (typeof type === "string" && untrackedTypes.includes(type)) return Either.right(null)
  if (type !== undefined && !(eventTypes as ReadonlyArray<unknown>).includes(type)) {
    return Either.left(
      unknownType("eventClassification.eventTypeCode", type, eventTypes, `/${index}/eventClassification/eventTypeCode`)
    )
  }
  const input = withAlias(raw, options.classifierAliases)
  const decoded = decodeEvent(input)
  if (Either.isLeft(decoded)) return Either.left(schemaIssues(decoded.left, index, input, room))
  const issues = [
    ...liveIssues(decoded.right, index),
    ...futureIssue(
      `/${index}/eventUpdatedDateTime`,
      "eventUpdatedDateTime",
      decoded.right.eventUpdatedDateTime,
      options.now
    )
  ]
  return issues.length > 0 ? Either.left({ issues, total: issues.length }) : Either.right(decoded.right)
}

const voyageOf = (call: typeof TransportCall.Type) =>
  firstText(
    call.exportVoyageNumberOrReference?.carrierVoyageNumber,
    call.exportVoyageNumberOrReference?.universalVoyageReference,
    call.importVoyageNumberOrReference?.carrierVoyageNumber,
    call.importVoyageNumberOrReference?.universalVoyageReference
  )

const trackedCall = (call: typeof TransportCall.Type | undefined): TrackedCall | undefined =>
  call === undefined ? undefined : compact<TrackedCall>({
    mode: firstText(call.modeOfTransport),
    vessel_name: firstText(call.vesselTransport?.vesselName),
    vessel_imo: imoOf(call.vesselTransport?.vesselIMONumber),
    voyage: voyageOf(call)
  })

/** A decoded event as a `TrackingEvent` of `source`; `raw` is the event as received (JSON text). */
export const toTrackingEvent = (event: Event, raw: string, source: string): TrackingEvent => {
  const updated = parseIsoDateTime(event.eventUpdatedDateTime)
  const classification = event.eventClassification
  const type = classification?.eventTypeCode === "TRANSPORT" || classification?.eventTypeCode === "EQUIPMENT"
    ? classification.eventTypeCode
    : "SHIPMENT"
  const code = classification === undefined ? "" : classification[codeFields[type]] ?? ""
  const details = event.shipmentDetails
  const references = referencesOf(
    [details?.documentReference, ...(details?.additionalDocumentReferences ?? [])].flatMap((r) =>
      r === undefined ? [] : [[r.typeCode, r.reference] as const]
    )
  )
  const call = trackedCall(event.transportDetails?.transportCall)
  const equipment = event.equipmentDetails
  const milestone = type === "TRANSPORT"
    ? { eventType: type, code, modeOfTransport: call?.mode } as const
    : type === "EQUIPMENT"
    ? { eventType: type, code, emptyIndicatorCode: equipment?.emptyIndicatorCode } as const
    : undefined
  const container = equipment?.equipmentReference
  return {
    source,
    event_id: event.eventID,
    updated_at: updated,
    retracted: event.isRetracted === true,
    event_type: type,
    event_code: code,
    classifier: classification?.eventClassifierCode ?? "ACT",
    status_code: milestone === undefined ? null : statusCodeOf(milestone) ?? null,
    message: milestone !== undefined
      ? messageOf(milestone)
      : code === ""
      ? "Retracted"
      : shipmentMessageOf(code, details?.documentReference?.typeCode),
    container_reference: container === undefined ? null : normaliseContainerNumber(container),
    location: firstText(event.eventLocation?.UNLocationCode, event.eventLocation?.locationName) ?? null,
    event_date: event.eventDateTime === undefined ? updated : parseIsoDateTime(event.eventDateTime),
    ...(call === undefined ? {} : { transport_call: call }),
    ...references,
    raw
  }
}

/** How an answer or a push is read. */
export interface DecodeOptions extends ElementOptions {
  /** The source the events are of (a `TrackingSource` id). */
  readonly source: string
  /** The query the answer is to: an event naming another container, booking or bill of lading is malformed. */
  readonly query?: TargetQuery | undefined
}

/**
 * Reads a list of 3.0 events (the `events` of one or more answer pages, in order): each one alone,
 * as {@link decodeElement}, then as a `TrackingEvent`.
 */
export const decodeEvents = (elements: ReadonlyArray<unknown>, options: DecodeOptions): PushedEvents =>
  decodeList(elements, {
    element: (raw, index) =>
      Either.map(
        decodeElement(raw, index, options),
        (event) => event === null ? null : toTrackingEvent(event, JSON.stringify(raw), options.source)
      ),
    identity: (event) => `${event.event_id}\u0000${event.updated_at}`,
    repeated: (event, index, first) => ({
      path: `/${index}/eventID`,
      message: `eventID ${event.event_id} repeats event ${first}'s with the same eventUpdatedDateTime`
    }),
    paths: { container: "/equipmentDetails/equipmentReference", references: "/shipmentDetails" }
  }, options.query)

/** The events of a body: its `events` (none when absent), or why it has none to read. */
export const eventsOf = (body: unknown): Either.Either<ReadonlyArray<unknown>, string> => {
  if (!isObject(body)) {
    return Either.left(`the body must be a JSON object with an "events" array, got ${describe(body)}`)
  }
  const events = body["events"]
  return events === undefined
    ? Either.right([])
    : Array.isArray(events)
    ? Either.right(events)
    : Either.left(`"events" must be an array, got ${describe(events)}`)
}

/**
 * Reads a 3.0 `GET /events` answer or `POST /events` body, already parsed from JSON (see
 * {@link decodeEvents}); a body that is not an object with an `events` array is unreadable as a
 * whole (the message says why).
 */
export const decode = (body: unknown, options: DecodeOptions): Either.Either<PushedEvents, string> =>
  Either.map(eventsOf(body), (events) => decodeEvents(events, options))

/**
 * A `TrackingEvent` as a 3.0 event (JSON), which {@link decodeEvents} reads back as the same event:
 * the location is the event's, the voyage the export voyage, the first booking (else bill of
 * lading) the primary document reference. `raw` is not used.
 */
export const encode = (event: TrackingEvent): Record<string, unknown> => {
  const refs = [
    ...event.bookings.map((reference) => ({ typeCode: "BKG", reference })),
    ...event.bills_of_lading.map((reference) => ({ typeCode: "TRD", reference }))
  ]
  const call = event.transport_call
  return compact({
    eventID: event.event_id,
    isRetracted: event.retracted ? true : undefined,
    eventDateTime: isoOf(event.event_date),
    eventUpdatedDateTime: isoOf(event.updated_at),
    eventLocation: encodedLocation(event.location),
    eventClassification: {
      eventTypeCode: event.event_type,
      eventClassifierCode: event.classifier,
      [codeFields[event.event_type]]: event.event_code
    },
    shipmentDetails: refs.length === 0
      ? undefined
      : compact({
        documentReference: refs[0],
        additionalDocumentReferences: refs.length > 1 ? refs.slice(1) : undefined
      }),
    transportDetails: call === undefined ? undefined : {
      transportCall: compact({
        modeOfTransport: call.mode,
        exportVoyageNumberOrReference: call.voyage === undefined ? undefined : { carrierVoyageNumber: call.voyage },
        vesselTransport: call.vessel_imo === undefined && call.vessel_name === undefined
          ? undefined
          : compact({ vesselIMONumber: call.vessel_imo, vesselName: call.vessel_name })
      })
    },
    equipmentDetails: event.event_type !== "EQUIPMENT"
      ? undefined
      : compact({
        equipmentReference: event.container_reference ?? undefined,
        emptyIndicatorCode: emptyIndicatorFor(event.event_code, event.status_code)
      })
  })
}

/** A piece of feedback of a 3.0 answer (`FeedbackElement`). */
export interface FeedbackElement {
  readonly severity: "ERROR" | "WARN" | "INFO"
  readonly message: string
  /** A JSONPath into the request (`$.events[2]`). */
  readonly propertyPath?: string
}

/** The feedback on the malformed events of a pushed `POST /events` body: an ERROR for each, at its event. */
export const feedbackElements = (malformed: ReadonlyArray<MalformedEvent>): ReadonlyArray<FeedbackElement> =>
  malformed.map((m) => ({ severity: "ERROR", message: m.message.slice(0, 5000), propertyPath: `$.events[${m.index}]` }))

/**
 * The answer (`PostEventsResponse`) a consumer gives a pushed `POST /events` body of which some
 * events could not be read: `{ "feedbackElements": [...] }` (see {@link feedbackElements}).
 */
export const postEventsResponse = (
  malformed: ReadonlyArray<MalformedEvent>
): { readonly feedbackElements: ReadonlyArray<FeedbackElement> } => ({ feedbackElements: feedbackElements(malformed) })
