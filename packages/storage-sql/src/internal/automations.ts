import { SqlClient } from "@effect/sql"
import { type Automation, AutomationStore } from "@tradeflow/core"
import { Effect, Option } from "effect"
import { decodeAutomations, encodeAutomation, storageError } from "../StorageRows.js"
import { dialectOf } from "./dialect.js"

/**
 * `AutomationStore` over the `SqlClient`. Removal deletes the automation row first (on PostgreSQL
 * every writer of deliveries locks their automation before them), then its attempts and deliveries.
 */
export const make: Effect.Effect<AutomationStore.AutomationStore["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const { bool, insertionOrder } = dialectOf(sql)
    const selectAutomation = sql`SELECT doc FROM automations`
    return AutomationStore.AutomationStore.of({
      put: Effect.fn("AutomationStore.put")(function*(automation: Automation.Automation) {
        const doc = yield* encodeAutomation(automation)
        yield* sql`INSERT INTO automations (id, organisation_id, enabled, created_at, doc)
        VALUES (${automation.id}, ${automation.organisation_id}, ${
          bool(automation.enabled)
        }, ${automation.created_at}, ${doc})
        ON CONFLICT (id) DO UPDATE SET organisation_id = excluded.organisation_id, enabled = excluded.enabled,
          created_at = excluded.created_at, doc = excluded.doc`
      }, storageError("AutomationStore.put")),
      get: Effect.fn("AutomationStore.get")(function*(id: string) {
        const rows = yield* decodeAutomations(yield* sql`${selectAutomation} WHERE id = ${id}`)
        return Option.map(Option.fromNullable(rows[0]), (r) => r.doc)
      }, storageError("AutomationStore.get")),
      list: Effect.fn("AutomationStore.list")(function*(organisationId: string) {
        const rows = yield* decodeAutomations(
          yield* sql`${selectAutomation} WHERE organisation_id = ${organisationId} ORDER BY created_at, ${insertionOrder}`
        )
        return rows.map((r) => r.doc)
      }, storageError("AutomationStore.list")),
      enabled: Effect.fn("AutomationStore.enabled")(function*(organisationId: string) {
        const rows = yield* decodeAutomations(
          yield* sql`${selectAutomation}
        WHERE organisation_id = ${organisationId} AND enabled = ${bool(true)} ORDER BY created_at, ${insertionOrder}`
        )
        return rows.map((r) => r.doc)
      }, storageError("AutomationStore.enabled")),
      remove: Effect.fn("AutomationStore.remove")(function*(id: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM automations WHERE id = ${id} RETURNING id`
          yield* sql`DELETE FROM delivery_attempts WHERE automation_id = ${id}`
          yield* sql`DELETE FROM deliveries WHERE automation_id = ${id}`
          return rows.length > 0
        }))
      }, storageError("AutomationStore.remove"))
    })
  }
)
