import { Clock, Context, Deferred, Duration, Effect, type Exit, FiberId, Layer, Option } from "effect"
import { OrganisationStore } from "../OrganisationStore.js"
import type { StorageError } from "../StorageError.js"

/** Which service a cached key belongs to. */
export type KeyKind = "api" | "widget"

/** The tuning of the cache (see docs/behaviour.md, "Authentication and revocation"). */
export interface KeyCacheOptions {
  /** The most authenticated keys held; the least recently used goes first. */
  readonly capacity: number
  /** How often the revocations of other processes are read. */
  readonly checkEvery: Duration.DurationInput
  /**
   * A cached key is answered only while the revocations were read (or the key itself looked up)
   * less than this long ago; past it a request waits for a fresh read, and fails with the
   * storage error when the read fails.
   */
  readonly trustFor: Duration.DurationInput
  /** A cached key is looked up again once its lookup is this old, whatever the revocations say. */
  readonly maxAge: Duration.DurationInput
}

/** The defaults: revocations read every 250 ms and trusted for 750 ms, so within one second. */
export const defaults: KeyCacheOptions = {
  capacity: 10_000,
  checkEvery: Duration.millis(250),
  trustFor: Duration.millis(750),
  maxAge: Duration.minutes(1)
}

interface Entry {
  readonly kind: KeyKind
  readonly keyId: string
  readonly caller: unknown
  /** When the lookup that stored it started (monotonic ms). */
  readonly verifiedAt: number
}

/**
 * The in-process cache of authenticated keys, keyed by the key's SHA-256, shared by `Accounts`
 * and `WidgetSearch` (one revocation reader per process).
 */
export class KeyCache extends Context.Tag("@tradeflow/core/internal/KeyCache")<KeyCache, {
  /**
   * The caller of the key whose hash is `keyHash`: from the cache, or from `lookup` (stored when
   * it succeeds; failures, unknown and revoked keys alike, are never stored).
   */
  readonly authenticate: <A, E>(
    kind: KeyKind,
    keyHash: string,
    keyIdOf: (caller: A) => string,
    lookup: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | StorageError>
  /** Drops the key `keyId` (revoked by this process) at once, and any lookup of it under way. */
  readonly forget: (kind: KeyKind, keyId: string) => Effect.Effect<void>
}>() {}

/**
 * The real clock, whatever the fiber's: the revocation bound is a promise in real time between
 * processes, and a `TestClock` moved by hours must not run thousands of reads.
 */
const realClock = Clock.make()
const nowMillis = () => Number(realClock.unsafeCurrentTimeNanos() / 1_000_000n)

/**
 * The {@link KeyCache} over the {@link OrganisationStore}: a scoped fiber reads
 * `revokedSince` at start, then every `checkEvery` while keys are cached, and drops the keys
 * other processes revoked; it stops with the layer's scope. After an idle spell the next read
 * starts from the last cursor, so it answers everything revoked meanwhile. Until a first read
 * succeeds there is no cursor: that read drops every key looked up before it began.
 */
export const make = (options: KeyCacheOptions = defaults) =>
  Effect.gen(function*() {
    const store = yield* OrganisationStore
    const scope = yield* Effect.scope
    const capacity = Math.max(1, options.capacity)
    const checkEvery = Duration.decode(options.checkEvery)
    const trustFor = Duration.toMillis(options.trustFor)
    const maxAge = Duration.toMillis(options.maxAge)

    const entries = new Map<string, Entry>()
    /** Bumped whenever a key may have been revoked: a lookup under way across a bump is not stored. */
    let epoch = 0
    let cursor: number | null = null
    /** When the last successful read of the revocations started (monotonic ms). */
    let checkedAt = Number.NEGATIVE_INFINITY
    let lastAnswer: ReadonlySet<string> = new Set()
    let inFlight: Deferred.Deferred<void, StorageError> | undefined
    let failing = false

    const read = Effect.gen(function*() {
      const startedAt = nowMillis()
      const answer = yield* store.revokedSince(cursor)
      let revoked = cursor === null
      if (cursor === null) {
        for (const [hash, entry] of entries) if (entry.verifiedAt < startedAt) entries.delete(hash)
      }
      for (const hash of answer.key_hashes) {
        if (entries.delete(hash) || !lastAnswer.has(hash)) revoked = true
      }
      if (revoked) epoch++
      lastAnswer = new Set(answer.key_hashes)
      cursor = answer.cursor
      checkedAt = Math.max(checkedAt, startedAt)
    })

    const settle = (d: Deferred.Deferred<void, StorageError>) => (exit: Exit.Exit<void, StorageError>) =>
      Effect.suspend(() => {
        inFlight = undefined
        if (exit._tag === "Failure" && !failing) {
          failing = true
          return Effect.logWarning(
            "reading key revocations failed; cached keys are refused until it works again",
            exit.cause
          )
            .pipe(Effect.zipRight(Deferred.done(d, exit)))
        }
        if (exit._tag === "Success" && failing) {
          failing = false
          return Effect.logInfo("reading key revocations works again").pipe(Effect.zipRight(Deferred.done(d, exit)))
        }
        return Deferred.done(d, exit)
      })

    /** One read of the revocations at a time: whoever asks while one is under way waits for it. */
    const check: Effect.Effect<void, StorageError> = Effect.suspend(() => {
      if (inFlight !== undefined) return Deferred.await(inFlight)
      const d = Deferred.unsafeMake<void, StorageError>(FiberId.none)
      inFlight = d
      return read.pipe(
        Effect.onExit(settle(d)),
        Effect.forkIn(scope),
        Effect.zipRight(Deferred.await(d))
      )
    })

    /** With nothing cached there is nothing to drop: an idle process reads nothing (its cursor waits). */
    const tick = Effect.suspend(() => entries.size > 0 || cursor === null ? Effect.ignore(check) : Effect.void)

    yield* tick.pipe(
      Effect.zipRight(realClock.sleep(checkEvery)),
      Effect.forever,
      Effect.forkScoped
    )

    const trusted = (entry: Entry, now: number) =>
      now - entry.verifiedAt < maxAge && now - Math.max(entry.verifiedAt, checkedAt) < trustFor

    const remember = (hash: string, entry: Entry) => {
      entries.delete(hash)
      entries.set(hash, entry)
      if (entries.size > capacity) {
        const oldest = entries.keys().next()
        if (oldest.done !== true) entries.delete(oldest.value)
      }
    }

    const cached = (kind: KeyKind, hash: string): Effect.Effect<Option.Option<Entry>, StorageError> =>
      Effect.suspend(() => {
        const entry = entries.get(hash)
        if (entry === undefined || entry.kind !== kind) return Effect.succeed(Option.none())
        const now = nowMillis()
        if (now - entry.verifiedAt >= maxAge) {
          entries.delete(hash)
          return Effect.succeed(Option.none())
        }
        if (trusted(entry, now)) {
          remember(hash, entry)
          return Effect.succeed(Option.some(entry))
        }
        return Effect.map(check, () => {
          const after = entries.get(hash)
          return after === entry && trusted(entry, nowMillis()) ? Option.some(entry) : Option.none()
        })
      })

    return KeyCache.of({
      authenticate: <A, E>(
        kind: KeyKind,
        keyHash: string,
        keyIdOf: (caller: A) => string,
        lookup: Effect.Effect<A, E>
      ): Effect.Effect<A, E | StorageError> =>
        Effect.flatMap(cached(kind, keyHash), (hit) => {
          if (Option.isSome(hit)) return Effect.succeed(hit.value.caller as A)
          const startEpoch = epoch
          const verifiedAt = nowMillis()
          return Effect.tap(lookup, (caller) =>
            Effect.sync(() => {
              if (epoch === startEpoch) remember(keyHash, { kind, keyId: keyIdOf(caller), caller, verifiedAt })
            }))
        }),
      forget: (kind, keyId) =>
        Effect.sync(() => {
          epoch++
          for (const [hash, entry] of entries) if (entry.kind === kind && entry.keyId === keyId) entries.delete(hash)
        })
    })
  })

/**
 * {@link make} with the {@link defaults}, as a layer. `Accounts.layer` and `WidgetSearch.layer`
 * both provide this one value, so built together (as `Service.layer` does) they share one cache
 * and one reader: layers are memoised by reference within a build.
 */
export const layer: Layer.Layer<KeyCache, never, OrganisationStore> = Layer.scoped(KeyCache, make())
