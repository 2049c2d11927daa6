import { descriptions, type StatusCode } from "../StatusCode.js"

/** A TRANSPORT or EQUIPMENT event as the mapping reads it, whatever the DCSA version. */
export type MilestoneEvent =
  | {
    readonly eventType: "TRANSPORT"
    readonly code: string
    readonly modeOfTransport: string | undefined
  }
  | {
    readonly eventType: "EQUIPMENT"
    readonly code: string
    readonly emptyIndicatorCode: "EMPTY" | "LADEN" | undefined
  }

const vesselModes = new Set(["", "VESSEL", "BARGE"])

/** The status code of a TRANSPORT or EQUIPMENT event; undefined for the events none fits. */
export const statusCodeOf = (event: MilestoneEvent): StatusCode | undefined => {
  if (event.eventType === "TRANSPORT") {
    if (!vesselModes.has((event.modeOfTransport ?? "").trim().toUpperCase())) return undefined
    return event.code === "DEPA" ? "VD" : event.code === "ARRI" ? "VA" : undefined
  }
  const empty = event.emptyIndicatorCode
  switch (event.code) {
    case "LOAD":
      return "AE"
    case "DISC":
      return "UV"
    case "GTIN":
      return empty === "EMPTY" ? "GR" : "GN"
    case "GTOT":
      return empty === "EMPTY" ? "GE" : "GT"
    case "PICK":
      return empty === "LADEN" ? "GT" : "GE"
    case "DROP":
      return empty === "LADEN" ? "GN" : "GR"
    default:
      return undefined
  }
}

/** The equipment event codes of DCSA 2.2. */
export const equipmentCodes22 = [
  "LOAD",
  "DISC",
  "GTIN",
  "GTOT",
  "STUF",
  "STRP",
  "PICK",
  "DROP",
  "INSP",
  "RSEA",
  "RMVD"
] as const

/** The equipment event codes of DCSA 3.0: 2.2's, and availability, crossing and customs events. */
export const equipmentCodes30 = [...equipmentCodes22, "AVDO", "AVPU", "CROS", "CUSI", "CUSR", "CUSS"] as const

/** The shipment event codes of DCSA 2.2. */
export const shipmentCodes22 = [
  "RECE",
  "DRFT",
  "PENA",
  "PENU",
  "REJE",
  "APPR",
  "ISSU",
  "SURR",
  "SUBM",
  "VOID",
  "CONF",
  "REQS",
  "CMPL",
  "HOLD",
  "RELS"
] as const

/** The shipment event codes of DCSA 3.0: 2.2's, and amendments, cancellations, surrenders and updates. */
export const shipmentCodes30 = [
  ...shipmentCodes22,
  "AMCF",
  "AMCN",
  "AMDC",
  "AMPR",
  "AMRE",
  "CACF",
  "CADC",
  "CANC",
  "CARE",
  "DECL",
  "PENM",
  "PSAM",
  "PSDL",
  "SUAM",
  "SUDL",
  "UPCF",
  "UPCN",
  "UPDC",
  "UPDT",
  "UPRE"
] as const

const unmappedEquipment: Readonly<Record<string, string>> = {
  STUF: "Stuffed",
  STRP: "Stripped",
  INSP: "Inspected",
  RSEA: "Resealed",
  RMVD: "Removed",
  AVDO: "Available for drop-off",
  AVPU: "Available for pick-up",
  CROS: "Crossed",
  CUSI: "Selected for customs inspection",
  CUSR: "Released by customs",
  CUSS: "Selected for customs scan"
}

const title = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase()

/**
 * The message of a TRANSPORT or EQUIPMENT event: the SERVICE.md name of its status code
 * (`"Vessel departure"`), or for the events without one the DCSA name and code (`"Stuffed (STUF)"`,
 * `"Rail departure (DEPA)"`).
 */
export const messageOf = (event: MilestoneEvent): string => {
  const code = statusCodeOf(event)
  if (code !== undefined) return descriptions[code]
  if (event.eventType === "TRANSPORT") {
    const move = event.code === "DEPA" ? "departure" : "arrival"
    return `${title(event.modeOfTransport ?? "")} ${move} (${event.code})`
  }
  const name = unmappedEquipment[event.code]
  return name === undefined ? event.code : `${name} (${event.code})`
}

const shipmentEvents: Readonly<Record<string, string>> = {
  AMCF: "amendment confirmed",
  AMCN: "amendment cancelled",
  AMDC: "amendment declined",
  AMPR: "amendment in progress",
  AMRE: "amendment received",
  APPR: "approved",
  CACF: "cancellation confirmed",
  CADC: "cancellation declined",
  CANC: "cancelled",
  CARE: "cancellation received",
  CMPL: "completed",
  CONF: "confirmed",
  DECL: "declined",
  DRFT: "drafted",
  HOLD: "on hold",
  ISSU: "issued",
  PENA: "pending approval",
  PENM: "pending amendment",
  PENU: "pending update",
  PSAM: "pending surrender for amendment",
  PSDL: "pending surrender for delivery",
  RECE: "received",
  REJE: "rejected",
  RELS: "released",
  REQS: "requested",
  SUAM: "surrendered for amendment",
  SUBM: "submitted",
  SUDL: "surrendered for delivery",
  SURR: "surrendered",
  UPCF: "update confirmed",
  UPCN: "update cancelled",
  UPDC: "update declined",
  UPDT: "update in progress",
  UPRE: "update received",
  VOID: "voided"
}

const documents: Readonly<Record<string, string>> = {
  ARN: "Arrival notice",
  BKG: "Booking",
  CAS: "Cargo survey",
  CBR: "Booking request",
  CUS: "Customs inspection",
  DGD: "Dangerous goods declaration",
  OOG: "Out of gauge",
  SHI: "Shipping instruction",
  SRM: "Shipment release message",
  TRD: "Transport document",
  VGM: "Verified gross mass"
}

/** The message of a SHIPMENT event: its document and what happened to it (`"Booking confirmed (CONF)"`). */
export const shipmentMessageOf = (code: string, documentTypeCode: string | undefined): string => {
  const document = documentTypeCode === undefined
    ? "Shipment"
    : Object.hasOwn(documents, documentTypeCode)
    ? documents[documentTypeCode]!
    : `Document ${documentTypeCode}`
  const happened = Object.hasOwn(shipmentEvents, code) ? shipmentEvents[code]! : code
  return `${document} ${happened} (${code})`
}

/** What a DCSA document reference type names: a booking (BKG), a bill of lading (TRD, BOL), or neither. */
export const referenceKind = (type: string | undefined): "booking" | "bill_of_lading" | undefined =>
  type === "BKG" ? "booking" : type === "TRD" || type === "BOL" ? "bill_of_lading" : undefined

/** The booking and bill of lading references of an event (see {@link referenceKind}), in order, each once. */
export const referencesOf = (
  refs: ReadonlyArray<readonly [type: string | undefined, value: string | undefined]>
): { readonly bookings: ReadonlyArray<string>; readonly bills_of_lading: ReadonlyArray<string> } => {
  const bookings = new Set<string>()
  const bills = new Set<string>()
  for (const [type, raw] of refs) {
    const value = raw?.trim()
    const kind = referenceKind(type)
    if (value === undefined || value === "" || kind === undefined) continue
    if (kind === "booking") bookings.add(value)
    else bills.add(value)
  }
  return { bookings: [...bookings], bills_of_lading: [...bills] }
}

/** An IMO number as `TrackingEvent` keeps it: seven digits, else none. */
export const imoOf = (value: string | undefined): string | undefined => {
  const imo = value?.trim()
  return imo !== undefined && /^\d{7}$/.test(imo) ? imo : undefined
}

/** The first of the values that is a non-blank string, trimmed. */
export const firstText = (...values: ReadonlyArray<string | undefined>): string | undefined => {
  for (const value of values) {
    const text = value?.trim()
    if (text !== undefined && text !== "") return text
  }
  return undefined
}

/** The empty indicator an encoded EQUIPMENT event needs for its status code to decode as `status`. */
export const emptyIndicatorFor = (code: string, status: string | null): "EMPTY" | "LADEN" => {
  if (status === "GE" || status === "GR") return "EMPTY"
  if (status === "GN" || status === "GT" || status === "AE" || status === "UV") return "LADEN"
  return code === "PICK" || code === "DROP" ? "EMPTY" : "LADEN"
}

/** A location as a DCSA event writes it: a UN/LOCODE, else a location name. */
export const encodedLocation = (
  location: string | null
): { readonly UNLocationCode: string } | { readonly locationName: string } | undefined =>
  location === null
    ? undefined
    : /^[A-Z]{2}[A-Z2-9]{3}$/.test(location)
    ? { UNLocationCode: location }
    : { locationName: location }

/** An instant (epoch ms) as an RFC 3339 date-time in UTC. */
export const isoOf = (ms: number): string => new Date(ms).toISOString()

/** The record without its undefined values. */
export const compact = <A extends Record<string, unknown>>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as A
