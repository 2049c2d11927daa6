/**
 * Port: organisations, API keys and widget keys.
 *
 * @module
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKeyRecord, Organisation, WidgetKeyRecord } from "./Organisation.js"
import type { StorageError } from "./StorageError.js"

/** An answer of {@link OrganisationStore} `revokedSince`. */
export interface Revocations {
  /** Where the next call starts: pass it back as its `cursor` (opaque, on the store's own clock). */
  readonly cursor: number
  /**
   * The hashes of the keys, API and widget keys alike, revoked since the cursor given; a few
   * revoked shortly before it may come again (answers overlap, they never leave a gap).
   */
  readonly key_hashes: ReadonlyArray<string>
}

export class OrganisationStore extends Context.Tag("@tradeflow/core/OrganisationStore")<OrganisationStore, {
  readonly insert: (organisation: Organisation) => Effect.Effect<void, StorageError>
  readonly get: (id: string) => Effect.Effect<Option.Option<Organisation>, StorageError>
  /** Every organisation, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<Organisation>, StorageError>
  /** The `(UAT)` companion of a live organisation, if it has one: one indexed lookup. */
  readonly companionOf: (liveOrganisationId: string) => Effect.Effect<Option.Option<Organisation>, StorageError>
  /**
   * Inserts `companion` unless its live organisation (`companion.live_organisation_id`) has a
   * companion already; either way answers the companion that is stored. Atomic.
   */
  readonly ensureCompanion: (companion: Organisation) => Effect.Effect<Organisation, StorageError>
  readonly insertApiKey: (key: ApiKeyRecord) => Effect.Effect<void, StorageError>
  readonly findApiKeyByHash: (keyHash: string) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /** The keys whose organisation is one of these, oldest first. */
  readonly listApiKeys: (
    organisationIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageError>
  /** Marks a key revoked; false when there is no such key. Revoking twice keeps the first instant. */
  readonly revokeApiKey: (id: string, at: number) => Effect.Effect<boolean, StorageError>
  readonly insertWidgetKey: (key: WidgetKeyRecord) => Effect.Effect<void, StorageError>
  readonly findWidgetKeyByHash: (keyHash: string) => Effect.Effect<Option.Option<WidgetKeyRecord>, StorageError>
  /** The widget keys of one organisation, oldest first. */
  readonly listWidgetKeys: (organisationId: string) => Effect.Effect<ReadonlyArray<WidgetKeyRecord>, StorageError>
  /** Records the use of a key at `at` (its `last_used_at`, which never moves back). */
  readonly touchKey: (kind: "api" | "widget", id: string, at: number) => Effect.Effect<void, StorageError>
  /** Marks a widget key revoked; false when there is no such key. Revoking twice keeps the first instant. */
  readonly revokeWidgetKey: (id: string, at: number) => Effect.Effect<boolean, StorageError>
  /**
   * The keys revoked since an earlier answer: every key (API or widget key, or one inserted
   * already revoked) whose revocation completed after the answer that gave `cursor` was
   * returned is in this answer; a key never revoked never is. With `null`, a starting cursor
   * and no hashes. One indexed query: how processes sharing the store learn of each other's
   * revocations (see `Accounts`).
   */
  readonly revokedSince: (cursor: number | null) => Effect.Effect<Revocations, StorageError>
}>() {}
