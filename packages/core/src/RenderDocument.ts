/**
 * The V3 tradeflow document (`ApiMessage.TradeflowDocument`): the download, and the body of a
 * webhook delivery. Projected as the upstream messages are (see `RenderMessages` for the
 * rendering choices).
 *
 * @module
 */
import { Effect } from "effect"
import type { TrackingInfo, TradeflowDocument, TradeflowEvent } from "./ApiMessage.js"
import {
  container,
  containersOf,
  dwellIndex,
  historyOf,
  iso,
  resolver,
  shipment,
  vesselOf
} from "./internal/projection.js"
import type { Location } from "./Location.js"
import type { Locations } from "./Locations.js"
import * as MessageHash from "./MessageHash.js"
import { unclassified } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import { TrackingConfig } from "./TrackingConfig.js"
import type { TrackedEvent, Tradeflow, TradeflowTracking } from "./Tradeflow.js"

/**
 * The id of an organisation's partner organisation of this exact name: `partner_` and the first 24
 * hex digits of the SHA-256 of `<organisation id>\u0000<name>`, so the same name is the same
 * partner in every tradeflow of the organisation and another partner in another organisation.
 */
/** A tradeflow's tracking as the V3 document and the console show it. */
export const trackingInfo = (tracking: TradeflowTracking): TrackingInfo => ({
  source: tracking.source,
  targets: tracking.targets.map((target) => ({
    source: target.source,
    kind: target.kind,
    container_reference: target.equipment ?? null,
    booking_reference: target.booking ?? null,
    bill_of_lading_reference: target.bill_of_lading ?? null,
    state: target.state,
    stop_reason: target.stop_reason,
    last_check: target.last_check_at === null ? null : iso(target.last_check_at),
    next_check: target.next_check_at === null ? null : iso(target.next_check_at),
    last_event: target.last_event_at === null ? null : iso(target.last_event_at),
    failures: target.failures,
    last_error: target.last_error
  }))
})

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
 * dwell details, vessel and shipment, so `shipment` equals the `shipment` of a message
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
        is_active: t.active,
        ...(t.tracking === null ? {} : { tracking: trackingInfo(t.tracking) })
      },
      events,
      locations: [...locations.values()].sort((a, b) => a.unlocode < b.unlocode ? -1 : a.unlocode > b.unlocode ? 1 : 0),
      containers: containersOf(t),
      shipment: shipment(t, resolve),
      partners,
      ...(options.vessels === true ? { vessels: vessel.name === "" ? [] : [vessel] } : {})
    }
  }).pipe(Effect.withSpan("RenderDocument.tradeflowDocument"))
