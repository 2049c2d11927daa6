import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { record, uatKey } from "./Fixtures.js"
import { call, consoleToken, kill, root, type Server, start } from "./Process.js"

interface Message {
  readonly hash: string
  readonly type: string
  readonly tradeflow_reference: string
  readonly payload: { readonly status?: string }
}

/** `npm run <script> -- <args>` as an operator runs it, with `DATABASE_URL`. */
const npmRun = (script: "backup" | "restore", args: ReadonlyArray<string>, databaseUrl: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile("npm", ["run", "--silent", script, "--", ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl }
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
  })

/** Every page of `GET /v3/upstream` from `cursor` (or from the start): the messages and the last `next_cursor`. */
const feed = async (server: Server, key: string, cursor?: string) => {
  const messages: Array<Message> = []
  let next = cursor
  for (;;) {
    const query = `per_page=200${next === undefined ? "" : `&cursor=${encodeURIComponent(next)}`}`
    const page = await call(server, "GET", `/v3/upstream?${query}`, undefined, { authorization: key })
    expect(page.status).toBe(200)
    messages.push(...page.body.data as Array<Message>)
    next = page.body.next_cursor
    if (!page.body.has_more) return { messages, cursor: next! }
  }
}

/** The organisation's jobs still pending, as the console lists them. */
const pendingJobs = async (server: Server, organisationId: string) => {
  const answer = await call(server, "GET", `/console/organisations/${organisationId}/jobs?state=pending`, undefined, {
    authorization: `Bearer ${consoleToken}`
  })
  expect(answer.status).toBe(200)
  return (answer.body as ReadonlyArray<unknown>).length
}

const drained = async (server: Server, organisationId: string) => {
  for (let i = 0; i < 300 && await pendingJobs(server, organisationId) > 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
  }
  return pendingJobs(server, organisationId)
}

const integrity = (file: string) =>
  Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    return yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
  }).pipe(Effect.provide(SqliteClient.layer({ filename: file, disableWAL: true })), Effect.runPromise)

const created = (messages: ReadonlyArray<Message>) =>
  messages.filter((m) => m.type === "BASIC_STATUS" && m.payload.status === "TRADEFLOW_CREATED")
    .map((m) => m.tradeflow_reference)

const until = async (done: () => boolean) => {
  for (let i = 0; i < 1_000 && !done(); i++) await new Promise((r) => setTimeout(r, 20))
}

describe("backup and restore", () => {
  it("a backup taken under write load restores to a server with the same feed, cursors and pending jobs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-backup-"))
    const file = join(dir, "tracking.sqlite")
    const backupFile = join(dir, "backups", "tracking-copy.sqlite")
    const restored = join(dir, "restored", "tracking.sqlite")
    const servers: Array<Server> = []
    try {
      const first = await start(file)
      servers.push(first)
      const key = await uatKey(first, "Backup Freight")
      const headers = { authorization: key.key }
      const organisation = key.organisation.id
      for (let i = 0; i < 5; i++) {
        expect((await call(first, "POST", "/v3/downstream/tradeflows", record(`DONE-${i}`), headers)).status).toBe(202)
      }
      expect(await drained(first, organisation)).toBe(0)
      const before = await feed(first, key.key)
      expect(created(before.messages).sort()).toEqual(["DONE-0", "DONE-1", "DONE-2", "DONE-3", "DONE-4"])
      await kill(first)

      const accepting = await start(file, { WORKER_ENABLED: "false" })
      servers.push(accepting)
      const pending: Array<string> = []
      for (let i = 0; i < 5; i++) {
        expect((await call(accepting, "POST", "/v3/downstream/tradeflows", record(`PENDING-${i}`), headers)).status)
          .toBe(202)
        pending.push(`PENDING-${i}`)
      }
      const accepted: Array<string> = []
      let stop = false
      const load = (async () => {
        for (let i = 0; !stop && i < 100_000; i++) {
          const answer = await call(accepting, "POST", "/v3/downstream/tradeflows", record(`LOAD-${i}`), headers)
          expect(answer.status).toBe(202)
          accepted.push(`LOAD-${i}`)
        }
      })()
      await until(() => accepted.length >= 20)
      const acceptedBeforeBackup = [...accepted]
      const backup = await npmRun("backup", [backupFile], `sqlite:${file}`)
      const acceptedDuringBackup = accepted.length
      await until(() => accepted.length >= acceptedDuringBackup + 20)
      const acceptedAfterBackup = accepted.slice(accepted.length - 10)
      stop = true
      await load
      expect(backup.stderr).toBe("")
      expect(backup.code).toBe(0)
      expect(backup.stdout).toMatch(/^backed up .+ to .+: \d+ bytes, \d+ pages, in \d+ ms; integrity check ok\n$/)
      expect(acceptedDuringBackup).toBeGreaterThan(acceptedBeforeBackup.length)
      expect(await integrity(backupFile)).toEqual([{ integrity_check: "ok" }])
      expect(statSync(backupFile).mode & 0o777).toBe(0o600)
      expect(await pendingJobs(accepting, organisation)).toBeGreaterThan(pending.length)
      await kill(accepting)

      const restore = await npmRun("restore", [backupFile], `sqlite:${restored}`)
      expect(restore.stderr).toBe("")
      expect(restore.code).toBe(0)
      const image = readFileSync(restored)
      const again = await npmRun("restore", [backupFile], `sqlite:${restored}`)
      expect(again.code).toBe(1)
      expect(again.stderr).toBe(`restore: ${restored} exists: refusing to overwrite it\n`)
      expect(readFileSync(restored).equals(image)).toBe(true)

      const copy = await start(restored)
      servers.push(copy)
      expect(await drained(copy, organisation)).toBe(0)
      const after = await feed(copy, key.key)
      expect(after.messages.slice(0, before.messages.length)).toEqual(before.messages)
      const resumed = await feed(copy, key.key, before.cursor)
      expect(resumed.messages).toEqual(after.messages.slice(before.messages.length))
      expect(new Set(after.messages.map((m) => m.hash)).size).toBe(after.messages.length)
      const references = created(after.messages)
      expect(new Set(references).size).toBe(references.length)
      for (const reference of [...pending, ...acceptedBeforeBackup]) {
        expect(created(resumed.messages)).toContain(reference)
      }
      for (const reference of acceptedAfterBackup) expect(references).not.toContain(reference)
    } finally {
      await Promise.all(servers.map(kill))
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it("refuses, with one line and exit code 1, what it cannot copy or check", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-backup-refused-"))
    try {
      const other = join(dir, "other.sqlite")
      await Effect.gen(function*() {
        const sql = yield* SqliteClient.SqliteClient
        yield* sql`CREATE TABLE notes (text TEXT)`
      }).pipe(Effect.provide(SqliteClient.layer({ filename: other })), Effect.runPromise)
      const junk = join(dir, "junk.sqlite")
      writeFileSync(junk, "x".repeat(8192))
      const target = `sqlite:${join(dir, "restored", "tracking.sqlite")}`
      const answers = await Promise.all([
        npmRun("backup", [], `sqlite:${other}`),
        npmRun("backup", [join(dir, "copy.sqlite")], "sqlite::memory:"),
        npmRun("backup", [join(dir, "copy.sqlite")], "postgres://postgres@127.0.0.1:5432/test"),
        npmRun("backup", [join(dir, "copy.sqlite")], `sqlite:${join(dir, "missing.sqlite")}`),
        npmRun("restore", [other], target),
        npmRun("restore", [junk], target)
      ])
      expect(answers.map(({ code, stderr, stdout }) => ({ code, stderr, stdout }))).toEqual([
        "backup: usage: npm run backup -- <backup file>",
        "backup: DATABASE_URL is sqlite::memory:: there is no file to copy",
        "backup: DATABASE_URL is PostgreSQL: back it up with pg_dump -Fc and restore it with pg_restore into a fresh " +
        "database, as docs/operations.md describes",
        `backup: no database at ${join(dir, "missing.sqlite")}`,
        `restore: ${other} is not a tradeflow database (no tradeflow_migrations table)`,
        `restore: ${junk}: integrity check: file is not a database`
      ].map((line) => ({ code: 1, stderr: `${line}\n`, stdout: "" })))
      expect(readdirSync(dir).sort()).toEqual(["junk.sqlite", "other.sqlite"])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
