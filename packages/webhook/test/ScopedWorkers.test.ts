import { assert, it } from "@effect/vitest"
import {
  AutomationAdmin,
  Ingest,
  JobQueue,
  Locations,
  OrganisationStore,
  SecretsAtRest,
  Service,
  Storage,
  TrackingConfig
} from "@tradeflow/core"
import { Duration, Effect, Exit, Fiber, FiberId, Layer, Option, Scope, Supervisor } from "effect"
import { DeliveryWorker, Ssrf, WebhookClient } from "../src/index.js"
import * as LocalReceiver from "./LocalReceiver.js"

const org = "org-host"
const pollInterval = Duration.millis(20)

/** What a host keeps beyond the workers: the storage (in memory), locations and tracking settings. */
const hostPorts = Layer.mergeAll(
  SecretsAtRest.layer(Option.none()).pipe(Layer.provideMerge(Storage.layerMemory)),
  Locations.layerBuiltin,
  TrackingConfig.layer()
)

/** The job worker, the scheduler, retention and the delivery worker, all in the background and polling often. */
const workers = Layer.merge(
  Service.layer({ pollInterval, leaseMillis: 1_000 }, { interval: pollInterval }, { interval: pollInterval }),
  DeliveryWorker.layer({ pollInterval }).pipe(
    Layer.provide(WebhookClient.layer({ allowPrivate: true })),
    Layer.provide(Ssrf.layer({ allowPrivate: true, allowHttp: true }))
  )
)

const submit = (reference: string) =>
  Effect.flatMap(Ingest.Ingest, (ingest) =>
    ingest.submit({
      organisation_id: org,
      environment: "uat",
      form: "any",
      body: [{
        tradeflow_reference: reference,
        container_reference: "CSQU3054383",
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA",
        actual_time_of_departure: new Date(Date.now() - 10 * 3_600_000).toISOString(),
        estimated_time_of_arrival: new Date(Date.now() + 20 * 86_400_000).toISOString(),
        mock_tracking: { scenario: "ocean_basic" }
      }]
    }))

const pending = Effect.flatMap(JobQueue.JobQueue, (queue) => queue.pending(100))

/** Waits until `check` holds. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (yield* check) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail("condition not reached")
  })

it.scopedLive("the workers, the scheduler and the delivery worker stop with the host's scope: no fiber of theirs outlives it, no work follows", () =>
  Effect.gen(function*() {
    const receiver = yield* LocalReceiver.make(() => ({ status: 204 }))
    const ports = yield* Layer.build(hostPorts)
    yield* Effect.flatMap(
      OrganisationStore.OrganisationStore,
      (s) =>
        s.insert({
          id: org,
          name: "Host (UAT)",
          environment: "uat",
          live_organisation_id: null,
          created_at: Date.now()
        })
    ).pipe(
      Effect.provide(ports)
    )

    const tracker = yield* Supervisor.track
    const hostScope = yield* Scope.make()
    const services = yield* Layer.buildWithScope(workers, hostScope).pipe(
      Effect.provide(ports),
      Effect.supervised(tracker)
    )
    const inHost = <A, E>(
      effect: Effect.Effect<A, E, Layer.Layer.Success<typeof workers> | Layer.Layer.Success<typeof hostPorts>>
    ) => effect.pipe(Effect.provide(services), Effect.provide(ports))

    yield* inHost(
      Effect.flatMap(
        AutomationAdmin.AutomationAdmin,
        (a) => a.create(org, { enabled: true, url: receiver.url("/hook") })
      )
    )
    yield* inHost(submit("TF-BEFORE"))
    yield* eventually(inHost(Effect.map(pending, (jobs) => jobs.length === 0)))
    yield* eventually(Effect.sync(() => receiver.received.length > 0))

    const started = yield* tracker.value
    assert.isAtLeast(started.length, 5, "worker (2), scheduler, retention and delivery worker (2) fibers run")

    yield* Scope.close(hostScope, Exit.void)
    yield* Effect.sleep("50 millis")
    assert.deepStrictEqual((yield* tracker.value).map((fiber) => FiberId.threadName(fiber.id())), [])
    for (const fiber of started) {
      assert.isTrue(Option.isSome(yield* Fiber.poll(fiber)), "a fiber started by the layers is done")
    }

    yield* Effect.flatMap(JobQueue.JobQueue, (queue) =>
      queue.enqueue({
        organisation_id: org,
        environment: "uat",
        payload: { _tag: "Delete", reference: "TF-BEFORE", hard: false },
        received_at: Date.now()
      })).pipe(Effect.provide(ports))
    yield* Effect.sleep(Duration.times(pollInterval, 15))
    assert.strictEqual(
      (yield* pending.pipe(Effect.provide(ports))).length,
      1,
      "a job queued after the close stays pending"
    )
  }))
