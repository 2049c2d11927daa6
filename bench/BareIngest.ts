/**
 * The bare HTTP ingest servers the ingest benchmarks set the real server next to: a plain
 * `node:http` server (a separate process) that reads each request body, `JSON.parse`s it, writes it
 * as one job row (the same table the real server writes, with the same driver and durability) and
 * answers 202 naming the references; no authentication, validation, warnings or worker.
 *
 * SQLite: better-sqlite3 on a fresh file in WAL with `synchronous = FULL`, the `jobs` table created
 * from the DDL given, one transaction per request. PostgreSQL: `pg` with a pool of 10 (the real
 * server's default), PostgreSQL's default durability, one autocommit INSERT per request into a
 * `jobs` table the caller created.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const handler = (store: string) => `
const server = http.createServer((req, res) => {
  const parts = []
  req.on("data", (c) => parts.push(c))
  req.on("end", () => {
    let records
    try { records = JSON.parse(Buffer.concat(parts).toString()) } catch { res.writeHead(400); return res.end() }
    if (!Array.isArray(records)) { res.writeHead(422); return res.end() }
    const answer = () => {
      const body = JSON.stringify({ status: "queued", tradeflows: records.map((r) => ({ tradeflow_reference: r.tradeflow_reference, warnings: [] })) })
      res.writeHead(202, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    }
    ${store}
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

const sqliteSource = `
const http = require("node:http")
const Database = require("better-sqlite3")
const db = new Database(process.argv[1])
db.pragma("journal_mode = WAL")
db.pragma("synchronous = FULL")
db.exec(process.argv[2])
const insert = db.prepare("INSERT INTO jobs (organisation_id, environment, payload, received_at, status) VALUES (?, ?, ?, ?, 'pending') RETURNING id")
${handler(`insert.get("org", "uat", JSON.stringify({ _tag: "Upsert", records }), Date.now()); answer()`)}
`

const postgresSource = `
const http = require("node:http")
const pg = require("pg")
const pool = new pg.Pool({ connectionString: process.argv[1], max: 10, options: "-c search_path=" + process.argv[2] })
${
  handler(
    `pool.query("INSERT INTO jobs (organisation_id, environment, payload, received_at) VALUES ($1, $2, $3, $4) RETURNING id",
      ["org", "uat", JSON.stringify({ _tag: "Upsert", records }), Date.now()]).then(answer, (e) => { console.error(e); res.writeHead(500); res.end() })`
  )
}
`

/** Where the bare server writes: a fresh SQLite file with the `jobs` DDL, or a PostgreSQL schema holding a `jobs` table. */
export type BareTarget =
  | { readonly backend: "sqlite"; readonly ddl: string }
  | { readonly backend: "postgres"; readonly url: string; readonly schema: string }

/** Runs `use` against a bare HTTP ingest server on `target` (given its port), killed afterwards. */
export const withBareIngest = async <A>(target: BareTarget, use: (port: number) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-bare-ingest-"))
  const args = target.backend === "sqlite"
    ? ["-e", sqliteSource, join(dir, "bare.sqlite"), target.ddl]
    : ["-e", postgresSource, target.url, target.schema]
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] })
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
      child.once("exit", (code) => reject(new Error(`bare server exited with ${code}`)))
    })
    return await use(port)
  } finally {
    child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  }
}
