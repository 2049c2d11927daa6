/**
 * Service: organisations, API keys and authentication.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import {
  ApiKeyNotFound,
  InvalidOrganisationRequest,
  KeyRevoked,
  OrganisationNotFound,
  Unauthenticated
} from "./AccountError.js"
import { Environment } from "./Environment.js"
import { constantTimeEqual, randomId, randomToken, sha256Hex } from "./internal/crypto.js"
import * as KeyCache from "./internal/keyCache.js"
import type { ApiKeyRecord, Organisation } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StorageError } from "./StorageError.js"

/** A freshly created organisation, as the console answers it. */
export const CreatedOrganisation = Schema.Struct({ id: Schema.String, name: Schema.String }).annotations({
  identifier: "CreatedOrganisation"
})
export type CreatedOrganisation = typeof CreatedOrganisation.Type

/** An organisation as the console lists it: a live one, or a `(UAT)` companion naming its live organisation. */
export const OrganisationSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  environment: Environment,
  live_organisation_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "OrganisationSummary" })
export type OrganisationSummary = typeof OrganisationSummary.Type

const KeyOrganisation = Schema.Struct({ id: Schema.String, name: Schema.String }).annotations({
  description: "The organisation the key reads and writes (the (UAT) companion for a uat key)"
})

/** A freshly created API key: `key` is shown once and only its hash is stored. */
export const CreatedApiKey = Schema.Struct({
  id: Schema.String,
  key: Schema.String.annotations({ description: "The API key (prod_… or uat_…), shown once" }),
  environment: Environment,
  organisation: KeyOrganisation
}).annotations({ identifier: "CreatedApiKey" })
export type CreatedApiKey = typeof CreatedApiKey.Type

/** An API key as listed (never the key); instants as ISO 8601. */
export const ApiKeyInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String.annotations({ description: "A name for people; empty when none was given" }),
  environment: Environment,
  organisation: KeyOrganisation,
  created_by: Schema.NullOr(Schema.String).annotations({
    description: "Who created it (a user's e-mail, or operator token); null for keys older than this field"
  }),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String).annotations({
    description: "When it was last used, to the minute (ISO 8601); null when never"
  }),
  revoked_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ApiKeyInfo" })
export type ApiKeyInfo = typeof ApiKeyInfo.Type

/** What a new key is called, and who creates it. */
export interface KeyDetails {
  /** A name for people (trimmed; at most {@link maxKeyNameLength} characters). */
  readonly name?: string | undefined
  /** Who creates it: a user's e-mail or `operator token`. */
  readonly createdBy?: string | null | undefined
}

/** The longest key name. */
export const maxKeyNameLength = 100

/** A key's use is written at most this often (its `last_used_at` is to the minute). */
export const keyUseEveryMillis = 60_000

/** The trimmed name of a new key, or why it is refused. */
export const keyName = (details: KeyDetails): Effect.Effect<string, InvalidOrganisationRequest> => {
  const name = (details.name ?? "").trim()
  return name.length > maxKeyNameLength
    ? Effect.fail(new InvalidOrganisationRequest({ detail: `name must be at most ${maxKeyNameLength} characters` }))
    : Effect.succeed(name)
}

/** Who a valid API key belongs to. */
export interface Caller {
  readonly organisation: Organisation
  readonly environment: Environment
  readonly key_id: string
}

export class Accounts extends Context.Tag("@tradeflow/core/Accounts")<Accounts, {
  readonly createOrganisation: (name: string) => Effect.Effect<Organisation, InvalidOrganisationRequest | StorageError>
  readonly listOrganisations: Effect.Effect<ReadonlyArray<Organisation>, StorageError>
  /**
   * Creates a key of `environment` for a live organisation. The organisation's first key (of
   * either environment) creates its companion `<name> (UAT)`; a `uat` key reads and writes that
   * companion.
   */
  readonly createApiKey: (organisationId: string, environment: Environment, details?: KeyDetails) => Effect.Effect<
    CreatedApiKey,
    OrganisationNotFound | InvalidOrganisationRequest | StorageError
  >
  /** Keys of a live organisation and its companion. */
  readonly listApiKeys: (
    organisationId: string
  ) => Effect.Effect<ReadonlyArray<ApiKeyInfo>, OrganisationNotFound | StorageError>
  /** Revokes a key: this process refuses it at once, the others sharing the store within one second. */
  readonly revokeApiKey: (id: string) => Effect.Effect<void, ApiKeyNotFound | StorageError>
  /**
   * Resolves the raw `Authorization` value; the hash is compared in constant time. A key
   * authenticated before is answered from the in-process cache (see {@link layer}).
   */
  readonly authenticate: (key: string) => Effect.Effect<Caller, Unauthenticated | KeyRevoked | StorageError>
  readonly organisation: (id: string) => Effect.Effect<Option.Option<Organisation>, StorageError>
}>() {}

const keyPrefix: Record<Environment, string> = { production: "prod_", uat: "uat_" }

const iso = (millis: number | null): string | null => millis === null ? null : new Date(millis).toISOString()

const info = (key: ApiKeyRecord, organisation: Organisation): ApiKeyInfo => ({
  id: key.id,
  name: key.name,
  environment: key.environment,
  organisation: { id: organisation.id, name: organisation.name },
  created_by: key.created_by,
  created_at: new Date(key.created_at).toISOString(),
  last_used_at: iso(key.last_used_at),
  revoked_at: iso(key.revoked_at)
})

/**
 * Accounts over the {@link OrganisationStore} port.
 *
 * `authenticate` answers from an in-process cache of the keys it authenticated (by the key's
 * SHA-256, at most 10,000, least recently used first out), shared with `WidgetSearch`: a cached
 * key costs no storage round trip. Unknown and revoked keys are never cached, so each costs one
 * lookup, as without the cache. `revokeApiKey` drops the key from this process's cache at once;
 * a scoped fiber reads the keys other processes revoked (`OrganisationStore` `revokedSince`,
 * one indexed query every 250 ms while keys are cached), so they are refused here within one
 * second. A cached key is
 * answered only while that read succeeded less than 750 ms ago: when the store is down, requests
 * fail with its `StorageError` as they would without the cache. Every cached key is looked up
 * again after a minute. See docs/behaviour.md, "Authentication and revocation".
 */
export const layer: Layer.Layer<Accounts, never, OrganisationStore> = Layer.effect(
  Accounts,
  Effect.gen(function*() {
    const store = yield* OrganisationStore
    const cache = yield* KeyCache.KeyCache

    const liveOrganisation = (id: string) =>
      store.get(id).pipe(Effect.flatMap(Option.match({
        onNone: () => new OrganisationNotFound({ id }),
        onSome: Effect.succeed
      })))

    const lookup = (hash: string) =>
      Effect.gen(function*() {
        const record = yield* store.findApiKeyByHash(hash)
        if (Option.isNone(record) || !constantTimeEqual(record.value.key_hash, hash)) {
          return yield* new Unauthenticated({ detail: "unknown API key" })
        }
        if (record.value.revoked_at !== null) return yield* new KeyRevoked()
        const organisation = yield* store.get(record.value.organisation_id)
        if (Option.isNone(organisation)) return yield* new Unauthenticated({ detail: "unknown API key" })
        const now = yield* Clock.currentTimeMillis
        const used = record.value.last_used_at
        if (used === null || now - used >= keyUseEveryMillis) yield* store.touchKey("api", record.value.id, now)
        const caller: Caller = {
          organisation: organisation.value,
          environment: record.value.environment,
          key_id: record.value.id
        }
        return caller
      })

    return Accounts.of({
      createOrganisation: Effect.fn("Accounts.createOrganisation")(function*(name: string) {
        const trimmed = name.trim()
        if (trimmed === "" || trimmed.length > 200) {
          return yield* new InvalidOrganisationRequest({ detail: "name must be 1 to 200 characters" })
        }
        const organisation: Organisation = {
          id: randomId("org"),
          name: trimmed,
          environment: "production",
          live_organisation_id: null,
          created_at: yield* Clock.currentTimeMillis
        }
        yield* store.insert(organisation)
        return organisation
      }),
      listOrganisations: store.list,
      createApiKey: Effect.fn("Accounts.createApiKey")(
        function*(organisationId: string, environment: Environment, details: KeyDetails = {}) {
          const name = yield* keyName(details)
          const organisation = yield* liveOrganisation(organisationId)
          const now = yield* Clock.currentTimeMillis
          let owner = organisation
          if (organisation.environment === "uat") {
            if (environment !== "uat") {
              return yield* new InvalidOrganisationRequest({
                detail: "a UAT organisation takes uat keys only; create production keys on its live organisation"
              })
            }
          } else {
            const companion = yield* store.ensureCompanion({
              id: randomId("org"),
              name: `${organisation.name} (UAT)`,
              environment: "uat",
              live_organisation_id: organisation.id,
              created_at: now
            })
            if (environment === "uat") owner = companion
          }
          const key = `${keyPrefix[environment]}${randomToken(32)}`
          const id = randomId("key")
          yield* store.insertApiKey({
            id,
            organisation_id: owner.id,
            environment,
            key_hash: yield* sha256Hex(key),
            name,
            created_by: details.createdBy ?? null,
            last_used_at: null,
            created_at: now,
            revoked_at: null
          })
          return { id, key, environment, organisation: { id: owner.id, name: owner.name } }
        }
      ),
      listApiKeys: Effect.fn("Accounts.listApiKeys")(function*(organisationId: string) {
        const organisation = yield* liveOrganisation(organisationId)
        const owners = organisation.environment === "production"
          ? [organisation, ...Option.toArray(yield* store.companionOf(organisation.id))]
          : [organisation]
        const keys = yield* store.listApiKeys(owners.map((o) => o.id))
        return keys.map((k) => info(k, owners.find((o) => o.id === k.organisation_id)!))
      }),
      revokeApiKey: Effect.fn("Accounts.revokeApiKey")(function*(id: string) {
        const revoked = yield* store.revokeApiKey(id, yield* Clock.currentTimeMillis).pipe(
          Effect.ensuring(cache.forget("api", id))
        )
        if (!revoked) return yield* new ApiKeyNotFound({ id })
      }),
      authenticate: Effect.fn("Accounts.authenticate")(function*(raw: string) {
        const key = raw.trim()
        if (key === "") return yield* new Unauthenticated({ detail: "the Authorization header is missing" })
        if (!key.startsWith(keyPrefix.production) && !key.startsWith(keyPrefix.uat)) {
          return yield* new Unauthenticated({ detail: "the Authorization header is not an API key" })
        }
        const hash = yield* sha256Hex(key)
        return yield* cache.authenticate("api", hash, (caller: Caller) => caller.key_id, lookup(hash))
      }),
      organisation: store.get
    })
  })
).pipe(Layer.provide(KeyCache.layer))
