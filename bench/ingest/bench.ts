/**
 * Ingest benchmark: records per second accepted (answered 202) and processed end to end by the real
 * standalone server (a child process, as `npm start` runs it; `BENCH_SERVER=tsx` for the loader) over HTTP, for batches of BATCHES
 * records per request and CLIENTS concurrent keep-alive clients, on SQLite and PostgreSQL. Each
 * backend is set next to its raw floor, measured in the same run: the very job rows the server
 * wrote, read back and written again into a fresh database by a bare script with the same driver
 * (better-sqlite3 in WAL with `synchronous = FULL`; `pg` with PostgreSQL's defaults), once with one
 * transaction per request and once grouped as the server can at best (one transaction per round of
 * CLIENTS requests). On SQLite it is also set next to a bare HTTP ingest server in the same run: a
 * plain `node:http` server that parses each JSON body, inserts one job row for it with better-sqlite3
 * (WAL, `synchronous = FULL`, one transaction per request) and answers 202 with the references, no
 * validation, authentication or worker (the same load generator).
 *
 * `npm run bench:ingest [-- sqlite|postgres|both]`. Env: INGEST_BATCHES (default "1,50,500"),
 * INGEST_CLIENTS (default "1,4,16,64"), INGEST_SECONDS (load per configuration, default 4),
 * INGEST_DRAIN (wait until every job is processed: default true), INGEST_PROFILE (a directory: the
 * server runs with `--cpu-prof` into it; with BENCH_SERVER=tsx its files keep their names), BENCH_SERVER,
 * TRADEFLOW_TEST_PG_URL. Records are UAT records without
 * mock tracking. Prints a JSON line per configuration and Markdown tables.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { withBareIngest } from "../BareIngest.js"
import { bodyOf, machineLine, pgUrl, post, startServer, withDatabase } from "../Harness.js"

const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(",").map(Number)
const batches = list("INGEST_BATCHES", "1,50,500")
const clientCounts = list("INGEST_CLIENTS", "1,4,16,64")
const seconds = Number(process.env["INGEST_SECONDS"] ?? 4)
const drain = (process.env["INGEST_DRAIN"] ?? "true") === "true"

interface Load {
  readonly records: number
  readonly requests: number
  readonly failed: number
  readonly accept_seconds: number
  readonly processed_seconds: number | null
}

const load = async (
  port: number,
  key: string,
  pending: () => Promise<number>,
  batch: number,
  clients: number,
  tag: string
): Promise<Load> => {
  let records = 0
  let requests = 0
  let failed = 0
  const started = performance.now()
  const until = started + seconds * 1000
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let n = 0; performance.now() < until; n++) {
      const answer = await post(port, "/v3/downstream/tradeflows", bodyOf(`${tag}-${c}-${n}`, batch), {
        authorization: key
      })
      requests++
      if (answer.status === 202) records += batch
      else if (failed++ === 0) console.error(`answer ${answer.status}: ${answer.body.slice(0, 300)}`)
    }
  }))
  const accepted = performance.now()
  if (!drain) return { records, requests, failed, accept_seconds: (accepted - started) / 1000, processed_seconds: null }
  while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 20))
  return {
    records,
    requests,
    failed,
    accept_seconds: (accepted - started) / 1000,
    processed_seconds: (performance.now() - started) / 1000
  }
}

interface JobRow {
  readonly organisation_id: string
  readonly environment: string
  readonly payload: string
  readonly received_at: number
}

/** The job rows a configuration wrote, in id order, one per accepted request. */
interface Floor {
  readonly per_request: number
  readonly grouped: number
}

const sqliteFloor = (rows: ReadonlyArray<JobRow>, batch: number, clients: number, migrated: string): Floor => {
  const write = (group: number) => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-floor-"))
    const db = new Database(join(dir, "floor.sqlite"))
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = FULL")
    db.exec(migrated)
    const insert = db.prepare(`INSERT INTO jobs (organisation_id, environment, payload, received_at, status)
      VALUES (?, ?, ?, ?, 'pending') RETURNING id`)
    const commit = db.transaction((part: ReadonlyArray<JobRow>) => {
      for (const r of part) insert.get(r.organisation_id, r.environment, r.payload, r.received_at)
    })
    const started = performance.now()
    for (let i = 0; i < rows.length; i += group) commit(rows.slice(i, i + group))
    const elapsed = (performance.now() - started) / 1000
    db.close()
    rmSync(dir, { recursive: true, force: true })
    return Math.round(rows.length * batch / elapsed)
  }
  return { per_request: write(1), grouped: write(clients) }
}

const pgFloor = async (
  rows: ReadonlyArray<JobRow>,
  batch: number,
  clients: number,
  migrated: string
): Promise<Floor> => {
  const write = async (group: number) => {
    const schema = `bench_floor_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`
    const pool = new pg.Pool({ connectionString: pgUrl, max: clients, options: `-c search_path=${schema}` })
    try {
      await pool.query(`CREATE SCHEMA ${schema}`)
      await pool.query(migrated)
      const started = performance.now()
      const parts: Array<ReadonlyArray<JobRow>> = []
      for (let i = 0; i < rows.length; i += group) parts.push(rows.slice(i, i + group))
      let next = 0
      await Promise.all(Array.from({ length: group === 1 ? clients : 1 }, async () => {
        const client = await pool.connect()
        try {
          while (next < parts.length) {
            const part = parts[next++]!
            await client.query("BEGIN")
            for (const r of part) {
              await client.query("SELECT pg_advisory_xact_lock(7411001, hashtext($1))", [r.organisation_id])
              await client.query(
                `INSERT INTO jobs (organisation_id, environment, payload, received_at)
                VALUES ($1, $2, $3, $4) RETURNING id`,
                [r.organisation_id, r.environment, r.payload, r.received_at]
              )
            }
            await client.query("COMMIT")
          }
        } finally {
          client.release()
        }
      }))
      return Math.round(rows.length * batch / ((performance.now() - started) / 1000))
    } finally {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`)
      await pool.end()
    }
  }
  return { per_request: await write(1), grouped: await write(clients) }
}

const results: Array<Record<string, unknown>> = []

const runBackend = (backend: Backend) =>
  withDatabase(backend, "ingest", async ({ admin, file, schema, url }) => {
    const server = await startServer(url, {
      WORKER_ENABLED: process.env["INGEST_WORKER"] ?? "true"
    }, process.env["INGEST_PROFILE"])
    const sqlite = backend === "sqlite" ? new Database(file, { readonly: true }) : undefined
    const pending = async () =>
      sqlite !== undefined
        ? (sqlite.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'pending'").get() as { n: number }).n
        : Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.jobs WHERE status = 'pending'`)).rows[0].n)
    const jobsAfter = async (id: number): Promise<{ rows: ReadonlyArray<JobRow>; last: number }> => {
      const rows = sqlite !== undefined
        ? sqlite.prepare(
          "SELECT id, organisation_id, environment, payload, received_at FROM jobs WHERE id > ? ORDER BY id"
        ).all(id) as Array<JobRow & { id: number }>
        : (await admin.query(
          `SELECT id::float8 AS id, organisation_id, environment, payload::text AS payload, received_at
            FROM ${schema}.jobs WHERE id > $1 ORDER BY id`,
          [id]
        )).rows as Array<JobRow & { id: number }>
      return { rows, last: rows.at(-1)?.id ?? id }
    }
    const schemaSql = sqlite !== undefined
      ? (sqlite.prepare("SELECT group_concat(sql, ';') AS s FROM sqlite_master WHERE name = 'jobs'").get() as {
        s: string
      }).s
      : `CREATE TABLE jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, organisation_id text COLLATE "C" NOT NULL,
          environment text NOT NULL, payload text NOT NULL, received_at double precision NOT NULL,
          status text NOT NULL DEFAULT 'pending', attempt integer NOT NULL DEFAULT 0, leased_by text, lease_until timestamptz,
          result text, error text);
        CREATE INDEX jobs_pending ON jobs (id) WHERE status = 'pending';
        CREATE INDEX jobs_pending_organisation ON jobs (organisation_id, id) WHERE status = 'pending'`
    try {
      const { key } = await uatKey(server, "Ingest bench")
      await load(server.port, key, pending, 10, 4, "warmup")
      let last = (await jobsAfter(0)).last
      for (const batch of batches) {
        for (const clients of clientCounts) {
          const tag = `b${batch}c${clients}`
          const measured = await load(server.port, key, pending, batch, clients, tag)
          const written = await jobsAfter(last)
          last = written.last
          const floor = backend === "sqlite"
            ? sqliteFloor(written.rows, batch, clients, schemaSql)
            : await pgFloor(written.rows, batch, clients, schemaSql)
          const accepted = Math.round(measured.records / measured.accept_seconds)
          const bestFloor = Math.max(floor.per_request, floor.grouped)
          const bare = backend === "sqlite"
            ? await withBareIngest({ backend: "sqlite", ddl: schemaSql }, async (port) => {
              const answered = await load(port, "bare", async () => 0, batch, clients, `bare-${tag}`)
              return Math.round(answered.records / answered.accept_seconds)
            })
            : null
          const result = {
            backend,
            batch,
            clients,
            ...measured,
            accepted_per_second: accepted,
            processed_per_second: measured.processed_seconds === null
              ? null
              : Math.round(measured.records / measured.processed_seconds),
            floor_per_request: floor.per_request,
            floor_grouped: floor.grouped,
            ratio_to_floor: Number((accepted / bestFloor).toFixed(3)),
            bare_http_per_second: bare,
            ratio_to_bare_http: bare === null ? null : Number((accepted / bare).toFixed(3)),
            bare_http_to_floor: bare === null ? null : Number((bare / bestFloor).toFixed(3))
          }
          console.log(JSON.stringify(result))
          results.push(result)
        }
      }
    } finally {
      sqlite?.close()
      await server.stop()
    }
  })

console.log(machineLine())
for (const backend of selectedBackends()) await runBackend(backend)
console.log(
  "\n| storage | batch | clients | accepted rec/s | processed rec/s | floor, txn per request | floor, grouped | accepted / best floor" +
    " | bare HTTP server rec/s | accepted / bare HTTP | bare HTTP / best floor |"
)
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (const r of results) {
  console.log(
    `| ${r["backend"]} | ${r["batch"]} | ${r["clients"]} | ${r["accepted_per_second"]} | ${
      r["processed_per_second"] ?? "–"
    } | ${r["floor_per_request"]} | ${r["floor_grouped"]} | ${r["ratio_to_floor"]} | ${
      r["bare_http_per_second"] ?? "–"
    } | ${r["ratio_to_bare_http"] ?? "–"} | ${r["bare_http_to_floor"] ?? "–"} |`
  )
}
