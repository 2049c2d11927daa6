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
import { TradeflowStore } from "./TradeflowStore.js"

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
      })
    })
  })
)
