/**
 * Service: the deprecated widget search (SERVICE.md, DECISIONS.md §7) and its widget keys.
 *
 * - A widget key reads exactly one organisation: the one it was created for, a live organisation
 *   or its `(UAT)` companion. It is `wk_` followed by 32 random bytes (base64url), shown once;
 *   only its SHA-256 is stored, and the stored hash is compared in constant time.
 * - A search matches the organisation's tradeflows (active or not) by tradeflow reference
 *   (exact), bill of lading or booking reference (case-insensitive), or container number
 *   (normalised like posted ones: case, spaces and hyphens do not matter). When several match,
 *   the newest wins: the latest `created_at`, then the latest `updated_at`, then the greatest
 *   reference.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { OrganisationNotFound, Unauthenticated } from "./AccountError.js"
import type { WidgetSearchResult } from "./ApiMessage.js"
import { constantTimeEqual, randomId, randomToken, sha256Hex } from "./internal/crypto.js"
import { Locations } from "./Locations.js"
import type { Organisation } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import * as Render from "./Render.js"
import type { StorageError } from "./StorageError.js"
import type { Tradeflow } from "./Tradeflow.js"
import { normaliseContainerNumber } from "./TradeflowRecord.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** No widget key with this id. */
export class WidgetKeyNotFound extends Schema.TaggedError<WidgetKeyNotFound>()("WidgetKeyNotFound", {
  id: Schema.String
}) {}

/** No tradeflow of the organisation matches the query. */
export class WidgetNoMatch extends Schema.TaggedError<WidgetNoMatch>()("WidgetNoMatch", {
  query: Schema.String
}) {}

/** A freshly created widget key: `key` is shown once and only its hash is stored. */
export interface CreatedWidgetKey {
  readonly id: string
  readonly key: string
}

/** Who a valid widget key belongs to. */
export interface WidgetCaller {
  readonly organisation: Organisation
  readonly key_id: string
}

/** The prefix of every widget key. */
export const keyPrefix = "wk_"

/** @since 0.1.0 */
export class WidgetSearch extends Context.Tag("@tradeflow/core/WidgetSearch")<WidgetSearch, {
  /** Creates a key that reads this organisation (a live organisation or a `(UAT)` companion). */
  readonly createKey: (organisationId: string) => Effect.Effect<CreatedWidgetKey, OrganisationNotFound | StorageError>
  readonly revokeKey: (id: string) => Effect.Effect<void, WidgetKeyNotFound | StorageError>
  /** Resolves a raw widget key; missing, unknown and revoked keys are {@link Unauthenticated}. */
  readonly authenticate: (key: string) => Effect.Effect<WidgetCaller, Unauthenticated | StorageError>
  /** The widget result of the newest tradeflow of the organisation matching `query`. */
  readonly search: (organisationId: string, query: string) => Effect.Effect<WidgetSearchResult, WidgetNoMatch | StorageError>
}>() {}

/** Whether a tradeflow matches a query (see the module notes). */
export const matches = (t: Tradeflow, query: string): boolean => {
  const q = query.trim()
  if (q === "") return false
  const upper = q.toUpperCase()
  const container = normaliseContainerNumber(q)
  return t.reference === q ||
    t.containers.some((c) => c.reference === container) ||
    t.bill_of_lading_references.some((b) => b.toUpperCase() === upper) ||
    t.booking_references.some((b) => b.toUpperCase() === upper)
}

/** The newest of some tradeflows (see the module notes). */
export const newest = (tradeflows: ReadonlyArray<Tradeflow>): Option.Option<Tradeflow> =>
  Option.fromNullable(tradeflows.reduce<Tradeflow | undefined>((best, t) =>
    best === undefined ||
      t.created_at > best.created_at ||
      (t.created_at === best.created_at &&
        (t.updated_at > best.updated_at || (t.updated_at === best.updated_at && t.reference > best.reference)))
      ? t
      : best, undefined))

/** The widget search over the {@link OrganisationStore} and {@link TradeflowStore} ports. */
export const layer: Layer.Layer<WidgetSearch, never, OrganisationStore | TradeflowStore | Locations> = Layer.effect(
  WidgetSearch,
  Effect.gen(function*() {
    const organisations = yield* OrganisationStore
    const tradeflows = yield* TradeflowStore
    const locations = yield* Locations
    const unknown = new Unauthenticated({ detail: "unknown widget key" })

    return WidgetSearch.of({
      createKey: Effect.fn("WidgetSearch.createKey")(function*(organisationId: string) {
        const organisation = yield* organisations.get(organisationId)
        if (Option.isNone(organisation)) return yield* new OrganisationNotFound({ id: organisationId })
        const key = `${keyPrefix}${randomToken(32)}`
        const id = randomId("wkey")
        yield* organisations.insertWidgetKey({
          id,
          organisation_id: organisation.value.id,
          key_hash: yield* sha256Hex(key),
          created_at: yield* Clock.currentTimeMillis,
          revoked_at: null
        })
        return { id, key }
      }),
      revokeKey: Effect.fn("WidgetSearch.revokeKey")(function*(id: string) {
        const revoked = yield* organisations.revokeWidgetKey(id, yield* Clock.currentTimeMillis)
        if (!revoked) return yield* new WidgetKeyNotFound({ id })
      }),
      authenticate: Effect.fn("WidgetSearch.authenticate")(function*(raw: string) {
        const key = raw.trim()
        if (key === "") return yield* new Unauthenticated({ detail: "the Authorization header must be Basic <widget key>" })
        if (!key.startsWith(keyPrefix)) return yield* unknown
        const hash = yield* sha256Hex(key)
        const record = yield* organisations.findWidgetKeyByHash(hash)
        if (Option.isNone(record) || !constantTimeEqual(record.value.key_hash, hash)) return yield* unknown
        if (record.value.revoked_at !== null) return yield* new Unauthenticated({ detail: "the widget key was revoked" })
        const organisation = yield* organisations.get(record.value.organisation_id)
        if (Option.isNone(organisation)) return yield* unknown
        return { organisation: organisation.value, key_id: record.value.id }
      }),
      search: Effect.fn("WidgetSearch.search")(function*(organisationId: string, query: string) {
        const found = newest((yield* tradeflows.list(organisationId)).filter((t) => matches(t, query)))
        if (Option.isNone(found)) return yield* new WidgetNoMatch({ query })
        return yield* Render.widgetSearchResult(found.value).pipe(Effect.provideService(Locations, locations))
      })
    })
  })
)
