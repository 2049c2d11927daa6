/**
 * The short kill test (issue 6): the soak of `bench/kill-soak/Soak.ts` with 1,500 records, 8
 * clients and 4 SIGKILLs, on SQLite and on PostgreSQL (there with `pg_terminate_backend` rounds
 * too); every record answered 202 is processed exactly once and nothing else appears. The long
 * version is `tsx --conditions=@tradeflow/source bench/kill-soak/run.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { runSoak, type SoakOptions } from "../../../bench/kill-soak/Soak.js"

const short = (backend: SoakOptions["backend"]) =>
  runSoak({ backend, records: 1_500, kills: 4, clients: 8, terminateMinMillis: 200, terminateMaxMillis: 1_000 })

const exactlyOnce = (summary: Awaited<ReturnType<typeof runSoak>>) => {
  expect({
    lost: summary.lost,
    duplicates: summary.duplicates,
    unexpected: summary.unexpected,
    landed_unprocessed: summary.landed_unprocessed,
    jobs_pending: summary.jobs_pending,
    jobs_failed: summary.jobs_failed,
    crashes: summary.crashes
  }, JSON.stringify(summary)).toEqual({
    lost: 0,
    duplicates: 0,
    unexpected: 0,
    landed_unprocessed: 0,
    jobs_pending: 0,
    jobs_failed: 0,
    crashes: 0
  })
  expect(summary.ok).toBe(true)
  expect(summary.kills).toBe(4)
  expect(summary.accepted).toBeGreaterThan(0)
  expect(summary.messages).toBe(summary.accepted + summary.rejected_landed + summary.unanswered_landed)
  expect(summary.upstream_messages).toBe(summary.messages)
}

describe("kill test", () => {
  it("SQLite: records posted while the server is SIGKILLed 4 times are processed exactly once", async () => {
    exactlyOnce(await short("sqlite"))
  }, 120_000)

  it("PostgreSQL: the same, with its backends also ended by pg_terminate_backend", async () => {
    const summary = await short("postgres")
    exactlyOnce(summary)
    expect(summary.terminations).toBeGreaterThanOrEqual(1)
  }, 120_000)
})
