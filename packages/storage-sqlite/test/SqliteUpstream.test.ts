import { upstreamContract } from "@tradeflow/core/test-kit"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-upstream-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

upstreamContract("sqlite", SqliteStorage.layer({ filename: join(root, "upstream.sqlite") }))
