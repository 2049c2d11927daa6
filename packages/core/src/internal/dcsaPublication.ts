import type { StatusCode } from "../StatusCode.js"
import type { Prediction, TrackedEvent, Tradeflow } from "../Tradeflow.js"
import { visibleHistory } from "../TradeflowMerge.js"
import { sha256HexSync } from "./crypto.js"
import { eventVessel } from "./projection.js"

/** How a status code is published: a TRANSPORT event, or an EQUIPMENT event and whether the container is empty. */
export type Kind =
  | { readonly eventType: "TRANSPORT"; readonly code: "DEPA" | "ARRI" }
  | {
    readonly eventType: "EQUIPMENT"
    readonly code: "LOAD" | "DISC" | "GTIN" | "GTOT"
    readonly empty: "EMPTY" | "LADEN"
    /** Whether the event happens at a vessel's call (loading, discharge), so that it carries the transport call. */
    readonly atCall: boolean
  }

/** The DCSA 2.2 event of each status code (ZZ, unclassified, has none). */
export const kinds: Readonly<Record<StatusCode, Kind>> = {
  VD: { eventType: "TRANSPORT", code: "DEPA" },
  VA: { eventType: "TRANSPORT", code: "ARRI" },
  AE: { eventType: "EQUIPMENT", code: "LOAD", empty: "LADEN", atCall: true },
  UV: { eventType: "EQUIPMENT", code: "DISC", empty: "LADEN", atCall: true },
  GN: { eventType: "EQUIPMENT", code: "GTIN", empty: "LADEN", atCall: false },
  GT: { eventType: "EQUIPMENT", code: "GTOT", empty: "LADEN", atCall: false },
  GE: { eventType: "EQUIPMENT", code: "GTOT", empty: "EMPTY", atCall: false },
  GR: { eventType: "EQUIPMENT", code: "GTIN", empty: "EMPTY", atCall: false }
}

const kindOf = (code: string | null): Kind | undefined =>
  code !== null && Object.hasOwn(kinds, code) ? kinds[code as StatusCode] : undefined

/** A name-based UUID (RFC 9562 version 8) from the SHA-256 of `text`: the same text, the same UUID. */
export const uuidOf = (text: string): string => {
  const h = sha256HexSync(text)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const unlocodePattern = /^[A-Z]{2}[A-Z2-9]{3}$/

/** A text within `max` characters: cut there (a name). */
const cut = (text: string, max: number): string => text.length <= max ? text : text.slice(0, max)

/** An identifier within `max` characters, else none (cutting one would make it name something else). */
const within = (text: string | undefined, max: number): string | undefined =>
  text !== undefined && text !== "" && text.length <= max ? text : undefined

/** The vessel of a transport call: its name and IMO number, as the service renders them elsewhere. */
export interface CallVessel {
  readonly name: string
  readonly imo: string
}

/**
 * The id of a vessel's call at a place: a UUID of the organisation, the vessel (else the
 * tradeflow, when no vessel is known), the voyage and the location, so that a departure, a
 * loading and a discharge at one call share it.
 */
export const transportCallId = (
  organisation_id: string,
  tradeflow: string,
  vessel: CallVessel | undefined,
  voyage: string | undefined,
  location: string | null
): string =>
  uuidOf(JSON.stringify([
    "dcsa-transport-call",
    organisation_id,
    vessel === undefined ? ["tradeflow", tradeflow] : ["vessel", vessel.name.toUpperCase()],
    voyage ?? null,
    location
  ]))

const imoPattern = /^\d{7}$/

/**
 * The vessel of a milestone's transport call: the IMO number its source named, else the vessel the
 * service renders for it in its messages and documents (`eventVessel`: the milestone's or the
 * tradeflow's vessel, its IMO number derived from the name); none when no vessel is named.
 */
export const vesselOf = (t: Tradeflow, e: TrackedEvent): CallVessel | undefined => {
  const named = e.vessel_imo
  const rendered = eventVessel(t, e)
  if (named !== undefined && imoPattern.test(named)) return { name: cut(e.vessel ?? rendered.name, 35), imo: named }
  return rendered.name === "" || !imoPattern.test(rendered.imo_number)
    ? undefined
    : { name: cut(rendered.name, 35), imo: rendered.imo_number }
}

/**
 * A milestone of a tradeflow as it is published: what every event of its readings shares. What
 * only some requests need (the vessel, the transport call's id) is worked out at the first ask.
 */
export class Milestone {
  /** The container, when it fits `equipmentReference` (15 characters). */
  readonly container: string | undefined
  readonly unlocode: string | undefined
  /** The location's text when it is no UN/LOCODE, cut to 100 characters. */
  readonly locationName: string | undefined
  /** Whether the event carries a transport call (vessel moves, loading and discharge). */
  readonly atCall: boolean
  readonly voyage: string | undefined
  private knownVessel: { readonly value: CallVessel | undefined } | undefined
  private knownCallId: string | undefined

  constructor(
    readonly organisation_id: string,
    readonly tradeflow: Tradeflow,
    readonly event: TrackedEvent,
    readonly kind: Kind
  ) {
    const location = event.location
    const coded = location !== null && unlocodePattern.test(location)
    this.container = within(event.container_reference ?? undefined, 15)
    this.unlocode = coded ? location : undefined
    this.locationName = location !== null && !coded ? cut(location, 100) : undefined
    this.atCall = kind.eventType === "TRANSPORT" || kind.atCall
    this.voyage = within(event.voyage, 50)
  }

  /** The vessel of the transport call, when one is known (see {@link vesselOf}). */
  get vessel(): CallVessel | undefined {
    this.knownVessel ??= { value: this.atCall ? vesselOf(this.tradeflow, this.event) : undefined }
    return this.knownVessel.value
  }

  /** The transport call's id (see {@link transportCallId}). */
  get callId(): string {
    return this.knownCallId ??= transportCallId(
      this.organisation_id,
      this.tradeflow.reference,
      this.vessel,
      this.voyage,
      this.event.location
    )
  }
}

/** The milestone as published, or none for an unclassified one (no DCSA 2.2 event fits it). */
export const milestoneOf = (organisation_id: string, t: Tradeflow, e: TrackedEvent): Milestone | undefined => {
  const kind = kindOf(e.status_code)
  return kind === undefined ? undefined : new Milestone(organisation_id, t, e, kind)
}

const readingIdentity = (h: Prediction): string =>
  JSON.stringify([h.event_date, h.actual, h.predicted_at, h.source, h.event_id ?? null, h.updated_at ?? null])

/**
 * One visible reading of a milestone: one published event. Its id, a UUID of the organisation,
 * the tradeflow, the milestone's key and the reading (its dates, flag, source and version), so
 * that the same reading always has the same id, is worked out at the first ask.
 */
export class Reading {
  private knownId: string | undefined

  constructor(
    readonly milestone: Milestone,
    readonly reading: Prediction,
    /** How many readings before it in the visible history have the same identity (almost always 0). */
    readonly occurrence: number
  ) {}

  /** When the service recorded the reading (`eventCreatedDateTime`). */
  get created(): number {
    return this.reading.predicted_at
  }

  get id(): string {
    return this.knownId ??= uuidOf(JSON.stringify([
      "dcsa-event",
      this.milestone.organisation_id,
      this.milestone.tradeflow.reference,
      this.milestone.event.key,
      readingIdentity(this.reading),
      this.occurrence
    ]))
  }
}

/** The visible readings of a milestone (`TradeflowMerge.visibleHistory`), oldest first. */
export const readingsOf = (milestone: Milestone): ReadonlyArray<Reading> => {
  const visible = visibleHistory(milestone.event.history)
  if (visible.length === 1) return [new Reading(milestone, visible[0]!, 0)]
  const seen = new Map<string, number>()
  return visible.map((reading) => {
    const identity = readingIdentity(reading)
    const occurrence = seen.get(identity) ?? 0
    seen.set(identity, occurrence + 1)
    return new Reading(milestone, reading, occurrence)
  })
}

const iso = (ms: number): string => new Date(ms).toISOString()

const compact = <A extends Record<string, unknown>>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as A

const transportCallOf = (m: Milestone) => {
  const vessel = m.vessel
  return compact({
    transportCallID: m.callId,
    modeOfTransport: "VESSEL" as const,
    UNLocationCode: m.unlocode,
    location: m.locationName === undefined ? undefined : { locationName: m.locationName },
    carrierVoyageNumber: m.voyage,
    exportVoyageNumber: m.voyage,
    vessel: vessel === undefined ? undefined : { vesselIMONumber: vessel.imo, vesselName: vessel.name }
  })
}

const documentReferencesOf = (t: Tradeflow) => {
  const refs = [
    ...t.booking_references.map((value) => ({ documentReferenceType: "BKG" as const, documentReferenceValue: value })),
    ...t.bill_of_lading_references.map((value) => ({
      documentReferenceType: "TRD" as const,
      documentReferenceValue: value
    }))
  ]
  return refs.length === 0 ? undefined : refs
}

/** The published JSON of a reading. */
export const render = (r: Reading) => {
  const m = r.milestone
  const common = {
    eventID: r.id,
    eventType: m.kind.eventType,
    eventCreatedDateTime: iso(r.reading.predicted_at),
    eventDateTime: iso(r.reading.event_date),
    eventClassifierCode: r.reading.actual ? "ACT" as const : "EST" as const
  }
  if (m.kind.eventType === "TRANSPORT") {
    return compact({
      ...common,
      eventType: "TRANSPORT" as const,
      transportEventTypeCode: m.kind.code,
      transportCall: transportCallOf(m),
      documentReferences: documentReferencesOf(m.tradeflow),
      references: m.container === undefined
        ? undefined
        : [{ referenceType: "EQ" as const, referenceValue: m.container }]
    })
  }
  return compact({
    ...common,
    eventType: "EQUIPMENT" as const,
    equipmentEventTypeCode: m.kind.code,
    equipmentReference: m.container,
    emptyIndicatorCode: m.kind.empty,
    eventLocation: m.unlocode !== undefined
      ? { UNLocationCode: m.unlocode }
      : m.locationName !== undefined
      ? { locationName: m.locationName }
      : undefined,
    transportCall: m.atCall ? transportCallOf(m) : undefined,
    documentReferences: documentReferencesOf(m.tradeflow)
  })
}
