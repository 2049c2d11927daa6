/**
 * A preload (`node --import`) that times every better-sqlite3 statement of the process it is loaded
 * into (`run`, `all`, `get` of prepared statements, and `exec`) by its first 48 characters, and writes
 * the 14 that took longest in all to stderr when the process gets SIGTERM. A COMMIT's time is its
 * fsync (WAL, `synchronous = FULL`), which blocks the event loop. `PROFILE_PRELOAD=bench/sqlite-statement-times.mjs` runs
 * bench/ingest/profile.ts's server with it.
 */
import { createRequire } from "node:module"
import { join } from "node:path"

const Database = createRequire(join(process.cwd(), "package.json"))("better-sqlite3")
const spent = new Map()
const note = (sql, ms) => {
  const key = sql.replace(/\s+/g, " ").trim().slice(0, 48)
  const entry = spent.get(key) ?? { count: 0, ms: 0 }
  entry.count++
  entry.ms += ms
  spent.set(key, entry)
}
const timed = (sql, run) => {
  const started = performance.now()
  try {
    return run()
  } finally {
    note(sql, performance.now() - started)
  }
}
const prepare = Database.prototype.prepare
Database.prototype.prepare = function(sql, ...rest) {
  const statement = prepare.call(this, sql, ...rest)
  for (const method of ["run", "all", "get"]) {
    const original = statement[method]
    statement[method] = function(...args) {
      return timed(sql, () => original.apply(this, args))
    }
  }
  return statement
}
const exec = Database.prototype.exec
Database.prototype.exec = function(sql) {
  return timed(sql, () => exec.call(this, sql))
}
process.on("SIGTERM", () => {
  const rows = [...spent].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)
  process.stderr.write(
    rows.map(([sql, { count, ms }]) =>
      `statement ${ms.toFixed(0).padStart(6)} ms ${String(count).padStart(6)} × ${(ms / count).toFixed(3)} ms  ${sql}`
    ).join("\n") + "\n"
  )
})
