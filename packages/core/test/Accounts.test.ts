import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as OrganisationStore from "../src/OrganisationStore.js"
import * as Storage from "../src/Storage.js"

const TestLayer = Accounts.layer.pipe(Layer.provideMerge(Storage.layerMemory))

layer(TestLayer)("Accounts", (it) => {
  it.effect("the first key of an organisation creates its companion UAT organisation, once", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const acme = yield* accounts.createOrganisation("Acme Freight")
      assert.strictEqual(acme.environment, "production")
      const prod = yield* accounts.createApiKey(acme.id, "production")
      assert.match(prod.key, /^prod_[A-Za-z0-9_-]{43}$/)
      assert.deepStrictEqual(prod.organisation, { id: acme.id, name: "Acme Freight" })
      const uat = yield* accounts.createApiKey(acme.id, "uat")
      assert.match(uat.key, /^uat_[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(uat.organisation.name, "Acme Freight (UAT)")
      const uat2 = yield* accounts.createApiKey(acme.id, "uat")
      assert.strictEqual(uat2.organisation.id, uat.organisation.id)
      const all = yield* accounts.listOrganisations
      const companions = all.filter((o) => o.live_organisation_id === acme.id)
      assert.strictEqual(companions.length, 1)
      assert.strictEqual(companions[0]!.environment, "uat")
      assert.notStrictEqual(prod.key, uat.key)
    }))

  it.effect("a UAT key on the companion's own id works; a production key there is refused", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const org = yield* accounts.createOrganisation("Beta")
      const uat = yield* accounts.createApiKey(org.id, "uat")
      const again = yield* accounts.createApiKey(uat.organisation.id, "uat")
      assert.strictEqual(again.organisation.id, uat.organisation.id)
      const refused = yield* accounts.createApiKey(uat.organisation.id, "production").pipe(Effect.flip)
      assert.strictEqual(refused._tag, "InvalidOrganisationRequest")
    }))

  it.effect("keys are stored hashed and authenticate to their organisation and environment", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const store = yield* OrganisationStore.OrganisationStore
      const org = yield* accounts.createOrganisation("Gamma")
      const uat = yield* accounts.createApiKey(org.id, "uat")
      const keys = yield* store.listApiKeys([uat.organisation.id])
      assert.strictEqual(keys.length, 1)
      assert.notInclude(JSON.stringify(keys), uat.key)
      assert.match(keys[0]!.key_hash, /^[0-9a-f]{64}$/)
      const caller = yield* accounts.authenticate(uat.key)
      assert.strictEqual(caller.organisation.id, uat.organisation.id)
      assert.strictEqual(caller.environment, "uat")
      const listed = yield* accounts.listApiKeys(org.id)
      assert.deepStrictEqual(listed.map((k) => k.id), [uat.id])
    }))

  it.effect("a key keeps its name and creator; its first use is recorded; a name over 100 characters is refused", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const org = yield* accounts.createOrganisation("Delta")
      yield* TestClock.setTime(Date.UTC(2026, 10, 28, 12))
      const created = yield* accounts.createApiKey(org.id, "production", {
        name: "  ERP <export>  ",
        createdBy: "ana@example.com"
      })
      const before = (yield* accounts.listApiKeys(org.id))[0]!
      assert.deepStrictEqual([before.name, before.created_by, before.last_used_at], [
        "ERP <export>",
        "ana@example.com",
        null
      ])
      yield* TestClock.adjust("90 seconds")
      yield* accounts.authenticate(created.key)
      const after = (yield* accounts.listApiKeys(org.id))[0]!
      assert.strictEqual(after.last_used_at, new Date(Date.UTC(2026, 10, 28, 12, 1, 30)).toISOString())
      const long = yield* accounts.createApiKey(org.id, "production", { name: "x".repeat(101) }).pipe(Effect.flip)
      assert.strictEqual(long._tag, "InvalidOrganisationRequest")
      assert.strictEqual((yield* accounts.listApiKeys(org.id)).length, 1)
    }))

  it.effect("missing, malformed, unknown and revoked keys are refused", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const org = yield* accounts.createOrganisation("Delta")
      const key = yield* accounts.createApiKey(org.id, "production")
      for (const raw of ["", "   ", "nonsense", "prod_unknown", key.key.slice(0, -1)]) {
        const e = yield* accounts.authenticate(raw).pipe(Effect.flip)
        assert.strictEqual(e._tag, "Unauthenticated", raw)
      }
      yield* accounts.revokeApiKey(key.id)
      const revoked = yield* accounts.authenticate(key.key).pipe(Effect.flip)
      assert.strictEqual(revoked._tag, "KeyRevoked")
      const listed = yield* accounts.listApiKeys(org.id)
      assert.isNotNull(listed[0]!.revoked_at)
      const unknown = yield* accounts.revokeApiKey("key_nope").pipe(Effect.flip)
      assert.strictEqual(unknown._tag, "ApiKeyNotFound")
    }))

  it.effect("unknown organisations and empty names are refused", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      assert.strictEqual(
        (yield* accounts.createApiKey("org_nope", "uat").pipe(Effect.flip))._tag,
        "OrganisationNotFound"
      )
      assert.strictEqual((yield* accounts.listApiKeys("org_nope").pipe(Effect.flip))._tag, "OrganisationNotFound")
      assert.strictEqual(
        (yield* accounts.createOrganisation("  ").pipe(Effect.flip))._tag,
        "InvalidOrganisationRequest"
      )
      assert.isTrue(Option.isNone(yield* accounts.organisation("org_nope")))
    }))
})

describe("constant-time comparison", () => {
  it("compares equal and unequal strings of any length", async () => {
    const { constantTimeEqual } = await import("../src/internal/crypto.js")
    assert.isTrue(constantTimeEqual("abc", "abc"))
    assert.isFalse(constantTimeEqual("abc", "abd"))
    assert.isFalse(constantTimeEqual("abc", "abcd"))
    assert.isFalse(constantTimeEqual("", "a"))
  })
})
