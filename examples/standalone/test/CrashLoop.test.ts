import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { JobQueue } from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { record, uatKey } from "./Fixtures.js"
import { call, consoleToken, kill, spawnServer, start, tsxArgs } from "./Process.js"

/** The attempt limit the servers of this test run with. */
const maxAttempts = 3

/** The servers' heap limit, and a payload larger than all of it: loading the job exhausts the heap, every time. */
const heapMegabytes = 160
const padBytes = 100_000_000

const consoleAuth = { authorization: `Bearer ${consoleToken}` }

interface Run {
  readonly child: ChildProcess
  readonly base: string
  readonly output: () => string
  readonly exited: Promise<void>
}

/** Starts the server on `file` with a small heap, without waiting for anything; its output is kept. */
const launch = async (file: string): Promise<Run> => {
  const server = await spawnServer(file, {
    WORKER_MAX_ATTEMPTS: String(maxAttempts),
    WORKER_LEASE_MILLIS: "1000",
    WEBHOOK_ENABLED: "false"
  }, [`--max-old-space-size=${heapMegabytes}`, ...tsxArgs])
  const exited = new Promise<void>((resolve) => server.child.once("exit", () => resolve()))
  return { ...server, exited }
}

const jobs = (run: Run, organisationId: string, state: "pending" | "dead") =>
  call(run, "GET", `/console/organisations/${organisationId}/jobs?state=${state}`, undefined, consoleAuth)

/** Resolves once the server answers that both organisations' queues are empty and the poison job is dead. */
const settled = async (run: Run, a: string, b: string, stopped: () => boolean) => {
  while (!stopped()) {
    const answers = await Promise.all([jobs(run, a, "pending"), jobs(run, b, "pending"), jobs(run, a, "dead")]).catch(
      () => undefined
    )
    if (
      answers !== undefined && answers.every((r) => r.status === 200) && answers[0]!.body.length === 0 &&
      answers[1]!.body.length === 0 && answers[2]!.body.length === 1
    ) return
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Writes a job straight into the queue, as the oldest of its organisation's, whose payload no process of this heap can load. */
const insertPoison = (file: string, organisationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly id: number }>`INSERT INTO jobs
        (organisation_id, environment, payload, received_at, status, kind, payload_bytes)
      VALUES (${organisationId}, 'uat', '{"_tag":"Upsert","groups":[],"pad":"' || hex(zeroblob(${padBytes})) || '"}',
        ${Date.now()}, 'pending', 'Upsert', ${2 * padBytes + 30})
      RETURNING id`
    return rows[0]!.id
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: file })), Effect.scoped, Effect.runPromise)

describe("crash loop", () => {
  it(
    "a job that kills its process on every attempt is dead after the attempt limit; the server then serves everyone",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-crash-loop-"))
      const file = join(dir, "tracking.sqlite")
      try {
        const setup = await start(file, { WORKER_ENABLED: "false" })
        const a = await uatKey(setup, "Poisoned Freight")
        const b = await uatKey(setup, "Bystander Freight")
        const poison = await insertPoison(file, a.organisation.id)
        for (const [key, reference] of [[a.key, "A-LATER"], [b.key, "B-ONE"]] as const) {
          const answer = await call(setup, "POST", "/v3/downstream/tradeflows", record(reference), {
            authorization: key
          })
          expect(answer.status).toBe(202)
        }
        await kill(setup)

        const crashed: Array<string> = []
        let survivor: Run | undefined
        for (let i = 0; i <= maxAttempts + 1 && survivor === undefined; i++) {
          const run = await launch(file)
          let stopped = false
          void run.exited.then(() => (stopped = true))
          await Promise.race([run.exited, settled(run, a.organisation.id, b.organisation.id, () => stopped)])
          if (stopped) crashed.push(run.output())
          else survivor = run
        }
        try {
          expect(crashed.length).toBe(maxAttempts)
          for (const output of crashed) {
            expect(output).toContain("heap out of memory")
            expect(output).toContain("Listening on")
          }
          expect(survivor).toBeDefined()
          const server = survivor!
          expect((await call(server, "GET", "/health")).status).toBe(200)
          const dead = await jobs(server, a.organisation.id, "dead")
          expect(dead.body).toEqual([{
            id: poison,
            environment: "uat",
            kind: "upsert",
            payload_bytes: 2 * padBytes + 30,
            created_at: expect.any(String),
            attempts: maxAttempts,
            last_error: JobQueue.attemptLimitReached(maxAttempts)
          }])
          expect((await jobs(server, b.organisation.id, "dead")).body).toEqual([])
          for (
            const [organisationId, reference] of [[a.organisation.id, "A-LATER"], [b.organisation.id, "B-ONE"]] as const
          ) {
            const download = await call(
              server,
              "GET",
              `/console/organisations/${organisationId}/tradeflows/${reference}/download`,
              undefined,
              consoleAuth
            )
            expect(download.status).toBe(200)
          }
        } finally {
          if (survivor !== undefined) await kill(survivor)
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    240_000
  )
})
