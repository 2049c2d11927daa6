import { describe, expect, it } from "@effect/vitest"
import { Signing } from "@tradeflow/webhook"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, consoleToken, kill, type Server, start } from "./Process.js"

/** How the receiver answers a request: a status, or no answer at all (the request is held open). */
type Answer = number | "hold"

interface Received {
  readonly id: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly answer: Answer
}

/** A `node:http` receiver on 127.0.0.1 (port 0) answering each request with `answer(request, earlier)`. */
const receiver = async (answer: (id: string, earlier: ReadonlyArray<Received>) => Answer) => {
  const received: Array<Received> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
      const id = String(req.headers["webhook-id"])
      const reply = answer(id, received)
      received.push({ id, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), answer: reply })
      if (reply !== "hold") res.writeHead(reply, { "content-type": "text/plain" }).end(reply < 300 ? "ok" : "failing")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    /** Requests answered with a 2xx, in arrival order. */
    receipts: () => received.filter((r) => typeof r.answer === "number" && r.answer >= 200 && r.answer < 300),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

type Receiver = Awaited<ReturnType<typeof receiver>>

const waitFor = async (what: string, done: () => boolean | Promise<boolean>, timeoutMillis: number) => {
  const deadline = Date.now() + timeoutMillis
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const consoleAuth = { authorization: `Bearer ${consoleToken}` }

/** An organisation with a UAT key; automations go on the key's (UAT) organisation. */
const uatOrganisation = async (server: Server, name: string) => {
  const org = await call(server, "POST", "/console/organisations", { name }, consoleAuth)
  expect(org.status).toBe(201)
  const key = await call(
    server,
    "POST",
    `/console/organisations/${org.body.id}/api-keys`,
    { environment: "uat" },
    consoleAuth
  )
  expect(key.status).toBe(201)
  return { key: key.body.key as string, organisationId: key.body.organisation.id as string }
}

const automation = async (server: Server, organisationId: string, url: string, enabled: boolean) => {
  const created = await call(server, "POST", `/console/organisations/${organisationId}/automations`, {
    url,
    format: "message",
    enabled
  }, consoleAuth)
  expect(created.status).toBe(201)
  expect(created.body.enabled).toBe(enabled)
  return created.body as { id: string; secret: string }
}

const postRecord = async (server: Server, key: string, reference: string) => {
  const answer = await call(server, "POST", "/v3/downstream/tradeflows", {
    tradeflow_reference: reference,
    container_reference: "CSQU3054383",
    port_of_loading: "CNSHA",
    port_of_discharge: "NLRTM",
    mock_tracking: { scenario: "ocean_basic" }
  }, { authorization: key })
  expect(answer.status).toBe(202)
}

interface UpstreamMessage {
  readonly type: string
  readonly hash: string
}

/** Every upstream message of the tradeflow except BASIC_STATUS, in sequence order (all cursor pages). */
const expectedMessages = async (server: Server, key: string, reference: string) => {
  const messages: Array<UpstreamMessage> = []
  let cursor: string | undefined
  for (;;) {
    const query = `tradeflow=${reference}&per_page=500${
      cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`
    }`
    const page = await call(server, "GET", `/v3/upstream?${query}`, undefined, { authorization: key })
    expect(page.status).toBe(200)
    messages.push(...page.body.data as Array<UpstreamMessage>)
    if (!page.body.has_more) break
    cursor = page.body.next_cursor
  }
  return messages.filter((m) => m.type !== "BASIC_STATUS")
}

interface LogEntry {
  readonly id: number
  readonly message_hash: string
  readonly attempt: number
  readonly status: "delivered" | "failed" | "dead"
  readonly response_status: number | null
  readonly test: boolean
}

const deliveryLog = async (server: Server, automationId: string): Promise<Array<LogEntry>> => {
  const log = await call(
    server,
    "GET",
    `/console/automations/${automationId}/deliveries?limit=1000`,
    undefined,
    consoleAuth
  )
  expect(log.status).toBe(200)
  return log.body
}

const signed = (request: Received, secret: string) =>
  Signing.verify({
    secrets: [secret],
    headers: request.headers as Record<string, string>,
    body: request.body,
    now: Date.now() / 1000
  })

/**
 * Waits until the receiver has a 2xx for every non-BASIC_STATUS upstream message of the
 * tradeflow, then answers those messages (read again, so none generated meanwhile is missed).
 */
const allDelivered = async (server: Server, key: string, reference: string, to: Receiver, timeoutMillis: number) => {
  await waitFor(
    "the tradeflow's messages",
    async () => (await expectedMessages(server, key, reference)).length > 0,
    20_000
  )
  await waitFor("every message to arrive", async () => {
    const delivered = new Set(to.receipts().map((r) => r.id))
    return (await expectedMessages(server, key, reference)).every((m) => delivered.has(m.hash))
  }, timeoutMillis)
  return expectedMessages(server, key, reference)
}

/** A temporary SQLite file, and the servers started on it: all killed, and the file removed, by `cleanup`. */
const fixture = () => {
  const dir = mkdtempSync(join(tmpdir(), "tradeflow-webhook-"))
  const servers: Array<Server> = []
  const receivers: Array<Receiver> = []
  return {
    start: async (env: Record<string, string> = {}) => {
      const server = await start(join(dir, "tracking.sqlite"), { WEBHOOK_ALLOW_PRIVATE: "true", ...env })
      servers.push(server)
      return server
    },
    receiver: async (answer: Parameters<typeof receiver>[0]) => {
      const r = await receiver(answer)
      receivers.push(r)
      return r
    },
    cleanup: async () => {
      await Promise.all(servers.map(kill))
      await Promise.all(receivers.map((r) => r.close()))
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

describe("webhook push from the standalone server", () => {
  it(
    "delivers every message of a tradeflow signed and in order; a disabled automation gets nothing but its Send test",
    async () => {
      const f = fixture()
      try {
        const server = await f.start()
        const enabledReceiver = await f.receiver(() => 200)
        const disabledReceiver = await f.receiver(() => 200)
        const { key, organisationId } = await uatOrganisation(server, "Webhook Freight")
        const enabled = await automation(server, organisationId, enabledReceiver.url, true)
        const disabled = await automation(server, organisationId, disabledReceiver.url, false)
        await postRecord(server, key, "PO-HOOK-1")

        const expected = await allDelivered(server, key, "PO-HOOK-1", enabledReceiver, 30_000)
        expect(new Set(expected.map((m) => m.type))).toEqual(
          new Set(["CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"])
        )
        expect(enabledReceiver.received.map((r) => r.id)).toEqual(expected.map((m) => m.hash))
        for (const [i, request] of enabledReceiver.received.entries()) {
          expect(signed(request, enabled.secret)).toBe(true)
          expect(signed(request, disabled.secret)).toBe(false)
          expect(request.headers["content-type"]).toMatch(/^application\/json/)
          expect(JSON.parse(request.body)).toEqual(expected[i])
        }

        const log = await deliveryLog(server, enabled.id)
        expect(log.map((e) => e.message_hash).sort()).toEqual(expected.map((m) => m.hash).sort())
        expect(log.every((e) => e.status === "delivered" && e.attempt === 1 && e.response_status === 200 && !e.test))
          .toBe(true)
        expect(disabledReceiver.received).toEqual([])
        expect(await deliveryLog(server, disabled.id)).toEqual([])

        const test = await call(server, "POST", `/console/automations/${disabled.id}/test`, undefined, consoleAuth)
        expect(test.status).toBe(202)
        await waitFor(
          "the Send test to be logged",
          async () => (await deliveryLog(server, disabled.id)).length > 0,
          20_000
        )
        const testLog = await deliveryLog(server, disabled.id)
        expect(testLog).toMatchObject([{
          message_hash: test.body.message_hash,
          status: "delivered",
          attempt: 1,
          test: true
        }])
        expect(disabledReceiver.received.map((r) => r.id)).toEqual([test.body.message_hash])
        expect(signed(disabledReceiver.received[0]!, disabled.secret)).toBe(true)
        expect(enabledReceiver.received.length).toBe(expected.length)
      } finally {
        await f.cleanup()
      }
    },
    60_000
  )

  it(
    "500, 500, then 200: failed, failed, delivered in the log, and the tradeflow's later messages wait for it",
    async () => {
      const f = fixture()
      try {
        const server = await f.start()
        const failing = await f.receiver((id, earlier) => {
          const first = earlier[0]?.id ?? id
          return id === first && earlier.filter((r) => r.id === first).length < 2 ? 500 : 200
        })
        const { key, organisationId } = await uatOrganisation(server, "Flaky Freight")
        const hook = await automation(server, organisationId, failing.url, true)
        await postRecord(server, key, "PO-HOOK-2")

        const expected = await allDelivered(server, key, "PO-HOOK-2", failing, 70_000)
        const firstId = expected[0]!.hash
        expect(failing.received.map((r) => [r.id, r.answer])).toEqual([
          [firstId, 500],
          [firstId, 500],
          ...expected.map((m) => [m.hash, 200])
        ])
        expect(failing.received.every((r) => signed(r, hook.secret))).toBe(true)

        const log = await deliveryLog(server, hook.id)
        const first = log.filter((e) => e.message_hash === firstId).sort((a, b) => a.attempt - b.attempt)
        expect(first.map((e) => [e.attempt, e.status, e.response_status])).toEqual([
          [1, "failed", 500],
          [2, "failed", 500],
          [3, "delivered", 200]
        ])
        expect(new Set(first.map((e) => e.id)).size).toBe(1)
        const others = log.filter((e) => e.message_hash !== firstId)
        expect(others.length).toBe(expected.length - 1)
        expect(others.every((e) => e.status === "delivered" && e.attempt === 1)).toBe(true)
      } finally {
        await f.cleanup()
      }
    },
    90_000
  )

  it(
    "a server killed mid-delivery: another one on the same file delivers it again once the lease runs out, and loses nothing",
    async () => {
      const f = fixture()
      try {
        const env = { WEBHOOK_LEASE_MILLIS: "20000" }
        const first = await f.start(env)
        const holding = await f.receiver((_, earlier) => (earlier.length === 0 ? "hold" : 200))
        const { key, organisationId } = await uatOrganisation(first, "Crashing Freight")
        const hook = await automation(first, organisationId, holding.url, true)
        await postRecord(first, key, "PO-HOOK-3")

        await waitFor("the first delivery", () => holding.received.length > 0, 20_000)
        await kill(first)
        const heldId = holding.received[0]!.id
        expect(holding.received.length).toBe(1)

        const second = await f.start(env)
        const expected = await allDelivered(second, key, "PO-HOOK-3", holding, 60_000)
        expect(expected[0]!.hash).toBe(heldId)
        expect(holding.received.map((r) => r.id)).toEqual([heldId, ...expected.map((m) => m.hash)])
        expect(holding.receipts().map((r) => r.id)).toEqual(expected.map((m) => m.hash))
        expect(holding.received.every((r) => signed(r, hook.secret))).toBe(true)

        const log = await deliveryLog(second, hook.id)
        expect(log.map((e) => e.message_hash).sort()).toEqual(expected.map((m) => m.hash).sort())
        expect(log.every((e) => e.status === "delivered")).toBe(true)
      } finally {
        await f.cleanup()
      }
    },
    90_000
  )
})
