/**
 * What a fake carrier publishes for a shipment: the milestones of one of our mock journeys
 * (`MockJourney*` of `@tradeflow/core`), each as the versions a carrier publishes over time: planned
 * when the shipment is booked, estimated when a prediction moves, actual once it has happened
 * (and was reported), with a shipment's own SHIPMENT events.
 *
 * @module
 */
import {
  MockJourneyDelayedEta,
  MockJourneyOceanBasic,
  MockJourneyOceanFull,
  MockJourneyRolledShipment,
  MockJourneys,
  type TrackingEvent,
  type Tradeflow
} from "@tradeflow/core"
import { createHash } from "node:crypto"

/** A shipment of the fake carrier. */
export interface ShipmentInput {
  /** The carrier's booking reference (`carrierBookingReference`). */
  readonly booking: string
  /** The transport document (`transportDocumentReference`), once issued. */
  readonly bill_of_lading?: string | undefined
  readonly containers: ReadonlyArray<string>
  /** One of `MockJourneys.scenarioNames` (default `ocean_basic`). */
  readonly scenario?: string | undefined
  /** UN/LOCODEs (default NLRTM and SGSIN). */
  readonly port_of_loading?: string | undefined
  readonly port_of_discharge?: string | undefined
  /** The vessel's departure and arrival (epoch ms; default 3 and 25 days after the shipment is added). */
  readonly departure?: number | undefined
  readonly arrival?: number | undefined
  /** The voyage number (default from the booking). */
  readonly voyage?: string | undefined
  /** Publishes a wrong actual gate-in one step after booking, retracted (3.0) a step later. */
  readonly mistake?: boolean | undefined
}

/** How a shipment's versions are released. */
export interface ReleaseOptions {
  /** Time between two steps of a journey (default an hour): a moved prediction is published at its step. */
  readonly stepMillis: number
  /** How long after it happened an actual event is published (default 15 minutes). */
  readonly reportDelayMillis: number
  /** How much later gate events are published on top of that (the `late` quirk; default 0). */
  readonly lateMillis: number
  /** Every actual event is published twice, the second a minute later (a new 2.2 message, a new 3.0 version). */
  readonly duplicates: boolean
}

/** One version of one event, as the fake publishes it. */
export interface Version {
  /** When it is published (epoch ms): it is answered once the clock has reached it. */
  readonly released_at: number
  /** The 2.2 message's eventID (a UUID, one per version). */
  readonly id22: string
  /** The 3.0 event's eventID (one per event: versions replace each other). */
  readonly id30: string
  /** The event; its event_id and updated_at are set per version when encoded. */
  readonly event: TrackingEvent.TrackingEvent
}

type MockEvent = Tradeflow.MockEvent

const day = 86_400_000

const uuidOf = (text: string): string => {
  const hex = createHash("sha256").update(text).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** A valid IMO number (six digits and their check digit) of a vessel name. */
const imoOf = (name: string): string => {
  const six = String(100_000 + (parseInt(createHash("sha256").update(name).digest("hex").slice(0, 8), 16) % 900_000))
  const check = [...six].reduce((sum, d, i) => sum + Number(d) * (7 - i), 0) % 10
  return `${six}${check}`
}

const equipmentCodes: Readonly<Record<string, string>> = {
  GE: "GTOT",
  GN: "GTIN",
  AE: "LOAD",
  UV: "DISC",
  GT: "GTOT",
  GR: "GTIN"
}

const journeyOf = (input: ShipmentInput, departure: number, arrival: number): ReadonlyArray<MockEvent> => {
  const args = {
    containers: input.containers,
    port_of_loading: input.port_of_loading ?? "NLRTM",
    port_of_discharge: input.port_of_discharge ?? "SGSIN",
    departure,
    arrival
  }
  const other = MockJourneyOceanBasic.mockVesselName(input.booking, 1)
  switch (input.scenario ?? MockJourneyOceanBasic.name) {
    case MockJourneyOceanFull.name:
      return MockJourneyOceanFull.journey({
        ...args,
        vessel: other,
        transshipment: MockJourneyOceanFull.hubs.find((h) => h !== args.port_of_loading && h !== args.port_of_discharge)
      })
    case MockJourneyRolledShipment.name:
      return MockJourneyRolledShipment.journey({ ...args, vessel: other })
    case MockJourneyDelayedEta.name:
      return MockJourneyDelayedEta.journey(args)
    case "empty":
      return []
    default:
      return MockJourneyOceanBasic.journey(args)
  }
}

/** Whether a scenario name is one of our mock journeys. */
export const isScenario = (name: string): boolean => MockJourneys.scenarioNames.includes(name)

/**
 * Every version the fake publishes for a shipment added at `createdAt`, in release order (ties in
 * journey order).
 */
export const versionsOf = (
  input: ShipmentInput,
  createdAt: number,
  options: ReleaseOptions
): ReadonlyArray<Version> => {
  const departure = input.departure ?? createdAt + 3 * day
  const arrival = input.arrival ?? createdAt + 25 * day
  const own = MockJourneyOceanBasic.mockVesselName(input.booking)
  const voyage = input.voyage ?? `${input.booking.slice(-3).toUpperCase()}E`
  const refs = {
    bookings: [input.booking],
    bills_of_lading: input.bill_of_lading === undefined ? [] : [input.bill_of_lading]
  }
  type Fields =
    & Omit<
      TrackingEvent.TrackingEvent,
      "source" | "event_id" | "updated_at" | "retracted" | "raw" | "bookings" | "bills_of_lading"
    >
    & Partial<Pick<TrackingEvent.TrackingEvent, "bookings" | "bills_of_lading">>
  const base = (id30: string, fields: Fields): TrackingEvent.TrackingEvent => ({
    source: "fake",
    event_id: id30,
    updated_at: createdAt,
    retracted: false,
    raw: null,
    ...refs,
    ...fields
  })
  const callOf = (vessel: string | undefined) => ({
    mode: "VESSEL",
    vessel_name: vessel ?? own,
    vessel_imo: imoOf(vessel ?? own),
    voyage
  })
  const milestones = new Map<string, Array<MockEvent>>()
  for (const fact of journeyOf(input, departure, arrival)) {
    if (fact.container_reference !== null && (fact.status_code === "VD" || fact.status_code === "VA")) continue
    const key = `${fact.container_reference ?? "vessel"}-${fact.status_code}-${fact.location}`
    milestones.set(key, [...(milestones.get(key) ?? []), fact])
  }
  const out: Array<Version> = []
  let order = 0
  const publish = (id30: string, released_at: number, event: TrackingEvent.TrackingEvent) =>
    out.push({ released_at, id22: uuidOf(`${id30}#${order++}`), id30, event: { ...event, event_id: id30 } })
  publish(
    `evt-${input.booking}-BKG-CONF`,
    createdAt,
    base("", {
      event_type: "SHIPMENT",
      event_code: "CONF",
      classifier: "ACT",
      status_code: null,
      message: "Booking confirmed (CONF)",
      container_reference: null,
      location: null,
      event_date: createdAt,
      bookings: [input.booking],
      bills_of_lading: []
    })
  )
  if (input.bill_of_lading !== undefined) {
    publish(
      `evt-${input.booking}-TRD-ISSU`,
      Math.max(createdAt, departure + day),
      base("", {
        event_type: "SHIPMENT",
        event_code: "ISSU",
        classifier: "ACT",
        status_code: null,
        message: "Transport document issued (ISSU)",
        container_reference: null,
        location: null,
        event_date: Math.max(createdAt, departure + day)
      })
    )
  }
  for (const [key, facts] of milestones) {
    const id30 = `evt-${input.booking}-${key}`
    const last = facts[facts.length - 1]!
    const code = last.status_code
    const container = last.container_reference
    const eventOf = (fact: MockEvent, classifier: "PLN" | "EST" | "ACT") =>
      base(id30, {
        event_type: container === null ? "TRANSPORT" : "EQUIPMENT",
        event_code: container === null ? (code === "VD" ? "DEPA" : "ARRI") : equipmentCodes[code] ?? code,
        classifier,
        status_code: code,
        message: fact.message,
        container_reference: container,
        location: fact.location,
        event_date: fact.event_date,
        ...(container === null || code === "AE" || code === "UV" ? { transport_call: callOf(fact.vessel) } : {})
      })
    const late = code === "GN" || code === "GT" ? options.lateMillis : 0
    const actualAt = Math.max(createdAt, last.event_date + options.reportDelayMillis + late)
    let told = facts[0]!
    if (last.event_date + options.reportDelayMillis > createdAt) publish(id30, createdAt, eventOf(told, "PLN"))
    for (const fact of facts.slice(1)) {
      const at = createdAt + fact.step * options.stepMillis
      const moved = fact.event_date !== told.event_date || fact.vessel !== told.vessel
      if (at < actualAt && moved) publish(id30, at, eventOf(fact, "EST"))
      told = fact
    }
    publish(id30, actualAt, eventOf(last, "ACT"))
    if (options.duplicates) publish(id30, actualAt + 60_000, eventOf(last, "ACT"))
  }
  if (input.mistake === true && input.containers[0] !== undefined) {
    const id30 = `evt-${input.booking}-mistake`
    const wrong = base(id30, {
      event_type: "EQUIPMENT",
      event_code: "GTIN",
      classifier: "ACT",
      status_code: "GN",
      message: "Gate in full",
      container_reference: input.containers[0],
      location: input.port_of_discharge ?? "SGSIN",
      event_date: createdAt
    })
    publish(id30, createdAt + options.stepMillis, wrong)
    publish(id30, createdAt + 2 * options.stepMillis, { ...wrong, retracted: true })
  }
  return out.sort((a, b) => a.released_at - b.released_at)
}
