/**
 * Service: organisations, API keys and authentication.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { ApiKeyNotFound, InvalidOrganisationRequest, KeyRevoked, OrganisationNotFound, Unauthenticated } from "./AccountError.js"
import type { Environment } from "./Environment.js"
import type { Organisation } from "./Organisation.js"
import type { StorageError } from "./StorageError.js"

/** A freshly created API key: `key` is shown once and only its hash is stored. */
export interface CreatedApiKey {
  readonly id: string
  readonly key: string
  readonly environment: Environment
  readonly organisation: { readonly id: string; readonly name: string }
}

/** An API key as listed (never the key). */
export interface ApiKeyInfo {
  readonly id: string
  readonly environment: Environment
  readonly organisation: { readonly id: string; readonly name: string }
  readonly created_at: string
  readonly revoked_at: string | null
}

/** Who a valid API key belongs to. */
export interface Caller {
  readonly organisation: Organisation
  readonly environment: Environment
  readonly key_id: string
}

/** @since 0.1.0 */
export class Accounts extends Context.Tag("@tradeflow/core/Accounts")<Accounts, {
  readonly createOrganisation: (name: string) => Effect.Effect<Organisation, InvalidOrganisationRequest | StorageError>
  readonly listOrganisations: Effect.Effect<ReadonlyArray<Organisation>, StorageError>
  /**
   * Creates a key of `environment` for a live organisation. The organisation's first key (of
   * either environment) creates its companion `<name> (UAT)`; a `uat` key reads and writes that
   * companion.
   */
  readonly createApiKey: (organisationId: string, environment: Environment) => Effect.Effect<
    CreatedApiKey,
    OrganisationNotFound | InvalidOrganisationRequest | StorageError
  >
  /** Keys of a live organisation and its companion. */
  readonly listApiKeys: (organisationId: string) => Effect.Effect<ReadonlyArray<ApiKeyInfo>, OrganisationNotFound | StorageError>
  readonly revokeApiKey: (id: string) => Effect.Effect<void, ApiKeyNotFound | StorageError>
  /** Resolves the raw `Authorization` value; the hash is compared in constant time. */
  readonly authenticate: (key: string) => Effect.Effect<Caller, Unauthenticated | KeyRevoked | StorageError>
  readonly organisation: (id: string) => Effect.Effect<Option.Option<Organisation>, StorageError>
}>() {}
