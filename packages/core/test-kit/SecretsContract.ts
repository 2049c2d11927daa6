/**
 * The contract of secrets at rest (`SecretsAtRest.layer`) over a storage adapter that keeps its
 * data across starts: what the database holds, read directly, never contains a secret in
 * plaintext once a key is configured, and a start with another key, or none, stops. A tracking
 * subscription's secret is kept encrypted, bound to its subscription, and read back in plaintext.
 *
 * @module
 */
import { expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, type Scope } from "effect"
import { AutomationStore } from "../src/AutomationStore.js"
import { settingName } from "../src/Cursor.js"
import { randomToken } from "../src/internal/crypto.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import * as SecretsAtRest from "../src/SecretsAtRest.js"
import { Settings } from "../src/Settings.js"
import type { Storage } from "../src/Storage.js"
import { StorageError } from "../src/StorageError.js"
import { TrackingStore } from "../src/TrackingStore.js"
import { freshId, makeAutomation } from "./StorageContract.js"
import { makeSubscription } from "./TrackingContract.js"

/** A random 32-byte key. */
export const makeSecretsKey = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(32))

/** Runs `program` in one start of a process over `storage`, with secrets at rest under `key`. */
const starting =
  <R>(storage: Layer.Layer<Storage | R, unknown>) =>
  <A, E>(key: Option.Option<Uint8Array>, program: Effect.Effect<A, E, Storage | R>) =>
    program.pipe(Effect.provide(Layer.provideMerge(SecretsAtRest.layer(key), storage)))

/**
 * Registers the tests. `open` makes a fresh database and answers the storage layer over it (each
 * build of it is one start of a process); `storedText` reads, from the database directly, every
 * text stored for automations and settings. The stored subscriptions are read through the
 * adapter's own `TrackingStore` (the storage layer under no decorator), which answers their rows as
 * they are.
 */
export const secretsContract = <R>(
  name: string,
  open: Effect.Effect<Layer.Layer<Storage | R, unknown>, unknown, Scope.Scope>,
  storedText: Effect.Effect<string, unknown, R>
): void => {
  it.live(
    `secrets at rest: ${name}: encrypted in the database, the key checked at every start`,
    () =>
      Effect.gen(function*() {
        const storage = yield* open
        const start = starting(storage)
        const org = freshId("org")
        const first = makeAutomation(org, {
          secrets: [
            { secret: `whsec_${randomToken(32)}`, expires_at: null },
            { secret: `whsec_${randomToken(32)}`, expires_at: 5_000 }
          ]
        })
        const cursor = randomToken(32)
        const plaintexts = [...first.secrets.map((s) => s.secret), cursor]

        yield* start(
          Option.none(),
          Effect.gen(function*() {
            yield* (yield* OrganisationStore).insert({
              id: org,
              name: "Secret Freight",
              environment: "production",
              live_organisation_id: null,
              created_at: 0
            })
            yield* (yield* AutomationStore).put(first)
            expect(yield* (yield* Settings).getOrCreate(settingName, cursor)).toBe(cursor)
            const text = yield* storedText
            for (const p of plaintexts) expect(text).toContain(p)
          })
        )

        const key = makeSecretsKey()
        const second = makeAutomation(org, { secrets: [{ secret: `whsec_${randomToken(32)}`, expires_at: null }] })
        yield* start(
          Option.some(key),
          Effect.gen(function*() {
            const automations = yield* AutomationStore
            expect(yield* automations.get(first.id)).toEqual(Option.some(first))
            yield* automations.put(second)
            expect(yield* automations.list(org)).toEqual([first, second])
            expect(yield* (yield* Settings).getOrCreate(settingName, "unused")).toBe(cursor)
            const text = yield* storedText
            for (const p of [...plaintexts, second.secrets[0].secret]) expect(text).not.toContain(p)
            expect(text.match(/enc:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+/g)?.length).toBeGreaterThanOrEqual(5)
          })
        )

        const refused = (key: Option.Option<Uint8Array>) =>
          Effect.map(Effect.either(start(key, Effect.void)), (outcome) =>
            Either.isLeft(outcome) && outcome.left instanceof SecretsAtRest.SecretsKeyError
              ? outcome.left.message
              : "started")
        expect(yield* refused(Option.some(makeSecretsKey()))).toMatch(
          /is not the one the stored secrets were encrypted with/
        )
        expect(yield* refused(Option.none())).toMatch(/no key is configured, but the stored secrets are encrypted/)

        yield* start(
          Option.some(key),
          Effect.gen(function*() {
            expect(yield* (yield* AutomationStore).list(org)).toEqual([first, second])
            expect(yield* (yield* Settings).get(settingName)).toEqual(Option.some(cursor))
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    `secrets at rest: ${name}: a tracking subscription's secret encrypted in the database, bound to its subscription, read back in plaintext`,
    () =>
      Effect.gen(function*() {
        const storage = yield* open
        const start = starting(storage)
        /** Runs `f` on what the database holds: the adapter's own store, under no decorator. */
        const raw = <A, E>(f: (tracking: TrackingStore["Type"]) => Effect.Effect<A, E>) =>
          Effect.provide(Effect.flatMap(TrackingStore, f), storage)
        const key = makeSecretsKey()
        const org = freshId("org")
        const first = makeSubscription(org, "TF-1", "target-1", { created_at: -1e15 })
        const second = makeSubscription(org, "TF-1", "target-2", { source: "carrier-b", created_at: -1e15 + 1 })
        const read = Effect.gen(function*() {
          const tracking = yield* TrackingStore
          expect(yield* tracking.subscription(first.source, first.subscription_id)).toEqual(Option.some(first))
          expect(yield* tracking.subscription(second.source, second.subscription_id)).toEqual(Option.some(second))
          expect(
            [...yield* tracking.subscriptionsOf(org, "TF-1")].sort((a, b) => a.created_at - b.created_at)
          ).toEqual([first, second])
          expect((yield* tracking.staleSubscriptions(1_000_000)).filter((s) => s.organisation_id === org))
            .toEqual([first, second])
        })
        yield* start(
          Option.some(key),
          Effect.flatMap(TrackingStore, (tracking) =>
            Effect.zipRight(
              Effect.forEach([first, second], tracking.putSubscription, { discard: true }),
              read
            ))
        )
        const stored = yield* raw((tracking) =>
          Effect.forEach([first, second], (s) =>
            Effect.map(tracking.subscription(s.source, s.subscription_id), Option.getOrThrow))
        )
        for (const [i, s] of [first, second].entries()) {
          expect(stored[i]!.secret).toMatch(/^enc:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/)
          expect(stored[i]!.secret).not.toContain(s.secret)
          expect({ ...stored[i]!, secret: s.secret }).toEqual(s)
        }

        yield* start(Option.some(key), read)
        yield* raw((tracking) =>
          tracking.putSubscription({ ...second, secret: stored[0]!.secret })
        )
        const moved = yield* start(
          Option.some(key),
          Effect.flip(
            Effect.flatMap(TrackingStore, (tracking) => tracking.subscription(second.source, second.subscription_id))
          )
        )
        expect(moved).toBeInstanceOf(StorageError)
        expect(moved.operation).toBe("TrackingStore.subscription")
      }).pipe(Effect.scoped),
    60_000
  )
}
