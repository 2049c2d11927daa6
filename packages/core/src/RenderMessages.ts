/**
 * Rendering of tradeflow changes into upstream messages (DECISIONS.md §5). The V3 document
 * (`RenderDocument`) and the widget result (`RenderWidget`) project a tradeflow the same way.
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
 *   `<organisation id>\u0000<name>` (`RenderDocument.partnerId`).
 * - Dates are ISO 8601 in UTC with milliseconds, except the LOCATION_UPDATE `event_date`
 *   (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC, as SERVICE.md writes it).
 * - LOCATION_UPDATE positions (see `Positions`) are rounded to 6 decimals (about 0.1 m) and carry
 *   the name of the tradeflow's vessel. A voyage whose port the directory does not know has no
 *   positions.
 *
 * What one job renders is bounded by a `RenderBudget.Budget`: at most `maxMessagesPerJob` messages
 * and `maxBytesPerJob` bytes (message bodies and webhook documents, UTF-8). Rendering lets the
 * event loop turn every few milliseconds, inside a tradeflow too, not only between tradeflows.
 *
 * @module
 */
import { Effect, Either, Option, Schema } from "effect"
import { ApiMessage, type BasicStatusKind } from "./ApiMessage.js"
import {
  carrierOf,
  container,
  containersOf,
  dwellIndex,
  eventVessel,
  historyOf,
  iso,
  resolver,
  shipment
} from "./internal/projection.js"
import type { Location } from "./Location.js"
import { Locations } from "./Locations.js"
import * as MessageHash from "./MessageHash.js"
import * as Positions from "./Positions.js"
import { type Budget, budget } from "./RenderBudget.js"
import { unclassified } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import type { NewMessage } from "./StoredMessage.js"
import { TrackingConfig } from "./TrackingConfig.js"
import type { TrackedEvent, Tradeflow } from "./Tradeflow.js"

/** A lifecycle change of a tradeflow. */
export type Lifecycle = Exclude<BasicStatusKind, "EVENT">

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
  Effect.suspend(() => {
    const hash = MessageHash.hashMessageSync(message)
    const encoded = encodeMessage({ hash, ...message } as ApiMessage)
    return Either.isLeft(encoded) ? Effect.die(encoded.left) : Effect.succeed({
      hash,
      type: message.type,
      tradeflow_reference: message.tradeflow_reference,
      container_reference: containerReference,
      generated_at: now,
      body: JSON.stringify(encoded.right)
    })
  })

const encodeMessage = Schema.encodeEither(ApiMessage)

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
    const { next: t, now } = input
    const generated = iso(now)
    const base = { message_generated_event_date: generated, tradeflow_reference: t.reference }
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

    const events = changedEvents(input.previous, t)
    if (events.length === 0) return out
    const settings = yield* TrackingConfig
    const resolve = yield* resolver([t])
    const fullShipment = shipment(t, resolve)
    const booking = t.booking_references[0] ?? null
    const billOfLading = t.bill_of_lading_references[0] ?? null
    const dwell = dwellIndex(t, settings)
    const entries = new Map(t.containers.map((c) => [c.reference, c] as const))
    for (const e of events) {
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
  })
