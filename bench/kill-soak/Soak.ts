/**
 * The kill soak (issue 6, "Failure tests"): concurrent clients post tradeflow records to the
 * standalone server while it is killed with SIGKILL at random points and restarted on the same
 * database (and, on PostgreSQL, while its backends are ended with `pg_terminate_backend`); after
 * the last restart the queue drains and the database and `GET /v3/upstream` are checked.
 *
 * Clients: `clients` workers post batches of 1..50 records (`tradeflow_reference` unique per
 * record, no `mock_tracking`, UAT keys of `organisations` organisations), each batch with its own
 * `Idempotency-Key`. A request without an answer (connection reset by a kill, refused, timed out)
 * or answered 5xx/409/429 is sent again with the same key and body once a server is up, at most
 * `maxAttempts` times; any other answer is final. While the kills last, posting is paced so the
 * records spread over the lives of the server (the records left after the last kill go at once).
 *
 * Killer: `kills` times, a server is started (`Process.start`, `WORKER_LEASE_MILLIS=2000`), left
 * up a random `minUptimeMillis`..`maxUptimeMillis`, then SIGKILLed, 0..10 ms after a request is in
 * flight (waiting at most 1 s for one while records are left), so that kills land in requests
 * as well as in the worker's processing. On PostgreSQL the server's
 * connections carry their own `application_name` (`?application_name=` in `DATABASE_URL`), and a
 * terminator ends exactly those backends every `terminateMinMillis`..`terminateMaxMillis` while a
 * server is up, until the queue has drained. A server that exits without being killed is counted
 * in `crashes` and started again.
 *
 * "Processed exactly once" is checked, after the queue is empty, as:
 * - landed batch = its Idempotency-Key is stored (it is stored in the transaction of the job);
 *   every batch answered 202 must have landed (else its records count as `lost`);
 * - every record of a landed batch has exactly one tradeflow row, appears in exactly one job, and
 *   has exactly one upstream message, a BASIC_STATUS `TRADEFLOW_CREATED` (else `lost` for records
 *   answered 202, `landed_unprocessed` for the others; more than one is a duplicate);
 * - no tradeflow, job or message names a reference that is not in a landed batch (`unexpected`);
 * - no two messages of an organisation share a hash, in the table or across all cursor pages of
 *   `GET /v3/upstream?per_page=500`, and the pages hold exactly the hashes of the table;
 * - no job is left pending or dead.
 *
 * A connection refused (the server was just killed) sent nothing: it is counted in `attempts_refused`
 * and tried again, not counted as an attempt. Requests without an answer: `attempts_unanswered` counts them; `attempts_unanswered_landed` those
 * that were queued anyway (the batch's job was received after that attempt was sent and before the
 * next one: the server and this process read the same clock). `unanswered` / `unanswered_landed`
 * count records whose batch never got an answer (all `maxAttempts` unanswered) / and was queued.
 * The servers' stdout (their log) is not read (`Process.start` ignores it); their stderr is kept
 * for the report of a server that exits without being killed (`crash_stderr`).
 */
import { SqlClient } from "@effect/sql"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { appendFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { call, kill, type Server, start } from "../../examples/standalone/test/Process.js"
import { makeTestSchema } from "../../packages/storage-pg/test/TestDatabase.js"
import { unlimited } from "../Harness.js"

/** How a soak run is shaped. */
export interface SoakOptions {
  readonly backend: "sqlite" | "postgres"
  readonly records: number
  readonly kills: number
  readonly clients: number
  readonly organisations?: number
  readonly maxBatch?: number
  readonly minUptimeMillis?: number
  readonly maxUptimeMillis?: number
  readonly terminateMinMillis?: number
  readonly terminateMaxMillis?: number
  readonly maxAttempts?: number
  readonly drainTimeoutMillis?: number
  readonly seed?: number
  readonly log?: (line: string) => void
  /** A file every server's stderr is appended to. */
  readonly serverLog?: string
}

/** What a soak run saw; `ok` is false when anything was lost, duplicated, unexpected or left over. */
export interface SoakSummary {
  readonly backend: string
  readonly seed: number
  readonly records: number
  readonly batches: number
  readonly clients: number
  readonly organisations: number
  readonly accepted: number
  readonly accepted_on_resend: number
  readonly rejected: number
  readonly rejected_statuses: Record<string, number>
  readonly rejected_landed: number
  readonly unanswered: number
  readonly unanswered_landed: number
  readonly attempts: number
  readonly attempts_unanswered: number
  readonly attempts_unanswered_landed: number
  readonly attempts_refused: number
  readonly answers: Record<string, number>
  readonly error_answers: ReadonlyArray<string>
  readonly kills: number
  readonly crashes: number
  readonly failed_starts: number
  readonly terminations: number
  readonly backends_terminated: number
  readonly jobs: number
  readonly jobs_pending: number
  readonly jobs_failed: number
  readonly failed_job_errors: ReadonlyArray<string>
  readonly messages: number
  readonly upstream_messages: number
  readonly duplicates: number
  readonly lost: number
  readonly landed_unprocessed: number
  readonly unexpected: number
  readonly crash_stderr: ReadonlyArray<string>
  readonly drain_seconds: number
  readonly seconds: number
  readonly ok: boolean
}

interface Batch {
  readonly key: string
  readonly organisation: number
  readonly references: ReadonlyArray<string>
  readonly body: string
  attempts: number
  readonly sent: Array<{ readonly at: number; answered: boolean }>
}

interface Db {
  readonly run: <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
  readonly close: () => Promise<void>
}

const sleep = (millis: number) => new Promise<void>((r) => setTimeout(r, millis))

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

const openDb = async (layer: Layer.Layer<SqlClient.SqlClient, unknown>): Promise<Db> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const sql = Context.get(context, SqlClient.SqlClient)
  return {
    run: (f) => Effect.runPromise(f(sql)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const bump = (counts: Record<string, number>, key: string | number, by = 1) => {
  counts[String(key)] = (counts[String(key)] ?? 0) + by
}

const retryable = (status: number) => status >= 500 || status === 409 || status === 429

/** Runs one soak on a fresh database (a temporary SQLite file or PostgreSQL schema, removed after). */
export const runSoak = async (options: SoakOptions): Promise<SoakSummary> => {
  const log = options.log ?? (() => {})
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31)
  const random = mulberry32(seed)
  const between = (min: number, max: number) => min + random() * (max - min)
  const organisations = options.organisations ?? Math.min(4, options.clients)
  const maxBatch = options.maxBatch ?? 50
  const minUptime = options.minUptimeMillis ?? 100
  const maxUptime = options.maxUptimeMillis ?? 1500
  const terminateMin = options.terminateMinMillis ?? 300
  const terminateMax = options.terminateMaxMillis ?? 2000
  const maxAttempts = options.maxAttempts ?? 10
  const drainTimeout = options.drainTimeoutMillis ?? 600_000
  const postgres = options.backend === "postgres"
  const started = performance.now()

  const batches: Array<Batch> = []
  for (let n = 0; n < options.records;) {
    const size = Math.min(options.records - n, 1 + Math.floor(random() * maxBatch))
    const references = Array.from({ length: size }, (_, i) => `KS-${n + i}`)
    const body = JSON.stringify(references.map((reference) => ({
      tradeflow_reference: reference,
      booking_reference: `BK-${reference}`,
      port_of_loading: "CNSHA",
      port_of_discharge: "NLRTM"
    })))
    batches.push({
      key: `soak-${seed}-${batches.length}`,
      organisation: batches.length % organisations,
      references,
      body,
      attempts: 0,
      sent: []
    })
    n += size
  }

  const scope = Effect.runSync(Scope.make())
  const dir = postgres ? undefined : mkdtempSync(join(tmpdir(), "tradeflow-soak-"))
  const file = dir === undefined ? "" : join(dir, "tracking.sqlite")
  let env: Record<string, string> = { ...unlimited, WORKER_LEASE_MILLIS: "2000" }
  let openLayer: () => Layer.Layer<SqlClient.SqlClient, unknown> = () => SqliteStorage.layer({ filename: file })
  let applicationName = ""
  if (postgres) {
    const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
    applicationName = `soak_${test.schema}`
    const url = new URL(test.url)
    url.searchParams.set("application_name", applicationName)
    env = { ...env, DATABASE_URL: url.toString() }
    openLayer = () =>
      PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2, applicationName: "soak_admin" })
  }

  let current: Server | undefined
  let waiters: Array<(s: Server) => void> = []
  const killed = new Set<Server["child"]>()
  let crashes = 0
  let failedStarts = 0
  const crashStderr: Array<string> = []
  let reported = 0
  let kills = 0
  let terminations = 0
  let backendsTerminated = 0
  let drained = false
  let stopped = false
  const opened: Array<Db> = []

  const live = (): Promise<Server> =>
    current !== undefined ? Promise.resolve(current) : new Promise((r) => waiters.push(r))

  interface Life {
    readonly server: Server
    readonly exited: Promise<void>
  }
  let rebooting: Promise<Life> | undefined
  let pacing = true
  let lifeStart = performance.now()
  let lifeSent = 0
  let rate = Infinity
  let unsent = options.records
  let dispatched = 0
  const meanUptime = (minUptime + maxUptime) / 2

  const boot = async (): Promise<Life> => {
    for (let i = 0;; i++) {
      try {
        const server = await start(file, env)
        let tail = ""
        server.child.stderr?.on("data", (chunk: Buffer) => {
          if (options.serverLog !== undefined) appendFileSync(options.serverLog, chunk)
          tail = (tail + chunk.toString("utf8")).slice(-2_000)
        })
        const exited = new Promise<void>((resolve) => {
          server.child.once("exit", (code, signal) => {
            if (!killed.has(server.child)) {
              crashes++
              log(`server exited by itself: code ${code} signal ${signal}; stderr: ${tail}`)
              if (crashStderr.length < 3) crashStderr.push(`code ${code} signal ${signal}: ${tail}`)
              if (current === server) current = undefined
              rebooting = boot()
              rebooting.catch(() => undefined)
            }
            resolve()
          })
        })
        lifeStart = performance.now()
        lifeSent = 0
        rate = unsent / ((options.kills - kills + 1) * meanUptime)
        current = server
        for (const w of waiters) w(server)
        waiters = []
        return { server, exited }
      } catch (error) {
        if (i >= 4) throw error
        failedStarts++
        log(`server failed to start: ${String(error)}`)
      }
    }
  }

  const stop = async (server: Server) => {
    if (current === server) current = undefined
    killed.add(server.child)
    await kill(server)
  }

  try {
    let life = await boot()
    const keys: Array<{ key: string; organisation: string }> = []
    for (let o = 0; o < organisations; o++) {
      const created = await uatKey(life.server, `Soak ${o}`)
      keys.push({ key: created.key, organisation: created.organisation.id })
    }
    const open = async () => {
      const db = await openDb(openLayer())
      opened.push(db)
      return db
    }
    const admin = postgres ? await open() : undefined

    const answers: Record<string, number> = {}
    const rejectedStatuses: Record<string, number> = {}
    const final = new Map<Batch, "accepted" | "rejected" | "unanswered">()
    let attempts = 0
    let attemptsUnanswered = 0
    let attemptsRefused = 0
    let inFlight = 0
    const errorBodies = new Set<string>()
    let acceptedOnResend = 0
    const retries: Array<Batch> = []
    let next = 0

    const paced = async (size: number) => {
      while (pacing && lifeSent + size > rate * (performance.now() - lifeStart) + maxBatch) await sleep(10)
      lifeSent += size
      unsent -= size
      dispatched++
    }

    const client = async () => {
      while (!stopped && final.size < batches.length) {
        const batch = retries.shift() ?? (next < batches.length ? batches[next++] : undefined)
        if (batch === undefined) {
          await sleep(20)
          continue
        }
        if (batch.attempts === 0) await paced(batch.references.length)
        const server = await live()
        batch.attempts++
        attempts++
        const sent = { at: Date.now(), answered: true }
        batch.sent.push(sent)
        inFlight++
        const status = await fetch(`${server.base}/v3/downstream/tradeflows`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: keys[batch.organisation]!.key,
            "idempotency-key": batch.key
          },
          body: batch.body,
          signal: AbortSignal.timeout(30_000)
        }).then(async (res) => {
          const text = await res.text().catch(() => "")
          if (res.status >= 500 && errorBodies.size < 5) errorBodies.add(`${res.status} ${text.slice(0, 300)}`)
          return res.status
        }, (e) => {
          if (process.env["SOAK_DEBUG"]) {
            log(`${batch.key} attempt ${batch.attempts} after ${Date.now() - sent.at} ms: ${String(e.cause ?? e)}`)
          }
          return e?.cause?.code === "ECONNREFUSED" ? "refused" as const : undefined
        }).finally(() => inFlight--)
        if (status === "refused") {
          attemptsRefused++
          attempts--
          batch.sent.pop()
          batch.attempts--
          retries.push(batch)
          await sleep(50)
          continue
        }
        if (process.env["SOAK_DEBUG"] && status !== undefined) {
          log(`${batch.key} attempt ${batch.attempts} after ${Date.now() - sent.at} ms: ${status}`)
        }
        if (status === undefined) {
          sent.answered = false
          attemptsUnanswered++
          if (batch.attempts < maxAttempts) retries.push(batch)
          else final.set(batch, "unanswered")
          continue
        }
        bump(answers, status)
        if (status === 202) {
          final.set(batch, "accepted")
          if (batch.attempts > 1) acceptedOnResend++
        } else if (retryable(status) && batch.attempts < maxAttempts) {
          retries.push(batch)
        } else {
          final.set(batch, "rejected")
          bump(rejectedStatuses, status)
        }
      }
    }

    const terminator = async () => {
      if (admin === undefined) return
      while (!drained) {
        await sleep(between(terminateMin, terminateMax))
        if (drained || current === undefined) continue
        const rows = await admin.run((sql) =>
          sql<{ ok: boolean }>`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE application_name = ${applicationName} AND pid <> pg_backend_pid()`
        ).catch((error) => {
          log(`terminate failed: ${String(error)}`)
          return []
        })
        const n = rows.filter((r) => r.ok).length
        if (n > 0) {
          terminations++
          backendsTerminated += n
        }
      }
    }

    const clients = Promise.all(Array.from({ length: options.clients }, client))
    const terminating = terminator()
    lifeStart = performance.now()
    while (kills < options.kills) {
      if (crashes > 20) throw new Error(`the server crashed ${crashes} times`)
      const uptime = between(minUptime, maxUptime)
      const aim = async () => {
        await sleep(uptime)
        for (let i = 0; i < 200 && inFlight === 0 && final.size < batches.length; i++) await sleep(5)
        await sleep(between(0, 10))
        return false
      }
      const crashed = await Promise.race([aim(), life.exited.then(() => true)])
      if (crashed) {
        life = await rebooting!
        continue
      }
      await stop(life.server)
      kills++
      log(`kill ${kills}/${options.kills}: ${final.size}/${batches.length} batches answered, ${dispatched} sent`)
      life = await boot()
    }
    pacing = false
    await clients
    log(`posting done after ${((performance.now() - started) / 1000).toFixed(1)} s; draining`)

    const db = admin ?? await open()
    const drainStart = performance.now()
    let pending = Number.POSITIVE_INFINITY
    while (performance.now() - drainStart < drainTimeout) {
      if (current === undefined && rebooting !== undefined) life = await rebooting
      const rows = await db.run((sql) =>
        sql<{ n: number | string }>`SELECT count(*) AS n FROM jobs WHERE status = 'pending'`
      )
      pending = Number(rows[0]?.n ?? 0)
      if (pending === 0) break
      await sleep(250)
    }
    drained = true
    await terminating
    const drainSeconds = (performance.now() - drainStart) / 1000
    log(`drained (pending ${pending}) in ${drainSeconds.toFixed(1)} s; verifying`)

    const upstream = new Map<string, Array<string>>()
    for (const { key, organisation } of keys) {
      const hashes: Array<string> = []
      let cursor: string | undefined
      for (;;) {
        const query = `per_page=500${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
        const page = await call(current ?? life.server, "GET", `/v3/upstream?${query}`, undefined, {
          authorization: key
        })
        if (page.status !== 200) throw new Error(`GET /v3/upstream: ${page.status} ${JSON.stringify(page.body)}`)
        for (const m of page.body.data as Array<{ hash: string }>) hashes.push(m.hash)
        if (!page.body.has_more) break
        cursor = page.body.next_cursor
      }
      upstream.set(organisation, hashes)
    }
    await stop(life.server)

    const batchOf = new Map<string, Batch>()
    for (const b of batches) for (const r of b.references) batchOf.set(`${b.organisation}/${r}`, b)
    let duplicates = 0
    let lost = 0
    let landedUnprocessed = 0
    let unexpected = 0
    let rejectedLanded = 0
    let attemptsUnansweredLanded = 0
    let unansweredLanded = 0
    let messages = 0
    let upstreamMessages = 0
    let jobs = 0
    let jobsPending = 0
    let jobsFailed = 0
    const failedErrors = new Set<string>()
    for (const [o, { organisation }] of keys.entries()) {
      const landedKeys = new Set(
        (await db.run((sql) =>
          sql<{ key: string }>`SELECT key FROM idempotency_keys WHERE organisation_id = ${organisation}`
        )).map((r) => r.key)
      )
      const jobRows = await db.run((sql) =>
        sql<{ status: string; payload: string; received_at: number | string; error: string | null }>`SELECT status,
          payload, received_at, error FROM jobs WHERE organisation_id = ${organisation}`
      )
      const messageRows = await db.run((sql) =>
        sql<{ hash: string; type: string; tradeflow_reference: string; body: string }>`SELECT hash, type,
          tradeflow_reference, body FROM messages WHERE organisation_id = ${organisation}`
      )
      const tradeflowRows = await db.run((sql) =>
        sql<{ reference: string }>`SELECT reference FROM tradeflows WHERE organisation_id = ${organisation}`
      )
      jobs += jobRows.length
      messages += messageRows.length
      const inJobs = new Map<string, number>()
      const receivedAt = new Map<string, number>()
      for (const j of jobRows) {
        if (j.status === "pending") jobsPending++
        if (j.status === "dead") {
          jobsFailed++
          if (failedErrors.size < 5) failedErrors.add(String(j.error).slice(0, 400))
        }
        const payload = JSON.parse(j.payload) as { groups?: Array<{ tradeflow_reference: string }> }
        for (const g of payload.groups ?? []) {
          inJobs.set(g.tradeflow_reference, (inJobs.get(g.tradeflow_reference) ?? 0) + 1)
          receivedAt.set(g.tradeflow_reference, Number(j.received_at))
        }
      }
      const created = new Map<string, number>()
      const other = new Map<string, number>()
      const hashes = new Set<string>()
      for (const m of messageRows) {
        if (hashes.has(m.hash)) duplicates++
        hashes.add(m.hash)
        const status = (JSON.parse(m.body) as { payload?: { status?: string } }).payload?.status
        const into = m.type === "BASIC_STATUS" && status === "TRADEFLOW_CREATED" ? created : other
        into.set(m.tradeflow_reference, (into.get(m.tradeflow_reference) ?? 0) + 1)
      }
      const pages = upstream.get(organisation) ?? []
      upstreamMessages += pages.length
      duplicates += pages.length - new Set(pages).size
      if (pages.length !== hashes.size || pages.some((h) => !hashes.has(h))) {
        log(`organisation ${o}: upstream pages (${pages.length}) differ from the messages table (${hashes.size})`)
        unexpected += Math.abs(pages.length - hashes.size) || 1
      }
      const tradeflows = new Map<string, number>()
      for (const t of tradeflowRows) tradeflows.set(t.reference, (tradeflows.get(t.reference) ?? 0) + 1)

      for (const b of batches) {
        if (b.organisation !== o) continue
        const outcome = final.get(b)
        const landed = landedKeys.has(b.key)
        if (landed && outcome === "rejected") rejectedLanded += b.references.length
        if (landed && outcome === "unanswered") unansweredLanded += b.references.length
        const at = receivedAt.get(b.references[0]!)
        const landing = at === undefined ? undefined : b.sent.filter((a) => a.at <= at).at(-1)
        if (landing !== undefined && !landing.answered) attemptsUnansweredLanded++
        for (const r of b.references) {
          const c = created.get(r) ?? 0
          const j = inJobs.get(r) ?? 0
          const t = tradeflows.get(r) ?? 0
          const x = other.get(r) ?? 0
          if (c > 1 || j > 1) duplicates++
          if (!landed) {
            if (c + j + t + x > 0) unexpected++
            if (outcome === "accepted") lost++
            continue
          }
          if (c !== 1 || j !== 1 || t !== 1 || x !== 0) {
            if (outcome === "accepted") lost++
            else landedUnprocessed++
            if (reported++ < 5) {
              log(`reference ${o}/${r} (${outcome}): created ${c}, jobs ${j}, tradeflows ${t}, other ${x}`)
            }
          }
        }
      }
      for (const r of new Set([...created.keys(), ...other.keys(), ...inJobs.keys(), ...tradeflows.keys()])) {
        if (!batchOf.has(`${o}/${r}`)) unexpected++
      }
    }

    const count = (outcome: "accepted" | "rejected" | "unanswered") =>
      batches.reduce((n, b) => n + (final.get(b) === outcome ? b.references.length : 0), 0)
    const summary = {
      backend: options.backend,
      seed,
      records: options.records,
      batches: batches.length,
      clients: options.clients,
      organisations,
      accepted: count("accepted"),
      accepted_on_resend: acceptedOnResend,
      rejected: count("rejected"),
      rejected_statuses: rejectedStatuses,
      rejected_landed: rejectedLanded,
      unanswered: count("unanswered"),
      unanswered_landed: unansweredLanded,
      attempts,
      attempts_unanswered: attemptsUnanswered,
      attempts_unanswered_landed: attemptsUnansweredLanded,
      attempts_refused: attemptsRefused,
      answers,
      error_answers: [...errorBodies],
      kills,
      crashes,
      failed_starts: failedStarts,
      terminations,
      backends_terminated: backendsTerminated,
      jobs,
      jobs_pending: jobsPending,
      jobs_failed: jobsFailed,
      failed_job_errors: [...failedErrors],
      messages,
      upstream_messages: upstreamMessages,
      duplicates,
      lost,
      landed_unprocessed: landedUnprocessed,
      unexpected,
      crash_stderr: crashStderr,
      drain_seconds: Math.round(drainSeconds * 10) / 10,
      seconds: Math.round((performance.now() - started) / 100) / 10
    }
    return {
      ...summary,
      ok: duplicates === 0 && lost === 0 && landedUnprocessed === 0 && unexpected === 0 && jobsPending === 0 &&
        jobsFailed === 0 && pending === 0
    }
  } finally {
    drained = true
    stopped = true
    if (current !== undefined) await stop(current)
    const late = await rebooting?.catch(() => undefined)
    if (late !== undefined) await stop(late.server)
    for (const db of opened) await db.close().catch(() => undefined)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  }
}
