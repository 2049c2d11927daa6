import { SqlClient } from "@effect/sql"
import { secretsContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { PgStorage } from "../src/index.js"
import { makeTestSchema } from "./TestDatabase.js"

secretsContract(
  "postgres",
  Effect.map(
    makeTestSchema(),
    (test) => PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 4 })
  ),
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const docs = yield* sql<{ readonly doc: string }>`SELECT doc::text AS doc FROM automations`
    const values = yield* sql<{ readonly value: string }>`SELECT value FROM settings`
    return [...docs.map((r) => r.doc), ...values.map((r) => r.value)].join("\n")
  })
)
