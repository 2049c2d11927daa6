import { Effect, Option } from "effect"
import type {
  Arrival,
  Carrier,
  Container,
  Departure,
  DwellDetails,
  ReadingLog,
  Shipment,
  Vessel
} from "../ApiMessage.js"
import type { Location } from "../Location.js"
import { Locations } from "../Locations.js"
import { mockVessel } from "../MockJourneyOceanBasic.js"
import * as Positions from "../Positions.js"
import type { StorageError } from "../StorageError.js"
import type { TrackingSettings } from "../TrackingConfig.js"
import type { TrackedEvent, Tradeflow } from "../Tradeflow.js"
import { visibleHistory } from "../TradeflowMerge.js"
import { parseIsoDateTime } from "../TradeflowRecord.js"
import { vesselNamed } from "./vessel.js"

const day = 86_400_000
const unlocodePattern = /^[A-Z]{2}[A-Z2-9]{3}$/

/** Resolves a stored location (a UN/LOCODE or free text) to a Location; null stays null. */
export type Resolve = (location: string | null) => Location | null

/** ISO 8601 (UTC, milliseconds) of epoch milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString()

/** The predicted-date history of an event, as messages and documents render it. */
export const historyOf = (e: TrackedEvent) =>
  visibleHistory(e.history).map((h) => ({
    actual: h.actual,
    source: h.source,
    event_date: iso(h.event_date),
    predicted_at: iso(h.predicted_at)
  }))

/** The rendering of a location the directory does not know (see `RenderMessages`). */
export const unknownLocation = (text: string): Location => {
  const code = unlocodePattern.test(text) ? text : ""
  return {
    name: text,
    country: { name: "", iso_a2: code.slice(0, 2) },
    timezone: "UTC",
    unlocode: code,
    coordinates: { lat: 0, lng: 0 }
  }
}

/** Looks up every location a tradeflow names, once, and returns the resolver over them. */
export const resolver = (tradeflows: ReadonlyArray<Tradeflow>): Effect.Effect<Resolve, StorageError, Locations> =>
  Effect.gen(function*() {
    const locations = yield* Locations
    const codes = new Set<string>()
    for (const t of tradeflows) {
      for (const c of [t.details.port_of_loading, t.details.port_of_discharge, ...t.events.map((e) => e.location)]) {
        if (typeof c === "string" && unlocodePattern.test(c)) codes.add(c)
      }
    }
    const known = new Map<string, Location>()
    for (const code of codes) {
      const found = yield* locations.lookup(code)
      if (Option.isSome(found)) known.set(code, found.value)
    }
    return (location) => location === null ? null : known.get(location) ?? unknownLocation(location)
  })

/** Container details of an entry (see `RenderMessages` for the defaults). */
export const container = (
  entry: { readonly reference: string; readonly custom_properties?: { readonly [k: string]: unknown } | undefined }
): Container => {
  const props = entry.custom_properties ?? {}
  const raw = [props["container_type"], props["iso_type"], props["size_type"]].find((v): v is string =>
    typeof v === "string" && v.trim() !== ""
  )
  if (raw === undefined) {
    return { reference: entry.reference, container_type: "45G1", container_length: 40, container_is_reefer: false }
  }
  const code = raw.trim().toUpperCase()
  const iso = /^([0-9A-Z])[0-9A-Z]([A-Z])[0-9A-Z]$/.exec(code)
  const feet = /^(\d{2})/.exec(code)
  const lengths: Record<string, number> = { "1": 10, "2": 20, "3": 30, "4": 40, "L": 45, "M": 48, "P": 53 }
  const length = iso && lengths[iso[1]!] !== undefined
    ? lengths[iso[1]!]!
    : feet && [10, 20, 30, 40, 45, 48, 53].includes(Number(feet[1]))
    ? Number(feet[1])
    : 40
  const reefer = iso ? iso[2] === "R" : /^\d{2}\s*'?\s*(R[FHE]|REEFER)/.test(code)
  return { reference: entry.reference, container_type: code, container_length: length, container_is_reefer: reefer }
}

/** The vessel of a tradeflow (see `RenderMessages`). */
export const vesselOf = (t: Tradeflow): Vessel =>
  t.details.vessel !== undefined && t.details.vessel.trim() !== ""
    ? vesselNamed(t.details.vessel.trim())
    : t.mock_signature !== null
    ? mockVessel(t.reference)
    : { name: "", imo_number: "", mmsi_number: "" }

/** The carrier of a tradeflow. */
export const carrierOf = (t: Tradeflow): Carrier => ({ name: t.details.carrier_name ?? t.details.carrier_scac ?? "" })

/** The container details of every entry of a tradeflow. */
export const containersOf = (t: Tradeflow): ReadonlyArray<Container> => t.containers.map(container)

/** A reading of a vessel move: when it happens, whether that is actual, when it was predicted. */
export interface Reading {
  readonly actual: boolean
  readonly event_date: number
  readonly predicted_at: number
}

/** The readings of one side of the sea leg: the history of its vessel move, else the dates of the records. */
export const readingsOf = (t: Tradeflow, code: "VD" | "VA", port: string): ReadonlyArray<Reading> => {
  const atPort = t.events.filter((e) => e.status_code === code && e.location === port)
  const move = atPort.find((e) => e.container_reference === null) ?? atPort[0]
  const history = move === undefined ? [] : visibleHistory(move.history)
  if (history.length > 0) return history
  const [actual, estimated] = code === "VD"
    ? [t.details.actual_time_of_departure, t.details.estimated_time_of_departure]
    : [t.details.actual_time_of_arrival, t.details.estimated_time_of_arrival]
  const readings: Array<Reading> = []
  if (estimated !== undefined) {
    readings.push({ actual: false, event_date: parseIsoDateTime(estimated), predicted_at: t.updated_at })
  }
  if (actual !== undefined) {
    readings.push({ actual: true, event_date: parseIsoDateTime(actual), predicted_at: t.updated_at })
  }
  return readings
}

/** The reading log of a list of readings, oldest first, with the summary readings of SERVICE.md. */
export const readingSummary = (readings: ReadonlyArray<Reading>) => {
  const lastProvisional = readings.map((r) => !r.actual).lastIndexOf(true)
  const log: ReadonlyArray<ReadingLog> = readings.map((r, i) => ({
    actual: r.actual,
    reading: iso(r.event_date),
    is_latest: i === readings.length - 1,
    event_date: iso(r.predicted_at),
    is_provisional: !r.actual,
    is_latest_provisional: i === lastProvisional
  }))
  const confirmed = log.filter((r) => r.actual)
  const last = log[log.length - 1]
  return {
    actual: last?.actual ?? false,
    reading_log: log,
    latest_reading: last?.reading ?? null,
    first_known_reading: log[0]?.reading ?? null,
    first_confirmed_reading: confirmed[0]?.reading ?? null,
    latest_confirmed_reading: confirmed[confirmed.length - 1]?.reading ?? null,
    latest_provisional_reading: log[lastProvisional]?.reading ?? null
  }
}

/** The vessel of a mock event that names one, else the tradeflow's. */
export const eventVessel = (t: Tradeflow, e: { readonly vessel?: string | undefined }): Vessel =>
  e.vessel === undefined ? vesselOf(t) : vesselNamed(e.vessel)

/**
 * The full shipment of a tradeflow: its containers and, once both ports are known, one transport
 * plan leg (sequence 1) with one sea shipment leg per vessel: from the port of loading to the port
 * of discharge, or through the transshipment ports of its mock journey (`Positions.portsOf`). A
 * sea leg's vessel is the one its departure names (see {@link eventVessel}).
 */
export const shipment = (t: Tradeflow, resolve: Resolve): Shipment => {
  const containers = containersOf(t)
  const ports = Positions.portsOf(t)
  if (ports.length < 2) return { containers, transport_plan_legs: [] }
  const carrier = carrierOf(t)
  const side = (code: "VD" | "VA", port: string) => ({
    location: resolve(port) ?? unknownLocation(port),
    ...readingSummary(readingsOf(t, code, port))
  })
  const legs = ports.slice(1).map((to, i) => {
    const from = ports[i]!
    const first = i === 0
    const last = i === ports.length - 2
    const move = t.events.find((e) =>
      e.source === "mock" && e.container_reference === null && e.status_code === "VD" && e.location === from
    )
    const vessel = eventVessel(t, move ?? {})
    const d = side("VD", from)
    const a = side("VA", to)
    const departure: Departure = {
      type: "departure",
      actual: d.actual,
      is_pol: first,
      carrier,
      location: d.location,
      containers,
      reading_log: d.reading_log,
      is_final_pod: false,
      latest_reading: d.latest_reading,
      first_known_reading: d.first_known_reading,
      carrier_transport_unit: vessel,
      first_confirmed_reading: d.first_confirmed_reading,
      latest_confirmed_reading: d.latest_confirmed_reading,
      is_transshipment_location: !first,
      latest_provisional_reading: d.latest_provisional_reading
    }
    const arrival: Arrival = {
      ...departure,
      type: "arrival",
      actual: a.actual,
      is_pol: false,
      carrier,
      location: a.location,
      reading_log: a.reading_log,
      is_final_pod: last,
      latest_reading: a.latest_reading,
      first_known_reading: a.first_known_reading,
      first_confirmed_reading: a.first_confirmed_reading,
      latest_confirmed_reading: a.latest_confirmed_reading,
      is_transshipment_location: !last,
      latest_provisional_reading: a.latest_provisional_reading
    }
    return { arrival, departure, carrier, carrier_transport_unit: vessel }
  })
  return {
    containers,
    transport_plan_legs: [{
      carrier,
      booking_number: t.booking_references[0] ?? null,
      sequence_number: 1,
      sea_shipment_legs: legs,
      bill_of_lading_number: t.bill_of_lading_references[0] ?? null
    }]
  }
}

/**
 * When demurrage and detention start for each container of a tradeflow: UV + demurrage free days,
 * GT + detention free days (the last actual such event, else the last one). Indexed once, so a
 * render looks each container up in constant time.
 */
export const dwellIndex = (t: Tradeflow, settings: TrackingSettings): (containerReference: string) => DwellDetails => {
  const chosen = new Map<string, { uv?: number; uvActual?: boolean; gt?: number; gtActual?: boolean }>()
  for (const e of t.events) {
    if (e.container_reference === null || e.event_date === null || (e.status_code !== "UV" && e.status_code !== "GT")) {
      continue
    }
    const c = chosen.get(e.container_reference) ?? {}
    if (e.status_code === "UV") {
      if (e.actual || c.uvActual !== true) {
        c.uv = e.event_date
        c.uvActual = e.actual
      }
    } else if (e.actual || c.gtActual !== true) {
      c.gt = e.event_date
      c.gtActual = e.actual
    }
    chosen.set(e.container_reference, c)
  }
  return (containerReference) => {
    const c = chosen.get(containerReference)
    return {
      demurrage_free_time_expires: c?.uv === undefined ? null : iso(c.uv + settings.demurrageFreeDays * day),
      detention_free_time_expires: c?.gt === undefined ? null : iso(c.gt + settings.detentionFreeDays * day)
    }
  }
}
