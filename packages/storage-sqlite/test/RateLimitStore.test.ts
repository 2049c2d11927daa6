import { RateLimitStore } from "@tradeflow/core"
import { rateLimitContract } from "@tradeflow/core/test-kit"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-rate-limits-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const filename = join(root, "contract", "storage.sqlite")

rateLimitContract("sqlite", SqliteStorage.layer({ filename }), {
  another: Effect.map(
    Layer.build(SqliteStorage.layer({ filename })),
    (context) => Context.get(context, RateLimitStore.RateLimitStore)
  )
})
