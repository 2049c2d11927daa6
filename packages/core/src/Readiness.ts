/**
 * Service: whether this process is ready for traffic, as `GET /ready` reports it to load balancers
 * and orchestrators. Ready when the storage answers with every migration this build knows (see
 * {@link StorageHealth}) and every background loop the process runs (the job worker, the webhook
 * delivery worker, the tracker, the scheduler, retention) has started and not stopped. A loop
 * that a process does not run (`background: false`, `WORKER_ENABLED=false`) is not expected.
 *
 * @module
 */
import { Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import { type Missing, StorageHealth } from "./StorageHealth.js"

/** What {@link Readiness} reports. */
export interface ReadinessReport {
  readonly ready: boolean
  /** What is missing; empty when ready. */
  readonly missing: ReadonlyArray<Missing>
  /** The background loops running, by name. */
  readonly running: ReadonlyArray<string>
}

/** A background loop registered with {@link Readiness}. */
export interface BackgroundLoop {
  /** Marks the loop running. */
  readonly started: Effect.Effect<void>
  /** Marks the loop ended: the process is no longer ready. */
  readonly stopped: Effect.Effect<void>
}

export class Readiness extends Context.Tag("@tradeflow/core/Readiness")<Readiness, {
  /**
   * Checks the storage (within 2 seconds; one check answers every report asked for within a second
   * of it, so a flood of probes costs the database one query a second) and the background loops.
   */
  readonly report: Effect.Effect<ReadinessReport>
  /** Registers a loop this process is expected to run, not yet started. */
  readonly expect: (name: string) => Effect.Effect<BackgroundLoop>
}>() {}

const storageTimeout = Duration.seconds(2)
const storageCacheTtl = Duration.seconds(1)

/** {@link Readiness} over the storage's {@link StorageHealth}. */
export const layer: Layer.Layer<Readiness, never, StorageHealth> = Layer.effect(
  Readiness,
  Effect.gen(function*() {
    const health = yield* StorageHealth
    const checkStorage = yield* Effect.cachedWithTTL(
      health.check.pipe(
        Effect.timeoutTo({
          duration: storageTimeout,
          onSuccess: (missing) => missing,
          onTimeout: (): ReadonlyArray<Missing> => [
            { component: "database", reason: `no answer within ${Duration.format(storageTimeout)}` }
          ]
        })
      ),
      storageCacheTtl
    )
    const loops = new Map<number, { readonly name: string; state: "starting" | "running" | "stopped" }>()
    let next = 0
    return Readiness.of({
      expect: (name) =>
        Effect.sync(() => {
          const loop = { name, state: "starting" as "starting" | "running" | "stopped" }
          loops.set(next++, loop)
          return {
            started: Effect.sync(() => void (loop.state = "running")),
            stopped: Effect.sync(() => void (loop.state = "stopped"))
          }
        }),
      report: Effect.gen(function*() {
        const storage = yield* checkStorage
        const missing = [...storage]
        const running: Array<string> = []
        for (const loop of loops.values()) {
          if (loop.state === "running") running.push(loop.name)
          else missing.push({ component: loop.name, reason: loop.state === "starting" ? "not started yet" : "stopped" })
        }
        return { ready: missing.length === 0, missing, running }
      })
    })
  })
)

/**
 * Runs `loop` in a fiber of the current scope once `startAfter` has completed, reported as `name`
 * to the {@link Readiness} of the context, if there is one: expected from now on, running once
 * started, stopped when the fiber ends.
 */
export const background = <E, R>(
  name: string,
  startAfter: Effect.Effect<void> | undefined,
  loop: Effect.Effect<unknown, E, R>
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const readiness = yield* Effect.serviceOption(Readiness)
    const registered = Option.isSome(readiness) ? yield* readiness.value.expect(name) : undefined
    yield* (startAfter ?? Effect.void).pipe(
      Effect.zipRight(registered?.started ?? Effect.void),
      Effect.zipRight(loop),
      Effect.ensuring(registered?.stopped ?? Effect.void),
      Effect.forkScoped
    )
  })
