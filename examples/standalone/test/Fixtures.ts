/**
 * What the process tests of this folder share: a UAT key, an `ocean_basic` record, and a look
 * into a SQLite database file.
 */
import { JobQueue, MessageStore } from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect } from "effect"
import { call, consoleToken, type Server } from "./Process.js"

/** A new organisation (named `name`) and a UAT key of it, created through the console. */
export const uatKey = async (server: Server, name: string) => {
  const auth = { authorization: `Bearer ${consoleToken}` }
  const org = await call(server, "POST", "/console/organisations", { name }, auth)
  const key = await call(server, "POST", `/console/organisations/${org.body.id}/api-keys`, { environment: "uat" }, auth)
  return key.body as { key: string; organisation: { id: string } }
}

/** An `ocean_basic` record from Shanghai to Rotterdam. */
export const record = (reference: string, booking: string = `BK-${reference}`) => ({
  tradeflow_reference: reference,
  booking_reference: booking,
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  mock_tracking: { scenario: "ocean_basic" }
})

/** What the database file holds: pending jobs, every message hash, and the TRADEFLOW_CREATED count per reference. */
export const inspect = (file: string, organisationId: string) =>
  Effect.gen(function*() {
    const pending = yield* (yield* JobQueue.JobQueue).pending(100_000)
    const all = yield* (yield* MessageStore.MessageStore).list({
      organisation_id: organisationId,
      take: "oldest",
      limit: 1_000_000
    })
    const created = new Map<string, number>()
    for (const m of all) {
      const body = JSON.parse(m.body) as { payload: { status?: string } }
      if (m.type === "BASIC_STATUS" && body.payload.status === "TRADEFLOW_CREATED") {
        created.set(m.tradeflow_reference, (created.get(m.tradeflow_reference) ?? 0) + 1)
      }
    }
    return { pending: pending.length, hashes: all.map((m) => m.hash), created }
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: file })), Effect.scoped, Effect.runPromise)
