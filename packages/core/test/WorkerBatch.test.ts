import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, FastCheck as fc, Layer, Random } from "effect"
import type { JobPayload } from "../src/Job.js"
import { JobQueue } from "../src/JobQueue.js"
import { MessageStore } from "../src/MessageStore.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import * as Worker from "../src/Worker.js"
import { groups, layer, org, recordArb } from "./ProcessorKit.js"

const payloadArb: fc.Arbitrary<JobPayload> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(recordArb, { minLength: 1, maxLength: 3 }).map((records) => ({
      _tag: "Upsert" as const,
      groups: groups(records)
    }))
  },
  {
    weight: 1,
    arbitrary: fc.record({
      reference: fc.constantFrom("R1", "R2", "R3", null),
      hard: fc.boolean()
    }).map(({ hard, reference }) => ({ _tag: "Delete" as const, reference, hard }))
  }
)

/** Queues the payloads on a fresh memory storage, drains a worker over it; answers what it left. */
const processAll = (payloads: ReadonlyArray<JobPayload>, options: Worker.WorkerOptions) =>
  Effect.gen(function*() {
    const ports = yield* Layer.build(layer())
    const queue = Context.get(ports, JobQueue)
    const ids: Array<number> = []
    for (const payload of payloads) {
      const outcome = yield* queue.enqueue({ organisation_id: org, environment: "uat", payload, received_at: 1_000 })
      if (outcome._tag === "Enqueued") ids.push(outcome.id)
    }
    const worker = Context.get(
      yield* Layer.build(
        Worker.layer({ background: false, ...options }).pipe(Layer.provide(Layer.succeedContext(ports)))
      ),
      Worker.Worker
    )
    yield* worker.drain
    return {
      outcomes: yield* Effect.forEach(ids, (id) => queue.outcome(id)),
      tradeflows: yield* Context.get(ports, TradeflowStore).list(org),
      messages: (yield* Context.get(ports, MessageStore).list({ organisation_id: org, take: "oldest", limit: 100_000 }))
        .map((m) => [m.seq, m.type, m.tradeflow_reference, m.body])
    }
  })

describe("Worker, several jobs per commit", () => {
  it.scoped.prop("leaves the same tradeflows, messages and job results as one job per commit", [
    fc.array(payloadArb, { minLength: 1, maxLength: 12 }),
    fc.integer({ min: 2, max: 8 }),
    fc.integer({ min: 1, max: 3 }),
    fc.constantFrom(0, 2_000, 16 * 1024 * 1024),
    fc.integer()
  ], ([payloads, jobsPerCommit, commitsPerClaim, renderedPerCommit, seed]) =>
    Effect.gen(function*() {
      const alone = yield* Effect.withRandom(
        processAll(payloads, { jobsPerCommit: 1, commitsPerClaim: 1 }),
        Random.make(seed)
      )
      const together = yield* Effect.withRandom(
        processAll(payloads, { jobsPerCommit, commitsPerClaim, renderedPerCommit }),
        Random.make(seed)
      )
      assert.deepStrictEqual(together, alone)
      assert.isTrue(alone.outcomes.every((o) => o._tag === "Some" && o.value._tag === "Done"))
    }), { fastCheck: { numRuns: 40 } })
})
