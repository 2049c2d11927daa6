import { expect, it } from "@effect/vitest"
import { OrganisationStore } from "@tradeflow/core"
import { freshId, keyRevocationContract } from "@tradeflow/core/test-kit"
import Database from "better-sqlite3"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, vi } from "vitest"
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

interface Statement {
  readonly source: string
  readonly all: (...args: Array<unknown>) => unknown
}

it.live("the revocation read is one statement searching the revocation index of each key table", () =>
  Effect.gen(function*() {
    const filename = join(root, freshId("db"), "storage.sqlite")
    const store = Context.get(
      yield* Layer.build(SqliteStorage.layer({ filename })),
      OrganisationStore.OrganisationStore
    )
    const { cursor } = yield* store.revokedSince(null)
    const probe = new Database(":memory:")
    const prototype: Statement = Object.getPrototypeOf(probe.prepare("SELECT 1"))
    probe.close()
    const statements = yield* Effect.acquireUseRelease(
      Effect.sync(() => vi.spyOn(prototype, "all")),
      (spy) =>
        Effect.map(
          store.revokedSince(cursor),
          () => spy.mock.contexts.map((s, i) => ({ source: (s as Statement).source, args: spy.mock.calls[i]! }))
        ),
      (spy) => Effect.sync(() => spy.mockRestore())
    )
    expect(statements.length).toBe(1)
    const db = new Database(filename, { readonly: true })
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${statements[0]!.source}`).all(...statements[0]!.args) as Array<
      { detail: string }
    >).map((r) => r.detail)
    db.close()
    expect(plan.filter((line) => /^SCAN (api_keys|widget_keys)\b/.test(line))).toEqual([])
    for (const table of ["api_keys", "widget_keys"]) {
      expect(plan).toContainEqual(
        `SEARCH ${table} USING INDEX ${table}_revocation (revocation_noticed_at>?)`
      )
    }
  }).pipe(Effect.scoped))
