/**
 * Service: the organisation's tracked events published as DCSA Track & Trace 2.2 events (issue 15
 * §8, `GET /dcsa/v2/events`), with 2.2's filters, date operators and cursor pagination, so that
 * clients that speak DCSA can consume the service.
 *
 * What is published (docs/behaviour.md, "DCSA 2.2 events"): every visible reading
 * (`TradeflowMerge.visibleHistory`) of every milestone of every tradeflow of the organisation,
 * active or not, as one event:
 * - `eventID`: a UUID derived from the organisation, the tradeflow, the milestone's key and the
 *   reading, so the same reading always has the same id; `eventCreatedDateTime`: when the service
 *   recorded the reading (`predicted_at`); `eventDateTime`: the reading's date;
 *   `eventClassifierCode`: ACT for an actual reading, EST otherwise;
 * - VD and VA: TRANSPORT DEPA and ARRI, with the vessel's transport call; AE and UV: EQUIPMENT
 *   LOAD and DISC (laden), with the transport call; GN, GT: EQUIPMENT GTIN, GTOT (laden); GE, GR:
 *   EQUIPMENT GTOT, GTIN (empty). Unclassified milestones (ZZ) are left out: no 2.2 event says
 *   what they say. No SHIPMENT event is published;
 * - the tradeflow's bookings (BKG) and bills of lading (TRD) as `documentReferences`.
 *
 * Events are ordered by `eventCreatedDateTime`, then `eventID`. A page holds at most `limit`
 * events; when more follow, its {@link EventPage} `next_cursor` resumes after its last event. The
 * cursor is signed with the upstream cursor secret (`Cursor`), bound to the organisation and the
 * filters, and names the last event's position, so a client that follows it gets every event of
 * the answer once, and the events recorded meanwhile after them.
 *
 * Cost: a request reads every tradeflow of the organisation (`TradeflowStore.list`) and projects
 * every reading, unless it filters by booking or bill of lading: then it reads only the tradeflows
 * the store's key index finds for it; see bench/dcsa-events.
 *
 * @module
 */
import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import * as Cursor from "./Cursor.js"
import {
  DocumentReference,
  DocumentTypeCode,
  EquipmentEvent as AnsweredEquipmentEvent,
  EquipmentEventTypeCode,
  EventId,
  eventTypes,
  ShipmentEventTypeCode,
  TransportCall as AnsweredTransportCall,
  TransportEvent as AnsweredTransportEvent,
  TransportEventTypeCode
} from "./DcsaTnt22.js"
import type { Issue } from "./DownstreamError.js"
import { DateTime, isRfc3339, text } from "./internal/dcsaDecoding.js"
import { type Milestone, milestoneOf, type Reading, readingsOf, render } from "./internal/dcsaPublication.js"
import { Settings } from "./Settings.js"
import type { StorageError } from "./StorageError.js"
import type { Tradeflow } from "./Tradeflow.js"
import * as TradeflowKey from "./TradeflowKey.js"
import { normaliseContainerNumber, parseIsoDateTime } from "./TradeflowRecord.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** The version of the DCSA Track & Trace standard published (the `API-Version` answered). */
export const apiVersion = "2.2.0"

/** The events of a page when `limit` is not given (2.2's default). */
export const defaultLimit = 100

/** The largest `limit`. */
export const maxLimit = 1_000

/** A transport call as published: 2.2's, with the `transportCallID` the document requires. */
export const TransportCall = Schema.Struct({
  ...AnsweredTransportCall.fields,
  transportCallID: text(100).annotations({
    description: "The call of a vessel at a place: the same vessel, voyage and place give the same id"
  })
}).annotations({ identifier: "DcsaTransportCall" })

/** A reference of a TRANSPORT event: the container it is about (EQ). */
export const Reference = Schema.Struct({
  referenceType: Schema.Literal("EQ"),
  referenceValue: text(100)
})

const dateTimeOf = (description: string) =>
  DateTime.annotations({ description, jsonSchema: { type: "string", format: "date-time", description } })

const published = {
  eventID: EventId.annotations({
    description: "A UUID derived from the organisation, the tradeflow, the milestone and the reading"
  }),
  eventCreatedDateTime: dateTimeOf("When the service recorded the reading (UTC)"),
  eventDateTime: dateTimeOf("When the event took place (ACT) or is expected to (EST), UTC"),
  documentReferences: Schema.optional(
    Schema.Array(DocumentReference).annotations({
      description: "The tradeflow's bookings (BKG) and bills of lading (TRD)"
    })
  )
}

/** A TRANSPORT event as published: a vessel's departure (VD) or arrival (VA). */
export const TransportEvent = Schema.Struct({
  ...AnsweredTransportEvent.fields,
  ...published,
  transportCall: TransportCall,
  references: Schema.optional(Schema.Array(Reference))
}).annotations({ identifier: "DcsaTransportEvent", description: "A vessel departure (DEPA) or arrival (ARRI)" })
export type TransportEvent = typeof TransportEvent.Type

/** An EQUIPMENT event as published: a container loaded, discharged, gated in or out. */
export const EquipmentEvent = Schema.Struct({
  ...AnsweredEquipmentEvent.fields,
  ...published,
  transportCall: Schema.optional(TransportCall)
}).annotations({
  identifier: "DcsaEquipmentEvent",
  description: "A container loaded (LOAD), discharged (DISC), gated in (GTIN) or out (GTOT)"
})
export type EquipmentEvent = typeof EquipmentEvent.Type

/** A published DCSA Track & Trace 2.2 event. */
export const Event = Schema.Union(TransportEvent, EquipmentEvent)
export type Event = typeof Event.Type

/** Query parameters the service refuses, each with its problem. */
export class InvalidParameters extends Schema.TaggedError<InvalidParameters>()("InvalidParameters", {
  errors: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {}

/** The operators of `eventCreatedDateTime` (`eventCreatedDateTime:gte=…`); none means `eq`. */
export const dateOperators = ["gte", "gt", "lte", "lt", "eq"] as const
export type DateOperator = typeof dateOperators[number]

/** A condition on `eventCreatedDateTime` (epoch ms). */
export interface DateCondition {
  readonly operator: DateOperator
  readonly at: number
}

/** The filters of `GET /dcsa/v2/events`, parsed; they combine with AND. */
export interface EventFilters {
  readonly eventTypes?: ReadonlyArray<string> | undefined
  readonly shipmentEventTypeCodes?: ReadonlyArray<string> | undefined
  readonly documentTypeCodes?: ReadonlyArray<string> | undefined
  readonly transportEventTypeCodes?: ReadonlyArray<string> | undefined
  readonly equipmentEventTypeCodes?: ReadonlyArray<string> | undefined
  readonly carrierBookingReference?: string | undefined
  readonly transportDocumentReference?: string | undefined
  readonly transportCallID?: string | undefined
  readonly vesselIMONumber?: string | undefined
  readonly carrierVoyageNumber?: string | undefined
  readonly exportVoyageNumber?: string | undefined
  readonly carrierServiceCode?: string | undefined
  readonly UNLocationCode?: string | undefined
  /** A container number (ISO 6346 form: spaces and hyphens dropped, upper case). */
  readonly equipmentReference?: string | undefined
  readonly eventCreatedDateTime?: ReadonlyArray<DateCondition> | undefined
}

/** A page request. */
export interface EventQuery extends EventFilters {
  readonly organisation_id: string
  /** Events per page, 1 to {@link maxLimit} (default {@link defaultLimit}; values outside are clamped). */
  readonly limit?: number | undefined
  /** The cursor of a previous page of the same filters; without it, the first page. */
  readonly cursor?: string | undefined
}

/** A page: its events, and when more follow, the cursor of the next page. */
export interface EventPage {
  readonly events: ReadonlyArray<Event>
  readonly next_cursor: string | undefined
}

export class DcsaPublisher extends Context.Tag("@tradeflow/core/DcsaPublisher")<DcsaPublisher, {
  /**
   * One page of the organisation's events that match the filters, in `eventCreatedDateTime` then
   * `eventID` order; a cursor not issued for this organisation and these filters fails with
   * `Cursor.InvalidCursor`.
   */
  readonly events: (query: EventQuery) => Effect.Effect<EventPage, StorageError | Cursor.InvalidCursor>
}>() {}

// ---------------------------------------------------------------------------------------------
// Query parameters

/** How one query parameter is checked and documented. */
export interface ParameterRule {
  readonly description: string
  /** The problem of a value, undefined when it is valid. */
  readonly check: (value: string) => string | undefined
  /** What the OpenAPI document says of its value beyond its description. */
  readonly jsonSchema: Record<string, unknown>
}

const codeList = (description: string, codes: ReadonlyArray<string>): ParameterRule => {
  const alternatives = codes.join("|")
  return {
    description: `${description}: one or a comma list (OR) of ${codes.join(", ")}`,
    check: (value) => {
      const unknown = value.split(",").map((c) => c.trim()).find((c) => !codes.includes(c))
      return unknown === undefined
        ? undefined
        : `unknown value ${JSON.stringify(unknown)}; expected one or a comma list of ${codes.join(", ")}`
    },
    jsonSchema: { pattern: `^ *(${alternatives}) *(, *(${alternatives}) *)*$` }
  }
}

const textUpTo = (description: string, max: number): ParameterRule => ({
  description,
  check: (value) => value.length >= 1 && value.length <= max ? undefined : `must be 1 to ${max} characters long`,
  jsonSchema: { minLength: 1, maxLength: max }
})

const matching = (description: string, pattern: RegExp, problem: string): ParameterRule => ({
  description,
  check: (value) => pattern.test(value) ? undefined : problem,
  jsonSchema: { pattern: pattern.source }
})

/** A date-time of a query: `+` of an offset sent unencoded arrives as a space, and is read as `+`. */
const queryDateTime = (value: string): string => value.replace(/ (\d{2}:?\d{2})$/, "+$1")

const dateTime = (description: string): ParameterRule => ({
  description,
  check: (value) =>
    isRfc3339(queryDateTime(value))
      ? undefined
      : "must be an RFC 3339 date-time with an offset, for example 2021-04-01T14:12:56+01:00 (send + as %2B)",
  jsonSchema: { format: "date-time" }
})

/** A parameter 2.2 deprecates and this service does not take: refused rather than ignored, which would answer more. */
const unsupported = (instead: string): ParameterRule => ({
  description: `Deprecated in 2.2 and not taken here: any value is 400 (use ${instead})`,
  check: () => `is deprecated in DCSA Track & Trace 2.2 and not supported here; use ${instead}`,
  jsonSchema: {}
})

const dateParameter = (operator: DateOperator | undefined): ParameterRule => {
  const meaning = {
    gte: "at or after",
    gt: "after",
    lte: "at or before",
    lt: "before",
    eq: "exactly at (to the millisecond)"
  }[operator ?? "eq"]
  return dateTime(
    `Only events the service recorded ${meaning} this RFC 3339 date-time (eventCreatedDateTime${
      operator === undefined ? ", no operator: as :eq" : `:${operator}`
    }); may be combined with the other operators`
  )
}

/** Every query parameter of `GET /dcsa/v2/events`, in the order of the 2.2 document. */
export const parameterRules = {
  eventType: codeList("Only events of these types", eventTypes),
  shipmentEventTypeCode: codeList(
    "Only SHIPMENT events with these codes (the service publishes no SHIPMENT event, so none match)",
    ShipmentEventTypeCode.literals
  ),
  documentTypeCode: codeList(
    "Only SHIPMENT events about these documents (the service publishes no SHIPMENT event, so none match)",
    DocumentTypeCode.literals
  ),
  carrierBookingReference: textUpTo("Only events of the tradeflows with this booking reference", 35),
  transportDocumentReference: textUpTo("Only events of the tradeflows with this bill of lading", 20),
  transportEventTypeCode: codeList("Only TRANSPORT events with these codes", TransportEventTypeCode.literals),
  transportCallID: textUpTo("Only events at the transport call of this transportCallID", 100),
  vesselIMONumber: matching(
    "Only events at calls of the vessel of this IMO number",
    /^[0-9]{7}$/,
    "must be an IMO number of 7 digits"
  ),
  carrierVoyageNumber: textUpTo("Deprecated in 2.2, as exportVoyageNumber: only events of calls of this voyage", 50),
  exportVoyageNumber: textUpTo("Only events of calls of this voyage", 50),
  carrierServiceCode: textUpTo(
    "Only events of calls of this service (the service knows no service codes, so none match)",
    5
  ),
  UNLocationCode: matching(
    "Only events at this UN/LOCODE (their transport call's or their own location)",
    /^[A-Z]{2}[A-Z2-9]{3}$/,
    "must be a 5-character UN/LOCODE in capitals, for example NLRTM"
  ),
  equipmentEventTypeCode: codeList("Only EQUIPMENT events with these codes", EquipmentEventTypeCode.literals),
  equipmentReference: textUpTo(
    "Only events of this container: EQUIPMENT events' equipmentReference, TRANSPORT events' EQ reference",
    15
  ),
  eventCreatedDateTime: dateParameter(undefined),
  "eventCreatedDateTime:gte": dateParameter("gte"),
  "eventCreatedDateTime:gt": dateParameter("gt"),
  "eventCreatedDateTime:lte": dateParameter("lte"),
  "eventCreatedDateTime:lt": dateParameter("lt"),
  "eventCreatedDateTime:eq": dateParameter("eq"),
  limit: matching(
    `The most events of the page, an integer from 1 to ${maxLimit} (default ${defaultLimit})`,
    /^[0-9]{1,4}$/,
    `must be an integer from 1 to ${maxLimit}`
  ),
  cursor: {
    description: "The cursor of the next page, as the Next-Page link carries it; the filters must stay the same",
    check: (value: string) => value === "" ? "must not be empty" : undefined,
    jsonSchema: { minLength: 1 }
  },
  sort: codeList(
    "The order, which is always eventCreatedDateTime then eventID, ascending",
    ["eventCreatedDateTime", "eventCreatedDateTime:ASC"]
  ),
  bookingReference: unsupported("carrierBookingReference"),
  transportDocumentID: unsupported("transportDocumentReference"),
  scheduleID: unsupported("transportCallID or vesselIMONumber")
} satisfies Record<string, ParameterRule>

/** A query parameter's name. */
export type ParameterName = keyof typeof parameterRules

const limitRule: ParameterRule = {
  ...parameterRules.limit,
  check: (value) =>
    /^[0-9]{1,4}$/.test(value) && Number(value) >= 1 && Number(value) <= maxLimit
      ? undefined
      : `must be an integer from 1 to ${maxLimit}`
}

const rules: Readonly<Record<ParameterName, ParameterRule>> = { ...parameterRules, limit: limitRule }

/**
 * The query parameters as the HTTP layer takes them: each an optional string with its description
 * (checked by {@link parse}, so that every problem is answered as 2.2 asks).
 */
export const Parameters = Schema.Struct(
  Object.fromEntries(
    Object.entries(rules).map(([name, rule]) => [
      name,
      Schema.optional(Schema.String.annotations({
        description: rule.description,
        jsonSchema: { type: "string", description: rule.description, ...rule.jsonSchema }
      }))
    ])
  ) as { readonly [K in ParameterName]: Schema.optional<typeof Schema.String> }
)
export type Parameters = typeof Parameters.Type

/** Parameters that apply only to some event types: given with `eventType`, one of them must apply (2.2 conformance). */
const typeSpecific: Readonly<Partial<Record<ParameterName, ReadonlyArray<string>>>> = {
  shipmentEventTypeCode: ["SHIPMENT"],
  documentTypeCode: ["SHIPMENT"],
  transportEventTypeCode: ["TRANSPORT"],
  equipmentEventTypeCode: ["EQUIPMENT"],
  transportCallID: ["TRANSPORT", "EQUIPMENT"],
  vesselIMONumber: ["TRANSPORT", "EQUIPMENT"],
  carrierVoyageNumber: ["TRANSPORT", "EQUIPMENT"],
  exportVoyageNumber: ["TRANSPORT", "EQUIPMENT"],
  carrierServiceCode: ["TRANSPORT", "EQUIPMENT"],
  UNLocationCode: ["TRANSPORT", "EQUIPMENT"]
}

const list = (value: string | undefined): ReadonlyArray<string> | undefined =>
  value === undefined ? undefined : [...new Set(value.split(",").map((c) => c.trim()))].sort()

/**
 * The query of the organisation's request: every parameter checked, with the problem of each
 * invalid one (its name as the path). A parameter that applies only to event types other than
 * those `eventType` names (`eventType=TRANSPORT&shipmentEventTypeCode=DRFT`) is invalid too, as
 * DCSA's conformance tool expects of a 2.2 publisher.
 */
export const parse = (
  organisation_id: string,
  params: Parameters
): Either.Either<EventQuery, InvalidParameters> => {
  const errors: Array<Issue> = []
  for (const name of Object.keys(rules) as Array<ParameterName>) {
    const value = params[name]
    if (value === undefined) continue
    const problem = rules[name].check(value)
    if (problem !== undefined) errors.push({ path: name, message: problem })
  }
  const types = list(params.eventType)
  if (types !== undefined && errors.length === 0) {
    for (const [name, applies] of Object.entries(typeSpecific) as Array<[ParameterName, ReadonlyArray<string>]>) {
      if (params[name] !== undefined && !applies.some((t) => types.includes(t))) {
        errors.push({
          path: name,
          message: `applies to ${applies.join(" and ")} events only, and eventType asks for ${types.join(", ")}`
        })
      }
    }
  }
  if (errors.length > 0) return Either.left(new InvalidParameters({ errors }))
  const dates = dateOperators.flatMap((operator) => {
    const named = params[`eventCreatedDateTime:${operator}`]
    const plain = operator === "eq" ? params.eventCreatedDateTime : undefined
    return [named, plain].flatMap((value) =>
      value === undefined ? [] : [{ operator, at: parseIsoDateTime(queryDateTime(value)) }]
    )
  })
  return Either.right({
    organisation_id,
    eventTypes: types,
    shipmentEventTypeCodes: list(params.shipmentEventTypeCode),
    documentTypeCodes: list(params.documentTypeCode),
    transportEventTypeCodes: list(params.transportEventTypeCode),
    equipmentEventTypeCodes: list(params.equipmentEventTypeCode),
    carrierBookingReference: params.carrierBookingReference,
    transportDocumentReference: params.transportDocumentReference,
    transportCallID: params.transportCallID,
    vesselIMONumber: params.vesselIMONumber,
    carrierVoyageNumber: params.carrierVoyageNumber,
    exportVoyageNumber: params.exportVoyageNumber,
    carrierServiceCode: params.carrierServiceCode,
    UNLocationCode: params.UNLocationCode,
    equipmentReference: params.equipmentReference === undefined
      ? undefined
      : normaliseContainerNumber(params.equipmentReference),
    eventCreatedDateTime: dates.length === 0 ? undefined : dates,
    limit: params.limit === undefined ? undefined : Number(params.limit),
    cursor: params.cursor
  })
}

// ---------------------------------------------------------------------------------------------
// Selection

const includes = (values: ReadonlyArray<string> | undefined, value: string): boolean =>
  values === undefined || values.includes(value)

const same = (wanted: string | undefined, value: string | undefined): boolean =>
  wanted === undefined || wanted === value

/** Whether a milestone's events pass the filters that do not depend on the reading. */
const milestoneMatches = (m: Milestone, f: EventFilters): boolean => {
  const { code, eventType } = m.kind
  const call = m.atCall
  return includes(f.eventTypes, eventType) &&
    f.shipmentEventTypeCodes === undefined && f.documentTypeCodes === undefined && f.carrierServiceCode === undefined &&
    (f.transportEventTypeCodes === undefined ||
      (eventType === "TRANSPORT" && f.transportEventTypeCodes.includes(code))) &&
    (f.equipmentEventTypeCodes === undefined ||
      (eventType === "EQUIPMENT" && f.equipmentEventTypeCodes.includes(code))) &&
    (f.carrierBookingReference === undefined || m.tradeflow.booking_references.includes(f.carrierBookingReference)) &&
    (f.transportDocumentReference === undefined ||
      m.tradeflow.bill_of_lading_references.includes(f.transportDocumentReference)) &&
    (f.vesselIMONumber === undefined || (call && m.vessel?.imo === f.vesselIMONumber)) &&
    (f.carrierVoyageNumber === undefined || (call && m.voyage === f.carrierVoyageNumber)) &&
    (f.exportVoyageNumber === undefined || (call && m.voyage === f.exportVoyageNumber)) &&
    same(f.UNLocationCode, m.unlocode) &&
    same(f.equipmentReference, m.container) &&
    (f.transportCallID === undefined || (call && m.callId === f.transportCallID))
}

const dateHolds = ({ at, operator }: DateCondition, created: number): boolean => {
  switch (operator) {
    case "gte":
      return created >= at
    case "gt":
      return created > at
    case "lte":
      return created <= at
    case "lt":
      return created < at
    case "eq":
      return created === at
  }
}

const byPosition = (a: Reading, b: Reading): number => a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Where a page resumes: after the event created at `created` with id `id`. */
interface Position {
  readonly created: number
  readonly id: string
}

const after = (r: Reading, position: Position | undefined): boolean =>
  position === undefined || r.created > position.created || (r.created === position.created && r.id > position.id)

/** The readings of the organisation's tradeflows that match the filters and lie after `position`, unordered. */
const candidates = (
  organisation_id: string,
  tradeflows: ReadonlyArray<Tradeflow>,
  f: EventFilters,
  position: Position | undefined
): Array<Reading> => {
  const out: Array<Reading> = []
  const dates = f.eventCreatedDateTime ?? []
  for (const t of tradeflows) {
    for (const e of t.events) {
      const milestone = milestoneOf(organisation_id, t, e)
      if (milestone === undefined || !milestoneMatches(milestone, f)) continue
      for (const reading of readingsOf(milestone)) {
        if (dates.every((d) => dateHolds(d, reading.created)) && after(reading, position)) out.push(reading)
      }
    }
  }
  return out
}

/**
 * The first `limit` readings in position order, and whether more follow. Only the readings created
 * at or before the page's last instant are sorted, and an id is worked out only where two of them
 * were created at the same instant: a page costs what its readings do, not a sort of every matching
 * reading by id.
 */
const firstPage = (
  all: Array<Reading>,
  limit: number
): { readonly page: Array<Reading>; readonly more: boolean } => {
  if (all.length <= limit) return { page: all.sort(byPosition), more: false }
  const instants = Float64Array.from(all, (c) => c.created).sort()
  const bound = instants[limit - 1]!
  return { page: all.filter((c) => c.created <= bound).sort(byPosition).slice(0, limit), more: true }
}

// ---------------------------------------------------------------------------------------------
// Cursors

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The filters a cursor is bound to, as one text: lists as sets, date conditions in a fixed order. */
const filtersKey = (f: EventFilters): string =>
  JSON.stringify([
    "GET /dcsa/v2/events",
    f.eventTypes ?? null,
    f.shipmentEventTypeCodes ?? null,
    f.documentTypeCodes ?? null,
    f.transportEventTypeCodes ?? null,
    f.equipmentEventTypeCodes ?? null,
    f.carrierBookingReference ?? null,
    f.transportDocumentReference ?? null,
    f.transportCallID ?? null,
    f.vesselIMONumber ?? null,
    f.carrierVoyageNumber ?? null,
    f.exportVoyageNumber ?? null,
    f.carrierServiceCode ?? null,
    f.UNLocationCode ?? null,
    f.equipmentReference ?? null,
    [...(f.eventCreatedDateTime ?? [])].map((d) => [d.operator, d.at]).sort()
  ])

/**
 * The scope of the upstream cursor signer a position is signed in: the organisation, the filters
 * (in place of upstream's tradeflow filter) and the last event's id (in place of its container
 * filter); the signed number is the last event's creation instant.
 */
const scopeOf = (organisation_id: string, f: EventFilters, id: string): Cursor.CursorScope => ({
  organisation_id,
  tradeflow: filtersKey(f),
  container: id
})

const invalidCursor = new Cursor.InvalidCursor({
  detail: "the cursor was not issued by this server for this organisation and these filters, or it was altered; " +
    "follow the Next-Page link as it came (limit may change, the other parameters may not)"
})

/**
 * A cursor is `<eventID>.<signed>`: the id of the last event of the page in clear, and a cursor of
 * the upstream signer (`Cursor`) whose number is that event's creation instant and whose scope binds
 * the organisation, the filters and that id, so neither part can be altered alone.
 */
const cursors = (signer: Cursor.Signer) => ({
  sign: (organisation_id: string, f: EventFilters, position: Position): Effect.Effect<string> =>
    Effect.map(
      signer.sign(scopeOf(organisation_id, f, position.id), position.created),
      (signed) => `${position.id}.${signed}`
    ),
  verify: (organisation_id: string, f: EventFilters, cursor: string): Effect.Effect<Position, Cursor.InvalidCursor> => {
    const dot = cursor.indexOf(".")
    const id = cursor.slice(0, dot)
    if (dot < 0 || !uuid.test(id)) return Effect.fail(invalidCursor)
    return signer.verify(scopeOf(organisation_id, f, id), cursor.slice(dot + 1)).pipe(
      Effect.mapError(() => invalidCursor),
      Effect.map((created) => ({ created, id }))
    )
  }
})

/**
 * The cursor signer: over the configured `Cursor.CursorSecret` when the context has one, otherwise
 * over the secret stored through the Settings port (as `Upstream` signs), read at the first use.
 */
const signerOf = Effect.gen(function*() {
  const configured = yield* Effect.serviceOption(Cursor.CursorSecret)
  if (Option.isSome(configured)) return Effect.succeed(yield* Cursor.makeSigner(configured.value))
  const settings = yield* Settings
  let signer: Cursor.Signer | undefined
  return Effect.suspend(() =>
    signer !== undefined ? Effect.succeed(signer) : Cursor.storedSecret.pipe(
      Effect.flatMap(Cursor.makeSigner),
      Effect.tap((made) => {
        signer = made
      }),
      Effect.provideService(Settings, settings)
    )
  )
})

/**
 * The tradeflows a query can select events of: with a booking or bill of lading filter, those the
 * store's key index (`TradeflowStore.lookup`, keys upper-cased) finds for it, read by reference;
 * otherwise every tradeflow of the organisation.
 */
const tradeflowsOf = (store: TradeflowStore["Type"], q: EventQuery) => {
  const key = q.carrierBookingReference !== undefined
    ? TradeflowKey.make("booking", q.carrierBookingReference.toUpperCase())
    : q.transportDocumentReference !== undefined
    ? TradeflowKey.make("bill_of_lading", q.transportDocumentReference.toUpperCase())
    : undefined
  if (key === undefined) return store.list(q.organisation_id)
  return store.lookup(q.organisation_id, [key]).pipe(
    Effect.flatMap((found) => store.getMany(q.organisation_id, found.map((c) => c.reference))),
    Effect.map((byReference) => [...byReference.values()])
  )
}

/**
 * The publisher over the {@link TradeflowStore} port. Cursors are signed as `Upstream`'s are:
 * with the `Cursor.CursorSecret` of the context when one is provided, otherwise with the secret
 * stored through the {@link Settings} port.
 */
export const layer: Layer.Layer<DcsaPublisher, never, TradeflowStore | Settings> = Layer.effect(
  DcsaPublisher,
  Effect.gen(function*() {
    const store = yield* TradeflowStore
    const signer = yield* signerOf
    return DcsaPublisher.of({
      events: Effect.fn("DcsaPublisher.events")(function*(query: EventQuery) {
        const signed = cursors(yield* signer)
        const position = query.cursor === undefined
          ? undefined
          : yield* signed.verify(query.organisation_id, query, query.cursor)
        const limit = Math.min(maxLimit, Math.max(1, Math.floor(query.limit ?? defaultLimit)))
        const tradeflows = yield* tradeflowsOf(store, query)
        const { more, page } = firstPage(candidates(query.organisation_id, tradeflows, query, position), limit)
        const last = page[page.length - 1]
        return {
          events: page.map((r) => render(r) as Event),
          next_cursor: more && last !== undefined
            ? yield* signed.sign(query.organisation_id, query, { created: last.created, id: last.id })
            : undefined
        }
      })
    })
  })
)
