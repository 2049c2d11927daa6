import { layer } from "@effect/vitest"
import { checkReadFetchesOnlyWhatItReturns, type DriverReads, upstreamContract } from "@tradeflow/core/test-kit"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, vi } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-upstream-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

upstreamContract("sqlite", SqliteStorage.layer({ filename: join(root, "upstream.sqlite") }))

/** Counts what better-sqlite3 statements hand over (rows, and the characters of their `body` fields) while `effect` runs. */
const measure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, DriverReads], E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const probe = new Database(":memory:")
      const statement: { all: (...args: Array<unknown>) => unknown } = Object.getPrototypeOf(probe.prepare("SELECT 1"))
      probe.close()
      return vi.spyOn(statement, "all")
    }),
    (spy) =>
      Effect.map(effect, (a): [A, DriverReads] => {
        const rows = spy.mock.results.flatMap((r) => r.type === "return" && Array.isArray(r.value) ? r.value : [])
        const bodyChars = rows.reduce((n: number, row) => n + (typeof row?.body === "string" ? row.body.length : 0), 0)
        return [a, { rows: rows.length, bodyChars }]
      }),
    (spy) => Effect.sync(() => spy.mockRestore())
  )

layer(SqliteStorage.layer({ filename: join(root, "reads.sqlite") }), { excludeTestServices: true })(
  "SQLite MessageStore.read",
  (it) => {
    it.effect("the driver hands over the bodies of the messages returned and no other", () =>
      checkReadFetchesOnlyWhatItReturns(measure))
  }
)
