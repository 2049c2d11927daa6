/**
 * The WAL of a database file is checkpointed by a thread of its own: what a commit wrote reaches the
 * database file itself while the connection stays open and SQLite's automatic checkpoint (raised to
 * 4,000 pages) cannot have run; with `backgroundCheckpoints: false` it stays in the WAL.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Duration, Effect, Layer } from "effect"
import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-checkpoint-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The probe rows the database file holds by itself, without its WAL: a copy of the file alone, opened. */
const rowsInFile = (filename: string, name: string) => {
  const copy = join(root, `${name}-copy.sqlite`)
  rmSync(copy, { force: true })
  rmSync(`${copy}-wal`, { force: true })
  rmSync(`${copy}-shm`, { force: true })
  copyFileSync(filename, copy)
  const db = new Database(copy)
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE name = 'probe'").get()
    return table === undefined ? 0 : (db.prepare("SELECT count(*) AS n FROM probe").get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** Writes 50 probe rows through the storage's connection, then reads the file alone for up to a second. */
const writeAndWatch = (name: string, backgroundCheckpoints: boolean) => {
  const filename = join(root, `${name}.sqlite`)
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE probe (n INTEGER NOT NULL)`
    for (let n = 0; n < 50; n++) yield* sql`INSERT INTO probe (n) VALUES (${n})`
    let seen = rowsInFile(filename, name)
    for (let i = 0; i < 20 && seen < 50; i++) {
      yield* Effect.sleep(Duration.millis(50))
      seen = rowsInFile(filename, name)
    }
    return seen
  }).pipe(
    Effect.provide(
      Layer.fresh(
        SqliteStorage.layer({ filename, backgroundCheckpoints, checkpointInterval: Duration.millis(20) })
      )
    )
  )
}

describe("SqliteStorage checkpoints", () => {
  it.live("copies what commits wrote into the database file from a thread of its own", () =>
    Effect.gen(function*() {
      expect(yield* writeAndWatch("background", true)).toBe(50)
      expect(yield* writeAndWatch("inline", false)).toBe(0)
    }))
})
