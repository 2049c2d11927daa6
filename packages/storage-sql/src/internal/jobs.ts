import { SqlClient, type Statement } from "@effect/sql"
import { type Job, JobQueue, Worker } from "@tradeflow/core"
import { Clock, Effect, Either, Option } from "effect"
import {
  chunks,
  claimOf,
  decodeCounts,
  decodeDead,
  decodeFollowers,
  decodeIdempotency,
  decodeIds,
  decodeJobs,
  decodeLeased,
  decodeOutcomes,
  decodeReceived,
  decodeSummaries,
  decodeValues,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"
import { advisoryNamespace, type SqlStorageOptions } from "./options.js"

/**
 * `JobQueue` over the `SqlClient`. On PostgreSQL the enqueues of an organisation are serialised
 * (a transaction-scoped advisory lock, so its job ids become visible in ascending order), claims
 * lock with `FOR UPDATE SKIP LOCKED` and leases run on the database clock; on SQLite (one writer)
 * leases run on the `Clock`.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<JobQueue.JobQueue["Type"], never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { number, pg } = dialectOf(sql)
    const wakeups = options.jobWakeups
    const count = pg ? sql`count(*)::float8` : sql`count(*)`
    const relaxed = options.relaxed ?? ((effect) => effect)
    const jobColumns = sql`${number("id")} AS id, organisation_id, environment, payload, received_at`
    const claimedColumns = sql`${jobColumns}, ${number("payload_bytes")} AS payload_bytes`

    const jobRow = (job: Job.NewJob) => {
      const payload = JSON.stringify(job.payload)
      return {
        organisation_id: job.organisation_id,
        environment: job.environment,
        payload,
        received_at: job.received_at,
        status: "pending",
        kind: job.payload._tag,
        payload_bytes: Buffer.byteLength(payload)
      }
    }

    /**
     * Inserts jobs in one statement, in order: a multi-row INSERT numbers its rows in the order of
     * its VALUES (SQLite's rowid, PostgreSQL's identity), so the ids sorted ascending are theirs in
     * that order.
     */
    const insertJobs = (jobs: ReadonlyArray<Job.NewJob>) =>
      Effect.gen(function*() {
        const ids = (yield* decodeIds(
          yield* sql`INSERT INTO jobs ${sql.insert(jobs.map(jobRow))} RETURNING ${number("id")} AS id`
        )).map((row) => row.id).sort((a, b) => a - b)
        if (ids.length !== jobs.length) {
          return yield* Effect.fail(`INSERT ... RETURNING answered ${ids.length} rows for ${jobs.length} jobs`)
        }
        return ids.map((id) => ({ _tag: "Enqueued" as const, id }))
      })

    /** Claims an idempotency key: undefined when it is new (stored), else the outcome of the earlier request. */
    const claimKey = (job: Job.NewJob, idempotency: Job.Idempotency) =>
      Effect.gen(function*() {
        const claimed =
          yield* sql`INSERT INTO idempotency_keys (organisation_id, key, request_hash, response, created_at)
          VALUES (${job.organisation_id}, ${idempotency.key}, ${idempotency.request_hash}, ${idempotency.response},
            ${job.received_at})
          ON CONFLICT (organisation_id, key) DO NOTHING RETURNING key`
        if (claimed.length > 0) return undefined
        const seen = (yield* decodeIdempotency(
          yield* sql`SELECT request_hash, response FROM idempotency_keys
          WHERE organisation_id = ${job.organisation_id} AND key = ${idempotency.key}`
        ))[0]
        if (seen === undefined) return yield* Effect.fail("idempotency key vanished after a conflict")
        return seen.request_hash === idempotency.request_hash
          ? { _tag: "Replayed" as const, response: seen.response }
          : { _tag: "KeyReused" as const }
      })

    /**
     * The entries in order: each run of entries without an idempotency key in one multi-row INSERT
     * (at most 500 rows a statement), each entry with one after its key is claimed, so a later
     * entry sees the keys of earlier ones and the ids follow the entries.
     */
    const enqueueEntries = (entries: ReadonlyArray<Job.Enqueue>) =>
      Effect.gen(function*() {
        const outcomes: Array<Job.EnqueueOutcome> = []
        let run: Array<Job.NewJob> = []
        const flush = Effect.suspend(() => {
          const jobs = run
          run = []
          return Effect.forEach(chunks(jobs, 500), (part) =>
            Effect.map(insertJobs(part), (done) => {
              outcomes.push(...done)
            }), { discard: true })
        })
        for (const { idempotency, job } of entries) {
          if (idempotency === undefined) {
            run.push(job)
            continue
          }
          yield* flush
          const earlier = yield* claimKey(job, idempotency)
          if (earlier !== undefined) outcomes.push(earlier)
          else outcomes.push(...yield* insertJobs([job]))
        }
        yield* flush
        return outcomes
      })

    /** Serialises the enqueues of these organisations until the transaction ends (PostgreSQL). */
    const lockOrganisations = (organisations: ReadonlyArray<string>) =>
      pg
        ? Effect.forEach(
          organisations,
          (organisation) => sql`SELECT pg_advisory_xact_lock(${advisoryNamespace}, hashtext(${organisation}))`,
          { discard: true }
        )
        : Effect.void

    /** The instant a lease taken now for `leaseMillis` ends, in the column's dialect. */
    const leaseUntil = (now: number, leaseMillis: number) =>
      pg ? sql`now() + ${Math.max(0, leaseMillis)}::float8 * interval '1 millisecond'` : sql`${now + leaseMillis}`

    const claimStatements = (worker: string, limit: number, leaseMillis: number, max: number, now: number) =>
      sql.onDialectOrElse({
        pg: () =>
          Effect.all([
            sql`
            UPDATE jobs SET status = 'dead', leased_by = NULL, lease_until = NULL,
              error = COALESCE(error, ${JobQueue.attemptLimitReached(max)})
            WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND lease_until IS NOT NULL
              AND lease_until <= now() AND attempt >= ${max} FOR UPDATE SKIP LOCKED)
            RETURNING id::float8 AS id, organisation_id, attempt, error`.pipe(Effect.flatMap(decodeDead)),
            // `held` reads the statement's snapshot; the row lock re-checks only the locked row's newest version, so
            // the lease is checked on that row too, or a head leased since the snapshot is claimed a second time.
            limit === 0 ? Effect.succeed([]) : sql`
            WITH RECURSIVE heads AS (
              (SELECT organisation_id, id FROM jobs WHERE status = 'pending' ORDER BY organisation_id, id LIMIT 1)
              UNION ALL
              SELECT following.organisation_id, following.id FROM heads
              CROSS JOIN LATERAL (
                SELECT j.organisation_id, j.id FROM jobs j
                WHERE j.status = 'pending' AND j.organisation_id > heads.organisation_id
                ORDER BY j.organisation_id, j.id LIMIT 1
              ) following
            ), candidates AS (
              SELECT j.id, j.attempt FROM jobs j JOIN heads ON heads.id = j.id
              WHERE j.status = 'pending' AND j.attempt < ${max} AND (j.lease_until IS NULL OR j.lease_until <= now())
                AND NOT EXISTS (SELECT 1 FROM jobs held WHERE held.organisation_id = j.organisation_id
                  AND held.status = 'pending' AND held.lease_until IS NOT NULL AND held.lease_until > now())
              ORDER BY j.id LIMIT ${limit}
              FOR UPDATE OF j SKIP LOCKED
            ), suspect AS (
              SELECT id FROM candidates WHERE attempt > 0 ORDER BY id LIMIT 1
            ), claimable AS (
              SELECT id FROM suspect UNION ALL SELECT id FROM candidates WHERE NOT EXISTS (SELECT 1 FROM suspect)
            )
            UPDATE jobs SET attempt = jobs.attempt + 1, leased_by = ${worker},
              lease_until = ${leaseUntil(now, leaseMillis)}
            FROM claimable WHERE jobs.id = claimable.id
            RETURNING jobs.id::float8 AS id, jobs.attempt`.pipe(Effect.flatMap(decodeLeased))
          ], { concurrency: 1 }),
        orElse: () =>
          relaxed(Effect.all([
            sql`UPDATE jobs INDEXED BY jobs_leased SET status = 'dead', leased_by = NULL, lease_until = NULL,
              error = COALESCE(error, ${JobQueue.attemptLimitReached(max)})
            WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until <= ${now} AND attempt >= ${max}
            RETURNING id, organisation_id, attempt, error`.pipe(Effect.flatMap(decodeDead)),
            limit === 0 ? Effect.succeed([]) : sql`
            UPDATE jobs SET attempt = attempt + 1, leased_by = ${worker}, lease_until = ${now + leaseMillis}
            WHERE id IN (
              WITH candidates AS MATERIALIZED (
                SELECT head.id, head.attempt FROM (
                  SELECT min(id) AS id FROM jobs WHERE status = 'pending' GROUP BY organisation_id
                ) AS heads JOIN jobs AS head ON head.id = heads.id
                WHERE head.attempt < ${max} AND NOT EXISTS (SELECT 1 FROM jobs AS held
                  WHERE held.organisation_id = head.organisation_id AND held.status = 'pending'
                    AND held.lease_until IS NOT NULL AND held.lease_until > ${now})
                ORDER BY heads.id LIMIT ${limit}
              ), suspect AS (SELECT id FROM candidates WHERE attempt > 0 ORDER BY id LIMIT 1)
              SELECT id FROM suspect UNION ALL SELECT id FROM candidates WHERE NOT EXISTS (SELECT 1 FROM suspect))
            RETURNING id, attempt`.pipe(Effect.flatMap(decodeLeased))
          ]))
      })

    /**
     * The claimed jobs, read; a job whose stored row cannot be read (a payload of no known kind)
     * is marked dead at once with why, instead of failing the claim (and every organisation's
     * jobs with it) round after round.
     */
    const readHeads = (leased: ReadonlyArray<{ readonly id: number; readonly attempt: number }>) =>
      Effect.gen(function*() {
        const jobs: Array<Job.Job> = []
        const broken: Array<JobQueue.DeadJob> = []
        if (leased.length === 0) return { jobs, broken }
        const rows = yield* sql`SELECT ${claimedColumns} FROM jobs WHERE ${
          sql.in("id", leased.map((l) => l.id))
        } ORDER BY id`
        for (const row of rows) {
          const decoded = yield* Effect.either(decodeJobs([row]))
          if (Either.isRight(decoded)) {
            jobs.push(...decoded.right)
            continue
          }
          const id = Number(row["id"])
          const error = Worker.failureText(`the stored job cannot be read: ${String(decoded.left)}`)
          yield* sql`UPDATE jobs SET status = 'dead', error = ${error}, leased_by = NULL, lease_until = NULL
            WHERE id = ${id} AND status = 'pending'`
          broken.push({
            id,
            organisation_id: String(row["organisation_id"]),
            attempt: leased.find((l) => l.id === id)?.attempt ?? 0,
            error
          })
        }
        return { jobs, broken }
      })

    const jobsOf = (leased: ReadonlyArray<{ readonly id: number }>) =>
      leased.length === 0 ? Effect.succeed([]) : Effect.flatMap(
        sql`SELECT ${claimedColumns} FROM jobs WHERE ${sql.in("id", leased.map((l) => l.id))} ORDER BY id`,
        decodeJobs
      )

    /**
     * Leases the jobs queued right after `head` (claimed for the first time) to the same worker,
     * without counting an attempt: in queue order, up to the first one claimed before, within
     * `follow`'s count and bytes. On
     * PostgreSQL the rows are locked first (inside the caller's transaction), so every one read is
     * leased; elsewhere only the run of consecutive ones leased is kept and any after a gap released.
     */
    const followersOf = (
      head: Job.Job,
      follow: { readonly jobs: number; readonly bytes: number },
      worker: string,
      until: Statement.Fragment
    ) =>
      Effect.gen(function*() {
        const rows = yield* decodeFollowers(
          yield* sql`SELECT ${number("id")} AS id, attempt, ${number("payload_bytes")} AS payload_bytes FROM jobs
          WHERE organisation_id = ${head.organisation_id} AND status = 'pending' AND id >= ${head.id}
          ORDER BY id LIMIT ${Math.floor(follow.jobs)}${pg ? sql` FOR UPDATE` : sql``}`
        )
        const chosen: Array<number> = []
        let bytes = 0
        for (const [i, row] of rows.entries()) {
          bytes += row.payload_bytes ?? 0
          if (i === 0) continue
          if (row.attempt > 0 || bytes > follow.bytes) break
          chosen.push(row.id)
        }
        if (chosen.length === 0) return []
        const leased = yield* decodeLeased(
          yield* sql`UPDATE jobs SET leased_by = ${worker}, lease_until = ${until}
          WHERE ${sql.in("id", chosen)} AND status = 'pending' AND attempt = 0
          RETURNING ${number("id")} AS id, attempt`
        )
        const got = new Map(leased.map((l) => [l.id, l]))
        const gap = chosen.findIndex((id) => !got.has(id))
        if (gap === -1) return chosen.map((id) => got.get(id)!)
        const released = chosen.slice(gap).filter((id) => got.has(id))
        if (released.length > 0) {
          yield* sql`UPDATE jobs SET lease_until = ${leaseUntil(0, 0)}
            WHERE ${sql.in("id", released)} AND leased_by = ${worker} AND status = 'pending'`
        }
        return chosen.slice(0, gap).map((id) => got.get(id)!)
      })

    return JobQueue.JobQueue.of(JobQueue.withEnqueue({
      enqueueAll: Effect.fn("JobQueue.enqueueAll")(function*(entries: ReadonlyArray<Job.Enqueue>) {
        const organisations = [...new Set(entries.map((e) => e.job.organisation_id))].sort()
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganisations(organisations)
          const outcomes = yield* enqueueEntries(entries)
          if (outcomes.some((o) => o._tag === "Enqueued")) yield* wakeups.notify
          return outcomes
        }))
      }, storageError("JobQueue.enqueueAll")),
      pending: Effect.fn("JobQueue.pending")(function*(limit: number) {
        return yield* decodeJobs(
          yield* sql`SELECT ${jobColumns} FROM jobs
          WHERE status = 'pending' ORDER BY id LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("JobQueue.pending")),
      backlog: Effect.gen(function*() {
        const counts = yield* decodeCounts(
          yield* sql`SELECT ${count} AS n FROM jobs WHERE status = 'pending' GROUP BY organisation_id`
        )
        const oldest = yield* decodeReceived(
          yield* sql`SELECT received_at FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1`
        )
        const organisations = counts.map((row) => row.n)
        return {
          pending: organisations.reduce((sum, n) => sum + n, 0),
          oldest_received_at: oldest[0]?.received_at ?? null,
          organisations
        }
      }).pipe(storageError("JobQueue.backlog"), Effect.withSpan("JobQueue.backlog")),
      claim: Effect.fn("JobQueue.claim")(function*(options: JobQueue.ClaimOptions) {
        const limit = Math.max(0, Math.floor(options.limit))
        const max = JobQueue.attemptLimit(options.maxAttempts)
        const now = yield* Clock.currentTimeMillis
        const claimHeads = Effect.flatMap(
          claimStatements(options.worker, limit, options.leaseMillis, max, now),
          ([dead, leased]) =>
            Effect.map(readHeads(leased), ({ broken, jobs }) => ({
              dead: [...dead, ...broken],
              leased: leased.filter((l) => !broken.some((b) => b.id === l.id)),
              heads: jobs
            }))
        )
        const { dead, heads, leased } = yield* (pg ? sql.withTransaction(claimHeads) : claimHeads)
        const fresh = heads.filter((h) => leased.some((l) => l.id === h.id && l.attempt === 1))
        const follow = options.follow
        const following = follow === undefined || follow.jobs <= 1 || fresh.length === 0
          ? { leased: [], jobs: [] }
          : yield* (pg ? sql.withTransaction : relaxed)(
            Effect.flatMap(
              Effect.forEach(
                fresh,
                (head) => followersOf(head, follow, options.worker, leaseUntil(now, options.leaseMillis))
              ),
              (all) => Effect.map(jobsOf(all.flat()), (jobs) => ({ leased: all.flat(), jobs }))
            )
          ).pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning("JobQueue.claim: the jobs after the oldest stay queued", error), {
                leased: [],
                jobs: []
              })
            )
          )
        const followers = following.leased
        const jobs = followers.length === 0 ? heads : [...heads, ...following.jobs].sort((a, b) => a.id - b.id)
        return claimOf([...leased, ...followers], jobs, dead)
      }, storageError("JobQueue.claim")),
      heartbeat: Effect.fn("JobQueue.heartbeat")(function*(options: {
        readonly worker: string
        readonly jobs: ReadonlyArray<{ readonly id: number; readonly attempt: number }>
        readonly leaseMillis: number
      }) {
        if (options.jobs.length === 0) return
        const until = leaseUntil(yield* Clock.currentTimeMillis, options.leaseMillis)
        for (const part of chunks(options.jobs, 500)) {
          yield* sql`UPDATE jobs SET lease_until = ${until}
            WHERE status = 'pending' AND leased_by = ${options.worker}
              AND (${sql.or(part.map((j) => sql`(id = ${j.id} AND attempt = ${j.attempt})`))})`
        }
      }, storageError("JobQueue.heartbeat")),
      outcome: Effect.fn("JobQueue.outcome")(function*(id: number) {
        const row = (yield* decodeOutcomes(yield* sql`SELECT status, result, error FROM jobs WHERE id = ${id}`))[0]
        if (row === undefined || row.status === "pending") return Option.none<JobQueue.JobOutcome>()
        if (row.status === "dead") return Option.some<JobQueue.JobOutcome>({ _tag: "Failed", error: row.error ?? "" })
        if (row.result === null) return yield* Effect.fail(`job ${id} is done without a result`)
        return Option.some<JobQueue.JobOutcome>({ _tag: "Done", result: row.result })
      }, storageError("JobQueue.outcome")),
      fail: Effect.fn("JobQueue.fail")(function*(id: number, error: string, attempt?: number) {
        const fenced = attempt === undefined ? sql`` : sql` AND attempt = ${attempt}`
        const rows = yield* sql`UPDATE jobs SET status = 'dead', error = ${error}, leased_by = NULL, lease_until = NULL
          WHERE id = ${id} AND status = 'pending'${fenced} RETURNING id`
        return rows.length > 0
      }, storageError("JobQueue.fail")),
      recordFailure: Effect.fn("JobQueue.recordFailure")(function*(id: number, attempt: number, error: string) {
        const rows = yield* sql`UPDATE jobs SET error = ${error}
          WHERE id = ${id} AND status = 'pending' AND attempt = ${attempt} RETURNING id`
        return rows.length > 0
      }, storageError("JobQueue.recordFailure")),
      list: Effect.fn("JobQueue.list")(function*(options: {
        readonly organisation_id: string
        readonly state: JobQueue.JobState
        readonly limit: number
      }) {
        return yield* decodeSummaries(
          yield* sql`SELECT ${number("id")} AS id, organisation_id, environment, kind,
            ${number("payload_bytes")} AS payload_bytes, received_at, attempt, error
          FROM jobs WHERE organisation_id = ${options.organisation_id} AND status = ${options.state}
          ORDER BY id LIMIT ${Math.max(0, Math.floor(options.limit))}`
        )
      }, storageError("JobQueue.list")),
      retry: Effect.fn("JobQueue.retry")(function*(id: number) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const organisation = (yield* decodeValues(
            yield* sql`SELECT organisation_id AS value FROM jobs WHERE id = ${id}`
          ))[0]?.value
          if (organisation === undefined) return "not-found" as const
          if (pg) {
            yield* sql`SELECT id FROM jobs WHERE organisation_id = ${organisation} AND status = 'pending'
              ORDER BY id FOR UPDATE`
          }
          const rows = yield* sql`UPDATE jobs SET status = 'pending', attempt = 0, error = NULL, leased_by = NULL,
              lease_until = NULL
            WHERE id = ${id} AND status = 'dead' RETURNING id`
          if (rows.length === 0) return "not-dead" as const
          yield* wakeups.notify
          return "retried" as const
        }))
      }, storageError("JobQueue.retry")),
      organisationOf: Effect.fn("JobQueue.organisationOf")(function*(id: number) {
        const rows = yield* decodeValues(yield* sql`SELECT organisation_id AS value FROM jobs WHERE id = ${id}`)
        return Option.fromNullable(rows[0]?.value)
      }, storageError("JobQueue.organisationOf")),
      wakeups: wakeups.stream
    }))
  })
