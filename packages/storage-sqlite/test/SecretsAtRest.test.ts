import { SqlClient } from "@effect/sql"
import { freshId, secretsContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-secrets-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

secretsContract(
  "sqlite",
  Effect.sync(() => SqliteStorage.layer({ filename: join(root, freshId("db"), "storage.sqlite") })),
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const docs = yield* sql<{ readonly doc: string }>`SELECT doc FROM automations`
    const values = yield* sql<{ readonly value: string }>`SELECT value FROM settings`
    return [...docs.map((r) => r.doc), ...values.map((r) => r.value)].join("\n")
  })
)
