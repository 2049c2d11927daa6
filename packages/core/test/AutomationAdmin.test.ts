import { assert, it, layer } from "@effect/vitest"
import { Duration, Effect, FastCheck as fc, Layer, Option, TestClock } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as AutomationAdmin from "../src/AutomationAdmin.js"
import * as AutomationStore from "../src/AutomationStore.js"
import * as Storage from "../src/Storage.js"

const TestLayer = Layer.mergeAll(AutomationAdmin.layer, Accounts.layer).pipe(Layer.provideMerge(Storage.layerMemory))

const secretBytes = (secret: string): number => atob(secret.slice("whsec_".length)).length

const newOrganisation = Effect.flatMap(Accounts.Accounts, (a) => a.createOrganisation(`org-${Math.random()}`))

layer(TestLayer)("AutomationAdmin", (it) => {
  it.effect("create applies the defaults: disabled, format message, all three types, a 32-byte whsec_ secret", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const store = yield* AutomationStore.AutomationStore
      const org = yield* newOrganisation
      const created = yield* automations.create(org.id, { url: "https://hooks.example.com/in" })
      assert.strictEqual(created.enabled, false)
      assert.strictEqual(created.format, "message")
      assert.deepStrictEqual(created.types, ["SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE"])
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
      assert.strictEqual(secretBytes(created.secret), 32)
      const stored = Option.getOrThrow(yield* store.get(created.id))
      assert.deepStrictEqual(stored.secrets, [{ secret: created.secret, expires_at: null }])
      assert.strictEqual(stored.organisation_id, org.id)
      const other = yield* automations.create(org.id, {
        url: "http://10.0.0.1:8080/x",
        format: "tradeflow",
        types: ["LOCATION_UPDATE"],
        enabled: true
      })
      assert.deepStrictEqual([other.enabled, other.format, other.types], [true, "tradeflow", ["LOCATION_UPDATE"]])
      assert.notStrictEqual(other.secret, created.secret)
    }))

  it.effect("update changes URL, format and types as create checks them, keeping secrets and state", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const store = yield* AutomationStore.AutomationStore
      const org = yield* newOrganisation
      const created = yield* automations.create(org.id, { url: "https://hooks.example.com/in", enabled: true })
      const updated = yield* automations.update(created.id, {
        url: "https://hooks.example.com/v2",
        format: "tradeflow",
        types: ["LOCATION_UPDATE", "LOCATION_UPDATE"]
      })
      assert.deepStrictEqual([updated.url, updated.format, updated.types, updated.enabled], [
        "https://hooks.example.com/v2",
        "tradeflow",
        ["LOCATION_UPDATE"],
        true
      ])
      assert.deepStrictEqual(Option.getOrThrow(yield* store.get(created.id)).secrets, [
        { secret: created.secret, expires_at: null }
      ])
      const refused = yield* automations.update(created.id, { url: "ftp://x", format: "message", types: [] })
        .pipe(Effect.flip)
      assert.deepStrictEqual(
        refused._tag === "InvalidAutomation" ? refused.errors.map((e) => e.path) : [],
        ["/url", "/types"]
      )
      assert.strictEqual((yield* automations.get(created.id)).url, "https://hooks.example.com/v2")
      const missing = yield* automations.update("auto_none", {
        url: "https://x.example",
        format: "message",
        types: ["SHIPMENT_CHANGE"]
      }).pipe(Effect.flip)
      assert.strictEqual(missing._tag, "AutomationNotFound")
    }))

  it.effect("BASIC_STATUS, unknown types, an empty list, a bad format and bad URLs are refused with JSON pointers", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const org = yield* newOrganisation
      const issues = (input: Omit<AutomationAdmin.NewAutomation, "format"> & { readonly format?: string }) =>
        automations.create(org.id, input as AutomationAdmin.NewAutomation).pipe(
          Effect.flip,
          Effect.map((e) => {
            assert.strictEqual(e._tag, "InvalidAutomation")
            return e._tag === "InvalidAutomation" ? e.errors : []
          })
        )
      const basic = yield* issues({ url: "https://h.example/x", types: ["SHIPMENT_CHANGE", "BASIC_STATUS"] })
      assert.deepStrictEqual(basic.map((i) => i.path), ["/types/1"])
      assert.include(basic[0]!.message, "not an integration type")
      assert.deepStrictEqual((yield* issues({ url: "https://h.example/x", types: [] })).map((i) => i.path), ["/types"])
      assert.deepStrictEqual((yield* issues({ url: "https://h.example/x", types: ["NOPE"] })).map((i) => i.path), [
        "/types/0"
      ])
      assert.deepStrictEqual((yield* issues({ url: "https://h.example/x", format: "xml" })).map((i) => i.path), [
        "/format"
      ])
      for (
        const url of [
          "",
          "relative/path",
          "ftp://h.example/x",
          "https://user:pw@h.example/x",
          "https://u@h.example/",
          "javascript:alert(1)"
        ]
      ) {
        assert.deepStrictEqual((yield* issues({ url })).map((i) => i.path), ["/url"], url)
      }
      const all = yield* issues({ url: "nope", format: "x", types: ["BASIC_STATUS"] })
      assert.deepStrictEqual(all.map((i) => i.path), ["/url", "/format", "/types/0"])
      assert.deepStrictEqual(yield* automations.list(org.id), [])
    }))

  it.effect("unknown organisations and automations fail with their not-found errors", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const create = yield* automations.create("org_nope", { url: "https://h.example/x" }).pipe(Effect.flip)
      assert.strictEqual(create._tag, "OrganisationNotFound")
      assert.strictEqual((yield* automations.list("org_nope").pipe(Effect.flip))._tag, "OrganisationNotFound")
      for (
        const op of [
          automations.enable,
          automations.disable,
          automations.remove,
          automations.rotateSecret,
          automations.get
        ]
      ) {
        const e = yield* op("auto_nope").pipe(Effect.flip)
        assert.deepStrictEqual([e._tag, "id" in e ? e.id : undefined], ["AutomationNotFound", "auto_nope"])
      }
    }))

  it.effect("list shows no secret; enable clears disabled_reason and failing_since; disable; remove", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const store = yield* AutomationStore.AutomationStore
      yield* TestClock.setTime(Date.parse("2026-03-01T10:00:00Z"))
      const org = yield* newOrganisation
      const a = yield* automations.create(org.id, { url: "https://a.example/hook" })
      const b = yield* automations.create(org.id, { url: "https://b.example/hook", enabled: true })
      const listed = yield* automations.list(org.id)
      assert.deepStrictEqual(listed.map((x) => [x.id, x.enabled]), [[a.id, false], [b.id, true]])
      assert.notInclude(JSON.stringify(listed), "whsec_")
      assert.strictEqual(listed[0]!.created_at, "2026-03-01T10:00:00.000Z")
      assert.deepStrictEqual([listed[0]!.disabled_reason, listed[0]!.failing_since], [null, null])

      const stored = Option.getOrThrow(yield* store.get(b.id))
      yield* store.put({
        ...stored,
        enabled: false,
        disabled_reason: "failing for 5 days",
        failing_since: Date.parse("2026-02-24T10:00:00Z")
      })
      const shown = yield* automations.get(b.id)
      assert.deepStrictEqual([shown.enabled, shown.disabled_reason, shown.failing_since], [
        false,
        "failing for 5 days",
        "2026-02-24T10:00:00.000Z"
      ])
      const enabled = yield* automations.enable(b.id)
      assert.deepStrictEqual([enabled.enabled, enabled.disabled_reason, enabled.failing_since], [true, null, null])
      const disabled = yield* automations.disable(b.id)
      assert.deepStrictEqual([disabled.enabled, disabled.disabled_reason], [false, null])
      assert.strictEqual(Option.getOrThrow(yield* store.get(b.id)).enabled, false)

      yield* automations.remove(a.id)
      assert.strictEqual((yield* automations.remove(a.id).pipe(Effect.flip))._tag, "AutomationNotFound")
      assert.deepStrictEqual((yield* automations.list(org.id)).map((x) => x.id), [b.id])
    }))

  it.effect("rotateSecret: the previous secret stays valid for 24 hours, expired ones are dropped", () =>
    Effect.gen(function*() {
      const automations = yield* AutomationAdmin.AutomationAdmin
      const store = yield* AutomationStore.AutomationStore
      yield* TestClock.setTime(0)
      const org = yield* newOrganisation
      const created = yield* automations.create(org.id, { url: "https://a.example/hook" })
      const secrets = Effect.map(store.get(created.id), (a) => Option.getOrThrow(a).secrets)
      const day = Duration.toMillis(Duration.hours(24))

      const first = yield* automations.rotateSecret(created.id)
      assert.strictEqual(secretBytes(first.secret), 32)
      assert.deepStrictEqual(yield* secrets, [
        { secret: first.secret, expires_at: null },
        { secret: created.secret, expires_at: day }
      ])

      yield* TestClock.adjust(Duration.hours(23))
      const second = yield* automations.rotateSecret(created.id)
      const hour23 = Duration.toMillis(Duration.hours(23))
      assert.deepStrictEqual(yield* secrets, [
        { secret: second.secret, expires_at: null },
        { secret: first.secret, expires_at: hour23 + day },
        { secret: created.secret, expires_at: day }
      ])

      yield* TestClock.adjust(Duration.hours(1))
      const third = yield* automations.rotateSecret(created.id)
      assert.deepStrictEqual(yield* secrets, [
        { secret: third.secret, expires_at: null },
        { secret: second.secret, expires_at: 2 * day },
        { secret: first.secret, expires_at: hour23 + day }
      ])
      assert.notInclude(JSON.stringify(yield* automations.list(org.id)), "whsec_")
    }))
})

it.effect.prop(
  "validate accepts exactly the non-empty lists of integration types",
  [fc.array(fc.constantFrom("SHIPMENT_CHANGE", "CONTAINER_MILESTONE", "LOCATION_UPDATE", "BASIC_STATUS", "OTHER"), {
    maxLength: 6
  })],
  ([types]) =>
    Effect.gen(function*() {
      const result = yield* Effect.either(AutomationAdmin.validate({ url: "https://h.example/x", types }))
      const valid = types.length > 0 && types.every((t) => AutomationAdmin.integrationTypes.includes(t as never))
      assert.strictEqual(result._tag === "Right", valid)
      if (result._tag === "Right") {
        assert.deepStrictEqual<ReadonlyArray<string>>(result.right.types, [...new Set(types)])
      } else {
        const expected = [
          ...(types.length === 0 ? ["/types"] : []),
          ...types.flatMap((t, i) => AutomationAdmin.integrationTypes.includes(t as never) ? [] : [`/types/${i}`])
        ]
        assert.deepStrictEqual(result.left.errors.map((e) => e.path), expected)
      }
    })
)

it.prop(
  "generated secrets are whsec_ and 32 random bytes, never repeated",
  [fc.integer({ min: 2, max: 20 })],
  ([n]) => {
    const secrets = Array.from({ length: n }, AutomationAdmin.generateSecret)
    assert.strictEqual(new Set(secrets).size, n)
    for (const s of secrets) assert.strictEqual(secretBytes(s), 32)
  }
)
