/**
 * The built-in `dcsa-tnt` integration scheme: a JSON array of DCSA Track & Trace 2.2 events
 * imported as tradeflow `events`.
 *
 * - TRANSPORT (ARRI, DEPA) and EQUIPMENT (LOAD, DISC, GTIN, GTOT, PICK, DROP, STUF, STRP, INSP,
 *   RSEA, RMVD) events become events of the record; {@link mapEvent} gives the message and so
 *   the status code. SHIPMENT events add no event, only their document references.
 * - `actual` is true only for the classifier ACT (PLN and EST are predictions).
 * - The location is the event's UN/LOCODE (else its location name), the container the
 *   `equipmentReference`.
 * - Document references BKG become `booking_reference`, TRD (and BOL) `bill_of_lading_reference`.
 * - The tradeflow reference is the `reference` query parameter (every event in one record), or
 *   else the event's booking (see {@link toRecords}); events are grouped into one record per
 *   tradeflow reference, in order of first appearance.
 * - Each record also gets `port_of_loading` (UN/LOCODE of the earliest vessel departure),
 *   `port_of_discharge` (of the latest vessel arrival) and `vessel` (the vessel name of the
 *   earliest vessel departure that names one, else of the earliest event that does).
 *
 * The events are read by `DcsaTnt22` in its posted form (the decoder of carriers' answers, reading
 * only what the scheme uses): `eventID` and `eventCreatedDateTime` may be left out; an `eventID`
 * repeated in the body, or an actual event created more than a day before it happened, is refused.
 *
 * Problems are reported with JSON Pointers into the array (`/3/transportCall/UNLocationCode`).
 * Decoding lets the event loop turn every 2 ms of work, between events.
 *
 * @module
 */
import { Effect, Either } from "effect"
import * as DcsaTnt22 from "./DcsaTnt22.js"
import { describe, repeatedId } from "./internal/dcsaDecoding.js"
import { referenceKind } from "./internal/dcsaMapping.js"
import { complete, drive, type Steps, timeSlice } from "./internal/eventLoop.js"
import { IssueList } from "./internal/issueList.js"
import { type DecodeOptions, type Payload, type Scheme, SchemeError, schemeError } from "./Scheme.js"
import type { StatusCode } from "./StatusCode.js"
import { normaliseContainerNumber, parseIsoDateTime } from "./TradeflowRecord.js"

/** At most this many events per request (more: a `too_large` {@link SchemeError}, HTTP 413). */
export const maxEvents = 10_000

/** At most this many `documentReferences` per event, refused before any of them is decoded. */
export const maxDocumentReferences = DcsaTnt22.maxDocumentReferences

/** A document reference of an event; BKG, TRD and BOL are used, other types are ignored. */
export const DocumentReference = DcsaTnt22.PostedDocumentReference

/** A DCSA location (the fields used). */
export const DcsaLocation = DcsaTnt22.PostedLocation

/** A DCSA transport call (the fields used). */
export const TransportCall = DcsaTnt22.PostedTransportCall

/** PLN (planned), EST (estimated), ACT (actual). */
export const EventClassifierCode = DcsaTnt22.EventClassifierCode

/** A TRANSPORT event: a vessel (or other means of transport) arriving or departing. */
export const TransportEvent = DcsaTnt22.PostedTransportEvent
export type TransportEvent = DcsaTnt22.PostedTransportEvent

/** An EQUIPMENT event: something happening to a container. */
export const EquipmentEvent = DcsaTnt22.PostedEquipmentEvent
export type EquipmentEvent = DcsaTnt22.PostedEquipmentEvent

/** A SHIPMENT event: only its document references (and BKG/TRD `documentID`) are used. */
export const ShipmentEvent = DcsaTnt22.PostedShipmentEvent
export type ShipmentEvent = DcsaTnt22.PostedShipmentEvent

/** A DCSA Track & Trace 2.2 event (the fields used). */
export type DcsaEvent = DcsaTnt22.PostedEvent

/**
 * The status code of a TRANSPORT or EQUIPMENT event, undefined for the events none fits (they
 * are imported as unclassified events).
 */
export const statusCodeOf = (event: TransportEvent | EquipmentEvent): StatusCode | undefined =>
  DcsaTnt22.statusCodeOf(event)

/** An imported event in the input form of SERVICE.md (`events[]` of a tradeflow record). */
export interface MappedEvent {
  readonly message: string
  readonly container_reference?: string
  readonly location_name?: string
  readonly event_date: string
  readonly actual: boolean
}

/**
 * A TRANSPORT or EQUIPMENT event as a tradeflow event: the message is the SERVICE.md name of its
 * status code (`"Vessel departure"`), or for the events without one the DCSA name and code
 * (`"Stuffed (STUF)"`, `"Rail departure (DEPA)"`).
 */
export const mapEvent = (event: TransportEvent | EquipmentEvent): MappedEvent => {
  const location = DcsaTnt22.locationOf(event)
  const container = event.eventType === "EQUIPMENT" ? event.equipmentReference : undefined
  return {
    message: DcsaTnt22.messageOf(event),
    ...(container === undefined ? {} : { container_reference: container }),
    ...(location === undefined ? {} : { location_name: location }),
    event_date: event.eventDateTime,
    actual: event.eventClassifierCode === "ACT"
  }
}

/** A booking or bill of lading reference of an event. */
export interface DocumentRef {
  readonly kind: "booking_reference" | "bill_of_lading_reference"
  readonly value: string
}

/** The booking (BKG) and bill of lading (TRD, BOL) references of an event, in order. */
export const documentReferencesOf = (event: DcsaEvent): ReadonlyArray<DocumentRef> => {
  const refs = (event.documentReferences ?? []).map((r) => [r.documentReferenceType, r.documentReferenceValue] as const)
  if (event.eventType === "SHIPMENT" && event.documentID !== undefined && event.documentID.trim() !== "") {
    refs.push([event.documentTypeCode ?? "", event.documentID.trim()])
  }
  return refs.flatMap(([type, value]): Array<DocumentRef> => {
    const kind = referenceKind(type)
    return kind === undefined ? [] : [{ kind: `${kind}_reference`, value }]
  })
}

function* decodeEventSteps(body: unknown): Steps<Either.Either<ReadonlyArray<DcsaEvent>, SchemeError>> {
  if (!Array.isArray(body)) {
    return Either.left(schemeError("invalid", [{
      path: "",
      message: `the body must be a JSON array of DCSA Track & Trace 2.2 events, got ${describe(body)}`
    }]))
  }
  if (body.length === 0) return Either.left(schemeError("invalid", [{ path: "", message: "the body has no events" }]))
  if (body.length > maxEvents) {
    return Either.left(schemeError("too_large", [{
      path: "",
      message: `the body has ${body.length} events; at most ${maxEvents} are accepted per request`
    }]))
  }
  const issues = new IssueList()
  const events: Array<DcsaEvent> = []
  const ids = new Map<string, number>()
  for (const [i, raw] of (body as Array<unknown>).entries()) {
    const decoded = DcsaTnt22.decodeElement(raw, i, { form: "posted" }, issues.room)
    if (Either.isLeft(decoded)) {
      for (const issue of decoded.left.issues) issues.add({ path: issue.path, message: `event ${i}: ${issue.message}` })
      issues.skip(decoded.left.total - decoded.left.issues.length)
    } else {
      const id = decoded.right.eventID
      const first = id === undefined ? undefined : ids.get(id)
      if (first !== undefined) {
        issues.add({
          path: `/${i}/eventID`,
          message: `event ${i}: ${repeatedId(id!, first)}`
        })
      } else {
        if (id !== undefined) ids.set(id, i)
        events.push(decoded.right)
      }
    }
    yield
  }
  return issues.total > 0
    ? Either.left(new SchemeError({ reason: "invalid", errors: issues.issues() }))
    : Either.right(events)
}

/** Decodes the events of a body (already parsed JSON), each problem at its pointer. */
export const decodeEvents = (body: unknown): Either.Either<ReadonlyArray<DcsaEvent>, SchemeError> =>
  complete(decodeEventSteps(body))

interface Group {
  readonly reference: string
  readonly events: Array<TransportEvent | EquipmentEvent>
  readonly refs: Readonly<Record<DocumentRef["kind"], Set<string>>>
}

const byDate = (events: ReadonlyArray<TransportEvent | EquipmentEvent>) =>
  events
    .map((event) => ({ event, at: parseIsoDateTime(event.eventDateTime) }))
    .sort((a, b) => a.at - b.at)
    .map(({ event }) => event)

const recordOf = (group: Group): Record<string, unknown> => {
  const sorted = byDate(group.events)
  const vesselMoves = sorted.filter((e): e is TransportEvent =>
    e.eventType === "TRANSPORT" && statusCodeOf(e) !== undefined
  )
  const departures = vesselMoves.filter((e) => e.transportEventTypeCode === "DEPA")
  const arrivals = vesselMoves.filter((e) => e.transportEventTypeCode === "ARRI")
  const unlocode = (e: TransportEvent | undefined) =>
    e?.transportCall.UNLocationCode ?? e?.transportCall.location?.UNLocationCode
  const vesselName = (e: TransportEvent | EquipmentEvent) => e.transportCall?.vessel?.vesselName?.trim() || undefined
  const vessel = departures.map(vesselName).find((v) => v !== undefined) ??
    sorted.map(vesselName).find((v) => v !== undefined)
  const pol = unlocode(departures.find((e) => unlocode(e) !== undefined))
  const pod = unlocode(arrivals.reverse().find((e) => unlocode(e) !== undefined))
  const containers = new Map<string, string>()
  for (const e of group.events) {
    const c = e.eventType === "EQUIPMENT" ? e.equipmentReference : undefined
    if (c !== undefined && !containers.has(normaliseContainerNumber(c))) containers.set(normaliseContainerNumber(c), c)
  }
  const refs = (kind: DocumentRef["kind"]) => Array.from(group.refs[kind])
  const entries: Array<readonly [string, unknown]> = [
    ["tradeflow_reference", group.reference],
    ["container_reference", Array.from(containers.values())],
    ["booking_reference", refs("booking_reference")],
    ["bill_of_lading_reference", refs("bill_of_lading_reference")],
    ["port_of_loading", pol],
    ["port_of_discharge", pod],
    ["vessel", vessel],
    ["events", group.events.map(mapEvent)]
  ]
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)))
}

/**
 * Groups decoded events into raw tradeflow records: by the `reference` query parameter when
 * given, else by booking: an event's tradeflow reference is its first booking reference; an
 * event with bill of lading references only takes the booking that another event names beside
 * one of them, else its first bill of lading reference.
 */
export const toRecords = (
  events: ReadonlyArray<DcsaEvent>,
  reference: string | undefined
): Either.Either<ReadonlyArray<Record<string, unknown>>, SchemeError> => complete(toRecordSteps(events, reference))

function* toRecordSteps(
  events: ReadonlyArray<DcsaEvent>,
  reference: string | undefined
): Steps<Either.Either<ReadonlyArray<Record<string, unknown>>, SchemeError>> {
  const groups = new Map<string, Group>()
  const issues = new IssueList()
  const refsOf: Array<ReadonlyArray<DocumentRef>> = []
  const bookingOf = new Map<string, string>()
  for (const event of events) {
    const refs = documentReferencesOf(event)
    refsOf.push(refs)
    const booking = refs.find((r) => r.kind === "booking_reference")?.value
    for (const r of refs) {
      if (booking !== undefined && r.kind === "bill_of_lading_reference" && !bookingOf.has(r.value)) {
        bookingOf.set(r.value, booking)
      }
    }
    yield
  }
  for (const [i, event] of events.entries()) {
    const refs = refsOf[i] ?? []
    const key = reference ?? refs.find((r) => r.kind === "booking_reference")?.value ??
      refs.map((r) => bookingOf.get(r.value)).find((b) => b !== undefined) ?? refs[0]?.value
    if (key === undefined) {
      if (event.eventType !== "SHIPMENT") {
        issues.add({
          path: `/${i}/documentReferences`,
          message: `event ${i}: no BKG or TRD document reference to find its tradeflow by; ` +
            "add one, or send the tradeflow reference as the query parameter reference"
        })
      }
    } else {
      let group = groups.get(key)
      if (group === undefined) {
        group = {
          reference: key,
          events: [],
          refs: { booking_reference: new Set(), bill_of_lading_reference: new Set() }
        }
        groups.set(key, group)
      }
      for (const r of refs) group.refs[r.kind].add(r.value)
      if (event.eventType !== "SHIPMENT") group.events.push(event)
    }
    yield
  }
  const records: Array<Record<string, unknown>> = []
  for (const group of groups.values()) {
    const record = recordOf(group)
    if (!("container_reference" in record || "booking_reference" in record || "bill_of_lading_reference" in record)) {
      issues.add({
        path: "",
        message: `tradeflow ${JSON.stringify(group.reference)}: ` +
          "none of its events names a container (equipmentReference) " +
          "or a BKG or TRD document reference, and a tradeflow needs at least one"
      })
    }
    records.push(record)
    yield
  }
  return issues.total > 0
    ? Either.left(new SchemeError({ reason: "invalid", errors: issues.issues() }))
    : Either.right(records)
}

const isJson = (contentType: string): boolean => {
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? ""
  return type === "application/json" || /^application\/[^/]+\+json$/.test(type)
}

/**
 * Decodes a `dcsa-tnt` payload into raw tradeflow records (see the module documentation), letting
 * the event loop turn between events once a time slice is used up (see {@link DecodeOptions}).
 */
export const decode = (
  payload: Payload,
  options: DecodeOptions = {}
): Effect.Effect<ReadonlyArray<Record<string, unknown>>, SchemeError> =>
  Effect.suspend(() => {
    if (!isJson(payload.contentType)) {
      return Effect.fail(schemeError("unsupported_media_type", [{
        path: "",
        message: `DCSA events are sent with Content-Type: application/json, got ${JSON.stringify(payload.contentType)}`
      }]))
    }
    const reference = payload.query["reference"]
    if (reference !== undefined && reference.trim() === "") {
      return Effect.fail(schemeError("invalid", [{ path: "reference", message: "reference must not be empty" }]))
    }
    let text: string
    try {
      text = typeof payload.body === "string"
        ? payload.body.replace(/^\uFEFF/, "")
        : new TextDecoder("utf-8", { fatal: true }).decode(payload.body)
    } catch {
      return Effect.fail(schemeError("malformed", [{ path: "", message: "the body is not UTF-8 text" }]))
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return Effect.fail(schemeError("malformed", [{ path: "", message: "the body is not JSON" }]))
    }
    const pause = timeSlice(options.sliceMillis, options.turn)
    return Effect.flatMap(
      Effect.flatten(drive(decodeEventSteps(body), pause)),
      (events) => Effect.flatten(drive(toRecordSteps(events, reference?.trim()), pause))
    )
  })

/** The `dcsa-tnt` scheme. */
export const scheme: Scheme = { decode: (payload) => Effect.withSpan(decode(payload), "DcsaTntScheme.decode") }
