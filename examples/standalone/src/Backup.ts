/**
 * `npm run backup` and `npm run restore`: consistent copies of the SQLite database that
 * `DATABASE_URL` names, taken online (`VACUUM INTO`) while servers keep serving and writing it.
 * PostgreSQL is backed up with `pg_dump` instead (docs/operations.md).
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Config, type ConfigError, Context, Data, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { databaseConfig } from "./Server.js"

/** Why a backup or a restore did not happen; its message is one line for the operator. */
export class BackupError extends Data.TaggedError("BackupError")<{ readonly message: string }> {}

/** What a copy wrote. */
export interface Copied {
  readonly file: string
  readonly bytes: number
  readonly pages: number
  readonly millis: number
}

const fail = (message: string) => Effect.fail(new BackupError({ message }))

/** The innermost reason: a driver error's own message rather than the `SqlError` wrapping it. */
const reason = (cause: unknown): string =>
  cause instanceof Error ? (cause.cause === undefined ? cause.message : reason(cause.cause)) : String(cause)

const explain = (what: string) => (cause: unknown) => new BackupError({ message: `${what}: ${reason(cause)}` })

/** The files of a SQLite database at `file`: itself, its WAL and its shared-memory index. */
const databaseFiles = (file: string) => [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]

/** The database at `file`, without setting its journal mode (a WAL database stays one). */
const open = (file: string) =>
  Layer.build(SqliteClient.layer({ filename: file, disableWAL: true })).pipe(
    Effect.map(Context.get(SqliteClient.SqliteClient)),
    Effect.mapError(explain(`cannot open ${file}`))
  )

const query = (client: SqliteClient.SqliteClient, what: string, statement: string) =>
  client.unsafe<Record<string, unknown>>(statement).pipe(Effect.mapError(explain(what)))

/** Fails unless `PRAGMA integrity_check` finds nothing wrong in the database at `file`. */
const checkIntegrity = (client: SqliteClient.SqliteClient, file: string) =>
  Effect.gen(function*() {
    const rows = yield* query(client, `${file}: integrity check`, "PRAGMA integrity_check")
    const found = rows.map((row) => String(Object.values(row)[0]))
    if (found.length !== 1 || found[0] !== "ok") {
      return yield* fail(`${file} fails the integrity check: ${found.slice(0, 3).join("; ")}`)
    }
  })

/** Fails unless the database is a tradeflow database (it has the migrations table of our storage). */
const checkOurs = (client: SqliteClient.SqliteClient, file: string) =>
  Effect.gen(function*() {
    const rows = yield* query(
      client,
      `${file}: reading its tables`,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tradeflow_migrations'"
    )
    if (rows.length === 0) return yield* fail(`${file} is not a tradeflow database (no tradeflow_migrations table)`)
  })

/**
 * Copies the SQLite database at `source` to `target` with `VACUUM INTO`: one read transaction, so
 * the copy is the database as of one commit while other connections keep writing (WAL), and it
 * never starts over as the backup API does after each write of another process. Free pages are
 * left out. Refuses a `target` whose database files exist; writes beside it and links the copy into
 * place (mode 0600: it holds the stored secrets) only once `PRAGMA integrity_check` passes on it. With `verifySource`, the source must first
 * pass the integrity check and hold our migrations table.
 */
export const copy = (source: string, target: string, options: { readonly verifySource: boolean }) =>
  Effect.gen(function*() {
    if (!Fs.existsSync(source)) return yield* fail(`no database at ${source}`)
    const existing = databaseFiles(target).find((file) => Fs.existsSync(file))
    if (existing !== undefined) return yield* fail(`${existing} exists: refusing to overwrite it`)
    const partial = `${target}.partial-${process.pid}`
    const removePartial = Effect.sync(() => databaseFiles(partial).forEach((file) => Fs.rmSync(file, { force: true })))
    const started = performance.now()
    yield* Effect.scoped(Effect.gen(function*() {
      const client = yield* open(source)
      if (options.verifySource) {
        yield* checkIntegrity(client, source)
        yield* checkOurs(client, source)
      }
      yield* Effect.try({
        try: () => Fs.mkdirSync(Path.dirname(target), { recursive: true }),
        catch: explain(`cannot create the directory of ${target}`)
      })
      yield* Effect.try({
        try: () => Fs.closeSync(Fs.openSync(partial, "wx", 0o600)),
        catch: explain(`cannot create ${partial}`)
      })
      yield* client`VACUUM INTO ${partial}`.pipe(Effect.mapError(explain(`cannot copy ${source}`)))
    })).pipe(Effect.onError(() => removePartial))
    const pages = yield* Effect.scoped(Effect.gen(function*() {
      const client = yield* open(partial)
      yield* checkIntegrity(client, partial)
      const rows = yield* query(client, `${partial}: counting its pages`, "PRAGMA page_count")
      return Number(Object.values(rows[0] ?? {})[0])
    })).pipe(Effect.tapError(() => removePartial))
    yield* Effect.try({
      try: () => {
        Fs.linkSync(partial, target)
      },
      catch: explain(`cannot move the copy into ${target}`)
    }).pipe(Effect.ensuring(removePartial))
    return {
      file: target,
      bytes: Fs.statSync(target).size,
      pages,
      millis: Math.round(performance.now() - started)
    } satisfies Copied
  })

const describe = (copied: Copied) =>
  `${copied.file}: ${copied.bytes} bytes, ${copied.pages} pages, in ${copied.millis} ms; integrity check ok`

/** The file argument, relative to the directory `npm run` was called from (`INIT_CWD`). */
const fileArgument = (args: ReadonlyArray<string>, usage: string) =>
  Effect.gen(function*() {
    if (args.length !== 1 || args[0] === "") return yield* fail(`usage: ${usage}`)
    const cwd = yield* Config.string("INIT_CWD").pipe(Config.withDefault(process.cwd()))
    return Path.resolve(cwd, args[0]!)
  })

/** The SQLite file of `DATABASE_URL`; PostgreSQL and `sqlite::memory:` are refused with what to do instead. */
const sqliteFile = Effect.gen(function*() {
  const database = yield* databaseConfig
  if (database._tag === "Postgres") {
    return yield* fail(
      "DATABASE_URL is PostgreSQL: back it up with pg_dump -Fc and restore it with pg_restore into a fresh " +
        "database, as docs/operations.md describes"
    )
  }
  if (database.filename === ":memory:") return yield* fail("DATABASE_URL is sqlite::memory:: there is no file to copy")
  return Path.resolve(database.filename)
})

/** `npm run backup -- <file>`: copies the database of `DATABASE_URL` to a new file, while servers run. */
export const backup = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const target = yield* fileArgument(args, "npm run backup -- <backup file>")
    const source = yield* sqliteFile
    return `backed up ${source} to ${describe(yield* copy(source, target, { verifySource: false }))}`
  })

/**
 * `npm run restore -- <backup file>`: copies a backup to the location `DATABASE_URL` names, which
 * must not hold a database yet; the backup must pass the integrity check and be a tradeflow database.
 */
export const restore = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const source = yield* fileArgument(args, "npm run restore -- <backup file>")
    const target = yield* sqliteFile
    return `restored ${source} to ${describe(yield* copy(source, target, { verifySource: true }))}`
  })

/**
 * Runs a command of this module as a process: its line on stdout and exit code 0, or `<name>: <why>`
 * on stderr and exit code 1.
 */
export const run = (name: string, command: Effect.Effect<string, BackupError | ConfigError.ConfigError>) =>
  command.pipe(
    Effect.match({
      onFailure: (error) => {
        console.error(`${name}: ${error._tag === "BackupError" ? error.message : String(error)}`)
        process.exitCode = 1
      },
      onSuccess: (line) => console.log(line)
    }),
    Effect.runPromise
  )
