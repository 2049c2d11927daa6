/**
 * Key revocation across processes: two independent service instances (their own caches and
 * revocation readers) over one shared store. A key both authenticated is served by each from its
 * cache; revoked through the first, it is refused by the first at once and by the second soon
 * after (polled with a generous bound: no timing is asserted on a shared machine).
 *
 * @module
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule, type Scope } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as Locations from "../src/Locations.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import type { Storage } from "../src/Storage.js"
import * as WidgetSearch from "../src/WidgetSearch.js"

/** One "process": its services, and how many key lookups it made in storage. */
export interface KeyInstance {
  readonly accounts: Accounts.Accounts["Type"]
  readonly widgets: WidgetSearch.WidgetSearch["Type"]
  /** Storage lookups of keys and of their organisations so far. */
  readonly lookups: () => number
}

/**
 * Accounts and the widget search, built fresh over `storage` (its own key cache and revocation
 * reader), counting the storage lookups authentication makes.
 */
export const openKeyInstance = <E>(
  storage: Layer.Layer<Storage, E>
): Effect.Effect<KeyInstance, E, Scope.Scope> =>
  Effect.gen(function*() {
    let lookups = 0
    const count = <A, E2>(effect: Effect.Effect<A, E2>) => Effect.zipRight(Effect.sync(() => void lookups++), effect)
    const counted = Layer.effect(
      OrganisationStore,
      Effect.map(OrganisationStore, (inner) =>
        OrganisationStore.of({
          ...inner,
          findApiKeyByHash: (hash) => count(inner.findApiKeyByHash(hash)),
          findWidgetKeyByHash: (hash) => count(inner.findWidgetKeyByHash(hash)),
          get: (id) => count(inner.get(id))
        }))
    )
    const services = Layer.mergeAll(Accounts.layer, WidgetSearch.layer).pipe(
      Layer.provide(Layer.mergeAll(counted, Locations.layerBuiltin)),
      Layer.provide(storage)
    )
    const context = yield* Layer.build(Layer.fresh(services))
    return {
      accounts: Context.get(context, Accounts.Accounts),
      widgets: Context.get(context, WidgetSearch.WidgetSearch),
      lookups: () => lookups
    }
  })

/** Retries `effect` until it fails (about 10 s at most), answering its failure. */
const untilRefused = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, A, R> =>
  Effect.flip(effect).pipe(Effect.retry({ schedule: Schedule.spaced("25 millis"), times: 400 }))

/**
 * Registers the cross-process revocation tests for a store. `twoProcesses` gives two storage
 * layers over one database, each opening its own connection when built.
 */
export const keyRevocationContract = <E>(
  name: string,
  twoProcesses: Effect.Effect<readonly [Layer.Layer<Storage, E>, Layer.Layer<Storage, E>], E, Scope.Scope>
): void => {
  describe(`key revocation across processes: ${name}`, () => {
    it.scopedLive(
      "a key revoked by one process is refused by it at once and by the other soon after",
      () =>
        Effect.gen(function*() {
          const [first, second] = yield* twoProcesses
          const a = yield* openKeyInstance(first)
          const b = yield* openKeyInstance(second)
          const org = yield* a.accounts.createOrganisation("Revocations")
          const api = yield* a.accounts.createApiKey(org.id, "production")
          const widget = yield* a.widgets.createKey(org.id)

          for (const instance of [a, b]) {
            assert.strictEqual((yield* instance.accounts.authenticate(api.key)).key_id, api.id)
            assert.strictEqual((yield* instance.widgets.authenticate(widget.key)).key_id, widget.id)
            const before = instance.lookups()
            assert.strictEqual((yield* instance.accounts.authenticate(api.key)).organisation.id, org.id)
            assert.strictEqual((yield* instance.widgets.authenticate(widget.key)).organisation.id, org.id)
            assert.strictEqual(instance.lookups(), before, "a cached key is answered without a storage lookup")
          }

          yield* a.accounts.revokeApiKey(api.id)
          assert.strictEqual((yield* Effect.flip(a.accounts.authenticate(api.key)))._tag, "KeyRevoked")
          yield* a.widgets.revokeKey(widget.id)
          const widgetHere = yield* Effect.flip(a.widgets.authenticate(widget.key))
          assert.strictEqual(widgetHere._tag === "Unauthenticated" && widgetHere.detail, "the widget key was revoked")

          assert.strictEqual((yield* untilRefused(b.accounts.authenticate(api.key)))._tag, "KeyRevoked")
          const widgetThere = yield* untilRefused(b.widgets.authenticate(widget.key))
          assert.strictEqual(widgetThere._tag === "Unauthenticated" && widgetThere.detail, "the widget key was revoked")
        }),
      30_000
    )

    it.scopedLive("a key created by one process authenticates in the other at once", () =>
      Effect.gen(function*() {
        const [first, second] = yield* twoProcesses
        const a = yield* openKeyInstance(first)
        const b = yield* openKeyInstance(second)
        const org = yield* a.accounts.createOrganisation("Newcomer")
        const api = yield* a.accounts.createApiKey(org.id, "uat")
        const widget = yield* a.widgets.createKey(org.id)
        assert.strictEqual((yield* b.accounts.authenticate(api.key)).environment, "uat")
        assert.strictEqual((yield* b.widgets.authenticate(widget.key)).organisation.id, org.id)
      }), 30_000)
  })
}
