import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema } from "effect"
import { createHash } from "node:crypto"
import { TradeflowDocument } from "../src/ApiMessage.js"
import * as Locations from "../src/Locations.js"
import * as RenderDocument from "../src/RenderDocument.js"
import { Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowRecord } from "../src/TradeflowRecord.js"
import { validateRequest } from "../src/Validation.js"
import { C1, C2, layer, messages, org, post, run, statuses, tradeflow } from "./ProcessorKit.js"

/** The partner id computed independently of the code under test. */
const expectedId = (organisationId: string, name: string) =>
  `partner_${createHash("sha256").update(`${organisationId}\u0000${name}`, "utf8").digest("hex").slice(0, 24)}`

const withPartners = {
  tradeflow_reference: "PO-1",
  container_reference: C1,
  customer_name: "ACME Retail",
  customer_reference: "ACME-PO-77",
  partners: [
    { name: "Fast Forwarding BV", role: "forwarder", reference: "FF-1" },
    { name: "Customs Co" }
  ]
}

const documentOf = (reference: string, organisationId = org) =>
  Effect.flatMap(tradeflow(reference, organisationId), (t) => RenderDocument.tradeflowDocument(t))

const roundTrip = (doc: TradeflowDocument): TradeflowDocument =>
  Schema.decodeUnknownSync(TradeflowDocument, { onExcessProperty: "error" })(
    JSON.parse(JSON.stringify(Schema.encodeSync(TradeflowDocument)(doc)))
  )

describe("Partners in production", () => {
  it.effect("customer_name and partners[] become the document's partners block with derived ids", () =>
    Effect.gen(function*() {
      yield* post([withPartners], "production")
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t.partners, [
        { name: "ACME Retail", role: "customer", reference: "ACME-PO-77" },
        { name: "Fast Forwarding BV", role: "forwarder", reference: "FF-1" },
        { name: "Customs Co", role: null, reference: null }
      ])
      const doc = yield* documentOf("PO-1")
      assert.deepStrictEqual(doc.partners, [
        {
          organisation: { id: expectedId(org, "ACME Retail"), name: "ACME Retail" },
          role: "customer",
          reference: "ACME-PO-77"
        },
        {
          organisation: { id: expectedId(org, "Fast Forwarding BV"), name: "Fast Forwarding BV" },
          role: "forwarder",
          reference: "FF-1"
        },
        { organisation: { id: expectedId(org, "Customs Co"), name: "Customs Co" }, role: null, reference: null }
      ])
      assert.deepStrictEqual(roundTrip(doc), doc)
    }).pipe(Effect.provide(layer())))

  it.effect("the same name is the same partner in another tradeflow, another partner in another organisation", () =>
    Effect.gen(function*() {
      yield* post([withPartners], "production")
      yield* post([{
        tradeflow_reference: "PO-2",
        container_reference: C2,
        partners: [{ name: "ACME Retail", role: "consignee" }]
      }], "production")
      yield* post([{ ...withPartners }], "production", "org-2")
      const first = (yield* documentOf("PO-1")).partners[0]!.organisation
      const second = (yield* documentOf("PO-2")).partners[0]!.organisation
      const elsewhere = (yield* documentOf("PO-1", "org-2")).partners[0]!.organisation
      assert.deepStrictEqual(second, first)
      assert.strictEqual(elsewhere.name, first.name)
      assert.notStrictEqual(elsewhere.id, first.id)
      assert.strictEqual(elsewhere.id, expectedId("org-2", "ACME Retail"))
    }).pipe(Effect.provide(layer())))

  it.effect("a blank customer_name links nothing; names are exact (case and inner spaces matter)", () =>
    Effect.gen(function*() {
      yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: C1,
        customer_name: "  ",
        partners: [{ name: "acme" }, { name: "ACME" }, { name: "A CME" }]
      }], "production")
      const doc = yield* documentOf("PO-1")
      assert.deepStrictEqual(doc.partners.map((p) => p.organisation.name), ["acme", "ACME", "A CME"])
      assert.strictEqual(new Set(doc.partners.map((p) => p.organisation.id)).size, 3)
    }).pipe(Effect.provide(layer())))
})

describe("Partners in UAT", () => {
  it.effect("customer_name and partners[] are ignored with warnings and link nothing", () =>
    Effect.gen(function*() {
      const validated = yield* validateRequest([withPartners], { environment: "uat", form: "array" }).pipe(
        Effect.provide(Locations.layerBuiltin)
      )
      assert.deepStrictEqual(validated.warnings, [[
        "customer_name at /0/customer_name is ignored in UAT",
        "partners at /0/partners is ignored in UAT"
      ]])
      yield* run({ _tag: "Upsert", groups: validated.groups }, "uat")
      const t = yield* tradeflow("PO-1")
      assert.deepStrictEqual(t.partners, [])
      assert.strictEqual(t.details.customer_name, undefined)
      assert.deepStrictEqual((yield* documentOf("PO-1")).partners, [])
    }).pipe(Effect.provide(layer())))
})

describe("Partner links merge", () => {
  it.effect("a known link takes a sent reference, keeps its own otherwise, and is never removed", () =>
    Effect.gen(function*() {
      yield* post([withPartners], "production")
      yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: C1,
        customer_name: "ACME Retail",
        partners: [{ name: "Customs Co", reference: "CC-9" }, { name: "Fast Forwarding BV", role: "notify" }]
      }], "production")
      assert.deepStrictEqual((yield* tradeflow("PO-1")).partners, [
        { name: "ACME Retail", role: "customer", reference: "ACME-PO-77" },
        { name: "Fast Forwarding BV", role: "forwarder", reference: "FF-1" },
        { name: "Customs Co", role: null, reference: "CC-9" },
        { name: "Fast Forwarding BV", role: "notify", reference: null }
      ])
      yield* post([{ tradeflow_reference: "PO-1", container_reference: C1 }], "production")
      assert.strictEqual((yield* tradeflow("PO-1")).partners.length, 4)
      yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: C1,
        customer_name: "ACME Retail",
        customer_reference: "ACME-PO-78"
      }], "production")
      assert.deepStrictEqual((yield* tradeflow("PO-1")).partners[0], {
        name: "ACME Retail",
        role: "customer",
        reference: "ACME-PO-78"
      })
    }).pipe(Effect.provide(layer())))

  it.effect("a change of links is a TRADEFLOW_UPDATED naming the partners; the same links again change nothing", () =>
    Effect.gen(function*() {
      yield* post([{ tradeflow_reference: "PO-1", container_reference: C1 }], "production")
      const before = (yield* messages()).length
      yield* post([withPartners], "production")
      const linked = (yield* messages()).slice(before)
      assert.deepStrictEqual(statuses(linked), ["TRADEFLOW_UPDATED"])
      const message = (m: (typeof linked)[number]) => m.message.type === "BASIC_STATUS" ? m.message.payload.message : ""
      assert.include(
        message(linked[0]!),
        "partners linked ACME Retail (customer), Fast Forwarding BV (forwarder), Customs Co"
      )

      const again = yield* post([withPartners], "production")
      assert.deepStrictEqual([again.upserts, again.messages], [[], []])

      const count = (yield* messages()).length
      yield* post([{
        tradeflow_reference: "PO-1",
        container_reference: C1,
        partners: [{ name: "Customs Co", reference: "CC-2" }]
      }], "production")
      const referenced = (yield* messages()).slice(count)
      assert.deepStrictEqual(statuses(referenced), ["TRADEFLOW_UPDATED"])
      assert.include(message(referenced[0]!), "partner references changed Customs Co")
    }).pipe(Effect.provide(layer())))

  const decodeRecord = Schema.decodeUnknownSync(TradeflowRecord)
  const name = fc.constantFrom("ACME", "Beta", "Gamma")
  const role = fc.option(fc.constantFrom("customer", "forwarder"), { nil: undefined })
  const reference = fc.option(fc.constantFrom("R1", "R2"), { nil: undefined })
  const record = fc.record({
    customer_name: fc.option(name, { nil: undefined }),
    customer_reference: reference,
    partners: fc.option(fc.array(fc.record({ name, role, reference }), { maxLength: 3 }), { nil: undefined })
  }).map((r) =>
    decodeRecord(JSON.parse(JSON.stringify({ tradeflow_reference: "PO-1", container_reference: C1, ...r })))
  )

  it.prop("links are unique by (name, role), never removed, in first-linked order, with the last reference sent", [
    fc.array(record, { maxLength: 6 })
  ], ([records]) => {
    const options = { now: 0, receivedAt: 0, keepCustomerName: true }
    let t = TradeflowMerge.empty(org, "PO-1", 0)
    for (const r of records) {
      const next = TradeflowMerge.applyRecords(t, [r], options)
      for (const l of t.partners) assert.isTrue(next.partners.some((n) => n.name === l.name && n.role === l.role))
      t = next
    }
    const sent = records.flatMap(TradeflowMerge.recordLinks)
    const keys = t.partners.map((l) => JSON.stringify([l.name, l.role]))
    assert.deepStrictEqual(keys, [...new Set(sent.map((l) => JSON.stringify([l.name, l.role])))])
    for (const l of t.partners) {
      const references = sent.filter((s) => s.name === l.name && s.role === l.role && s.reference !== null)
      assert.strictEqual(l.reference, references.at(-1)?.reference ?? null)
    }
    const uat = records.reduce(
      (s, r) => TradeflowMerge.applyRecords(s, [r], { ...options, keepCustomerName: false }),
      TradeflowMerge.empty(org, "PO-1", 0)
    )
    assert.deepStrictEqual(uat.partners, [])
  })
})

describe("RenderDocument.partnerId", () => {
  const organisationId = fc.string({ minLength: 1 }).filter((s) => !s.includes("\u0000"))

  it.effect.prop("is partner_ and 24 hex digits of SHA-256(organisation \\0 name), the same every time", [
    organisationId,
    fc.string({ unit: "grapheme" })
  ], ([o, n]) =>
    Effect.gen(function*() {
      const id = yield* RenderDocument.partnerId(o, n)
      assert.match(id, /^partner_[0-9a-f]{24}$/)
      assert.strictEqual(id, expectedId(o, n))
      assert.strictEqual(yield* RenderDocument.partnerId(o, n), id)
    }))

  it.effect.prop("never gives two organisations the same id, whatever the names", [
    fc.uniqueArray(organisationId, { minLength: 2, maxLength: 2 }),
    fc.string(),
    fc.string()
  ], ([[a, b], m, n]) =>
    Effect.gen(function*() {
      assert.notStrictEqual(yield* RenderDocument.partnerId(a!, m), yield* RenderDocument.partnerId(b!, n))
    }))

  it("a tradeflow stored before partners existed decodes with no links", () => {
    const codec = Schema.parseJson(Tradeflow)
    const stored = JSON.parse(Schema.encodeSync(codec)(TradeflowMerge.empty(org, "PO-1", 0))) as Record<string, unknown>
    delete stored["partners"]
    assert.deepStrictEqual(Schema.decodeUnknownSync(codec)(JSON.stringify(stored)).partners, [])
  })
})
