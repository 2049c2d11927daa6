import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, FastCheck as fc, Layer, Schedule } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as KeyCache from "../src/internal/keyCache.js"
import * as Locations from "../src/Locations.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import * as Storage from "../src/Storage.js"
import { StorageError } from "../src/StorageError.js"
import * as WidgetSearch from "../src/WidgetSearch.js"
import { keyRevocationContract, openKeyInstance } from "../test-kit/index.js"

keyRevocationContract(
  "memory",
  Effect.map(Layer.build(Storage.layerMemory), (storage) => {
    const shared = Layer.succeedContext(storage)
    return [shared, shared] as const
  })
)

/** The memory store, whose key lookups and revocation reads fail while `outage.down`, counting the reads. */
const faulty = () => {
  const outage = { down: false, startingReads: 0, reads: 0 }
  const fail = <A>(effect: Effect.Effect<A, StorageError>, operation: string) =>
    Effect.suspend(() => outage.down ? Effect.fail(new StorageError({ operation, cause: "down" })) : effect)
  const store = Layer.effect(
    OrganisationStore,
    Effect.map(OrganisationStore, (inner) =>
      OrganisationStore.of({
        ...inner,
        findApiKeyByHash: (hash) => fail(inner.findApiKeyByHash(hash), "findApiKeyByHash"),
        revokedSince: (cursor) =>
          fail(inner.revokedSince(cursor), "revokedSince").pipe(
            Effect.tap(() => void (outage.reads++, outage.startingReads += cursor === null ? 1 : 0))
          )
      }))
  ).pipe(Layer.provideMerge(Storage.layerMemory))
  return { outage, store }
}

describe("authentication cache", () => {
  it.scopedLive(
    "while revocations cannot be read a cached key is refused with the storage error; then served again",
    () =>
      Effect.gen(function*() {
        const { outage, store } = faulty()
        const context = yield* Layer.build(Accounts.layer.pipe(Layer.provideMerge(store)))
        const accounts = Context.get(context, Accounts.Accounts)
        const org = yield* accounts.createOrganisation("Outage")
        const key = yield* accounts.createApiKey(org.id, "production")
        yield* accounts.authenticate(key.key)
        outage.down = true
        const refused = yield* Effect.flip(accounts.authenticate(key.key)).pipe(
          Effect.retry({ schedule: Schedule.spaced("25 millis"), times: 400 })
        )
        assert.strictEqual(refused._tag, "StorageError")
        outage.down = false
        const caller = yield* accounts.authenticate(key.key).pipe(
          Effect.retry({ schedule: Schedule.spaced("25 millis"), times: 400 })
        )
        assert.strictEqual(caller.key_id, key.id)
      }),
    30_000
  )

  it.scopedLive(
    "Accounts and WidgetSearch of one process share one cache and one revocation reader",
    () =>
      Effect.gen(function*() {
        const { outage, store } = faulty()
        const context = yield* Layer.build(
          Layer.mergeAll(Accounts.layer, WidgetSearch.layer).pipe(
            Layer.provide(Locations.layerBuiltin),
            Layer.provide(store)
          )
        )
        const accounts = Context.get(context, Accounts.Accounts)
        const widgets = Context.get(context, WidgetSearch.WidgetSearch)
        const org = yield* accounts.createOrganisation("Shared")
        yield* accounts.authenticate((yield* accounts.createApiKey(org.id, "production")).key)
        yield* widgets.authenticate((yield* widgets.createKey(org.id)).key)
        yield* Effect.sync(() => outage.reads).pipe(
          Effect.repeat({ schedule: Schedule.spaced("25 millis"), until: (reads) => reads >= 4 })
        )
        assert.strictEqual(outage.startingReads, 1)
      }),
    30_000
  )

  it.scopedLive("a process with nothing cached reads the revocations once, at start", () =>
    Effect.gen(function*() {
      const { outage, store } = faulty()
      yield* Layer.build(Accounts.layer.pipe(Layer.provide(store)))
      yield* Effect.sync(() => outage.reads).pipe(
        Effect.repeat({ schedule: Schedule.spaced("25 millis"), until: (reads) => reads >= 1 })
      )
      yield* Effect.sleep("1 second")
      assert.strictEqual(outage.reads, 1)
    }), 30_000)

  it.scopedLive(
    "unknown and revoked keys are never cached: each costs a lookup; known keys cost one",
    () =>
      Effect.gen(function*() {
        const instance = yield* openKeyInstance(Storage.layerMemory)
        const org = yield* instance.accounts.createOrganisation("Lookups")
        const live = yield* instance.accounts.createApiKey(org.id, "production")
        const revoked = yield* instance.accounts.createApiKey(org.id, "production")
        yield* instance.accounts.revokeApiKey(revoked.id)
        const widget = yield* instance.widgets.createKey(org.id)
        yield* instance.widgets.revokeKey(widget.id)
        const cost = <A, E>(effect: Effect.Effect<A, E>) =>
          Effect.gen(function*() {
            const before = instance.lookups()
            for (let i = 0; i < 5; i++) yield* Effect.either(effect)
            return instance.lookups() - before
          })
        assert.strictEqual(yield* cost(instance.accounts.authenticate("prod_unknown")), 5)
        assert.strictEqual(yield* cost(instance.widgets.authenticate("wk_unknown")), 5)
        assert.strictEqual(yield* cost(instance.accounts.authenticate(revoked.key)), 5)
        assert.strictEqual(yield* cost(instance.widgets.authenticate(widget.key)), 5)
        assert.strictEqual(yield* cost(instance.accounts.authenticate(live.key)), 2)
      }),
    30_000
  )

  it.scopedLive(
    "the cache holds at most `capacity` keys, the least recently used going first",
    () =>
      Effect.gen(function*() {
        const cache = yield* KeyCache.make({ ...KeyCache.defaults, capacity: 2 }).pipe(
          Effect.provide(Storage.layerMemory)
        )
        let lookups = 0
        const auth = (hash: string) =>
          cache.authenticate("api", hash, (id: string) => id, Effect.sync(() => (lookups++, `key-${hash}`)))
        yield* auth("a")
        yield* auth("b")
        yield* auth("a")
        yield* auth("c")
        assert.strictEqual(lookups, 3)
        yield* auth("a")
        yield* auth("c")
        assert.strictEqual(lookups, 3)
        yield* auth("b")
        assert.strictEqual(lookups, 4)
      }),
    30_000
  )

  it.live.prop(
    "after any sequence of authentications and revocations, a key is answered exactly when it was never revoked",
    [fc.array(fc.tuple(fc.constantFrom("authenticate", "revoke"), fc.integer({ min: 0, max: 5 })), { maxLength: 30 })],
    ([steps]) =>
      Effect.gen(function*() {
        const instance = yield* openKeyInstance(Storage.layerMemory)
        const org = yield* instance.accounts.createOrganisation("Sequence")
        const keys: Array<{ readonly id: string; readonly key: string; readonly widget: boolean }> = []
        for (let i = 0; i < 3; i++) {
          keys.push({ ...(yield* instance.accounts.createApiKey(org.id, "production")), widget: false })
        }
        for (let i = 0; i < 3; i++) {
          keys.push({ ...(yield* instance.widgets.createKey(org.id)), widget: true })
        }
        const revoked = new Set<number>()
        const authenticate = (i: number) =>
          keys[i]!.widget ? instance.widgets.authenticate(keys[i]!.key) : instance.accounts.authenticate(keys[i]!.key)
        for (const [step, i] of steps) {
          if (step === "revoke") {
            yield* keys[i]!.widget
              ? instance.widgets.revokeKey(keys[i]!.id)
              : instance.accounts.revokeApiKey(keys[i]!.id)
            revoked.add(i)
          }
          for (let j = 0; j < keys.length; j++) {
            const answer = yield* Effect.either(authenticate(j))
            assert.strictEqual(answer._tag === "Right", !revoked.has(j), `key ${j} after ${step} ${i}`)
          }
        }
      }).pipe(Effect.scoped),
    { fastCheck: { numRuns: 40 } }
  )
})
