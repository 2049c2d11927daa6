import { StorageError } from "@tradeflow/core"
import { Duration, Effect, type Scope } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

const require = createRequire(import.meta.url)

/** better-sqlite3, as `@effect/sql-sqlite-node` resolves it (the same driver and SQLite build). */
const driver = () =>
  createRequire(require.resolve("@effect/sql-sqlite-node"))
    .resolve("better-sqlite3")

const source = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true })
db.pragma("busy_timeout = 0")
db.pragma("synchronous = " + workerData.synchronous)
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
  } catch (error) {
    if (error.code !== "SQLITE_BUSY" && error.code !== "SQLITE_LOCKED") throw error
  }
}
const timer = setInterval(checkpoint, workerData.intervalMillis)
parentPort.on("message", () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * Checkpoints the database's WAL from a thread of its own with a connection of its own, every
 * `interval`, so a commit on the caller's connection only appends to the WAL and syncs it: copying
 * the WAL into the database file and syncing that file (SQLite's automatic checkpoint, which
 * otherwise runs inside the commit that crosses its threshold, on the event loop) happens beside
 * it. The thread keeps no process alive and stops with the scope. If it fails (it cannot open the
 * file, or a checkpoint fails other than busy), it ends with a warning logged, and the commits
 * checkpoint past SQLite's threshold again.
 */
export const start = (options: {
  readonly filename: string
  readonly synchronous: "FULL" | "NORMAL"
  readonly interval: Duration.DurationInput
}): Effect.Effect<void, StorageError.StorageError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const worker = new Worker(source, {
          eval: true,
          workerData: {
            driver: driver(),
            filename: options.filename,
            synchronous: options.synchronous,
            intervalMillis: Math.max(1, Math.round(Duration.toMillis(options.interval)))
          }
        })
        worker.unref()
        const failed = new Promise<unknown>((resolve) => worker.once("error", resolve))
        const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
        return { worker, failed, exited }
      },
      catch: (cause) => new StorageError.StorageError({ operation: "SqliteStorage.checkpointer", cause })
    }),
    ({ exited, worker }) =>
      Effect.promise(() => {
        worker.postMessage("stop")
        return exited
      }).pipe(
        Effect.timeoutTo({
          duration: Duration.seconds(5),
          onSuccess: () => Effect.void,
          onTimeout: () => Effect.promise(() => worker.terminate())
        }),
        Effect.flatten
      )
  ).pipe(
    Effect.flatMap(({ failed }) =>
      Effect.forkScoped(
        Effect.flatMap(
          Effect.promise(() => failed),
          (cause) =>
            Effect.logWarning(
              "SqliteStorage: the WAL checkpoint thread stopped; commits checkpoint past 4,000 pages again",
              cause
            )
        )
      )
    ),
    Effect.asVoid
  )
