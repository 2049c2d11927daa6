import { SqlClient } from "@effect/sql"
import { Storage } from "@tradeflow/core"
import { Effect, Option } from "effect"
import { decodeValues, storageError } from "../StorageRows.js"

/** `Settings` over the `SqlClient`. */
export const make: Effect.Effect<Storage.Settings["Type"], never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) =>
    Storage.Settings.of({
      getOrCreate: Effect.fn("Settings.getOrCreate")(function*(name: string, initial: string) {
        yield* sql`INSERT INTO settings (name, value) VALUES (${name}, ${initial}) ON CONFLICT (name) DO NOTHING`
        const stored = (yield* decodeValues(yield* sql`SELECT value FROM settings WHERE name = ${name}`))[0]
        return stored === undefined ? yield* Effect.fail(`setting ${name} vanished after insert`) : stored.value
      }, storageError("Settings.getOrCreate")),
      get: Effect.fn("Settings.get")(function*(name: string) {
        const rows = yield* decodeValues(yield* sql`SELECT value FROM settings WHERE name = ${name}`)
        return Option.map(Option.fromNullable(rows[0]), (r) => r.value)
      }, storageError("Settings.get")),
      set: Effect.fn("Settings.set")(function*(name: string, value: string) {
        yield* sql`INSERT INTO settings (name, value) VALUES (${name}, ${value})
        ON CONFLICT (name) DO UPDATE SET value = excluded.value`
      }, storageError("Settings.set"))
    })
)
