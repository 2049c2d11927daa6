/**
 * Service: the V3 tradeflow document of a stored tradeflow (DECISIONS.md §4 and §6), as the
 * console download serves it.
 *
 * @module
 */
import { Context, Effect, Layer, Option } from "effect"
import type { TradeflowDocument } from "./ApiMessage.js"
import { TradeflowNotFound } from "./DownstreamError.js"
import type { Locations } from "./Locations.js"
import * as RenderDocument from "./RenderDocument.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import * as TradeflowKey from "./TradeflowKey.js"
import { TradeflowStore } from "./TradeflowStore.js"
import { matches, newestFirst } from "./WidgetSearch.js"

/** A tradeflow found by {@link Documents} `search`. */
export interface Found {
  readonly reference: string
  readonly active: boolean
  readonly containers: ReadonlyArray<string>
  readonly booking_references: ReadonlyArray<string>
  readonly bill_of_lading_references: ReadonlyArray<string>
  readonly created_at: number
  readonly updated_at: number
}

/** The most tradeflows one search answers. */
export const maxFound = 100

export class Documents extends Context.Tag("@tradeflow/core/Documents")<Documents, {
  /**
   * The V3 tradeflow document, with `vessels`, of the organisation's tradeflow (active or not).
   * The organisation id is the one owning the tradeflow: a live organisation or its `(UAT)`
   * companion; an unknown organisation has no tradeflows.
   */
  readonly download: (
    organisationId: string,
    reference: string
  ) => Effect.Effect<TradeflowDocument, TradeflowNotFound | StorageError>
  /**
   * The organisation's tradeflows (active or not) whose reference is the query, or that hold it
   * as a container number (any spacing or case), a bill of lading or a booking (any case): newest
   * first, at most `limit` (at most {@link maxFound}). Read from the key index kept with every
   * write (`TradeflowStore.lookup`), never the whole organisation; `more` says others matched.
   */
  readonly search: (
    organisationId: string,
    query: string,
    limit?: number
  ) => Effect.Effect<{ readonly found: ReadonlyArray<Found>; readonly more: boolean }, StorageError>
}>() {}

/** Documents over the {@link TradeflowStore} port, rendered with `RenderDocument.tradeflowDocument`. */
export const layer: Layer.Layer<Documents, never, TradeflowStore | Locations | TrackingConfig> = Layer.effect(
  Documents,
  Effect.gen(function*() {
    const store = yield* TradeflowStore
    const context = yield* Effect.context<Locations | TrackingConfig>()
    return Documents.of({
      download: Effect.fn("Documents.download")(function*(organisationId: string, reference: string) {
        const found = yield* store.get(organisationId, reference)
        if (Option.isNone(found)) return yield* new TradeflowNotFound({ reference })
        return yield* RenderDocument.tradeflowDocument(found.value, { vessels: true }).pipe(Effect.provide(context))
      }),
      search: Effect.fn("Documents.search")(function*(organisationId: string, query: string, limit: number = maxFound) {
        const keys = TradeflowKey.ofQuery(query)
        if (keys.length === 0) return { found: [], more: false }
        const room = Math.min(Math.max(1, Math.floor(limit)), maxFound)
        const candidates = [...yield* store.lookup(organisationId, keys)].sort(newestFirst)
        const found: Array<Found> = []
        for (let i = 0; i < candidates.length && found.length <= room; i += room) {
          const slice = candidates.slice(i, i + room)
          const tradeflows = yield* store.getMany(organisationId, slice.map((c) => c.reference))
          for (const candidate of slice) {
            const t = tradeflows.get(candidate.reference)
            if (t === undefined || !matches(t, query)) continue
            found.push({
              reference: t.reference,
              active: t.active,
              containers: t.containers.map((c) => c.reference),
              booking_references: t.booking_references,
              bill_of_lading_references: t.bill_of_lading_references,
              created_at: candidate.created_at,
              updated_at: candidate.updated_at
            })
          }
        }
        return { found: found.slice(0, room), more: found.length > room }
      })
    })
  })
)
