import { SqlClient } from "@effect/sql"
import { type Organisation, OrganisationStore } from "@tradeflow/core"
import { Effect, Option } from "effect"
import { chunks, decodeApiKeys, decodeOrganisations, decodeWidgetKeys, storageError } from "../StorageRows.js"
import { dialectOf } from "./dialect.js"

/**
 * How far back each `revokedSince` answer reaches before the database clock of the previous one:
 * a revocation stamped (at the start of its statement) before a reader's query but committed after
 * it is still read next time, unless its statement took longer than this to commit.
 */
const revocationOverlapMillis = 5_000

interface RevocationRow {
  readonly now: number | string | null
  readonly key_hash: string | null
}

/** `OrganisationStore` over the `SqlClient`. */
export const make: Effect.Effect<OrganisationStore.OrganisationStore["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const { chunk, insertionOrder, pg } = dialectOf(sql)
    const databaseNow = pg
      ? sql.literal("(extract(epoch FROM statement_timestamp()) * 1000)::float8")
      : sql.literal("CAST(unixepoch('subsec') * 1000 AS INTEGER)")
    const noticedIfRevoked = (revokedAt: number | null) => revokedAt === null ? sql.literal("NULL") : databaseNow
    const selectOrganisation = sql`SELECT id, name, environment, live_organisation_id, created_at FROM organisations`
    const selectApiKey = sql`SELECT id, organisation_id, environment, key_hash, name, created_by, last_used_at,
      created_at, revoked_at FROM api_keys`
    const selectWidgetKey = sql`SELECT id, organisation_id, key_hash, name, created_by, last_used_at, created_at,
      revoked_at FROM widget_keys`
    const upsertOrganisation = (o: Organisation.Organisation) =>
      sql`INSERT INTO organisations (id, name, environment, live_organisation_id, created_at)
      VALUES (${o.id}, ${o.name}, ${o.environment}, ${o.live_organisation_id}, ${o.created_at})
      ON CONFLICT (id) DO UPDATE SET name = excluded.name, environment = excluded.environment,
        live_organisation_id = excluded.live_organisation_id, created_at = excluded.created_at`

    return OrganisationStore.OrganisationStore.of({
      insert: Effect.fn("OrganisationStore.insert")(function*(organisation: Organisation.Organisation) {
        yield* upsertOrganisation(organisation)
      }, storageError("OrganisationStore.insert")),
      get: Effect.fn("OrganisationStore.get")(function*(id: string) {
        const rows = yield* decodeOrganisations(yield* sql`${selectOrganisation} WHERE id = ${id}`)
        return Option.fromNullable(rows[0])
      }, storageError("OrganisationStore.get")),
      list: sql`${selectOrganisation} ORDER BY created_at, ${insertionOrder}`.pipe(
        Effect.flatMap(decodeOrganisations),
        storageError("OrganisationStore.list"),
        Effect.withSpan("OrganisationStore.list")
      ),
      companionOf: Effect.fn("OrganisationStore.companionOf")(function*(liveId: string) {
        const rows = yield* decodeOrganisations(
          yield* sql`${selectOrganisation} WHERE live_organisation_id = ${liveId}`
        )
        return Option.fromNullable(rows[0])
      }, storageError("OrganisationStore.companionOf")),
      ensureCompanion: Effect.fn("OrganisationStore.ensureCompanion")(function*(companion: Organisation.Organisation) {
        const live = companion.live_organisation_id
        if (live === null) {
          yield* upsertOrganisation(companion)
          return companion
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO organisations (id, name, environment, live_organisation_id, created_at)
          VALUES (${companion.id}, ${companion.name}, ${companion.environment}, ${live}, ${companion.created_at})
          ON CONFLICT (live_organisation_id) DO NOTHING`
          const stored =
            (yield* decodeOrganisations(yield* sql`${selectOrganisation} WHERE live_organisation_id = ${live}`))[0]
          return stored === undefined ? yield* Effect.fail("companion vanished after insert") : stored
        }))
      }, storageError("OrganisationStore.ensureCompanion")),
      insertApiKey: Effect.fn("OrganisationStore.insertApiKey")(function*(key: Organisation.ApiKeyRecord) {
        yield* sql`INSERT INTO api_keys
          (id, organisation_id, environment, key_hash, name, created_by, last_used_at, created_at, revoked_at,
            revocation_noticed_at)
        VALUES (${key.id}, ${key.organisation_id}, ${key.environment}, ${key.key_hash}, ${key.name},
          ${key.created_by}, ${key.last_used_at}, ${key.created_at}, ${key.revoked_at},
          ${noticedIfRevoked(key.revoked_at)})
        ON CONFLICT (id) DO UPDATE SET organisation_id = excluded.organisation_id, environment = excluded.environment,
          key_hash = excluded.key_hash, name = excluded.name, created_by = excluded.created_by,
          last_used_at = excluded.last_used_at, created_at = excluded.created_at, revoked_at = excluded.revoked_at,
          revocation_noticed_at = excluded.revocation_noticed_at`
      }, storageError("OrganisationStore.insertApiKey")),
      findApiKeyByHash: Effect.fn("OrganisationStore.findApiKeyByHash")(function*(keyHash: string) {
        const rows = yield* decodeApiKeys(yield* sql`${selectApiKey} WHERE key_hash = ${keyHash}`)
        return Option.fromNullable(rows[0])
      }, storageError("OrganisationStore.findApiKeyByHash")),
      listApiKeys: Effect.fn("OrganisationStore.listApiKeys")(function*(organisationIds: ReadonlyArray<string>) {
        if (organisationIds.length === 0) return []
        const parts = chunks([...new Set(organisationIds)], chunk)
        const rows: Array<Organisation.ApiKeyRecord> = []
        for (const ids of parts) {
          rows.push(
            ...yield* decodeApiKeys(
              yield* sql`${selectApiKey} WHERE ${sql.in("organisation_id", ids)} ORDER BY created_at, ${insertionOrder}`
            )
          )
        }
        return parts.length > 1 ? rows.sort((a, b) => a.created_at - b.created_at) : rows
      }, storageError("OrganisationStore.listApiKeys")),
      revokeApiKey: Effect.fn("OrganisationStore.revokeApiKey")(function*(id: string, at: number) {
        const rows = yield* sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${at}),
          revocation_noticed_at = COALESCE(revocation_noticed_at, ${databaseNow}) WHERE id = ${id} RETURNING id`
        return rows.length > 0
      }, storageError("OrganisationStore.revokeApiKey")),
      insertWidgetKey: Effect.fn("OrganisationStore.insertWidgetKey")(function*(key: Organisation.WidgetKeyRecord) {
        yield* sql`INSERT INTO widget_keys (id, organisation_id, key_hash, name, created_by, last_used_at, created_at,
          revoked_at, revocation_noticed_at)
        VALUES (${key.id}, ${key.organisation_id}, ${key.key_hash}, ${key.name}, ${key.created_by},
          ${key.last_used_at}, ${key.created_at}, ${key.revoked_at}, ${noticedIfRevoked(key.revoked_at)})
        ON CONFLICT (id) DO UPDATE SET organisation_id = excluded.organisation_id, key_hash = excluded.key_hash,
          name = excluded.name, created_by = excluded.created_by, last_used_at = excluded.last_used_at,
          created_at = excluded.created_at, revoked_at = excluded.revoked_at,
          revocation_noticed_at = excluded.revocation_noticed_at`
      }, storageError("OrganisationStore.insertWidgetKey")),
      findWidgetKeyByHash: Effect.fn("OrganisationStore.findWidgetKeyByHash")(function*(keyHash: string) {
        const rows = yield* decodeWidgetKeys(yield* sql`${selectWidgetKey} WHERE key_hash = ${keyHash}`)
        return Option.fromNullable(rows[0])
      }, storageError("OrganisationStore.findWidgetKeyByHash")),
      touchKey: Effect.fn("OrganisationStore.touchKey")(function*(kind: "api" | "widget", id: string, at: number) {
        const table = sql(kind === "api" ? "api_keys" : "widget_keys")
        yield* sql`UPDATE ${table} SET last_used_at = ${at}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`
      }, storageError("OrganisationStore.touchKey")),
      listWidgetKeys: Effect.fn("OrganisationStore.listWidgetKeys")(function*(organisationId: string) {
        return yield* decodeWidgetKeys(
          yield* sql`${selectWidgetKey} WHERE organisation_id = ${organisationId} ORDER BY created_at, ${insertionOrder}`
        )
      }, storageError("OrganisationStore.listWidgetKeys")),
      revokeWidgetKey: Effect.fn("OrganisationStore.revokeWidgetKey")(function*(id: string, at: number) {
        const rows = yield* sql`UPDATE widget_keys SET revoked_at = COALESCE(revoked_at, ${at}),
          revocation_noticed_at = COALESCE(revocation_noticed_at, ${databaseNow}) WHERE id = ${id} RETURNING id`
        return rows.length > 0
      }, storageError("OrganisationStore.revokeWidgetKey")),
      revokedSince: Effect.fn("OrganisationStore.revokedSince")(function*(cursor: number | null) {
        const rows = cursor === null
          ? yield* sql<RevocationRow>`SELECT ${databaseNow} AS now, NULL AS key_hash`
          : yield* sql<RevocationRow>`SELECT ${databaseNow} AS now, NULL AS key_hash
            UNION ALL SELECT NULL, key_hash FROM api_keys WHERE revocation_noticed_at >= ${cursor}
            UNION ALL SELECT NULL, key_hash FROM widget_keys WHERE revocation_noticed_at >= ${cursor}`
        const now = rows.find((r) => r.now !== null)?.now
        if (now === undefined || now === null) return yield* Effect.fail("the database answered no clock")
        return {
          cursor: Number(now) - revocationOverlapMillis,
          key_hashes: rows.flatMap((r) => r.key_hash === null ? [] : [r.key_hash])
        }
      }, storageError("OrganisationStore.revokedSince"))
    })
  }
)
