import { assert, describe, it } from "@effect/vitest"
import {
  ApiMessage,
  AutomationAdmin,
  AutomationStore,
  type Delivery,
  DeliveryStore,
  Documents,
  Ingest,
  Locations,
  MessageStore,
  OrganisationStore,
  SecretsAtRest,
  Service,
  Storage,
  StorageError,
  TrackingConfig,
  WebhookDestination,
  Worker
} from "@tradeflow/core"
import { counted } from "@tradeflow/core/test-kit"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import { DeliveryWorker, RetrySchedule, Ssrf, WebhookClient } from "../src/index.js"
import * as LocalReceiver from "./LocalReceiver.js"

const second = 1000
const hour = 3_600_000
const day = 24 * hour
const org = "org-uat"
const iso = (ms: number) => new Date(ms).toISOString()

/** The destination check (`Ssrf.layer`) that lets the worker reach the local receiver. */
const localDestinations = Ssrf.layer({ allowPrivate: true, allowHttp: true })

/**
 * The whole service in memory with no background fibers, and a delivery worker (no background
 * either) that reaches the local receiver unless the test gives another destination check or
 * client options.
 */
const TestLayer = (
  destinations: Layer.Layer<WebhookDestination.WebhookDestination> = localDestinations,
  client: Partial<WebhookClient.Options> = {},
  secretsKey: Option.Option<Uint8Array> = Option.none(),
  worker: DeliveryWorker.DeliveryWorkerOptions = {}
) =>
  DeliveryWorker.layer({ background: false, ...worker }).pipe(
    Layer.provide(WebhookClient.layer({ allowPrivate: true, ...client })),
    Layer.provide(destinations),
    Layer.provideMerge(Service.layer({ background: false })),
    Layer.provideMerge(Layer.mergeAll(
      SecretsAtRest.layer(secretsKey).pipe(Layer.provideMerge(Storage.layerMemory)),
      Locations.layerBuiltin,
      TrackingConfig.layer()
    ))
  )

/** A `DeliveryStore` whose first claim fails with a storage error, counting claims. */
const flakyClaims = (claims: { count: number }) =>
  Layer.effect(
    DeliveryStore.DeliveryStore,
    Effect.map(DeliveryStore.DeliveryStore, (inner) => ({
      ...inner,
      claim: (options: Parameters<typeof inner.claim>[0]) =>
        ++claims.count === 1
          ? Effect.fail(
            new StorageError.StorageError({ operation: "DeliveryStore.claim", cause: "database is locked" })
          )
          : inner.claim(options)
    }))
  )

/** Waits in real time (never on the clock) until `check` holds: for work done by a background fiber. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, attempts = 400) =>
  Effect.gen(function*() {
    for (let i = 0; i < attempts; i++) {
      if (yield* check) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
    assert.fail("condition not reached")
  })

/** Sets the clock to the real time (so `standardwebhooks` accepts the timestamps) and creates the organisation. */
const start = Effect.gen(function*() {
  const now = Date.now()
  yield* TestClock.setTime(now)
  yield* Effect.flatMap(
    OrganisationStore.OrganisationStore,
    (s) => s.insert({ id: org, name: "Acme (UAT)", environment: "uat", live_organisation_id: null, created_at: now })
  )
  return now
})

const automation = (url: string, input: Omit<AutomationAdmin.NewAutomation, "url"> = {}) =>
  Effect.flatMap(AutomationAdmin.AutomationAdmin, (a) => a.create(org, { enabled: true, ...input, url }))

/** Posts one ocean_basic record of `reference` (departed 10 hours ago) and processes it: 19 integration messages. */
const submit = (reference: string) =>
  Effect.gen(function*() {
    const now = yield* TestClock.currentTimeMillis
    yield* Effect.flatMap(Ingest.Ingest, (i) =>
      i.submit({
        organisation_id: org,
        environment: "uat",
        form: "any",
        body: [{
          tradeflow_reference: reference,
          container_reference: "CSQU3054383",
          port_of_loading: "NLRTM",
          port_of_discharge: "CNSHA",
          actual_time_of_departure: iso(now - 10 * hour),
          estimated_time_of_arrival: iso(now + 20 * day),
          mock_tracking: { scenario: "ocean_basic" }
        }]
      }))
    yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
  })

const drain = Effect.flatMap(DeliveryWorker.DeliveryWorker, (w) => w.drain)

const now = TestClock.currentTimeMillis

const deliveries = (automationId: string) =>
  Effect.flatMap(DeliveryStore.DeliveryStore, (s) => s.list(automationId, 10_000))

/** The automation's delivery log, oldest first. */
const log = (automationId: string) =>
  Effect.map(
    Effect.flatMap(DeliveryStore.DeliveryStore, (s) => s.log(automationId, 10_000)),
    (entries) => [...entries].reverse()
  )

const stored = (automationId: string) =>
  Effect.map(Effect.flatMap(AutomationStore.AutomationStore, (s) => s.get(automationId)), Option.getOrThrow)

const messageSeqs = Effect.map(
  Effect.flatMap(MessageStore.MessageStore, (s) => s.list({ organisation_id: org, take: "oldest", limit: 10_000 })),
  (messages) => new Map(messages.map((m) => [m.hash, m]))
)

/**
 * Drains, then moves the clock to the next retry of the automation's pending deliveries, until
 * none is pending or waiting (or `until` holds); at most `rounds` times.
 */
const settle = <R = never>(
  automationId: string,
  until: Effect.Effect<boolean, never, R> = Effect.succeed(false),
  rounds = 200
) =>
  Effect.gen(function*() {
    for (let i = 0; i < rounds; i++) {
      yield* drain
      if (yield* until) return
      const at = yield* now
      const waiting = (yield* deliveries(automationId)).filter((d) => d.status === "pending" && d.next_attempt_at > at)
      if (waiting.length === 0) return
      yield* TestClock.setTime(Math.min(...waiting.map((d) => d.next_attempt_at)))
    }
    assert.fail(`not settled after ${rounds} rounds`)
  })

/** Whether the request carries a `standardwebhooks` signature of `secret` (for any timestamp). */
const signedBy = (secret: string, request: LocalReceiver.Received): boolean => {
  const id = String(request.headers["webhook-id"])
  const timestamp = new Date(Number(request.headers["webhook-timestamp"]) * 1000)
  const expected = new Webhook(secret).sign(id, timestamp, request.body)
  return signatures(request).includes(expected)
}

const signatures = (request: LocalReceiver.Received | undefined): Array<string> =>
  String(request?.headers["webhook-signature"]).split(" ")

const verified = (secret: string, request: LocalReceiver.Received): boolean => {
  try {
    new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"])
    })
    return true
  } catch {
    return false
  }
}

const ok = { status: 200 } as const

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32). */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("DeliveryWorker", () => {
  it.scoped("format message: every integration message once, in seq order, signed (standardwebhooks verifies), the stored body", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* drain
      const messages = yield* messageSeqs
      const expected = [...messages.values()].filter((m) => m.type !== "BASIC_STATUS")
      assert.strictEqual(expected.length, 19)
      assert.deepStrictEqual(receiver.received.map((r) => r.headers["webhook-id"]), expected.map((m) => m.hash))
      for (const request of receiver.received) {
        assert.isTrue(verified(created.secret, request))
        assert.strictEqual(request.body, messages.get(String(request.headers["webhook-id"]))?.body)
        assert.strictEqual(request.headers["content-type"], "application/json")
        assert.strictEqual(request.headers["user-agent"], WebhookClient.userAgent)
        assert.strictEqual(signatures(request).length, 1)
      }
      assert.deepStrictEqual((yield* deliveries(created.id)).map((d) => d.status), expected.map(() => "delivered"))
      const entries = yield* log(created.id)
      assert.deepStrictEqual(
        entries.map((e) => [e.status, e.response_status, e.attempt]),
        expected.map(() => ["delivered" as const, 200, 1])
      )
      assert.isNull((yield* stored(created.id)).failing_since)
      yield* drain
      assert.strictEqual(receiver.received.length, 19)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("with a secrets key, deliveries are signed with the secret answered at creation and with a rotated one", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      yield* drain
      const rotated = yield* Effect.flatMap(AutomationAdmin.AutomationAdmin, (a) => a.rotateSecret(created.id))
      yield* submit("TF-2")
      yield* drain
      const [first, second] = receiver.received
      assert.isTrue(verified(created.secret, first!))
      assert.strictEqual(signatures(first).length, 1)
      assert.isTrue(verified(rotated.secret, second!) && signedBy(created.secret, second!))
      const stored = Option.getOrThrow(yield* Effect.flatMap(AutomationStore.AutomationStore, (s) => s.get(created.id)))
      assert.deepStrictEqual(stored.secrets.map((s) => s.secret), [rotated.secret, created.secret])
    }).pipe(
      Effect.provide(
        TestLayer(localDestinations, {}, Option.some(globalThis.crypto.getRandomValues(new Uint8Array(32))))
      )
    ))

  it.scoped("format tradeflow: one delivery per tradeflow and commit, the V3 document after the change", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      yield* drain
      assert.strictEqual(receiver.received.length, 1)
      const [request] = receiver.received
      const body = JSON.parse(request?.body ?? "") as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(body), [
        "version",
        "tradeflow_reference",
        "metadata",
        "events",
        "locations",
        "containers",
        "shipment",
        "partners"
      ])
      const download = yield* Effect.flatMap(Documents.Documents, (d) => d.download(org, "TF-1"))
      const { vessels: _vessels, ...document } = JSON.parse(
        JSON.stringify(Schema.encodeSync(ApiMessage.TradeflowDocument)(download))
      )
      assert.deepStrictEqual(body, document)
      assert.isTrue(verified(created.secret, request!))
      const messages = [...(yield* messageSeqs).values()]
      assert.strictEqual(request?.headers["webhook-id"], messages[messages.length - 1]?.hash)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("a disabled automation gets nothing, and messages generated while it was disabled are not sent after enabling", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url(), { enabled: false, format: "tradeflow" })
      const automations = yield* AutomationAdmin.AutomationAdmin
      yield* submit("TF-1")
      yield* drain
      assert.strictEqual(receiver.received.length, 0)
      yield* automations.enable(created.id)
      yield* drain
      yield* TestClock.adjust(Duration.hours(1))
      yield* drain
      assert.strictEqual(receiver.received.length, 0)

      yield* submit("TF-2")
      yield* automations.disable(created.id)
      yield* drain
      assert.strictEqual(receiver.received.length, 0)
      yield* automations.enable(created.id)
      yield* drain
      assert.deepStrictEqual(receiver.received.map((r) => JSON.parse(r.body).tradeflow_reference), ["TF-2"])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("500, 500, 200: exactly one success after two failed attempts, at the schedule's delays, in the log", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const outcomes = Effect.all([
        counted("tradeflow_webhook_deliveries_total", { outcome: "failed" }),
        counted("tradeflow_webhook_deliveries_total", { outcome: "delivered" })
      ])
      const [failedBefore, deliveredBefore] = yield* outcomes
      const receiver = yield* LocalReceiver.make((n) => n <= 2 ? { status: 500, body: `failure ${n}` } : ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      const [delivery] = yield* deliveries(created.id)
      const next = Effect.map(deliveries(created.id), (ds) => ds[0]!.next_attempt_at)

      yield* drain
      assert.strictEqual(receiver.received.length, 1)
      const first = yield* next
      assert.isAtLeast(first - t0, 4 * second)
      assert.isBelow(first - t0, 6 * second)
      yield* TestClock.setTime(first - 1)
      yield* drain
      assert.strictEqual(receiver.received.length, 1)

      yield* TestClock.setTime(first)
      yield* drain
      assert.strictEqual(receiver.received.length, 2)
      const retried = yield* next
      assert.isAtLeast(retried - first, 24 * second)
      assert.isBelow(retried - first, 36 * second)

      yield* TestClock.setTime(retried)
      yield* drain
      yield* TestClock.adjust(Duration.days(4))
      yield* drain
      assert.strictEqual(receiver.received.length, 3)
      assert.strictEqual(receiver.receipts().length, 1)
      const [failedAfter, deliveredAfter] = yield* outcomes
      assert.deepStrictEqual([failedAfter - failedBefore, deliveredAfter - deliveredBefore], [2, 1])
      assert.deepStrictEqual(
        new Set(receiver.received.map((r) => r.headers["webhook-id"])),
        new Set([delivery!.message_hash])
      )
      assert.deepStrictEqual(receiver.received.map((r) => r.body), [0, 1, 2].map(() => delivery!.body))

      const entries = yield* log(created.id)
      assert.deepStrictEqual(entries.map((e) => [e.attempt, e.status, e.response_status, e.response_body, e.at]), [
        [1, "failed", 500, "failure 1", t0],
        [2, "failed", 500, "failure 2", first],
        [3, "delivered", 200, "", retried]
      ])
      assert.deepStrictEqual((yield* deliveries(created.id)).map((d) => [d.status, d.attempt]), [["delivered", 3]])
      assert.isNull((yield* stored(created.id)).failing_since)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("ordering: with a receiver failing at random, a tradeflow's messages are received in seq order, each once", () =>
    Effect.gen(function*() {
      yield* start
      const random = seeded(4)
      const receiver = yield* LocalReceiver.make(() => {
        const r = random()
        return r < 0.2 ? { status: 500 } : r < 0.35 ? { status: 503 } : r < 0.45 ? "reset" : ok
      })
      const created = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* submit("TF-2")
      yield* settle(created.id)
      const messages = yield* messageSeqs
      const seqs = (reference: string) =>
        receiver.receipts().map((r) => messages.get(String(r.headers["webhook-id"]))!)
          .filter((m) => m.tradeflow_reference === reference).map((m) => m.seq)
      const expected = (reference: string) =>
        [...messages.values()].filter((m) => m.tradeflow_reference === reference && m.type !== "BASIC_STATUS").map((
          m
        ) => m.seq)
      assert.isAbove(receiver.received.length - receiver.receipts().length, 10)
      assert.deepStrictEqual(seqs("TF-1"), expected("TF-1"))
      assert.deepStrictEqual(seqs("TF-2"), expected("TF-2"))
      assert.isTrue((yield* deliveries(created.id)).every((d) => d.status === "delivered"))
      assert.strictEqual((yield* log(created.id)).length, receiver.received.length)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("410 Gone disables the automation with its reason; nothing more is sent", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ({ status: 410 }))
      const created = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* drain
      yield* TestClock.adjust(Duration.days(1))
      yield* drain
      assert.strictEqual(receiver.received.length, 1)
      const info = yield* Effect.flatMap(AutomationAdmin.AutomationAdmin, (a) => a.get(created.id))
      assert.deepStrictEqual([info.enabled, info.disabled_reason], [false, "the receiver answered 410 Gone"])
      const [entry] = yield* log(created.id)
      assert.deepStrictEqual([entry?.status, entry?.response_status], ["failed", 410])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("429 and 503 with Retry-After are retried then, capped at 1 hour", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make((n) =>
        n === 1
          ? { status: 429, headers: { "retry-after": "7200" } }
          : n === 2
          ? { status: 503, headers: { "retry-after": "120" } }
          : ok
      )
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      const next = Effect.map(deliveries(created.id), (ds) => ds[0]!.next_attempt_at)
      yield* drain
      assert.strictEqual(yield* next, t0 + hour)
      yield* TestClock.setTime(t0 + hour)
      yield* drain
      assert.strictEqual(yield* next, t0 + hour + 120 * second)
      yield* TestClock.adjust(Duration.seconds(120))
      yield* drain
      assert.deepStrictEqual((yield* log(created.id)).map((e) => [e.status, e.response_status, e.at - t0]), [
        ["failed", 429, 0],
        ["failed", 503, hour],
        ["delivered", 200, hour + 120 * second]
      ])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("503 with Retry-After: 0 waits the backoff schedule: 6 attempts in the first hour, not one a second", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make(() => ({ status: 503, headers: { "retry-after": "0" }, body: "busy" }))
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      for (let i = 0; i < 4_000; i++) {
        yield* drain
        const [d] = yield* deliveries(created.id)
        if (d === undefined || d.status !== "pending" || d.next_attempt_at > t0 + hour) break
        yield* TestClock.setTime(Math.max(d.next_attempt_at, (yield* now) + 1))
      }
      assert.strictEqual(receiver.received.length, 6)
      const entries = yield* log(created.id)
      entries.slice(1).forEach((e, i) => {
        assert.isAtLeast(
          e.at - entries[i]!.at,
          Duration.toMillis(RetrySchedule.baseDelay(i + 1)) * (1 - RetrySchedule.jitter),
          `gap ${i + 1}`
        )
      })
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("a delivery failing past the 3-day horizon is dead, after attempts on the schedule", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make(() => ({ status: 500 }))
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      yield* settle(created.id)
      const entries = yield* log(created.id)
      const last = entries[entries.length - 1]!
      assert.strictEqual(last.status, "dead")
      assert.isTrue(entries.slice(0, -1).every((e) => e.status === "failed"))
      assert.isAtMost(last.at - t0, RetrySchedule.horizon.pipe(Duration.toMillis))
      assert.isAbove(last.at - t0, 2 * day)
      entries.slice(1).forEach((e, i) => {
        const base = Duration.toMillis(RetrySchedule.baseDelay(i + 1))
        const gap = e.at - entries[i]!.at
        assert.isAtLeast(gap, base * (1 - RetrySchedule.jitter), `gap ${i + 1}`)
        assert.isBelow(gap, base * (1 + RetrySchedule.jitter), `gap ${i + 1}`)
      })
      assert.deepStrictEqual((yield* deliveries(created.id)).map((d) => d.status), ["dead"])
      yield* TestClock.adjust(Duration.days(7))
      yield* drain
      assert.strictEqual(receiver.received.length, entries.length)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("with a retry horizon of 1 minute, a failing delivery is dead after the attempts that fit in it", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make(() => ({ status: 500 }))
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      yield* settle(created.id)
      const entries = yield* log(created.id)
      assert.deepStrictEqual(entries.map((e) => e.status), ["failed", "failed", "dead"])
      assert.isAtMost(entries[2]!.at - t0, 60_000)
      yield* TestClock.adjust(Duration.days(7))
      yield* drain
      assert.strictEqual(receiver.received.length, 3)
    }).pipe(Effect.provide(TestLayer(localDestinations, {}, Option.none(), { retryHorizon: "1 minute" }))))

  it.scoped("an automation whose deliveries fail for 5 days is disabled, with the reason", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make(() => ({ status: 500 }))
      const created = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* settle(created.id, Effect.map(Effect.orDie(stored(created.id)), (a) => !a.enabled))
      const disabled = yield* stored(created.id)
      assert.deepStrictEqual([disabled.enabled, disabled.disabled_reason, disabled.failing_since], [
        false,
        DeliveryWorker.failingReason,
        t0
      ])
      const entries = yield* log(created.id)
      const last = entries[entries.length - 1]!
      assert.isAtLeast(last.at - t0, 5 * day)
      assert.isBelow(entries[entries.length - 2]!.at - t0, 5 * day)
      assert.deepStrictEqual(
        (yield* deliveries(created.id)).slice(0, 2).map((d) => d.status),
        ["dead", "pending"]
      )
      yield* TestClock.adjust(Duration.days(1))
      yield* drain
      assert.strictEqual(receiver.received.length, entries.length)
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("SSRF: private destinations in every form are refused without a connection, and the attempt is logged", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const port = receiver.port
      const urls = [
        `http://127.0.0.1:${port}/hook`,
        `http://2130706433:${port}/hook`,
        `http://0x7f.1:${port}/hook`,
        `http://[::ffff:127.0.0.1]:${port}/hook`,
        `http://10.0.0.1:${port}/hook`,
        `http://metadata.example:${port}/hook`,
        `http://rebind.example:${port}/hook`
      ]
      const created = yield* Effect.forEach(urls, (url) => automation(url, { format: "tradeflow" }))
      yield* submit("TF-1")
      yield* drain
      assert.strictEqual(receiver.received.length, 0)
      assert.strictEqual(receiver.connections(), 0)
      for (const [i, a] of created.entries()) {
        const entries = yield* log(a.id)
        assert.deepStrictEqual(entries.map((e) => [e.status, e.response_status]), [["failed", null]], urls[i])
        assert.match(entries[0]?.error ?? "", /^blocked destination: /, urls[i])
      }
      assert.match((yield* log(created[5]!.id))[0]?.error ?? "", /169\.254\.169\.254 \(link-local\)/)
      assert.match((yield* log(created[6]!.id))[0]?.error ?? "", /127\.0\.0\.1 \(loopback\)/)
    }).pipe(Effect.provide(TestLayer(Ssrf.layer({ allowPrivate: false, allowHttp: true }), {
      allowPrivate: false,
      resolve: ((hostname, _options, callback) =>
        callback(null, [{
          address: hostname === "metadata.example" ? "169.254.169.254" : "127.0.0.1",
          family: 4
        }])) satisfies Ssrf.Resolver
    }))))

  it.scoped("the destination is checked through WebhookDestination before every attempt: a refusal is a failed attempt that sends nothing", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const refused = yield* automation(`${receiver.url()}?refused`)
      const allowed = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* drain
      const entries = yield* log(refused.id)
      assert.deepStrictEqual(entries.map((e) => [e.status, e.response_status]), [["failed", null]])
      assert.strictEqual(entries[0]?.error, "blocked destination: not on the host's list")
      assert.strictEqual(receiver.received.length, 19)
      assert.isTrue((yield* log(allowed.id)).every((e) => e.status === "delivered"))
    }).pipe(Effect.provide(TestLayer(Layer.succeed(
      WebhookDestination.WebhookDestination,
      WebhookDestination.WebhookDestination.of({
        check: (url) =>
          url.endsWith("?refused")
            ? Effect.fail(new WebhookDestination.DestinationRefused({ url, message: "not on the host's list" }))
            : Effect.void
      })
    )))))

  it.scoped("rotated secrets: both signatures are sent and verify for 24 hours, then only the new one", () =>
    Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      const { secret } = yield* Effect.flatMap(AutomationAdmin.AutomationAdmin, (a) => a.rotateSecret(created.id))
      yield* submit("TF-1")
      yield* drain
      const [request] = receiver.received
      assert.strictEqual(signatures(request).length, 2)
      assert.isTrue(verified(secret, request!))
      assert.isTrue(verified(created.secret, request!))

      yield* TestClock.adjust(Duration.hours(25))
      yield* submit("TF-2")
      yield* drain
      const later = receiver.received[1]!
      assert.strictEqual(signatures(later).length, 1)
      assert.isTrue(signedBy(secret, later))
      assert.isFalse(signedBy(created.secret, later))
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("a receiver that does not answer within 15 s fails with a timeout and is retried", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make((n) => n === 1 ? "hang" : ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      const fiber = yield* Effect.fork(drain)
      yield* receiver.arrived(1)
      yield* TestClock.adjust(Duration.seconds(15))
      yield* Fiber.join(fiber)
      yield* receiver.closed(1)
      const [entry] = yield* log(created.id)
      assert.deepStrictEqual([entry?.status, entry?.response_status, entry?.at], ["failed", null, t0 + 15 * second])
      assert.match(entry?.error ?? "", /^timeout: /)
      yield* settle(created.id)
      assert.deepStrictEqual((yield* log(created.id)).map((e) => e.status), ["failed", "delivered"])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("a Send test reaches a disabled automation and leaves its failure state alone", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make((n) => n === 1 ? { status: 500 } : ok)
      const created = yield* automation(receiver.url(), { enabled: false })
      const test: Delivery.NewDelivery = {
        automation_id: created.id,
        organisation_id: org,
        tradeflow_reference: "TEST",
        message_hash: "test-hash",
        seq: null,
        body: "{\"test\":true}",
        test: true,
        created_at: t0
      }
      yield* Effect.flatMap(DeliveryStore.DeliveryStore, (s) => s.enqueue(test))
      yield* settle(created.id)
      assert.deepStrictEqual(receiver.received.map((r) => [r.body, r.headers["webhook-id"]]), [
        ["{\"test\":true}", "test-hash"],
        ["{\"test\":true}", "test-hash"]
      ])
      assert.isTrue(verified(created.secret, receiver.received[0]!))
      assert.deepStrictEqual((yield* log(created.id)).map((e) => [e.status, e.test]), [["failed", true], [
        "delivered",
        true
      ]])
      const a = yield* stored(created.id)
      assert.deepStrictEqual([a.enabled, a.failing_since], [false, null])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("a delivery leased by a worker that died is attempted once the lease runs out; the dead claim records nothing", () =>
    Effect.gen(function*() {
      const t0 = yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url(), { format: "tradeflow" })
      yield* submit("TF-1")
      const store = yield* DeliveryStore.DeliveryStore
      const [lost] = yield* store.claim({ worker: "killed", limit: 10, leaseMillis: 60_000, now: t0 })
      yield* drain
      assert.strictEqual(receiver.received.length, 0)
      yield* TestClock.adjust(Duration.seconds(60))
      yield* drain
      assert.strictEqual(receiver.receipts().length, 1)
      const late = yield* store.record([{
        delivery_id: lost!.id,
        claim: lost!.claim,
        at: yield* now,
        status: "failed",
        response_status: null,
        error: "killed",
        response_body: null,
        retry_at: t0,
        disable: null
      }])
      assert.deepStrictEqual(late, [false])
      assert.deepStrictEqual((yield* log(created.id)).map((e) => e.status), ["delivered"])
      assert.deepStrictEqual((yield* deliveries(created.id)).map((d) => d.status), ["delivered"])
    }).pipe(Effect.provide(TestLayer())))

  it.scoped("an attempt that dies ends the drain with its defect once the batch's other attempts have answered, which are recorded", () => {
    const posts = { count: 0 }
    const dyingFirst = Layer.effect(
      WebhookClient.WebhookClient,
      Effect.map(WebhookClient.WebhookClient, (inner) =>
        WebhookClient.WebhookClient.of({
          post: (request) => ++posts.count === 1 ? Effect.dieMessage("the client broke") : inner.post(request)
        }))
    ).pipe(Layer.provide(WebhookClient.layer({ allowPrivate: true })))
    const layer = DeliveryWorker.layer({ background: false }).pipe(
      Layer.provide(dyingFirst),
      Layer.provide(localDestinations),
      Layer.provideMerge(Service.layer({ background: false })),
      Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
    )
    return Effect.gen(function*() {
      yield* start
      const receiver = yield* LocalReceiver.make(() => ok)
      const created = yield* automation(receiver.url())
      yield* submit("TF-1")
      yield* submit("TF-2")
      const exit = yield* Effect.exit(drain)
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause))
      assert.strictEqual(posts.count, 2)
      assert.strictEqual(receiver.receipts().length, 1)
      assert.deepStrictEqual((yield* log(created.id)).map((e) => e.status), ["delivered"])
      const states = (yield* deliveries(created.id)).map((d) => [d.status, d.attempt])
      assert.deepStrictEqual(states.filter(([status]) => status === "delivered"), [["delivered", 1]])
      assert.isTrue(states.filter(([status]) => status !== "delivered").every(([s, a]) => s === "pending" && a === 0))
    }).pipe(Effect.provide(layer))
  })

  it.scoped("in the background it delivers on wakeups and survives storage errors", () => {
    /* The clock is set before the layer starts: its poll loop must not replay the years since 1970. */
    const claims = { count: 0 }
    const layer = DeliveryWorker.layer().pipe(
      Layer.provide(WebhookClient.layer({ allowPrivate: true })),
      Layer.provide(localDestinations),
      Layer.provide(flakyClaims(claims)),
      Layer.provideMerge(Service.layer({ background: false })),
      Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
    )
    return Effect.zipRight(
      TestClock.setTime(Date.now()),
      Effect.gen(function*() {
        yield* start
        const receiver = yield* LocalReceiver.make(() => ok)
        const created = yield* automation(receiver.url())
        yield* submit("TF-1")
        yield* eventually(
          Effect.map(deliveries(created.id), (ds) => ds.length === 19 && ds.every((d) => d.status === "delivered"))
        )
        assert.strictEqual(receiver.receipts().length, 19)
        assert.isAtLeast(claims.count, 2)
      }).pipe(Effect.provide(layer))
    )
  })

  it.scoped("in the background it claims nothing before startAfter has completed", () =>
    Effect.gen(function*() {
      const claims = { count: 0 }
      const gate = yield* Deferred.make<void>()
      yield* Layer.build(
        DeliveryWorker.layer({ startAfter: Deferred.await(gate) }).pipe(
          Layer.provide(WebhookClient.layer({ allowPrivate: true })),
          Layer.provide(localDestinations),
          Layer.provide(flakyClaims(claims)),
          Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
        )
      )
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(claims.count, 0)
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust("2 seconds")
      assert.isAtLeast(claims.count, 2)
    }))
})
