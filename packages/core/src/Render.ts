/**
 * Rendering of tradeflow changes into upstream messages (DECISIONS.md §5).
 *
 * - Lifecycle changes (created, reactivated, updated, deactivated) → one BASIC_STATUS each, first.
 * - Every new or changed event (a new key, or a new date or actual flag for a known key), in
 *   event-date order → a CONTAINER_MILESTONE when it has a container; a SHIPMENT_CHANGE when it is
 *   a vessel departure (VD) or arrival (VA) that is a vessel move of the shipment (no container)
 *   or was imported; and always a BASIC_STATUS.
 *
 * Rendering choices SERVICE.md leaves open:
 * - Container details come from the entry's `custom_properties.container_type` (or `iso_type` /
 *   `size_type`): an ISO 6346 size-type code such as `22G1` or `45R1` gives the length (first
 *   character 2 = 20, 4 = 40, L = 45 feet) and reefer flag (group letter R); a form such as `40HC`
 *   or `20RF` is read the same way. Without one: `45G1`, 40 feet, not a reefer.
 * - A location the directory does not know renders with the text as its name, the code as
 *   `unlocode` (empty when the text is not a UN/LOCODE), the code's first two letters as
 *   `country.iso_a2` with an empty country name, timezone `UTC` and coordinates 0, 0.
 * - An event message that maps to no status code renders with status code `ZZ`.
 * - Vessel: the tradeflow's `vessel` (IMO and MMSI numbers derived from the name), else the mock
 *   vessel of the reference when a mock journey was generated, else a vessel with empty fields. A
 *   mock vessel move that names another vessel (a transshipment's second vessel, the vessel cargo
 *   was rolled from) renders that vessel in its SHIPMENT_CHANGE, its sea leg and its positions.
 * - A mock journey with a transshipment has one sea shipment leg per vessel (port of loading →
 *   transshipment port → port of discharge) and positions along each leg.
 * - Carrier: `carrier_name`, else `carrier_scac`, else an empty name.
 * - A partner organisation's id is `partner_` and the first 24 hex digits of the SHA-256 of
 *   `<organisation id>\u0000<name>` ({@link partnerId}).
 * - Dates are ISO 8601 in UTC with milliseconds, except the LOCATION_UPDATE `event_date`
 *   (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC, as SERVICE.md writes it).
 * - LOCATION_UPDATE positions (see `Positions`) are rounded to 6 decimals (about 0.1 m) and carry
 *   the name of the tradeflow's vessel. A voyage whose port the directory does not know has no
 *   positions.
 *
 * What one job renders is bounded by a {@link Budget}: at most {@link maxMessagesPerJob} messages
 * and {@link maxBytesPerJob} bytes (message bodies and webhook documents, UTF-8). Rendering lets the
 * event loop turn every few milliseconds, inside a tradeflow too, not only between tradeflows.
 *
 * @module
 */
import { Data, Effect, Option, Schema } from "effect"
import {
  ApiMessage,
  type Arrival,
  type BasicStatusKind,
  type Carrier,
  type Container,
  type Departure,
  type DwellDetails,
  type ReadingLog,
  type Shipment,
  type TradeflowDocument,
  type TradeflowEvent,
  type Vessel,
  type WidgetContainer,
  type WidgetLocation,
  type WidgetMove,
  type WidgetSearchResult
} from "./ApiMessage.js"
import { timeSlice } from "./internal/eventLoop.js"
import { vesselNamed } from "./internal/vessel.js"
import type { Location } from "./Location.js"
import { Locations } from "./Locations.js"
import * as MessageHash from "./MessageHash.js"
import { mockVessel } from "./MockJourneyOceanBasic.js"
import * as Positions from "./Positions.js"
import { unclassified } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import { byteLength, type NewMessage } from "./StoredMessage.js"
import { TrackingConfig, type TrackingSettings } from "./TrackingConfig.js"
import type { TrackedEvent, Tradeflow } from "./Tradeflow.js"
import { parseIsoDateTime } from "./TradeflowRecord.js"

const day = 86_400_000
const unlocodePattern = /^[A-Z]{2}[A-Z2-9]{3}$/

/** A lifecycle change of a tradeflow. */
export type Lifecycle = Exclude<BasicStatusKind, "EVENT">

/** Resolves a stored location (a UN/LOCODE or free text) to a Location; null stays null. */
export type Resolve = (location: string | null) => Location | null

/** At most this many messages are rendered by one job. */
export const maxMessagesPerJob = 100_000

/** At most this many bytes (UTF-8) of message bodies and webhook documents are rendered by one job: 64 MiB. */
export const maxBytesPerJob = 64 * 1024 * 1024

/**
 * A job rendered more than its {@link Budget} allows. It is raised as a defect: the ingest refuses
 * what would come near the caps, so this is the safety net, and the worker fails the job without
 * committing anything of it.
 */
export class RenderCapExceeded extends Data.TaggedError("RenderCapExceeded")<{
  readonly cap: "messages" | "bytes"
  readonly limit: number
}> {
  override get message(): string {
    return `rendering exceeded the per-job cap of ${
      this.limit.toLocaleString("en")
    } ${this.cap}; nothing of the job was committed`
  }
}

/** What one job may render, and its share of the thread (see {@link budget}). */
export interface Budget {
  /**
   * Counts rendered text (`messages`: 1 for a message, 0 for a webhook document) against the caps,
   * dying with {@link RenderCapExceeded} past one, then lets the event loop turn when the time
   * slice is used up.
   */
  readonly take: (text: string, messages: 0 | 1) => Effect.Effect<void>
  /** Lets the event loop turn when the time slice is used up (for loops that render nothing). */
  readonly pause: Effect.Effect<void>
  /** How many more messages of `bytesEach` bytes fit under both caps. */
  readonly room: (bytesEach: number) => number
  /** Messages and bytes rendered so far. */
  readonly used: () => { readonly messages: number; readonly bytes: number }
}

/** The options of {@link budget}. */
export interface BudgetOptions {
  /** Default {@link maxMessagesPerJob}. */
  readonly maxMessages?: number
  /** Default {@link maxBytesPerJob}. */
  readonly maxBytes?: number
  /** The event loop turns once this many milliseconds of work have passed since the last turn (default 2). */
  readonly sliceMillis?: number
  /** How the event loop turns (default: one `setImmediate`); tests count turns with it. */
  readonly turn?: Effect.Effect<void>
}

/** The UTF-8 length of a string, without encoding it: `StoredMessage.byteLength`, as `max_bytes` counts bodies. */
export const utf8Length: (text: string) => number = byteLength

/** A fresh budget for one job. */
export const budget = (options: BudgetOptions = {}): Budget => {
  const maxMessages = options.maxMessages ?? maxMessagesPerJob
  const maxBytes = options.maxBytes ?? maxBytesPerJob
  const pause = timeSlice(options.sliceMillis, options.turn)
  let messages = 0
  let bytes = 0
  return {
    take: (text, count) =>
      Effect.suspend(() => {
        messages += count
        bytes += utf8Length(text)
        if (messages > maxMessages) return Effect.die(new RenderCapExceeded({ cap: "messages", limit: maxMessages }))
        if (bytes > maxBytes) return Effect.die(new RenderCapExceeded({ cap: "bytes", limit: maxBytes }))
        return pause
      }),
    pause,
    room: (bytesEach) => Math.max(0, Math.min(maxMessages - messages, Math.floor((maxBytes - bytes) / bytesEach))),
    used: () => ({ messages, bytes })
  }
}

/** ISO 8601 (UTC, milliseconds) of epoch milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString()

/** The predicted-date history of an event, as messages and documents render it. */
export const historyOf = (e: TrackedEvent) =>
  e.history.map((h) => ({
    actual: h.actual,
    source: h.source,
    event_date: iso(h.event_date),
    predicted_at: iso(h.predicted_at)
  }))

/** The rendering of a location the directory does not know (see the module notes). */
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

/** Container details of an entry (see the module notes for the defaults). */
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

/** The vessel of a tradeflow (see the module notes). */
export const vesselOf = (t: Tradeflow): Vessel =>
  t.details.vessel !== undefined && t.details.vessel.trim() !== ""
    ? vesselNamed(t.details.vessel.trim())
    : t.mock_signature !== null
    ? mockVessel(t.reference)
    : { name: "", imo_number: "", mmsi_number: "" }

/** The carrier of a tradeflow. */
export const carrierOf = (t: Tradeflow): Carrier => ({ name: t.details.carrier_name ?? t.details.carrier_scac ?? "" })

const containersOf = (t: Tradeflow): ReadonlyArray<Container> => t.containers.map(container)

/** @inline */
interface Reading {
  readonly actual: boolean
  readonly event_date: number
  readonly predicted_at: number
}

/** The readings of one side of the sea leg: the history of its vessel move, else the dates of the records. */
const readingsOf = (t: Tradeflow, code: "VD" | "VA", port: string): ReadonlyArray<Reading> => {
  const atPort = t.events.filter((e) => e.status_code === code && e.location === port)
  const move = atPort.find((e) => e.container_reference === null) ?? atPort[0]
  if (move !== undefined && move.history.length > 0) return move.history
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

/** When demurrage and detention start for a container (see {@link dwellIndex}). */
export const dwellDetails = (t: Tradeflow, containerReference: string, settings: TrackingSettings): DwellDetails =>
  dwellIndex(t, settings)(containerReference)

const samePrediction = (a: TrackedEvent, b: TrackedEvent): boolean =>
  a.event_date === b.event_date && a.actual === b.actual && a.history.length === b.history.length &&
  a.message === b.message && a.status_code === b.status_code

/** Events of `next` that are new or changed compared to `previous`, in event-date order. */
export const changedEvents = (previous: Tradeflow | undefined, next: Tradeflow): ReadonlyArray<TrackedEvent> => {
  const before = new Map((previous?.events ?? []).map((e) => [e.key, e] as const))
  const changed = next.events.filter((e) => {
    const old = before.get(e.key)
    return old === undefined || !samePrediction(old, e)
  })
  const when = (e: TrackedEvent) => e.event_date ?? e.predicted_at
  return changed.map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => when(a) - when(b) || i - j).map(([e]) => e)
}

/** An APIMessage before its hash is known. */
export type Unhashed = ApiMessage extends infer M ? M extends ApiMessage ? Omit<M, "hash"> : never : never

/**
 * Hashes a message and encodes it: the body has every field in the schema's order. A message the
 * schema rejects is a renderer bug (defect).
 */
export const finalise = (
  message: Unhashed,
  containerReference: string | null,
  now: number
): Effect.Effect<NewMessage> =>
  Effect.gen(function*() {
    const hash = yield* MessageHash.hashMessage(message)
    const encoded = yield* Schema.encode(ApiMessage)({ hash, ...message } as ApiMessage).pipe(Effect.orDie)
    return {
      hash,
      type: message.type,
      tradeflow_reference: message.tradeflow_reference,
      container_reference: containerReference,
      generated_at: now,
      body: JSON.stringify(encoded)
    }
  })

const lifecycleMessages: Record<Lifecycle, string> = {
  TRADEFLOW_CREATED: "Tradeflow created",
  TRADEFLOW_UPDATED: "Tradeflow updated",
  TRADEFLOW_DEACTIVATED: "Tradeflow deactivated",
  TRADEFLOW_REACTIVATED: "Tradeflow reactivated"
}

/** What to render for one tradeflow. */
export interface RenderInput {
  /** The state before the job (absent for a new tradeflow). */
  readonly previous: Tradeflow | undefined
  readonly next: Tradeflow
  /** Lifecycle changes, in the order to report them. */
  readonly lifecycle: ReadonlyArray<Lifecycle>
  /** Optional detail appended to the TRADEFLOW_UPDATED message. */
  readonly updateSummary?: string | undefined
  readonly now: number
  /** The job's budget (default: a fresh one). */
  readonly budget?: Budget | undefined
}

/** The messages of a tradeflow change: lifecycle first, then the changed events in event-date order. */
export const render = (
  input: RenderInput
): Effect.Effect<ReadonlyArray<NewMessage>, StorageError, Locations | TrackingConfig> =>
  Effect.gen(function*() {
    const settings = yield* TrackingConfig
    const { next: t, now } = input
    const resolve = yield* resolver([t])
    const fullShipment = shipment(t, resolve)
    const generated = iso(now)
    const base = { message_generated_event_date: generated, tradeflow_reference: t.reference }
    const booking = t.booking_references[0] ?? null
    const billOfLading = t.bill_of_lading_references[0] ?? null
    const dwell = dwellIndex(t, settings)
    const spend = input.budget ?? budget()
    const out: Array<NewMessage> = []
    const emit = (message: Unhashed, containerReference: string | null) =>
      Effect.flatMap(finalise(message, containerReference, now), (m) => {
        out.push(m)
        return spend.take(m.body, 1)
      })

    for (const status of input.lifecycle) {
      const summary = status === "TRADEFLOW_UPDATED" && input.updateSummary ? `: ${input.updateSummary}` : ""
      yield* emit({
        ...base,
        type: "BASIC_STATUS",
        payload: {
          type: "BASIC_STATUS",
          status,
          message: `${lifecycleMessages[status]}${summary}`,
          status_code: null,
          event_date: generated,
          actual: true,
          container_reference: null,
          location: null,
          predicted_at: generated
        }
      }, null)
    }

    const entries = new Map(t.containers.map((c) => [c.reference, c] as const))
    for (const e of changedEvents(input.previous, t)) {
      const eventDate = iso(e.event_date ?? e.predicted_at)
      const predictedAt = iso(e.predicted_at)
      const location = resolve(e.location)
      const code = e.status_code ?? unclassified
      if (e.container_reference !== null) {
        const details = container(entries.get(e.container_reference) ?? { reference: e.container_reference })
        yield* emit({
          ...base,
          type: "CONTAINER_MILESTONE",
          payload: {
            type: "CONTAINER_MILESTONES",
            actual: e.actual,
            history: historyOf(e),
            container_details: details,
            message: e.message,
            status_code: code,
            location,
            event_date: eventDate,
            predicted_at: predictedAt,
            transport_unit_reference: e.container_reference,
            booking_reference: booking,
            bill_of_lading_reference: billOfLading,
            shipment: fullShipment,
            dwell_details: dwell(e.container_reference)
          }
        }, e.container_reference)
      }
      if (
        (e.status_code === "VD" || e.status_code === "VA") && (e.container_reference === null || e.source === "import")
      ) {
        const isPol = e.location !== null && e.location === t.details.port_of_loading
        const isPod = e.location !== null && e.location === t.details.port_of_discharge
        yield* emit({
          ...base,
          type: "SHIPMENT_CHANGE",
          payload: {
            type: "SHIPMENT_CHANGE",
            change: {
              actual: e.actual,
              is_pol: isPol,
              booking_reference: booking,
              bill_of_lading_reference: billOfLading,
              cargo_opening: null,
              vessel: eventVessel(t, e),
              carrier: carrierOf(t),
              reading: eventDate,
              location,
              move_type: e.status_code === "VD" ? "departure" : "arrival",
              containers: containersOf(t),
              is_final_pod: isPod,
              predicted_at: predictedAt,
              is_transshipment_location: location !== null && !isPol && !isPod
            },
            shipment: fullShipment
          }
        }, null)
      }
      yield* emit({
        ...base,
        type: "BASIC_STATUS",
        payload: {
          type: "BASIC_STATUS",
          status: "EVENT",
          message: e.message,
          status_code: code,
          event_date: eventDate,
          actual: e.actual,
          container_reference: e.container_reference,
          location,
          predicted_at: predictedAt
        }
      }, e.container_reference)
    }
    return out
  }).pipe(Effect.withSpan("Render.render"))

const typeGroups: Record<string, string> = {
  G: "GP",
  V: "VH",
  B: "BU",
  S: "SN",
  R: "RE",
  H: "HR",
  U: "UT",
  P: "PF",
  T: "TN",
  A: "AS"
}

/** The widget's type group of a container: the ISO 6346 group code (`GP`, `RE`, `TN`, ...). */
export const typeGroup = (c: Container): string => {
  const iso = /^[0-9A-Z][0-9A-Z]([A-Z])[0-9A-Z]$/.exec(c.container_type)
  return (iso ? typeGroups[iso[1]!] : undefined) ?? (c.container_is_reefer ? "RE" : "GP")
}

/** The widget's location object (country by name). */
export const widgetLocation = (l: Location | null): WidgetLocation =>
  l === null
    ? { name: "", unlocode: "", timezone: "UTC", country: "" }
    : { name: l.name, unlocode: l.unlocode, timezone: l.timezone, country: l.country.name }

const vesselCodes = new Set(["AE", "VD", "VA", "UV"])

/**
 * The widget search result of a tradeflow: departure and arrival from the latest readings of the
 * sea leg (null while a port or every reading is unknown), and for each container its latest
 * actual milestone (vessel only for the vessel milestones AE, VD, VA, UV).
 */
export const widgetSearchResult = (t: Tradeflow): Effect.Effect<WidgetSearchResult, StorageError, Locations> =>
  Effect.gen(function*() {
    const resolve = yield* resolver([t])
    const vessel = vesselOf(t)
    const move = (code: "VD" | "VA", port: string | undefined): WidgetMove | null => {
      if (port === undefined) return null
      const latest = readingsOf(t, code, port).at(-1)
      return latest === undefined ? null : {
        vessel: { name: vessel.name },
        event_date: iso(latest.event_date),
        actual: latest.actual,
        location: widgetLocation(resolve(port))
      }
    }
    const containers: ReadonlyArray<WidgetContainer> = t.containers.map((entry) => {
      const c = container(entry)
      const latest = t.events
        .filter((e) => e.container_reference === entry.reference && e.actual)
        .map((e, i) => [e, i] as const)
        .sort(([a, i], [b, j]) => (a.event_date ?? a.predicted_at) - (b.event_date ?? b.predicted_at) || i - j)
        .at(-1)?.[0]
      return {
        reference: entry.reference,
        details: {
          type_code: c.container_type,
          type_group: typeGroup(c),
          type_reefer: c.container_is_reefer,
          length: c.container_length
        },
        latest_actual_milestone: latest === undefined ? null : {
          vessel: latest.status_code !== null && vesselCodes.has(latest.status_code) ? { name: vessel.name } : null,
          location: widgetLocation(resolve(latest.location)),
          event_date: iso(latest.event_date ?? latest.predicted_at),
          actual: true,
          status_code: latest.status_code ?? unclassified
        }
      }
    })
    return {
      carrier: carrierOf(t).name,
      booking_reference: t.booking_references[0] ?? null,
      bill_of_lading_reference: t.bill_of_lading_references[0] ?? null,
      departure: move("VD", t.details.port_of_loading),
      arrival: move("VA", t.details.port_of_discharge),
      containers
    }
  })

/** The LOCATION_UPDATE messages of a voyage that are due, and when the next one is. */
export interface PositionUpdates {
  /** Ascending by position instant. */
  readonly messages: ReadonlyArray<NewMessage>
  /** When the next position is due (possibly already past when `limit` cut the list); null when none is. */
  readonly next_position_at: number | null
}

const noPositions: PositionUpdates = { messages: [], next_position_at: null }

/** A bound on the body of one LOCATION_UPDATE (about 330 bytes with a long vessel name). */
const maxLocationUpdateBytes = 512

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6 + 0

/**
 * The positions of a tradeflow's mock voyage (each leg of `Positions.voyagesOf` whose ports the
 * directory knows, named after the leg's vessel) at or after `from` (or from the first one,
 * `"start"`) up to `now`, at most `limit` and at most as many as still fit in the job's budget
 * (the rest stay due), as LOCATION_UPDATE messages. The same position always renders with the same
 * hash.
 */
export const positionUpdates = (
  t: Tradeflow,
  from: number | "start",
  now: number,
  limit: number = Positions.maxPositionsPerJob,
  spend: Budget = budget()
): Effect.Effect<PositionUpdates, StorageError, Locations | TrackingConfig> =>
  Effect.gen(function*() {
    const locations = yield* Locations
    const settings = yield* TrackingConfig
    const intervalMs = settings.locationIntervalMinutes * 60_000
    const legs: Array<
      { readonly timing: Positions.Timing; readonly from: Location; readonly to: Location; readonly vessel: string }
    > = []
    for (const v of Positions.voyagesOf(t)) {
      const pol = yield* locations.lookup(v.port_of_loading)
      const pod = yield* locations.lookup(v.port_of_discharge)
      if (Option.isNone(pol) || Option.isNone(pod)) continue
      const timing = { departure: v.departure, arrival: v.arrival, intervalMs }
      legs.push({ timing, from: pol.value, to: pod.value, vessel: eventVessel(t, v).name })
    }
    if (legs.length === 0) return noPositions
    const fits = Math.min(limit, Math.max(0, spend.room(maxLocationUpdateBytes) - legs.length))
    const earliest = now - Positions.maxBackfillMillis
    const due = Positions.dueAcross(
      legs.map((l) => l.timing),
      from === "start" ? earliest : Math.max(from, earliest),
      now,
      fits
    )
    const generated = iso(now)
    const messages: Array<NewMessage> = []
    for (const { instant, leg: i } of due.instants) {
      const leg = legs[i]!
      const p = Positions.positionAt(leg.timing, leg.from.coordinates, leg.to.coordinates, instant)
      const message = yield* finalise(
        {
          message_generated_event_date: generated,
          type: "LOCATION_UPDATE",
          tradeflow_reference: t.reference,
          payload: {
            type: "LOCATION_UPDATE",
            lat: round6(p.lat),
            lng: round6(p.lng),
            event_date: Positions.formatEventDate(instant),
            vessel_name: leg.vessel
          }
        },
        null,
        now
      )
      messages.push(message)
      yield* spend.take(message.body, 1)
    }
    return { messages, next_position_at: due.next }
  }).pipe(Effect.withSpan("Render.positionUpdates"))

/**
 * The id of an organisation's partner organisation of this exact name: `partner_` and the first 24
 * hex digits of the SHA-256 of `<organisation id>\u0000<name>`, so the same name is the same
 * partner in every tradeflow of the organisation and another partner in another organisation.
 */
export const partnerId = (organisationId: string, name: string): Effect.Effect<string> =>
  Effect.map(MessageHash.sha256Hex(`${organisationId}\u0000${name}`), (hex) => `partner_${hex.slice(0, 24)}`)

/** Options of {@link tradeflowDocument}. */
export interface DocumentOptions {
  /** Include the `vessels` block (the download does; webhooks may leave it out). */
  readonly vessels?: boolean
}

const byEventDate = (events: ReadonlyArray<TrackedEvent>): ReadonlyArray<TrackedEvent> => {
  const when = (e: TrackedEvent) => e.event_date ?? e.predicted_at
  return events.map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => when(a) - when(b) || i - j).map(([e]) => e)
}

/**
 * The V3 tradeflow document of a tradeflow (see `ApiMessage.TradeflowDocument` for the blocks),
 * rendered with the helpers of the messages: the same location resolver, container details,
 * dwell details, vessel and {@link shipment}, so `shipment` equals the `shipment` of a message
 * rendered from the same state. `partners` lists the partner links with their derived ids
 * ({@link partnerId}). `vessels` (the tradeflow's vessel, none while it has no name) is
 * present only with `options.vessels`.
 */
export const tradeflowDocument = (
  t: Tradeflow,
  options: DocumentOptions = {}
): Effect.Effect<TradeflowDocument, StorageError, Locations | TrackingConfig> =>
  Effect.gen(function*() {
    const settings = yield* TrackingConfig
    const resolve = yield* resolver([t])
    const entries = new Map(t.containers.map((c) => [c.reference, c] as const))
    const booking = t.booking_references[0] ?? null
    const billOfLading = t.bill_of_lading_references[0] ?? null
    const dwell = dwellIndex(t, settings)
    const locations = new Map<string, Location>()
    const note = (l: Location | null): Location | null => {
      if (l !== null && l.unlocode !== "" && !locations.has(l.unlocode)) locations.set(l.unlocode, l)
      return l
    }
    for (const port of [t.details.port_of_loading, t.details.port_of_discharge]) {
      if (port !== undefined) note(resolve(port))
    }
    const events: ReadonlyArray<TradeflowEvent> = byEventDate(t.events).map((e) => {
      const location = note(resolve(e.location))
      const reference = e.container_reference
      return {
        status_code: e.status_code ?? unclassified,
        message: e.message,
        actual: e.actual,
        event_date: iso(e.event_date ?? e.predicted_at),
        predicted_at: iso(e.predicted_at),
        location: location === null || location.unlocode === "" ? null : location.unlocode,
        location_name: location?.name ?? null,
        history: historyOf(e),
        transport_unit_reference: reference,
        container_details: reference === null ? null : container(entries.get(reference) ?? { reference }),
        booking_reference: booking,
        bill_of_lading_reference: billOfLading,
        dwell_details: reference === null ? null : dwell(reference)
      }
    })
    const vessel = vesselOf(t)
    const partners = yield* Effect.forEach(t.partners, (l) =>
      Effect.map(partnerId(t.organisation_id, l.name), (id) => ({
        organisation: { id, name: l.name },
        role: l.role,
        reference: l.reference
      })))
    return {
      version: "3.0.0" as const,
      tradeflow_reference: t.reference,
      metadata: {
        last_updated: iso(t.updated_at),
        carrier_name: t.details.carrier_name ?? null,
        carrier_scac: t.details.carrier_scac ?? null,
        is_active: t.active
      },
      events,
      locations: [...locations.values()].sort((a, b) => a.unlocode < b.unlocode ? -1 : a.unlocode > b.unlocode ? 1 : 0),
      containers: containersOf(t),
      shipment: shipment(t, resolve),
      partners,
      ...(options.vessels === true ? { vessels: vessel.name === "" ? [] : [vessel] } : {})
    }
  }).pipe(Effect.withSpan("Render.tradeflowDocument"))
