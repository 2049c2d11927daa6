import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option, Schema, TestClock } from "effect"
import { OrganisationNotFound } from "../src/AccountError.js"
import * as Accounts from "../src/Accounts.js"
import { WidgetSearchResult } from "../src/ApiMessage.js"
import { sha256Hex } from "../src/internal/crypto.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import * as WidgetSearch from "../src/WidgetSearch.js"
import { C1, C2, layer, org, post, tradeflow } from "./ProcessorKit.js"

const now0 = Date.UTC(2026, 10, 22, 10)
const other = "org-2"

const TestLayer = Layer.mergeAll(WidgetSearch.layer, Accounts.layer).pipe(Layer.provideMerge(layer()))

const search = (query: string, organisationId = org) =>
  Effect.flatMap(WidgetSearch.WidgetSearch, (w) => w.search(organisationId, query))

const carrierOf = (query: string, organisationId = org) =>
  search(query, organisationId).pipe(
    Effect.map((r) => r.carrier),
    Effect.catchTag("WidgetNoMatch", () => Effect.succeed(null))
  )

const record = {
  tradeflow_reference: "PO-42",
  container_reference: C1,
  bill_of_lading_reference: "MAEU123456789",
  booking_reference: "BK-777",
  carrier_name: "Maersk",
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  mock_tracking: { scenario: "ocean_basic" }
}

describe("WidgetSearch.search", () => {
  it.effect("finds a tradeflow by its reference, bill of lading, booking or container number", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([record])
      const byReference = yield* search("PO-42")
      assert.deepStrictEqual(Schema.decodeUnknownSync(WidgetSearchResult)(byReference), byReference)
      assert.deepStrictEqual(
        [byReference.carrier, byReference.bill_of_lading_reference, byReference.booking_reference],
        ["Maersk", "MAEU123456789", "BK-777"]
      )
      assert.deepStrictEqual(byReference.containers.map((c) => c.reference), [C1])
      assert.strictEqual(byReference.containers[0]?.latest_actual_milestone?.status_code, "AE")
      assert.strictEqual(byReference.departure?.location.unlocode, "NLRTM")
      assert.strictEqual(byReference.arrival?.location.unlocode, "CNSHA")
      for (const query of ["MAEU123456789", "BK-777", C1, ` ${C1} `]) {
        assert.deepStrictEqual(yield* search(query), byReference, query)
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("container numbers, bills of lading and bookings ignore case; tradeflow references do not", () =>
    Effect.gen(function*() {
      yield* post([record])
      assert.strictEqual(yield* carrierOf("csqu 305438-3"), "Maersk")
      assert.strictEqual(yield* carrierOf("maeu123456789"), "Maersk")
      assert.strictEqual(yield* carrierOf("bk-777"), "Maersk")
      assert.strictEqual(yield* carrierOf("po-42"), null)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("no match, a partial match or a blank query is WidgetNoMatch", () =>
    Effect.gen(function*() {
      yield* post([record])
      for (const query of ["PO-4", "MAEU", C2, "", "   "]) {
        const error = yield* Effect.flip(search(query))
        assert.deepStrictEqual(error._tag === "WidgetNoMatch" && error.query, query)
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("another organisation's tradeflow is never found", () =>
    Effect.gen(function*() {
      yield* post([{ ...record, carrier_name: "MSC" }], "uat", other)
      assert.strictEqual(yield* carrierOf("PO-42"), null)
      assert.strictEqual(yield* carrierOf(C1), null)
      yield* post([{ ...record, tradeflow_reference: "PO-OWN", carrier_name: "CMA" }])
      for (const query of ["PO-42", C1, "BK-777", "MAEU123456789"]) {
        assert.strictEqual(yield* carrierOf(query, other), "MSC")
      }
      for (const query of ["PO-OWN", C1, "BK-777"]) {
        assert.strictEqual(yield* carrierOf(query), "CMA")
      }
      assert.strictEqual(yield* carrierOf("PO-42"), null)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("when several tradeflows match, the newest wins, active or not", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{ tradeflow_reference: "A", container_reference: [C1, C2], carrier_name: "Old" }], "production")
      yield* TestClock.adjust("1 hour")
      yield* post(
        [{ tradeflow_reference: "B", container_reference: C1, carrier_name: "New", booking_reference: "A" }],
        "production"
      )
      assert.strictEqual(yield* carrierOf(C1), "New")
      assert.strictEqual(yield* carrierOf("A"), "New")
      assert.strictEqual(yield* carrierOf(C2), "Old")
      yield* TestClock.adjust("1 hour")
      yield* post([{ tradeflow_reference: "A", container_reference: C1, carrier_name: "Old, updated" }], "production")
      assert.strictEqual(yield* carrierOf(C1), "New")
      yield* post([{ tradeflow_reference: "B", container_reference: C1, active: false }], "production")
      assert.isFalse((yield* tradeflow("B")).active)
      assert.strictEqual(yield* carrierOf(C1), "New")
    }).pipe(Effect.provide(TestLayer)))

  it.prop(
    "a container number matches in any case, with spaces and hyphens anywhere",
    [fc.array(fc.tuple(fc.boolean(), fc.constantFrom("", " ", "-")), { minLength: 11, maxLength: 11 })],
    ([shape]) => {
      const query = [...C1].map((ch, i) => (shape[i]![0] ? ch.toLowerCase() : ch) + shape[i]![1]).join("")
      const t = {
        reference: "X",
        containers: [{ reference: C1 }],
        bill_of_lading_references: [],
        booking_references: []
      }
      assert.isTrue(WidgetSearch.matches(t as never, query), query)
    }
  )
})

describe("WidgetSearch keys", () => {
  it.effect("a key reads the organisation it was created for: the live one or its (UAT) companion", () =>
    Effect.gen(function*() {
      const widget = yield* WidgetSearch.WidgetSearch
      const accounts = yield* Accounts.Accounts
      const acme = yield* accounts.createOrganisation("Acme")
      const companion = (yield* accounts.createApiKey(acme.id, "uat")).organisation
      const live = yield* widget.createKey(acme.id)
      const sandbox = yield* widget.createKey(companion.id)
      assert.match(live.key, /^wk_[A-Za-z0-9_-]{43}$/)
      assert.notStrictEqual(live.key, sandbox.key)
      assert.strictEqual((yield* widget.authenticate(live.key)).organisation.id, acme.id)
      assert.strictEqual((yield* widget.authenticate(` ${sandbox.key} `)).organisation.id, companion.id)
      assert.strictEqual((yield* widget.authenticate(live.key)).key_id, live.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("only the hash is stored; unknown, malformed and revoked keys are Unauthenticated", () =>
    Effect.gen(function*() {
      const widget = yield* WidgetSearch.WidgetSearch
      const store = yield* OrganisationStore
      const acme = yield* Effect.flatMap(Accounts.Accounts, (a) => a.createOrganisation("Acme"))
      const created = yield* widget.createKey(acme.id)
      assert.isTrue(Option.isNone(yield* store.findWidgetKeyByHash(created.key)))
      const stored = yield* store.findWidgetKeyByHash(yield* sha256Hex(created.key))
      assert.deepStrictEqual(
        Option.map(stored, (k) => [k.id, k.organisation_id, k.revoked_at]),
        Option.some([created.id, acme.id, null])
      )
      for (const key of ["", "wk_nope", created.key.slice(0, -1), "prod_x"]) {
        assert.strictEqual((yield* Effect.flip(widget.authenticate(key)))._tag, "Unauthenticated", key)
      }
      yield* widget.revokeKey(created.id)
      yield* widget.revokeKey(created.id)
      const revoked = yield* Effect.flip(widget.authenticate(created.key))
      assert.strictEqual(revoked._tag === "Unauthenticated" && revoked.detail, "the widget key was revoked")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an unknown organisation or key id is an error", () =>
    Effect.gen(function*() {
      const widget = yield* WidgetSearch.WidgetSearch
      const noOrganisation = yield* Effect.flip(widget.createKey("org_missing"))
      assert.instanceOf(noOrganisation, OrganisationNotFound)
      assert.strictEqual(noOrganisation.id, "org_missing")
      const noKey = yield* Effect.flip(widget.revokeKey("wkey_missing"))
      assert.instanceOf(noKey, WidgetSearch.WidgetKeyNotFound)
      assert.strictEqual(noKey.id, "wkey_missing")
    }).pipe(Effect.provide(TestLayer)))
})
