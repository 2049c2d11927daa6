import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { Ingest } from "../src/Ingest.js"
import { JobQueue, withEnqueue } from "../src/JobQueue.js"
import * as Locations from "../src/Locations.js"
import * as Service from "../src/Service.js"
import * as Storage from "../src/Storage.js"
import * as TrackingConfig from "../src/TrackingConfig.js"

/** The size of every `enqueueAll` the services made, in order. */
const commits: Array<number> = []

const counted = Layer.effect(
  JobQueue,
  Effect.map(JobQueue, (queue) =>
    JobQueue.of(withEnqueue({
      ...queue,
      enqueueAll: (entries) =>
        Effect.zipRight(Effect.sync(() => commits.push(entries.length)), queue.enqueueAll(entries))
    })))
).pipe(Layer.provideMerge(Storage.layerMemory))

const layer = Service.layer({ background: false }).pipe(
  Layer.provideMerge(Layer.mergeAll(counted, Locations.layerBuiltin, TrackingConfig.layer()))
)

const record = (reference: string) => ({ tradeflow_reference: reference, booking_reference: `BK-${reference}` })

const submit = (body: unknown) =>
  Effect.flatMap(Ingest, (ingest) => ingest.submit({ organisation_id: "org", environment: "uat", body, form: "any" }))

describe("Ingest group commit", () => {
  it.effect("concurrent posts share commits; each is answered with its own references and queued once", () =>
    Effect.gen(function*() {
      commits.length = 0
      const answers = yield* Effect.all(
        Array.from({ length: 40 }, (_, i) => submit([record(`TF-${i}`)])),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers.map((a) => a.tradeflows[0]?.tradeflow_reference), answers.map((_, i) => `TF-${i}`))
      assert.strictEqual(commits.reduce((a, b) => a + b, 0), 40)
      assert.isBelow(commits.length, 40, `commits: ${commits.join(",")}`)
      const pending = yield* Effect.flatMap(JobQueue, (q) => q.pending(100))
      assert.strictEqual(pending.length, 40)
    }).pipe(Effect.provide(layer)))

  it.effect("an invalid post among concurrent ones is refused alone and queues nothing", () =>
    Effect.gen(function*() {
      const answers = yield* Effect.all(
        [submit([record("A")]), submit([{ tradeflow_reference: "B" }]), submit([record("C")])].map(Effect.either),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers.map((a) => Either.isRight(a) ? "queued" : a.left._tag), [
        "queued",
        "ValidationError",
        "queued"
      ])
      const pending = yield* Effect.flatMap(JobQueue, (q) => q.pending(100))
      assert.deepStrictEqual(
        pending.map((j) => j.payload._tag === "Upsert" ? j.payload.groups.map((g) => g.tradeflow_reference) : []).flat()
          .sort(),
        ["A", "C"]
      )
    }).pipe(Effect.provide(layer)))
})
