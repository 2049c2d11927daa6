import { Migrator, SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { JobQueue, MessageStore, Tradeflow, TradeflowStore } from "@tradeflow/core"
import {
  arbitraryMessage,
  arbitraryTradeflow,
  commitMessages,
  makeMessage,
  makeTradeflow,
  selectMessages,
  storageContract,
  targetsIndexedBefore
} from "@tradeflow/core/test-kit"
import { Config, ConfigProvider, Effect, FastCheck as fc, Layer, Option, Schema } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"
import { migrations, migrationsTable } from "../src/internal/migrations.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

storageContract("sqlite", SqliteStorage.layer({ filename: join(root, "contract", "storage.sqlite") }))

const ensureParent = (filename: string) => Effect.sync(() => mkdirSync(dirname(filename), { recursive: true }))

const newJob = {
  organisation_id: "org-durable",
  environment: "production" as const,
  payload: { _tag: "Delete" as const, reference: null, hard: true },
  received_at: 1_700_000_000_000
}

describe("SqliteStorage", () => {
  it.effect("creates the parent directory and applies the pragmas", () =>
    Effect.gen(function*() {
      const filename = join(root, "nested", "deeper", "db.sqlite")
      const pragmas = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const one = <A extends object>(query: string) => Effect.map(sql.unsafe<A>(query), (rows) => rows[0])
        return {
          journal: yield* one<{ journal_mode: string }>("PRAGMA journal_mode"),
          synchronous: yield* one<{ synchronous: number }>("PRAGMA synchronous"),
          foreignKeys: yield* one<{ foreign_keys: number }>("PRAGMA foreign_keys"),
          busy: yield* one<{ timeout: number }>("PRAGMA busy_timeout"),
          tempStore: yield* one<{ temp_store: number }>("PRAGMA temp_store"),
          migrations: yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM tradeflow_migrations`
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(existsSync(filename)).toBe(true)
      expect(pragmas).toEqual({
        journal: { journal_mode: "wal" },
        synchronous: { synchronous: 2 },
        foreignKeys: { foreign_keys: 1 },
        busy: { timeout: 5000 },
        tempStore: { temp_store: 2 },
        migrations: [
          { migration_id: 1 },
          { migration_id: 2 },
          { migration_id: 3 },
          { migration_id: 4 },
          { migration_id: 5 },
          { migration_id: 6 },
          { migration_id: 7 },
          { migration_id: 8 },
          { migration_id: 9 },
          { migration_id: 10 },
          { migration_id: 11 },
          { migration_id: 12 },
          { migration_id: 13 },
          { migration_id: 14 },
          { migration_id: 15 },
          { migration_id: 16 },
          { migration_id: 17 },
          { migration_id: 18 },
          { migration_id: 19 },
          { migration_id: 20 },
          { migration_id: 21 }
        ]
      })
      const normal = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe<{ synchronous: number }>("PRAGMA synchronous"))
        .pipe(Effect.provide(SqliteStorage.layer({ filename, synchronous: "NORMAL", busyTimeout: "250 millis" })))
      expect(normal).toEqual([{ synchronous: 1 }])
    }))

  it.effect("a job survives closing the database; after a reopen it can be committed", () =>
    Effect.gen(function*() {
      const filename = join(root, "durable", "db.sqlite")
      const first = yield* Effect.flatMap(JobQueue.JobQueue, (q) => q.enqueue(newJob))
        .pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(first._tag).toBe("Enqueued")
      const id = first._tag === "Enqueued" ? first.id : -1

      const reopened = SqliteStorage.layer({ filename })
      const pending = yield* Effect.flatMap(JobQueue.JobQueue, (q) => q.pending(10)).pipe(Effect.provide(reopened))
      expect(pending).toEqual([{ id, ...newJob }])

      const committed = yield* Effect.gen(function*() {
        const store = yield* TradeflowStore.TradeflowStore
        return yield* store.commit({
          job_id: id,
          organisation_id: newJob.organisation_id,
          upserts: [],
          deletes: [],
          messages: [{
            hash: "h1",
            type: "BASIC_STATUS",
            tradeflow_reference: "TF-1",
            container_reference: null,
            generated_at: 5,
            body: "{}"
          }],
          result: { count: 0 }
        })
      }).pipe(Effect.provide(reopened))
      expect(committed).toBe(true)

      const after = yield* Effect.gen(function*() {
        const queue = yield* JobQueue.JobQueue
        const messages = yield* MessageStore.MessageStore
        return {
          pending: yield* queue.pending(10),
          outcome: yield* queue.outcome(id),
          log: yield* messages.list({ organisation_id: newJob.organisation_id, take: "oldest", limit: 10 })
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(after).toEqual({
        pending: [],
        outcome: Option.some({ _tag: "Done", result: { count: 0 } }),
        log: [{
          seq: 1,
          hash: "h1",
          type: "BASIC_STATUS",
          tradeflow_reference: "TF-1",
          container_reference: null,
          generated_at: 5,
          body: "{}"
        }]
      })
    }))

  it.effect("a commit that fails midway writes nothing and leaves its job pending", () =>
    Effect.gen(function*() {
      const filename = join(root, "atomic", "db.sqlite")
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* JobQueue.JobQueue
        const store = yield* TradeflowStore.TradeflowStore
        const messages = yield* MessageStore.MessageStore
        const enqueued = yield* queue.enqueue(newJob)
        const id = enqueued._tag === "Enqueued" ? enqueued.id : -1
        yield* sql`CREATE TRIGGER refuse_containers BEFORE INSERT ON tradeflow_containers
        BEGIN SELECT RAISE(ABORT, 'refused'); END`
        const tradeflow = fc.sample(arbitraryTradeflow, { numRuns: 1, seed: 7 })[0]!
        const error = yield* Effect.flip(store.commit({
          job_id: id,
          organisation_id: newJob.organisation_id,
          upserts: [{
            ...tradeflow,
            organisation_id: newJob.organisation_id,
            reference: "TF-1",
            containers: [{ reference: "MSCU1234565" }]
          }],
          deletes: [],
          messages: [{
            hash: "h",
            type: "BASIC_STATUS",
            tradeflow_reference: "TF-1",
            container_reference: null,
            generated_at: 1,
            body: "{}"
          }],
          result: { count: 1 }
        }))
        return {
          error: [error._tag, error.operation],
          pending: (yield* queue.pending(10)).map((j) => j.id),
          outcome: yield* queue.outcome(id),
          tradeflows: yield* store.list(newJob.organisation_id),
          log: yield* messages.list({ organisation_id: newJob.organisation_id, take: "oldest", limit: 10 }),
          id
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(seen).toEqual({
        error: ["StorageError", "TradeflowStore.commit"],
        pending: [seen.id],
        outcome: Option.none(),
        tradeflows: [],
        log: [],
        id: seen.id
      })
    }))

  it.effect("a claimed job whose stored payload cannot be read is dead at once, with why; other organisations' jobs are claimed", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* JobQueue.JobQueue
        const broken = yield* queue.enqueue({ ...newJob, organisation_id: "org-broken" })
        const fine = yield* queue.enqueue({ ...newJob, organisation_id: "org-fine" })
        const brokenId = broken._tag === "Enqueued" ? broken.id : -1
        yield* sql`UPDATE jobs SET payload = '{"_tag":"FromTheFuture"}' WHERE id = ${brokenId}`
        const claim = yield* queue.claim({ worker: "w", limit: 10, leaseMillis: 60_000 })
        return {
          claimed: claim.jobs.map((j) => j.organisation_id),
          dead: claim.dead.map((d) => [d.organisation_id, d.error?.startsWith("the stored job cannot be read")]),
          outcome: Option.map(yield* queue.outcome(brokenId), (o) => o._tag),
          fine: fine._tag
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "unreadable", "db.sqlite") })))
      expect(seen).toEqual({
        claimed: ["org-fine"],
        dead: [["org-broken", true]],
        outcome: Option.some("Failed"),
        fine: "Enqueued"
      })
    }))

  it.effect("enqueueAll is all or nothing: one refused job leaves no job and no idempotency key", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* JobQueue.JobQueue
        yield* sql`CREATE TRIGGER refuse_jobs BEFORE INSERT ON jobs WHEN NEW.organisation_id = 'org-refused'
        BEGIN SELECT RAISE(ABORT, 'refused'); END`
        const keyed = { job: newJob, idempotency: { key: "k", request_hash: "h", response: "{}" } }
        const error = yield* Effect.flip(
          queue.enqueueAll([keyed, { job: { ...newJob, organisation_id: "org-refused" } }])
        )
        const pendingAfterFailure = (yield* queue.pending(10)).length
        const retried = yield* queue.enqueueAll([keyed])
        return { error: [error._tag, error.operation], pendingAfterFailure, retried: retried.map((o) => o._tag) }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "group", "db.sqlite") })))
      expect(seen).toEqual({
        error: ["StorageError", "JobQueue.enqueueAll"],
        pendingAfterFailure: 0,
        retried: ["Enqueued"]
      })
    }))

  it.effect("claims write without fsync, yet the configured synchronous level holds for everything else", () =>
    Effect.gen(function*() {
      const levels = (synchronous: "FULL" | "NORMAL", name: string) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const queue = yield* JobQueue.JobQueue
          const level = Effect.map(sql<{ synchronous: number }>`PRAGMA synchronous`, (rows) => rows[0]?.synchronous)
          const seen: Array<number | undefined> = []
          const claims = yield* Effect.all(
            Array.from({ length: 20 }, (_, i) =>
              i % 2 === 0
                ? Effect.as(
                  Effect.zipRight(
                    queue.enqueue({ ...newJob, organisation_id: `org-${i}` }),
                    Effect.tap(level, (l) => seen.push(l))
                  ),
                  []
                )
                : queue.claim({ worker: `w${i}`, limit: 5, leaseMillis: 60_000 }).pipe(Effect.map((c) => c.jobs))),
            { concurrency: "unbounded" }
          )
          const ids = [
            ...claims.flat(),
            ...yield* queue.claim({ worker: "last", limit: 100, leaseMillis: 60_000 }).pipe(Effect.map((c) => c.jobs))
          ].map((j) => j.id)
          return { seen: [...new Set(seen)], after: yield* level, claimed: new Set(ids).size, claims: ids.length }
        }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "sync", name), synchronous })))
      expect(yield* levels("FULL", "full.sqlite")).toEqual({ seen: [2], after: 2, claimed: 10, claims: 10 })
      expect(yield* levels("NORMAL", "normal.sqlite")).toEqual({ seen: [1], after: 1, claimed: 10, claims: 10 })
    }))

  it.effect("0002 and 0007 upgrade a 0001 database: pending jobs become claimable, stored tradeflows are not due and have their sizes", () =>
    Effect.gen(function*() {
      const filename = join(root, "upgrade", "db.sqlite")
      yield* ensureParent(filename)
      const doc = JSON.parse(
        Schema.encodeSync(Schema.parseJson(Tradeflow.Tradeflow))(
          makeTradeflow("org-old", "TF-old", ["MSCU1234565"])
        )
      ) as Record<string, unknown>
      delete doc["next_position_at"]
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: SqliteMigrator.fromRecord({ "0001_initial": migrations["0001_initial"] }),
          table: migrationsTable
        })
        yield* sql`INSERT INTO jobs (organisation_id, environment, payload, received_at)
          VALUES ('org-old', 'production', ${JSON.stringify(newJob.payload)}, 1)`
        yield* sql`INSERT INTO tradeflows (organisation_id, reference, active, doc)
          VALUES ('org-old', 'TF-old', 1, ${JSON.stringify(doc)})`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))

      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* JobQueue.JobQueue
        const store = yield* TradeflowStore.TradeflowStore
        return {
          migrations: yield* sql<
            { readonly migration_id: number }
          >`SELECT migration_id FROM tradeflow_migrations ORDER BY 1`,
          claimed: (yield* queue.claim({ worker: "w", limit: 10, leaseMillis: 1_000 }).pipe(Effect.map((c) => c.jobs)))
            .map((j) => [j.organisation_id, j.attempt]),
          next: Option.map(yield* store.get("org-old", "TF-old"), (t) => t.next_position_at),
          due: yield* store.due(Number.MAX_SAFE_INTEGER, 10),
          sizes: [...yield* store.sizes("org-old", ["TF-old"])]
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(seen).toEqual({
        migrations: [
          { migration_id: 1 },
          { migration_id: 2 },
          { migration_id: 3 },
          { migration_id: 4 },
          { migration_id: 5 },
          { migration_id: 6 },
          { migration_id: 7 },
          { migration_id: 8 },
          { migration_id: 9 },
          { migration_id: 10 },
          { migration_id: 11 },
          { migration_id: 12 },
          { migration_id: 13 },
          { migration_id: 14 },
          { migration_id: 15 },
          { migration_id: 16 },
          { migration_id: 17 },
          { migration_id: 18 },
          { migration_id: 19 },
          { migration_id: 20 },
          { migration_id: 21 }
        ],
        claimed: [["org-old", 1]],
        next: Option.some(null),
        due: [],
        sizes: [["TF-old", { containers: 1, events: (doc["events"] as ReadonlyArray<unknown>).length }]]
      })
    }))

  it.effect("dead jobs: the upgrade rebuilds the jobs table (failed becomes dead) keeping its ids, rows and indexes", () =>
    Effect.gen(function*() {
      const filename = join(root, "upgrade-dead", "db.sqlite")
      yield* ensureParent(filename)
      const deadJobs = Object.keys(migrations).find((k) => k.endsWith("_dead_jobs"))!
      const payload = JSON.stringify({ _tag: "Delete", reference: "TF-ü", hard: false })
      const ids = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: SqliteMigrator.fromRecord(
            Object.fromEntries(Object.entries(migrations).filter(([k]) => k < deadJobs))
          ),
          table: migrationsTable
        })
        yield* sql`CREATE INDEX jobs_received ON jobs (received_at)`
        const insert = (status: string, error: string | null) =>
          Effect.map(
            sql<
              { readonly id: number }
            >`INSERT INTO jobs (organisation_id, environment, payload, received_at, status, error)
            VALUES ('org-old', 'production', ${payload}, 1, ${status}, ${error}) RETURNING id`,
            (rows) => rows[0]!.id
          )
        const pending = yield* insert("pending", null)
        const failed = yield* insert("failed", "boom")
        yield* insert("done", null)
        const deleted = yield* insert("pending", null)
        yield* sql`DELETE FROM jobs WHERE id = ${deleted}`
        return { pending, failed, deleted }
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))

      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* JobQueue.JobQueue
        return {
          outcome: yield* queue.outcome(ids.failed),
          dead: (yield* queue.list({ organisation_id: "org-old", state: "dead", limit: 10 })).map((
            j
          ) => [j.id, j.kind, j.payload_bytes, j.error]),
          pending: (yield* queue.list({ organisation_id: "org-old", state: "pending", limit: 10 })).map((
            j
          ) => [j.id, j.kind, j.payload_bytes]),
          next: yield* queue.enqueue(newJob),
          indexes: (yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master
            WHERE type = 'index' AND tbl_name = 'jobs' AND sql IS NOT NULL ORDER BY name`).map((r) => r.name),
          refused: yield* Effect.flip(sql`UPDATE jobs SET status = 'failed' WHERE id = ${ids.pending}`).pipe(
            Effect.map((e) => String(e.cause))
          )
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      const bytes = new TextEncoder().encode(payload).length
      expect(seen).toEqual({
        outcome: Option.some({ _tag: "Failed", error: "boom" }),
        dead: [[ids.failed, "Delete", bytes, "boom"]],
        pending: [[ids.pending, "Delete", bytes]],
        next: { _tag: "Enqueued", id: ids.deleted + 1 },
        indexes: [
          "jobs_dead",
          "jobs_finished",
          "jobs_leased",
          "jobs_pending",
          "jobs_pending_organisation",
          "jobs_received"
        ],
        refused: expect.stringContaining("CHECK constraint failed")
      })
    }))

  it.effect("message heads: the upgrade finds the newest message of every key; later commits move them", () =>
    Effect.gen(function*() {
      const filename = join(root, "upgrade-heads", "db.sqlite")
      yield* ensureParent(filename)
      const heads = Object.keys(migrations).find((k) => k.endsWith("_message_heads"))!
      const log = fc.sample(fc.array(arbitraryMessage, { minLength: 30, maxLength: 30 }), { numRuns: 1, seed: 9 })[0]!
        .map((m, i) => ({ ...m, hash: `old-${i}`, seq: i + 1 }))
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: SqliteMigrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([k]) => k < heads))),
          table: migrationsTable
        })
        yield* sql`INSERT INTO messages ${sql.insert(log.map((m) => ({ organisation_id: "org-old", ...m })))}`
        yield* sql`INSERT INTO message_sequences (organisation_id, last_seq) VALUES ('org-old', ${log.length})`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      const later = makeMessage("new", {
        type: log[0]!.type,
        tradeflow_reference: log[0]!.tradeflow_reference,
        container_reference: log[0]!.container_reference
      })
      const latest = { organisation_id: "org-old", latest: true, take: "oldest", limit: 100 } as const
      const [before, after] = yield* Effect.gen(function*() {
        const messages = yield* MessageStore.MessageStore
        const before = yield* messages.list(latest)
        yield* commitMessages("org-old", [later])
        return [before, yield* messages.list(latest)] as const
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(before).toEqual(selectMessages(log, latest))
      expect(after).toEqual(selectMessages([...log, { ...later, seq: log.length + 1 }], latest))
    }))

  it.effect("target references: the upgrade fills them from the query of every target indexed before it", () =>
    Effect.gen(function*() {
      const filename = join(root, "upgrade-target-references", "db.sqlite")
      yield* ensureParent(filename)
      const references = Object.keys(migrations).find((k) => k.endsWith("_tracking_target_references"))!
      const before = targetsIndexedBefore("org-old")
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: SqliteMigrator.fromRecord(
            Object.fromEntries(Object.entries(migrations).filter(([k]) => k < references))
          ),
          table: migrationsTable
        })
        yield* sql`INSERT INTO tracking_targets ${sql.insert(before.rows)}`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      expect(yield* before.answers.pipe(Effect.provide(SqliteStorage.layer({ filename })))).toEqual(before.expected)
    }))

  it.effect("two connections to one file: a job leased through one is not claimable through the other", () =>
    Effect.gen(function*() {
      const filename = join(root, "shared", "db.sqlite")
      const ids = yield* Effect.gen(function*() {
        const queue = yield* JobQueue.JobQueue
        const out: Array<number> = []
        for (let i = 0; i < 10; i++) {
          const e = yield* queue.enqueue({ ...newJob, organisation_id: `org-${i}` })
          if (e._tag === "Enqueued") out.push(e.id)
          yield* queue.enqueue({ ...newJob, organisation_id: `org-${i}` })
        }
        return out
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      const claims = yield* Effect.gen(function*() {
        const a = yield* Layer.build(SqliteStorage.layer({ filename }))
        const b = yield* Layer.build(SqliteStorage.layer({ filename }))
        const claim = (ctx: typeof a, worker: string) =>
          Effect.flatMap(
            JobQueue.JobQueue,
            (q) => q.claim({ worker, limit: 3, leaseMillis: 60_000 }).pipe(Effect.map((c) => c.jobs))
          )
            .pipe(Effect.provide(ctx))
        const got: Array<number> = []
        for (let round = 0; round < 5; round++) {
          const [x, y] = yield* Effect.all([claim(a, "a"), claim(b, "b")], { concurrency: "unbounded" })
          got.push(...x.map((j) => j.id), ...y.map((j) => j.id))
        }
        return got
      }).pipe(Effect.scoped)
      expect([...claims].sort((x, y) => x - y)).toEqual(ids)
    }))

  it.effect("layerConfig reads its options from Config", () =>
    Effect.gen(function*() {
      const filename = join(root, "config", "db.sqlite")
      const layer = SqliteStorage.layerConfig({ filename: Config.string("SQLITE_FILENAME") }).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SQLITE_FILENAME", filename]]))))
      )
      const pending = yield* Effect.flatMap(JobQueue.JobQueue, (q) => q.pending(1)).pipe(Effect.provide(layer))
      expect(pending).toEqual([])
      expect(existsSync(filename)).toBe(true)
    }))

  it.effect("driver errors become StorageError with the operation name", () =>
    Effect.gen(function*() {
      const filename = join(root, "broken", "db.sqlite")
      const error = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DROP TABLE messages`
        const messages = yield* MessageStore.MessageStore
        return yield* Effect.flip(messages.list({ organisation_id: "o", take: "oldest", limit: 1 }))
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(error._tag).toBe("StorageError")
      expect(error.operation).toBe("MessageStore.list")
      const unopenable = yield* Effect.flip(
        Layer.build(SqliteStorage.layer({ filename: join(filename, "not-a-dir", "x.sqlite") }))
      )
        .pipe(Effect.scoped)
      expect(unopenable._tag).toBe("StorageError")
    }))
})
