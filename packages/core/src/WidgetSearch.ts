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
 * - A search reads the organisation's key index (`TradeflowStore.lookup`, see `TradeflowKey`) and
 *   decodes only the newest candidate (the next one only if that one no longer matches): its work
 *   follows the number of tradeflows matching the query, not the size of the organisation.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { type InvalidOrganisationRequest, OrganisationNotFound, Unauthenticated } from "./AccountError.js"
import { type KeyDetails, keyName, keyUseEveryMillis } from "./Accounts.js"
import type { WidgetSearchResult } from "./ApiMessage.js"
import { constantTimeEqual, randomId, randomToken, sha256Hex } from "./internal/crypto.js"
import * as KeyCache from "./internal/keyCache.js"
import { Locations } from "./Locations.js"
import type { Organisation } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import * as RenderWidget from "./RenderWidget.js"
import type { StorageError } from "./StorageError.js"
import type { Tradeflow } from "./Tradeflow.js"
import * as TradeflowKey from "./TradeflowKey.js"
import { normaliseContainerNumber } from "./TradeflowRecord.js"
import { type Candidate, TradeflowStore } from "./TradeflowStore.js"

/** No widget key with this id. */
export class WidgetKeyNotFound extends Schema.TaggedError<WidgetKeyNotFound>()("WidgetKeyNotFound", {
  id: Schema.String
}) {}

/** No tradeflow of the organisation matches the query. */
export class WidgetNoMatch extends Schema.TaggedError<WidgetNoMatch>()("WidgetNoMatch", {
  query: Schema.String
}) {}

/** A freshly created widget key: `key` is shown once and only its hash is stored. */
export const CreatedWidgetKey = Schema.Struct({
  id: Schema.String,
  key: Schema.String.annotations({ description: "The widget key (wk_…), shown once: Authorization: Basic <key>" })
}).annotations({ identifier: "CreatedWidgetKey" })
export type CreatedWidgetKey = typeof CreatedWidgetKey.Type

/** A widget key as listed (never the key); instants as epoch milliseconds. */
export interface WidgetKeyInfo {
  readonly id: string
  readonly name: string
  readonly created_by: string | null
  readonly created_at: number
  readonly last_used_at: number | null
  readonly revoked_at: number | null
}

/** Who a valid widget key belongs to. */
export interface WidgetCaller {
  readonly organisation: Organisation
  readonly key_id: string
}

/** The prefix of every widget key. */
export const keyPrefix = "wk_"

export class WidgetSearch extends Context.Tag("@tradeflow/core/WidgetSearch")<WidgetSearch, {
  /** Creates a key that reads this organisation (a live organisation or a `(UAT)` companion). */
  readonly createKey: (
    organisationId: string,
    details?: KeyDetails
  ) => Effect.Effect<CreatedWidgetKey, OrganisationNotFound | InvalidOrganisationRequest | StorageError>
  /** The widget keys of an organisation, oldest first. */
  readonly listKeys: (organisationId: string) => Effect.Effect<ReadonlyArray<WidgetKeyInfo>, StorageError>
  /** Revokes a key: this process refuses it at once, the others sharing the store within one second. */
  readonly revokeKey: (id: string) => Effect.Effect<void, WidgetKeyNotFound | StorageError>
  /** Resolves a raw widget key; missing, unknown and revoked keys are {@link Unauthenticated}. */
  readonly authenticate: (key: string) => Effect.Effect<WidgetCaller, Unauthenticated | StorageError>
  /** The widget result of the newest tradeflow of the organisation matching `query`. */
  readonly search: (
    organisationId: string,
    query: string
  ) => Effect.Effect<WidgetSearchResult, WidgetNoMatch | StorageError>
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

/** Orders tradeflows (or candidates) newest first (see the module notes). */
export const newestFirst = (a: Candidate, b: Candidate): number =>
  b.created_at - a.created_at || b.updated_at - a.updated_at ||
  (a.reference < b.reference ? 1 : a.reference > b.reference ? -1 : 0)

/** The newest of some tradeflows (see the module notes). */
export const newest = <A extends Candidate>(tradeflows: ReadonlyArray<A>): Option.Option<A> =>
  Option.fromNullable(
    tradeflows.reduce<A | undefined>((best, t) => best === undefined || newestFirst(t, best) < 0 ? t : best, undefined)
  )

/**
 * The widget search over the {@link OrganisationStore} and {@link TradeflowStore} ports.
 * `authenticate` answers from the in-process key cache it shares with `Accounts`, and
 * `revokeKey` drops the key from it at once; other processes refuse a revoked widget key within
 * one second (see `Accounts.layer` and docs/behaviour.md, "Authentication and revocation").
 */
export const layer: Layer.Layer<WidgetSearch, never, OrganisationStore | TradeflowStore | Locations> = Layer.effect(
  WidgetSearch,
  Effect.gen(function*() {
    const organisations = yield* OrganisationStore
    const tradeflows = yield* TradeflowStore
    const locations = yield* Locations
    const cache = yield* KeyCache.KeyCache
    const unknown = new Unauthenticated({ detail: "unknown widget key" })

    const lookup = (hash: string) =>
      Effect.gen(function*() {
        const record = yield* organisations.findWidgetKeyByHash(hash)
        if (Option.isNone(record) || !constantTimeEqual(record.value.key_hash, hash)) return yield* unknown
        if (record.value.revoked_at !== null) {
          return yield* new Unauthenticated({ detail: "the widget key was revoked" })
        }
        const organisation = yield* organisations.get(record.value.organisation_id)
        if (Option.isNone(organisation)) return yield* unknown
        const now = yield* Clock.currentTimeMillis
        const used = record.value.last_used_at
        if (used === null || now - used >= keyUseEveryMillis) {
          yield* organisations.touchKey("widget", record.value.id, now)
        }
        const caller: WidgetCaller = { organisation: organisation.value, key_id: record.value.id }
        return caller
      })

    return WidgetSearch.of({
      createKey: Effect.fn("WidgetSearch.createKey")(function*(organisationId: string, details: KeyDetails = {}) {
        const name = yield* keyName(details)
        const organisation = yield* organisations.get(organisationId)
        if (Option.isNone(organisation)) return yield* new OrganisationNotFound({ id: organisationId })
        const key = `${keyPrefix}${randomToken(32)}`
        const id = randomId("wkey")
        yield* organisations.insertWidgetKey({
          id,
          organisation_id: organisation.value.id,
          key_hash: yield* sha256Hex(key),
          name,
          created_by: details.createdBy ?? null,
          last_used_at: null,
          created_at: yield* Clock.currentTimeMillis,
          revoked_at: null
        })
        return { id, key }
      }),
      listKeys: (organisationId) =>
        Effect.map(
          organisations.listWidgetKeys(organisationId),
          (keys) =>
            keys.map(({ created_at, created_by, id, last_used_at, name, revoked_at }) => ({
              id,
              name,
              created_by,
              created_at,
              last_used_at,
              revoked_at
            }))
        ),
      revokeKey: Effect.fn("WidgetSearch.revokeKey")(function*(id: string) {
        const revoked = yield* organisations.revokeWidgetKey(id, yield* Clock.currentTimeMillis).pipe(
          Effect.ensuring(cache.forget("widget", id))
        )
        if (!revoked) return yield* new WidgetKeyNotFound({ id })
      }),
      authenticate: Effect.fn("WidgetSearch.authenticate")(function*(raw: string) {
        const key = raw.trim()
        if (key === "") {
          return yield* new Unauthenticated({ detail: "the Authorization header must be Basic <widget key>" })
        }
        if (!key.startsWith(keyPrefix)) return yield* unknown
        const hash = yield* sha256Hex(key)
        return yield* cache.authenticate("widget", hash, (caller: WidgetCaller) => caller.key_id, lookup(hash))
      }),
      search: Effect.fn("WidgetSearch.search")(function*(organisationId: string, query: string) {
        const keys = TradeflowKey.ofQuery(query)
        const candidates = keys.length === 0
          ? []
          : [...yield* tradeflows.lookup(organisationId, keys)].sort(newestFirst)
        for (const candidate of candidates) {
          const found = yield* tradeflows.get(organisationId, candidate.reference)
          if (Option.isSome(found) && matches(found.value, query)) {
            return yield* RenderWidget.widgetSearchResult(found.value).pipe(Effect.provideService(Locations, locations))
          }
        }
        return yield* new WidgetNoMatch({ query })
      })
    })
  })
).pipe(Layer.provide(KeyCache.layer))
