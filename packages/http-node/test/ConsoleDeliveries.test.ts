import { assert, describe, layer } from "@effect/vitest"
import { AutomationStore, Delivery, DeliveryStore } from "@tradeflow/core"
import { Clock, Effect, Option } from "effect"
import { consoleAuth, makeAppLayer, send } from "./Fixture.js"
import type { Received } from "./Fixture.js"

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  const body = r.body as { status: number; detail: string; errors?: ReadonlyArray<{ path: string; message: string }> }
  assert.strictEqual(body.status, status)
  return body
}

interface TestSent {
  readonly delivery_id: number
  readonly tradeflow_reference: string
  readonly message_hash: string
}

interface LogEntry {
  readonly id: number
  readonly message_hash: string
  readonly attempt: number
  readonly status: string
  readonly response_status: number | null
  readonly error: string | null
  readonly at: string
  readonly response_body: string | null
  readonly test: boolean
}

/** A new organisation with one automation (disabled unless `enabled: true`); answers the automation's id. */
const newAutomation = (json: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const org = yield* send("POST", "/console/organisations", {
      auth: consoleAuth,
      json: { name: `org-${Math.random()}` }
    })
    const r = yield* send("POST", `/console/organisations/${(org.body as { id: string }).id}/automations`, {
      auth: consoleAuth,
      json: { url: "https://hooks.example.com/in", ...json }
    })
    assert.strictEqual(r.status, 201, r.text)
    return (r.body as { id: string }).id
  })

const sendTest = (automationId: string) =>
  Effect.gen(function*() {
    const r = yield* send("POST", `/console/automations/${automationId}/test`, { auth: consoleAuth })
    assert.strictEqual(r.status, 202, r.text)
    return r.body as TestSent
  })

const deliveryLog = (automationId: string, query = "") =>
  send("GET", `/console/automations/${automationId}/deliveries${query}`, { auth: consoleAuth })

const retry = (deliveryId: number | string) =>
  send("POST", `/console/deliveries/${deliveryId}/retry`, { auth: consoleAuth })

/** Leases the delivery to a test worker (the store leases every due delivery; only this one is answered). */
const claim = (deliveryId: number) =>
  Effect.gen(function*() {
    const store = yield* DeliveryStore.DeliveryStore
    const now = yield* Clock.currentTimeMillis
    const claimed = yield* store.claim({ worker: "test", limit: 1000, leaseMillis: 60_000, now })
    const mine = claimed.find((d) => d.id === deliveryId)
    assert.isDefined(mine, `delivery ${deliveryId} was not claimable`)
    return mine!
  })

const attempt = (
  claimed: Delivery.ClaimedDelivery,
  at: number,
  status: Delivery.AttemptStatus,
  response: { readonly status: number | null; readonly body: string | null; readonly error: string | null }
) =>
  Effect.gen(function*() {
    const store = yield* DeliveryStore.DeliveryStore
    const recorded = yield* store.record([{
      delivery_id: claimed.id,
      claim: claimed.claim,
      at,
      status,
      response_status: response.status,
      error: response.error,
      response_body: response.body,
      retry_at: status === "failed" ? at + 5_000 : null,
      disable: null
    }])
    assert.deepStrictEqual(recorded, [true])
  })

const stored = (deliveryId: number) =>
  Effect.flatMap(DeliveryStore.DeliveryStore, (store) => store.get(deliveryId)).pipe(Effect.map(Option.getOrThrow))

layer(makeAppLayer(), { excludeTestServices: true })("console deliveries", (it) => {
  describe("POST /console/automations/:id/test", () => {
    it.effect("format message, disabled: 202 and one pending test delivery carrying an APIMessage of the automation's types", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation({ types: ["CONTAINER_MILESTONE"] })
        const sent = yield* sendTest(id)
        assert.deepStrictEqual(Object.keys(sent).sort(), ["delivery_id", "message_hash", "tradeflow_reference"])
        assert.match(sent.tradeflow_reference, /^TEST/)
        const list = yield* Effect.flatMap(DeliveryStore.DeliveryStore, (store) => store.list(id, 10))
        assert.strictEqual(list.length, 1)
        const delivery = list[0]!
        assert.deepStrictEqual(
          [
            delivery.id,
            delivery.status,
            delivery.attempt,
            delivery.test,
            delivery.message_hash,
            delivery.tradeflow_reference
          ],
          [sent.delivery_id, "pending", 0, true, sent.message_hash, sent.tradeflow_reference]
        )
        assert.isTrue(delivery.next_attempt_at <= (yield* Clock.currentTimeMillis))
        const message = JSON.parse(delivery.body ?? "null") as Record<string, unknown>
        assert.deepStrictEqual(
          [message["hash"], message["type"], message["tradeflow_reference"]],
          [sent.message_hash, "CONTAINER_MILESTONE", sent.tradeflow_reference]
        )
        assert.isString(message["message_generated_event_date"])
        assert.isObject(message["payload"])
        const automation = yield* send("GET", `/console/automations/${id}/deliveries`, { auth: consoleAuth })
        assert.deepStrictEqual([automation.status, automation.body], [200, []])
      }))

    it.effect("format tradeflow, enabled: the body is the sample's V3 document", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation({ format: "tradeflow", enabled: true })
        const sent = yield* sendTest(id)
        const list = yield* Effect.flatMap(DeliveryStore.DeliveryStore, (store) => store.list(id, 10))
        assert.deepStrictEqual(list.map((d) => [d.id, d.test, d.status]), [[sent.delivery_id, true, "pending"]])
        const document = JSON.parse(list[0]!.body ?? "null") as Record<string, unknown>
        assert.deepStrictEqual([document["version"], document["tradeflow_reference"]], [
          "3.0.0",
          sent.tradeflow_reference
        ])
        assert.containsAllKeys(document, ["metadata", "events", "locations", "containers", "shipment"])
      }))

    it.effect("each Send test is a new delivery of a new sample tradeflow", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        const a = yield* sendTest(id)
        const b = yield* sendTest(id)
        assert.notStrictEqual(a.delivery_id, b.delivery_id)
        assert.notStrictEqual(a.tradeflow_reference, b.tradeflow_reference)
        const list = yield* Effect.flatMap(DeliveryStore.DeliveryStore, (store) => store.list(id, 10))
        assert.deepStrictEqual(list.map((d) => d.id), [a.delivery_id, b.delivery_id])
      }))

    it.effect("unknown automation is 404, also after delete", () =>
      Effect.gen(function*() {
        assert.include(
          problem(yield* send("POST", "/console/automations/aut_nope/test", { auth: consoleAuth }), 404).detail,
          "aut_nope"
        )
        const id = yield* newAutomation()
        assert.strictEqual((yield* send("DELETE", `/console/automations/${id}`, { auth: consoleAuth })).status, 204)
        problem(yield* send("POST", `/console/automations/${id}/test`, { auth: consoleAuth }), 404)
      }))
  })

  describe("GET /console/automations/:id/deliveries", () => {
    it.effect("a failed attempt (500 with a body), then delivered: both attempts, newest first", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        const sent = yield* sendTest(id)
        const now = yield* Clock.currentTimeMillis
        yield* attempt(yield* claim(sent.delivery_id), now + 1_000, "failed", {
          status: 500,
          body: "upstream exploded",
          error: "the receiver answered 500"
        })
        const waiting = yield* stored(sent.delivery_id)
        assert.deepStrictEqual([waiting.status, waiting.attempt], ["pending", 1])
        const failedOnly = yield* deliveryLog(id)
        assert.strictEqual(failedOnly.status, 200, failedOnly.text)
        assert.deepStrictEqual(failedOnly.body, [{
          id: sent.delivery_id,
          message_hash: sent.message_hash,
          attempt: 1,
          status: "failed",
          response_status: 500,
          error: "the receiver answered 500",
          at: new Date(now + 1_000).toISOString(),
          response_body: "upstream exploded",
          test: true,
          tradeflow_reference: sent.tradeflow_reference,
          type: null
        }])

        const store = yield* DeliveryStore.DeliveryStore
        const again = (yield* store.claim({ worker: "test", limit: 1000, leaseMillis: 60_000, now: now + 10_000 }))
          .find((d) => d.id === sent.delivery_id)
        assert.isDefined(again)
        yield* attempt(again!, now + 10_000, "delivered", { status: 204, body: null, error: null })

        const log = yield* deliveryLog(id)
        assert.strictEqual(log.status, 200, log.text)
        const entries = log.body as ReadonlyArray<LogEntry>
        assert.deepStrictEqual(Object.keys(entries[0]!), [
          "id",
          "message_hash",
          "attempt",
          "status",
          "response_status",
          "error",
          "at",
          "response_body",
          "test",
          "tradeflow_reference",
          "type"
        ])
        assert.deepStrictEqual(
          entries.map((e) => [e.id, e.attempt, e.status, e.response_status, e.error, e.response_body, e.at, e.test]),
          [
            [sent.delivery_id, 2, "delivered", 204, null, null, new Date(now + 10_000).toISOString(), true],
            [
              sent.delivery_id,
              1,
              "failed",
              500,
              "the receiver answered 500",
              "upstream exploded",
              new Date(now + 1_000).toISOString(),
              true
            ]
          ]
        )
        assert.deepStrictEqual((yield* deliveryLog(id, "?limit=1")).body, [entries[0]])
        assert.deepStrictEqual((yield* deliveryLog(id, "?limit=1000")).body, entries)
        assert.strictEqual((yield* stored(sent.delivery_id)).status, "delivered")
      }))

    it.effect("a bad limit is a 400 problem naming limit", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        for (const limit of ["0", "1001", "-1", "1.5", "abc", "", "1e2", "99999"]) {
          const body = problem(yield* deliveryLog(id, `?limit=${encodeURIComponent(limit)}`), 400)
          assert.include(body.detail, "limit", limit)
          assert.deepStrictEqual(body.errors?.map((e) => e.path), ["limit"], limit)
        }
      }))

    it.effect("unknown automation is 404", () =>
      Effect.gen(function*() {
        assert.include(problem(yield* deliveryLog("aut_nope"), 404).detail, "aut_nope")
      }))
  })

  describe("POST /console/deliveries/:id/retry", () => {
    it.effect("a dead delivery: 202, then pending on a fresh schedule and claimable again", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        const sent = yield* sendTest(id)
        const now = yield* Clock.currentTimeMillis
        yield* attempt(yield* claim(sent.delivery_id), now, "dead", {
          status: 503,
          body: null,
          error: "the receiver answered 503"
        })
        assert.strictEqual((yield* stored(sent.delivery_id)).status, "dead")

        const r = yield* retry(sent.delivery_id)
        assert.deepStrictEqual([r.status, r.text], [202, ""])
        const retried = yield* stored(sent.delivery_id)
        assert.deepStrictEqual([retried.status, retried.retries, retried.schedule_started_at], ["pending", 0, null])
        assert.isTrue(retried.next_attempt_at <= (yield* Clock.currentTimeMillis))
        const claimed = yield* claim(sent.delivery_id)
        assert.strictEqual(
          claimed.body,
          (yield* Effect.flatMap(DeliveryStore.DeliveryStore, (s) => s.list(id, 1)))[0]!.body
        )
        const log = (yield* deliveryLog(id)).body as ReadonlyArray<LogEntry>
        assert.deepStrictEqual(log.map((e) => [e.id, e.status]), [[sent.delivery_id, "dead"]])
      }))

    it.effect("a failed delivery waiting for its retry: 202 and due now", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        const sent = yield* sendTest(id)
        const now = yield* Clock.currentTimeMillis
        yield* attempt(yield* claim(sent.delivery_id), now, "failed", {
          status: null,
          body: null,
          error: "connection reset"
        })
        assert.isTrue((yield* stored(sent.delivery_id)).next_attempt_at > (yield* Clock.currentTimeMillis))
        assert.strictEqual((yield* retry(sent.delivery_id)).status, 202)
        const retried = yield* stored(sent.delivery_id)
        assert.deepStrictEqual([retried.status, retried.retries], ["pending", 0])
        assert.isTrue(retried.next_attempt_at <= (yield* Clock.currentTimeMillis))
      }))

    it.effect("a delivered or a never attempted delivery: 409 and unchanged", () =>
      Effect.gen(function*() {
        const id = yield* newAutomation()
        const fresh = yield* sendTest(id)
        const before = yield* stored(fresh.delivery_id)
        assert.include(problem(yield* retry(fresh.delivery_id), 409).detail, String(fresh.delivery_id))
        assert.deepStrictEqual(yield* stored(fresh.delivery_id), before)

        const now = yield* Clock.currentTimeMillis
        yield* attempt(yield* claim(fresh.delivery_id), now, "delivered", { status: 200, body: "ok", error: null })
        const delivered = yield* stored(fresh.delivery_id)
        const conflict = problem(yield* retry(fresh.delivery_id), 409)
        assert.include(conflict.detail, "neither failed nor dead")
        assert.deepStrictEqual(yield* stored(fresh.delivery_id), delivered)
      }))

    it.effect("an unknown or non-numeric delivery id is 404", () =>
      Effect.gen(function*() {
        for (const deliveryId of ["987654321", "abc", "12abc", "1.5", "-1", "1e3", "9999999999999999999999"]) {
          problem(yield* retry(deliveryId), 404)
        }
      }))
  })

  it.effect("401 without or with a wrong console token, and nothing happens", () =>
    Effect.gen(function*() {
      const id = yield* newAutomation()
      const sent = yield* sendTest(id)
      yield* attempt(yield* claim(sent.delivery_id), yield* Clock.currentTimeMillis, "dead", {
        status: 500,
        body: null,
        error: "the receiver answered 500"
      })
      for (const auth of [undefined, "Bearer wrong", "console-token-for-tests"]) {
        const sentAuth = auth === undefined ? {} : { auth }
        problem(yield* send("POST", `/console/automations/${id}/test`, sentAuth), 401)
        problem(yield* send("GET", `/console/automations/${id}/deliveries`, sentAuth), 401)
        problem(yield* send("GET", `/console/automations/${id}/deliveries?limit=0`, sentAuth), 401)
        problem(yield* send("POST", `/console/deliveries/${sent.delivery_id}/retry`, sentAuth), 401)
      }
      const list = yield* Effect.flatMap(DeliveryStore.DeliveryStore, (store) => store.list(id, 10))
      assert.deepStrictEqual(list.map((d) => [d.id, d.status]), [[sent.delivery_id, "dead"]])
    }))

  it.effect("the OpenAPI document lists the three operations", () =>
    Effect.gen(function*() {
      interface Operation {
        readonly operationId: string
        readonly responses: Record<string, unknown>
        readonly parameters?: ReadonlyArray<
          { readonly name: string; readonly in: string; readonly description?: string }
        >
      }
      const doc = (yield* send("GET", "/openapi.json")).body as { paths: Record<string, Record<string, Operation>> }
      const test = doc.paths["/console/automations/{id}/test"]?.["post"]
      const log = doc.paths["/console/automations/{id}/deliveries"]?.["get"]
      const retryOp = doc.paths["/console/deliveries/{id}/retry"]?.["post"]
      assert.deepStrictEqual([test?.operationId, log?.operationId, retryOp?.operationId], [
        "console.sendTest",
        "console.listDeliveries",
        "console.retryDelivery"
      ])
      assert.containsAllKeys(test?.responses, ["202", "401", "404"])
      assert.containsAllKeys(log?.responses, ["200", "400", "401", "404"])
      assert.containsAllKeys(retryOp?.responses, ["202", "401", "404", "409"])
      const query = log?.parameters?.filter((p) => p.in === "query") ?? []
      assert.deepStrictEqual(query.map((p) => p.name), ["limit"])
      assert.include(query[0]?.description, "1 to 1000")
    }))

  it.effect("an automation the delivery worker disabled shows why, and since when it failed, in the console list", () =>
    Effect.gen(function*() {
      const id = yield* newAutomation({ enabled: true })
      const store = yield* AutomationStore.AutomationStore
      const automation = Option.getOrThrow(yield* store.get(id))
      const at = Date.UTC(2026, 0, 1)
      yield* store.put(Delivery.automationAfter(automation, {
        delivery_id: 0,
        claim: 0,
        at,
        status: "failed",
        response_status: null,
        error: "HTTP 500",
        response_body: null,
        retry_at: at + 5_000,
        disable: "every delivery has failed for 5 days"
      }))
      const listed = yield* send("GET", `/console/organisations/${automation.organisation_id}/automations`, {
        auth: consoleAuth
      })
      assert.strictEqual(listed.status, 200, listed.text)
      const entry = (listed.body as ReadonlyArray<Record<string, unknown>>).find((a) => a["id"] === id)
      assert.deepStrictEqual(
        [entry?.["enabled"], entry?.["disabled_reason"], entry?.["failing_since"]],
        [false, "every delivery has failed for 5 days", "2026-01-01T00:00:00.000Z"]
      )
      const enabled = yield* send("POST", `/console/automations/${id}/enable`, { auth: consoleAuth })
      assert.deepStrictEqual(
        [
          (enabled.body as Record<string, unknown>)["disabled_reason"],
          (enabled.body as Record<string, unknown>)["failing_since"]
        ],
        [null, null]
      )
    }))
})
