/**
 * Port: a source of tracking events (a carrier's DCSA Track & Trace API, say), and the registry
 * of the sources of a process (`TrackingSources`, by id).
 *
 * A source answers, for one target (a container, a booking or a bill of lading, or a combination
 * its carrier asks for), the events updated since a high-water mark, in the neutral form of
 * `TrackingEvent`. One event it cannot read fails alone: it is reported in `malformed`, and the
 * others are kept. A source may also take subscriptions and verify what it pushes.
 *
 * `@tradeflow/tracking-dcsa` implements it for DCSA 2.2 and 3.0 carriers.
 *
 * @module
 */
import { Context, Data, Effect, Layer, Option, type Redacted } from "effect"
import type { TrackingEvent } from "./TrackingEvent.js"

/** What a target asks a source about: one reference, or a combination a carrier needs. */
export interface TargetQuery {
  /** A container number (DCSA `equipmentReference`). */
  readonly equipment?: string | undefined
  /** A booking (DCSA `carrierBookingReference`). */
  readonly booking?: string | undefined
  /** A bill of lading (DCSA `transportDocumentReference`). */
  readonly bill_of_lading?: string | undefined
}

/**
 * Whether an event is about a target's query: it names at least one of the query's references and
 * contradicts none (it names another container, or bookings or bills of lading that leave out the
 * one asked for). The rule a polled answer is held to, applied to what a source pushes, so that a
 * container reused in another shipment does not reach a target of its earlier booking.
 */
export const concerns = (query: TargetQuery, event: TrackingEvent): boolean => {
  const { bill_of_lading, booking, equipment } = query
  const container = event.container_reference
  if (equipment !== undefined && container !== null && container !== equipment) return false
  if (booking !== undefined && event.bookings.length > 0 && !event.bookings.includes(booking)) return false
  if (
    bill_of_lading !== undefined && event.bills_of_lading.length > 0 && !event.bills_of_lading.includes(bill_of_lading)
  ) return false
  return (equipment !== undefined && container === equipment) ||
    (booking !== undefined && event.bookings.includes(booking)) ||
    (bill_of_lading !== undefined && event.bills_of_lading.includes(bill_of_lading))
}

/**
 * The combinations of references a source accepts: one alone, or a booking or bill of lading
 * together with the container (some carriers answer for a container only within its booking).
 */
export type QueryKind =
  | "equipment"
  | "booking"
  | "bill_of_lading"
  | "booking+equipment"
  | "bill_of_lading+equipment"

/** Every query kind, in the order a target is chosen when a source accepts several. */
export const queryKinds: ReadonlyArray<QueryKind> = [
  "equipment",
  "booking+equipment",
  "bill_of_lading+equipment",
  "booking",
  "bill_of_lading"
]

/** What one fetch asks. */
export interface FetchRequest {
  readonly query: TargetQuery
  /**
   * The high-water mark: events updated at or after this instant (epoch ms) are wanted; null:
   * every event the source has. A source may ask from a little earlier (an overlap) and answer
   * events already seen: the merge ignores exact duplicates.
   */
  readonly since: number | null
}

/** An event of an answer that could not be read; the other events of the answer are kept. */
export interface MalformedEvent {
  /** Its position in the answer (0-based, across pages). */
  readonly index: number
  /** Its `eventID` when that much could be read. */
  readonly event_id: string | null
  readonly message: string
}

/**
 * Whether the source knows the target: `found` (events, or at least the reference, are known),
 * `not-found` (it does not know the reference), `awaiting` (nothing known yet, ask again later).
 */
export type FetchStatus = "found" | "not-found" | "awaiting"

/** What one fetch answers. */
export interface FetchResult {
  readonly status: FetchStatus
  readonly events: ReadonlyArray<TrackingEvent>
  readonly malformed: ReadonlyArray<MalformedEvent>
  /** The new high-water mark: the latest `updated_at` answered, else the request's `since`. */
  readonly high_water: number | null
}

/** The source refused our credentials: it is paused until an operator acts. */
export class SourceUnauthorized extends Data.TaggedError("SourceUnauthorized")<{
  readonly source: string
  readonly message: string
}> {}

/** The source asks us to slow down; `retry_after_millis` is how long to wait (its `Retry-After`, or our budget's). */
export class SourceRateLimited extends Data.TaggedError("SourceRateLimited")<{
  readonly source: string
  readonly retry_after_millis: number
  readonly message: string
}> {}

/** The source does not know what was asked (a subscription, say). */
export class SourceNotFound extends Data.TaggedError("SourceNotFound")<{
  readonly source: string
  readonly message: string
}> {}

/** A failure that may pass: a timeout, a refused connection, a 5xx. Retried with backoff. */
export class SourceTransient extends Data.TaggedError("SourceTransient")<{
  readonly source: string
  readonly message: string
  readonly cause?: unknown
}> {}

/** An answer that cannot be read at all (not one event of it: see {@link MalformedEvent}). */
export class SourceMalformed extends Data.TaggedError("SourceMalformed")<{
  readonly source: string
  readonly message: string
}> {}

/** Every failure of a source. */
export type TrackingSourceError =
  | SourceUnauthorized
  | SourceRateLimited
  | SourceNotFound
  | SourceTransient
  | SourceMalformed

/** A subscription a source took: its id, and the secret its pushes are signed with. */
export interface Subscription {
  readonly id: string
  readonly secret: Redacted.Redacted<Uint8Array>
}

/** A request a source pushed to us, as received. */
export interface PushedRequest {
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The raw body, exactly as received (signatures cover these bytes). */
  readonly body: Uint8Array
}

/** A push that fails verification (no signature, a forged one, an unknown subscription): nothing of it is stored. */
export class PushRefused extends Data.TaggedError("PushRefused")<{
  readonly source: string
  readonly message: string
}> {}

/**
 * A push whose sender is authenticated but whose body cannot be read at all (not UTF-8, not JSON, not
 * the shape of a push): nothing of it is stored, and the sender is told what is wrong with it.
 */
export class PushUnreadable extends Data.TaggedError("PushUnreadable")<{
  readonly source: string
  readonly message: string
}> {}

/** What a verified push holds. */
export interface PushedEvents {
  readonly events: ReadonlyArray<TrackingEvent>
  readonly malformed: ReadonlyArray<MalformedEvent>
}

/** Push by subscription (DCSA 2.2 event subscriptions: signed callbacks). */
export interface SubscriptionPush {
  readonly _tag: "Subscription"
  /** Subscribes to the target's events, pushed to `callbackUrl`. */
  readonly subscribe: (query: TargetQuery, callbackUrl: string) => Effect.Effect<Subscription, TrackingSourceError>
  /** Removes a subscription (tracking stopped); one the source no longer knows is not a failure. */
  readonly unsubscribe: (subscriptionId: string) => Effect.Effect<void, TrackingSourceError>
  /** The subscription a pushed request names (DCSA 2.2 `Subscription-ID`), if any. */
  readonly subscriptionOf: (request: PushedRequest) => Option.Option<string>
  /** Verifies a pushed request against its subscription's secret, in constant time, and reads its events. */
  readonly verify: (
    request: PushedRequest,
    subscription: Subscription
  ) => Effect.Effect<PushedEvents, PushRefused | PushUnreadable>
}

/** Push to a consumer endpoint of ours (DCSA 3.0 `POST /events`): the source posts events as they happen. */
export interface ConsumerPush {
  readonly _tag: "Consumer"
  /** Reads a pushed request's events (the endpoint is authenticated by the caller). */
  readonly read: (request: PushedRequest) => Effect.Effect<PushedEvents, PushRefused | PushUnreadable>
}

/** A source of tracking events. */
export interface TrackingSource {
  /** Unique within a process; names the source in targets, events and the console. */
  readonly id: string
  /** The carriers (SCAC codes, upper case) whose tradeflows this source tracks. */
  readonly carriers: ReadonlyArray<string>
  /** The container owner codes (the first four letters of a container number, upper case) it tracks. */
  readonly container_prefixes: ReadonlyArray<string>
  /** The query kinds the source accepts (see {@link queryKinds}). */
  readonly queries: ReadonlyArray<QueryKind>
  /** The events of a target updated since the high-water mark. */
  readonly fetch: (request: FetchRequest) => Effect.Effect<FetchResult, TrackingSourceError>
  /** How the source pushes events, if it does. */
  readonly push?: SubscriptionPush | ConsumerPush | undefined
}

/** The tracking sources of a process, by id. */
export class TrackingSources extends Context.Tag("@tradeflow/core/TrackingSources")<TrackingSources, {
  readonly get: (id: string) => Option.Option<TrackingSource>
  /** Every source, in configuration order. */
  readonly all: ReadonlyArray<TrackingSource>
}>() {}

/** A duplicate source id in a registry. */
export class DuplicateSource extends Data.TaggedError("DuplicateSource")<{
  readonly id: string
}> {}

/** A registry of these sources; an id given twice fails. */
export const make = (sources: ReadonlyArray<TrackingSource>): Effect.Effect<TrackingSources["Type"], DuplicateSource> =>
  Effect.suspend(() => {
    const byId = new Map<string, TrackingSource>()
    for (const source of sources) {
      if (byId.has(source.id)) return Effect.fail(new DuplicateSource({ id: source.id }))
      byId.set(source.id, source)
    }
    return Effect.succeed(TrackingSources.of({ get: (id) => Option.fromNullable(byId.get(id)), all: [...sources] }))
  })

/** The registry of these sources. */
export const layer = (sources: ReadonlyArray<TrackingSource>): Layer.Layer<TrackingSources, DuplicateSource> =>
  Layer.effect(TrackingSources, make(sources))

/** No source: nothing is tracked beyond posted events and UAT mock journeys. */
export const layerEmpty: Layer.Layer<TrackingSources> = Layer.succeed(
  TrackingSources,
  TrackingSources.of({ get: () => Option.none(), all: [] })
)

/** The owner code of a container number: its first four letters, upper case. */
export const ownerCode = (container: string): string => container.slice(0, 4).toUpperCase()

/**
 * The source that tracks a tradeflow: the first whose `carriers` list its carrier, else the first
 * whose `container_prefixes` hold the owner code of one of its containers (in container order).
 */
export const route = (
  sources: ReadonlyArray<TrackingSource>,
  tradeflow: { readonly carrier_scac?: string | undefined; readonly containers: ReadonlyArray<string> }
): Option.Option<TrackingSource> => {
  const scac = tradeflow.carrier_scac?.trim().toUpperCase()
  if (scac !== undefined && scac !== "") {
    const byCarrier = sources.find((s) => s.carriers.includes(scac))
    if (byCarrier !== undefined) return Option.some(byCarrier)
  }
  for (const container of tradeflow.containers) {
    const owner = ownerCode(container)
    const byPrefix = sources.find((s) => s.container_prefixes.includes(owner))
    if (byPrefix !== undefined) return Option.some(byPrefix)
  }
  return Option.none()
}
