/**
 * The size caps a downstream request is checked against before it is queued (see
 * docs/behaviour.md, "Size caps"), so that no accepted job can grow a tradeflow without bound or
 * render more than a job may (`RenderBudget.maxMessagesPerJob`, `RenderBudget.maxBytesPerJob`):
 *
 * - Stored caps: after the request, a tradeflow holds at most {@link maxStoredContainers}
 *   containers and {@link maxStoredEvents} events (imported and mock, a regenerated mock journey
 *   counted on top of the stored one). Counted from the stored sizes (`TradeflowStore.sizes`) plus
 *   everything the request names; when that bound is over a cap, again without what the tradeflow
 *   already holds (`TradeflowStore.held`), so a re-post of what is stored passes.
 * - Render estimate: what the job would render, from the sizes measured per message (a
 *   BASIC_STATUS about 0.6 KB; a CONTAINER_MILESTONE or SHIPMENT_CHANGE, which embed the shipment
 *   with its containers three to five times, about 3.4 KB + 0.42 KB per container, or 5.3 KB +
 *   0.62 KB per container with a transshipment), every event of the request counted as new, a mock
 *   journey by the shape of its scenario ({@link journeys}), and a webhook `tradeflow` document
 *   (4 KB + 0.8 KB per container + 0.6 KB per event) per tradeflow when the organisation has such
 *   an automation. Positions are not counted: they take only the room a job has left.
 *
 * @module
 */
import { Option } from "effect"
import * as MockJourneys from "./MockJourneys.js"
import * as RenderBudget from "./RenderBudget.js"
import * as TradeflowMerge from "./TradeflowMerge.js"
import type { RecordGroup, TradeflowRecord } from "./TradeflowRecord.js"
import type { TradeflowSize } from "./TradeflowStore.js"

/** At most this many containers in one stored tradeflow. */
export const maxStoredContainers = 1_000

/** At most this many events (imported and mock) in one stored tradeflow. */
export const maxStoredEvents = 20_000

/**
 * The shape of each built-in scenario's journey, as generated: milestones per container, vessel
 * moves, and whether it has a transshipment (a second sea leg in every shipment). Any other
 * scenario is estimated as {@link otherJourney}.
 */
export const journeys: ReadonlyMap<string, Journey> = new Map([
  ["ocean_basic", { perContainer: 7, moves: 2, transshipment: false }],
  ["ocean_full", { perContainer: 9, moves: 4, transshipment: true }],
  ["rolled_shipment", { perContainer: 8, moves: 5, transshipment: false }],
  ["delayed_eta", { perContainer: 9, moves: 4, transshipment: false }],
  ["empty", { perContainer: 0, moves: 0, transshipment: false }]
])

/** The estimate of a scenario {@link journeys} does not list. */
export const otherJourney: Journey = { perContainer: 10, moves: 6, transshipment: true }

/** The shape of a mock journey (see {@link journeys}). */
export interface Journey {
  readonly perContainer: number
  readonly moves: number
  readonly transshipment: boolean
}

const basicBytes = 600

/** The estimated body of a message that embeds the shipment (a milestone or a shipment change). */
export const shipmentMessageBytes = (containers: number, transshipment: boolean): number =>
  transshipment ? 5_300 + 620 * containers : 3_400 + 420 * containers

/** The estimated webhook `tradeflow` document of a tradeflow. */
export const documentBytes = (containers: number, events: number): number => 4_000 + 800 * containers + 600 * events

/** What one group would leave stored and render. */
export interface GroupEstimate {
  /** Containers after the request (an upper bound unless counted against the stored tradeflow). */
  readonly containers: number
  /** Events after the request, with the estimated mock journey. */
  readonly events: number
  /** The estimated mock journey events (0 without mock tracking). */
  readonly mockEvents: number
  /** The first record (index in the group) at which the containers pass {@link maxStoredContainers}. */
  readonly containersOver: number | undefined
  /** The first record (index in the group) at which the events pass {@link maxStoredEvents}. */
  readonly eventsOver: number | undefined
  readonly messages: number
  readonly bytes: number
}

/**
 * What is known of the stored tradeflow: nothing (it is new), or its sizes and, to count exactly,
 * which of the request's containers and event keys it holds (`TradeflowStore.held`).
 */
export interface Stored {
  readonly size: TradeflowSize
  readonly held?: { readonly containers: ReadonlyArray<string>; readonly events: ReadonlyArray<string> }
}

/** The container numbers and event keys a group names (what `TradeflowStore.held` is asked). */
export const identities = (group: RecordGroup) => ({
  containers: group.records.flatMap((r) => (r.container_reference ?? []).map((c) => c.reference)),
  events: group.records.flatMap(eventKeys)
})

const eventKeys = (r: TradeflowRecord) =>
  (r.events ?? []).map((e) => TradeflowMerge.eventKey(TradeflowMerge.fromInput(e)))

/** The mock tracking a group asks for (its last `mock_tracking`), in UAT only. */
const trackingOf = (group: RecordGroup, uat: boolean) =>
  uat ? group.records.reduce<TradeflowRecord["mock_tracking"]>((m, r) => r.mock_tracking ?? m, undefined) : undefined

/**
 * Counts items new to `known` record by record from `base`; answers the total and the first record
 * at which it passes `cap`.
 */
const running = (
  records: ReadonlyArray<TradeflowRecord>,
  base: number,
  known: Set<string>,
  cap: number,
  itemsOf: (r: TradeflowRecord) => Iterable<string>
): { readonly total: number; readonly over: number | undefined } => {
  let total = base
  let over: number | undefined
  records.forEach((r, i) => {
    for (const item of itemsOf(r)) {
      if (known.has(item)) continue
      known.add(item)
      total++
    }
    if (over === undefined && total > cap) over = i
  })
  return { total, over }
}

/**
 * Estimates a group against the stored caps and the render caps. `documents`: the organisation
 * has an enabled webhook automation of format `tradeflow`.
 */
export const estimateGroup = (
  group: RecordGroup,
  stored: Stored | undefined,
  options: { readonly uat: boolean; readonly documents: boolean }
): GroupEstimate => {
  const { records } = group
  const containers = running(
    records,
    stored?.size.containers ?? 0,
    new Set(stored?.held?.containers),
    maxStoredContainers,
    (r) => (r.container_reference ?? []).map((c) => c.reference)
  )
  const tracking = trackingOf(group, options.uat)
  const journey = tracking === undefined || Option.isNone(MockJourneys.lookup(tracking.scenario))
    ? undefined
    : journeys.get(tracking.scenario) ?? otherJourney
  const journeyContainers = Math.max(1, containers.total)
  const mockEvents = journey === undefined ? 0 : journey.perContainer * journeyContainers + journey.moves
  const events = running(
    records,
    (stored?.size.events ?? 0) + mockEvents,
    new Set(stored?.held?.events),
    maxStoredEvents,
    eventKeys
  )
  const shipment = shipmentMessageBytes(containers.total, journey?.transshipment ?? false)
  let messages = 3
  let bytes = 3 * basicBytes
  for (const r of records) {
    bytes += 20 * ((r.container_reference?.length ?? 0) + (r.bill_of_lading_reference?.length ?? 0) +
          (r.booking_reference?.length ?? 0)) + 120 * (r.partners?.length ?? 0)
  }
  for (const e of TradeflowMerge.collectEvents(records)) {
    const withShipment = (e.container_reference === null ? 0 : 1) +
      (e.status_code === "VD" || e.status_code === "VA" ? 1 : 0)
    messages += 1 + withShipment
    bytes += basicBytes + withShipment * shipment
  }
  if (journey !== undefined) {
    messages += 2 * mockEvents
    bytes += mockEvents * (basicBytes + shipmentMessageBytes(journeyContainers, journey.transshipment))
  }
  if (options.documents) bytes += documentBytes(containers.total, events.total)
  return {
    containers: containers.total,
    events: events.total,
    mockEvents,
    containersOver: containers.over,
    eventsOver: events.over,
    messages,
    bytes
  }
}

/** Whether a group or job estimate is within the per-job render caps. */
export const withinRenderCaps = (e: { readonly messages: number; readonly bytes: number }): boolean =>
  e.messages <= RenderBudget.maxMessagesPerJob && e.bytes <= RenderBudget.maxBytesPerJob
