import { assert, describe, it } from "@effect/vitest"
import { FakeCarrier } from "@tradeflow/tracking-dcsa/test-kit"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, consoleToken, freePort, kill, type Server, start } from "./Process.js"

const day = 86_400_000
const container = "MSKU1234565"

interface Message {
  readonly hash: string
  readonly type: string
  readonly payload: {
    readonly status_code?: string
    readonly actual?: boolean
    readonly status?: string
    readonly change?: { readonly move_type: string; readonly actual: boolean }
  }
}

/** A production organisation and key, through the console. */
const productionKey = async (server: Server) => {
  const auth = { authorization: `Bearer ${consoleToken}` }
  const org = await call(server, "POST", "/console/organisations", { name: "Tracked Freight" }, auth)
  const key = await call(
    server,
    "POST",
    `/console/organisations/${org.body.id}/api-keys`,
    { environment: "production" },
    auth
  )
  return { organisationId: org.body.id as string, key: key.body.key as string }
}

const upstream = async (server: Server, key: string): Promise<ReadonlyArray<Message>> =>
  (await call(server, "GET", "/upstream?per_page=500", undefined, { authorization: key })).body.data

/** Polls `GET /upstream` until `done` holds of the messages (at most `seconds`). */
const until = async (
  server: Server,
  key: string,
  done: (messages: ReadonlyArray<Message>) => boolean,
  seconds = 30
): Promise<ReadonlyArray<Message>> => {
  let messages: ReadonlyArray<Message> = []
  for (let i = 0; i < seconds * 5; i++) {
    messages = await upstream(server, key)
    if (done(messages)) return messages
    await new Promise((r) => setTimeout(r, 200))
  }
  assert.fail(`not within ${seconds} s: ${JSON.stringify(messages.map((m) => [m.type, m.payload.status_code]))}`)
}

const milestones = (messages: ReadonlyArray<Message>) =>
  messages.filter((m) => m.type === "CONTAINER_MILESTONE").map((m) =>
    `${m.payload.status_code} ${m.payload.actual ? "actual" : "predicted"}`
  )

/**
 * A fake carrier with one shipment of `container` (departed two days ago), a server tracking with
 * it through a sources file holding `source` (its `base_url` and `carriers` added), and a production
 * tradeflow of the container whose first milestones have arrived: what the push tests start from.
 */
const trackedByPush = (
  name: string,
  source: Record<string, unknown>,
  env: Record<string, string>
) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), `tracking-${name}-`))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const now = Date.now()
    const carrier = yield* FakeCarrier.make({
      shipments: [{
        booking: `BKG-${name}-1`,
        containers: [container],
        departure: now - 2 * day,
        arrival: now + 20 * day
      }]
    })
    const sources = join(dir, "sources.json")
    writeFileSync(sources, JSON.stringify({ sources: [{ ...source, base_url: carrier.url, carriers: ["MAEU"] }] }))
    const server = yield* Effect.promise(() =>
      start(join(dir, `${name}.sqlite`), {
        TRACKING_SOURCES_FILE: sources,
        TRACKING_INTERVAL_MILLIS: "500",
        PRODUCTION_HOSTS: "127.0.0.1",
        UAT_HOSTS: "uat.localhost",
        ...env
      })
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => kill(server)))
    const { key } = yield* Effect.promise(() => productionKey(server))
    yield* Effect.promise(() =>
      call(server, "POST", "/downstream/tradeflows", {
        tradeflow_reference: `${name}-1`,
        container_reference: container,
        carrier_scac: "MAEU"
      }, { authorization: key })
    )
    const polled = yield* Effect.promise(() => until(server, key, (ms) => milestones(ms).includes("AE actual")))
    /** Publishes a second shipment of the container, with events the carrier has not told yet. */
    const moreEvents = carrier.addShipment({
      booking: `BKG-${name}-2`,
      containers: [container],
      departure: now + 5 * day,
      arrival: now + 30 * day
    })
    return { carrier, server, key, polled, moreEvents }
  })

describe("tracking through the standalone server", () => {
  it.live(
    "a production tradeflow is tracked with the carrier of a sources file; a kill in the middle of a fetch loses and duplicates nothing",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "tracking-e2e-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const now = Date.now()
        const carrier = yield* FakeCarrier.make({
          shipments: [{
            booking: "BKG-TRACK-1",
            containers: [container],
            port_of_loading: "NLRTM",
            port_of_discharge: "SGSIN",
            departure: now - 2 * day,
            arrival: now + 20 * day
          }],
          auth: { type: "api-key", header: "Consumer-Key", value: "carrier-api-key-0123" }
        })
        const sources = join(dir, "sources.json")
        writeFileSync(
          sources,
          JSON.stringify({
            sources: [{
              id: "fake-maersk",
              version: "2.2",
              base_url: carrier.url,
              carriers: ["MAEU"],
              auth: { type: "api-key", header: "Consumer-Key", value_env: "FAKE_CARRIER_KEY" }
            }]
          })
        )
        const file = join(dir, "tracking.sqlite")
        const env = {
          TRACKING_SOURCES_FILE: sources,
          FAKE_CARRIER_KEY: "carrier-api-key-0123",
          TRACKING_INTERVAL_MILLIS: "500",
          TRACKING_LEASE_MILLIS: "3000",
          PRODUCTION_HOSTS: "127.0.0.1",
          UAT_HOSTS: "uat.localhost"
        }
        const first = yield* Effect.promise(() => start(file, env))
        yield* Effect.addFinalizer(() => Effect.promise(() => kill(first)))
        const { key, organisationId } = yield* Effect.promise(() => productionKey(first))

        carrier.failNext(1, "hang")
        const posted = yield* Effect.promise(() =>
          call(first, "POST", "/downstream/tradeflows", {
            tradeflow_reference: "TRACK-1",
            container_reference: container,
            carrier_scac: "MAEU",
            port_of_loading: "NLRTM",
            port_of_discharge: "SGSIN"
          }, { authorization: key })
        )
        assert.strictEqual(posted.status, 202)
        assert.deepStrictEqual(posted.body.tradeflows[0].warnings, [])
        yield* carrier.arrived(1)
        yield* Effect.promise(() => kill(first))
        const asked = carrier.received[0]!
        assert.strictEqual(asked.path, "/v2/events")
        assert.deepInclude(asked.params, ["equipmentReference", container])
        assert.strictEqual(asked.headers["consumer-key"], "carrier-api-key-0123")

        const second = yield* Effect.promise(() => start(file, env))
        yield* Effect.addFinalizer(() => Effect.promise(() => kill(second)))
        const messages = yield* Effect.promise(() =>
          until(
            second,
            key,
            (ms) => milestones(ms).includes("AE actual") && ms.some((m) => m.type === "SHIPMENT_CHANGE")
          )
        )
        assert.deepStrictEqual(milestones(messages).slice(0, 3), ["GE actual", "GN actual", "AE actual"])
        assert.isTrue(messages.some((m) => m.type === "SHIPMENT_CHANGE" && m.payload.change?.move_type === "departure"))
        assert.isTrue(messages.some((m) => m.payload.status === "TRACKING_STARTED"))
        assert.strictEqual(new Set(messages.map((m) => m.hash)).size, messages.length)

        const consoleAuth = { authorization: `Bearer ${consoleToken}` }
        const tracking = `/console/organisations/${organisationId}/tradeflows/TRACK-1/tracking`
        const before = yield* Effect.promise(() => call(second, "GET", tracking, undefined, consoleAuth))
        assert.strictEqual(before.body.source, "fake-maersk")
        assert.strictEqual(before.body.targets[0].state, "in_transit")
        assert.isNull(before.body.targets[0].last_error)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a carrier that pushes by subscription: a signed callback becomes messages within seconds, a forged one is refused and stores nothing",
    () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(freePort)
        const { carrier, key, moreEvents, polled, server } = yield* trackedByPush(
          "push",
          { id: "pushing", version: "2.2", push: "subscription" },
          { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }
        )
        for (let i = 0; i < 100 && carrier.subscriptions().length === 0; i++) yield* Effect.sleep("100 millis")
        const [subscription] = carrier.subscriptions()
        assert.strictEqual(subscription?.callbackUrl, `http://127.0.0.1:${port}/tracking/sources/pushing/callback`)
        assert.deepStrictEqual(subscription?.filters["equipmentReference"], container)

        yield* moreEvents
        carrier.setQuirks({ badSignature: true })
        const forged = yield* carrier.deliver
        assert.deepStrictEqual(forged.map((c) => c.status), [401])
        yield* Effect.sleep("1 second")
        assert.strictEqual((yield* Effect.promise(() => upstream(server, key))).length, polled.length)

        carrier.setQuirks({ badSignature: false })
        const signed = yield* carrier.deliver
        assert.deepStrictEqual(signed.map((c) => c.status), [204])
        const pushed = yield* Effect.promise(() => until(server, key, (ms) => ms.length > polled.length, 10))
        assert.isAbove(milestones(pushed).length, milestones(polled).length)
        assert.strictEqual(new Set(pushed.map((m) => m.hash)).size, pushed.length)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a DCSA 3.0 carrier that pushes to our consumer endpoint: its pushes become messages, one without the token is refused, one with it that cannot be read is a 400",
    () =>
      Effect.gen(function*() {
        const { carrier, key, moreEvents, polled, server } = yield* trackedByPush(
          "consumer",
          { id: "three", version: "3.0", push: "consumer", consumer_token_env: "THREE_PUSH_TOKEN" },
          { THREE_PUSH_TOKEN: "three-push-token-0123" }
        )
        const since = Date.now()
        yield* moreEvents
        const consumer = `${server.base}/tracking/sources/three/events`
        const anonymous = yield* carrier.pushTo(consumer, since)
        assert.strictEqual(anonymous.status, 401)
        yield* Effect.sleep("1 second")
        assert.strictEqual((yield* Effect.promise(() => upstream(server, key))).length, polled.length)
        const pushed = yield* carrier.pushTo(consumer, since, "three-push-token-0123")
        assert.strictEqual(pushed.status, 200)
        const after = yield* Effect.promise(() => until(server, key, (ms) => ms.length > polled.length, 10))
        assert.isAbove(milestones(after).length, milestones(polled).length)
        assert.strictEqual(new Set(after.map((m) => m.hash)).size, after.length)
        const unreadable = yield* Effect.promise(() =>
          fetch(consumer, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer three-push-token-0123" },
            body: JSON.stringify({ events: "none" })
          })
        )
        const problem = (yield* Effect.promise(() => unreadable.json())) as { detail: string }
        assert.deepStrictEqual([unreadable.status, problem.detail.startsWith("the push cannot be read: ")], [400, true])
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})
