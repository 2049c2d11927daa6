import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import * as Accounts from "../src/Accounts.js"
import { TradeflowDocument } from "../src/ApiMessage.js"
import { ApiMessageFromJson } from "../src/ApiMessage.js"
import * as AutomationAdmin from "../src/AutomationAdmin.js"
import * as DeliveryAdmin from "../src/DeliveryAdmin.js"
import { DeliveryStore } from "../src/DeliveryStore.js"
import { layer as kit, messages, post } from "./ProcessorKit.js"

const TestLayer = Layer.mergeAll(AutomationAdmin.layer, Accounts.layer, DeliveryAdmin.layer).pipe(
  Layer.provideMerge(kit())
)

const record = (reference: string, container = "MSCU1234565") => ({
  tradeflow_reference: reference,
  container_reference: [container],
  port_of_loading: "NLRTM",
  port_of_discharge: "SGSIN",
  mock_tracking: { scenario: "ocean_basic" }
})

const decodeDocument = Schema.decodeUnknownSync(Schema.parseJson(TradeflowDocument))

const setup = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const automations = yield* AutomationAdmin.AutomationAdmin
  const org = yield* accounts.createOrganisation(`org-${globalThis.crypto.randomUUID()}`)
  const create = (input: Partial<AutomationAdmin.NewAutomation>) =>
    automations.create(org.id, { ...input, url: input.url ?? "https://hooks.example/in" })
  return { org: org.id, create, automations }
})

layer(TestLayer)("Outbox", (it) => {
  it.effect("processing writes the deliveries of enabled automations, for their types, in sequence order", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { create, org } = yield* setup
      const all = yield* create({ enabled: true })
      const milestones = yield* create({ enabled: true, types: ["CONTAINER_MILESTONE"] })
      const disabled = yield* create({})
      yield* post([record("PO-1")], "uat", org)
      const stored = yield* messages(org)
      const ofAll = yield* store.list(all.id, 1_000)
      const expected = stored.filter((m) => m.stored.type !== "BASIC_STATUS")
      assert.isAbove(expected.length, 3)
      assert.deepStrictEqual(
        ofAll.map((d) => [d.message_hash, d.seq]),
        expected.map((m) => [m.stored.hash, m.stored.seq])
      )
      assert.isTrue(ofAll.every((d) => d.body === null && d.tradeflow_reference === "PO-1" && !d.test))
      assert.deepStrictEqual(
        (yield* store.list(milestones.id, 1_000)).map((d) => d.message_hash),
        stored.filter((m) => m.stored.type === "CONTAINER_MILESTONE").map((m) => m.stored.hash)
      )
      assert.deepStrictEqual(yield* store.list(disabled.id, 1_000), [])
    }))

  it.effect("a message generated while an automation is disabled is not delivered after it is enabled", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { automations, create, org } = yield* setup
      const later = yield* create({})
      yield* post([record("PO-1")], "uat", org)
      yield* automations.enable(later.id)
      assert.deepStrictEqual(yield* store.list(later.id, 1_000), [])
      yield* post([record("PO-2", "TGHU0000001")], "uat", org)
      const listed = yield* store.list(later.id, 1_000)
      assert.isAbove(listed.length, 0)
      assert.isTrue(listed.every((d) => d.tradeflow_reference === "PO-2"))
    }))

  it.effect("the tradeflow format gets the V3 document after the change, once per tradeflow and commit", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const { create, org } = yield* setup
      const documents = yield* create({ enabled: true, format: "tradeflow" })
      yield* post([record("PO-1"), record("PO-2", "TGHU0000001")], "uat", org)
      const listed = yield* store.list(documents.id, 1_000)
      assert.deepStrictEqual(listed.map((d) => d.tradeflow_reference), ["PO-1", "PO-2"])
      const stored = yield* messages(org)
      for (const d of listed) {
        const document = decodeDocument(d.body)
        assert.strictEqual(document.version, "3.0.0")
        assert.strictEqual(document.tradeflow_reference, d.tradeflow_reference)
        assert.isUndefined(document.vessels)
        const newest = stored.filter((m) =>
          m.stored.tradeflow_reference === d.tradeflow_reference && m.stored.type !== "BASIC_STATUS"
        ).at(-1)
        assert.strictEqual(d.message_hash, newest?.stored.hash)
      }
    }))

  it.effect("Send test queues one sample ocean_basic delivery, enabled or not, never stored upstream", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const deliveries = yield* DeliveryAdmin.DeliveryAdmin
      const { create, org } = yield* setup
      const message = yield* create({ types: ["SHIPMENT_CHANGE"] })
      const document = yield* create({ format: "tradeflow" })
      const sent = yield* deliveries.sendTest(message.id)
      const [queued] = yield* store.list(message.id, 10)
      assert.strictEqual(queued?.id, sent.delivery_id)
      assert.isTrue(queued?.test)
      assert.match(sent.tradeflow_reference, /^TEST/)
      const decoded = Schema.decodeUnknownSync(ApiMessageFromJson)(queued?.body)
      assert.strictEqual(decoded.type, "SHIPMENT_CHANGE")
      yield* deliveries.sendTest(document.id)
      const [doc] = yield* store.list(document.id, 10)
      assert.strictEqual(decodeDocument(doc?.body).tradeflow_reference, doc?.tradeflow_reference)
      assert.deepStrictEqual(yield* messages(org), [])
      const missing = yield* Effect.flip(deliveries.sendTest("auto_missing"))
      assert.strictEqual(missing._tag, "AutomationNotFound")
    }))

  it.effect("retry refuses unknown and untried deliveries; the log is the automation's attempts", () =>
    Effect.gen(function*() {
      const store = yield* DeliveryStore
      const deliveries = yield* DeliveryAdmin.DeliveryAdmin
      const { create } = yield* setup
      const a = yield* create({})
      const sent = yield* deliveries.sendTest(a.id)
      assert.strictEqual((yield* Effect.flip(deliveries.retry(sent.delivery_id)))._tag, "DeliveryNotRetryable")
      assert.strictEqual((yield* Effect.flip(deliveries.retry(987_654_321)))._tag, "DeliveryNotFound")
      const [claimed] = (yield* store.claim({ worker: "w", limit: 1_000, leaseMillis: 1_000, now: Date.now() }))
        .filter((d) => d.automation_id === a.id)
      if (claimed === undefined) throw new Error("not claimed")
      yield* store.record([{
        delivery_id: claimed.id,
        claim: claimed.claim,
        at: 0,
        status: "dead",
        response_status: 500,
        error: "HTTP 500",
        response_body: "no",
        retry_at: null,
        disable: null
      }])
      const log = yield* deliveries.log(a.id)
      assert.deepStrictEqual(log, [{
        id: claimed.id,
        message_hash: sent.message_hash,
        attempt: 1,
        status: "dead",
        response_status: 500,
        error: "HTTP 500",
        response_body: "no",
        at: "1970-01-01T00:00:00.000Z",
        test: true,
        tradeflow_reference: sent.tradeflow_reference,
        type: null
      }])
      yield* deliveries.retry(claimed.id)
      assert.strictEqual(Option.getOrThrow(yield* store.get(claimed.id)).status, "pending")
      assert.strictEqual((yield* Effect.flip(deliveries.log("auto_missing")))._tag, "AutomationNotFound")
    }))
})
