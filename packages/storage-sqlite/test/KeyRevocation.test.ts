import { freshId, keyRevocationContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-revocations-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

keyRevocationContract(
  "sqlite",
  Effect.sync(() => {
    const filename = join(root, freshId("db"), "storage.sqlite")
    return [SqliteStorage.layer({ filename }), SqliteStorage.layer({ filename })] as const
  })
)
