import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Signing } from "@tradeflow/webhook"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { type Delivery, makeReceiver } from "../src/Receiver.js"

const secret = Signing.generateSecret()
const received: Array<Delivery> = []
const logged: Array<string> = []
let server: Server
let url: string

const now = (): number => Math.floor(Date.now() / 1000)

const post = async (
  body: string,
  headers: Record<string, string>
): Promise<number> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body
  })
  await response.arrayBuffer()
  return response.status
}

const message = (id: string) => JSON.stringify({ type: "CONTAINER_MILESTONE", tradeflow_reference: "TF-1", id })

beforeAll(async () => {
  server = createServer(
    makeReceiver({
      secret,
      onMessage: (delivery) => void received.push(delivery),
      log: (line) => void logged.push(line)
    })
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const countOf = (id: string): number => received.filter((delivery) => delivery.id === id).length

describe("Receiver", () => {
  it("accepts a signed delivery once and acknowledges a repeat without processing it", async () => {
    const body = message("a")
    const headers = Signing.headers({ secrets: [secret], id: "msg_a", timestamp: now(), body })
    expect(await post(body, headers)).toBe(204)
    expect(countOf("msg_a")).toBe(1)
    expect(received.find((delivery) => delivery.id === "msg_a")).toEqual({
      id: "msg_a",
      type: "CONTAINER_MILESTONE",
      payload: JSON.parse(body)
    })
    expect(logged).toContain("delivery msg_a (CONTAINER_MILESTONE)")

    const retried = Signing.headers({ secrets: [secret], id: "msg_a", timestamp: now() + 1, body })
    expect(await post(body, retried)).toBe(204)
    expect(countOf("msg_a")).toBe(1)
  })

  it("rejects a tampered body with 401", async () => {
    const body = message("b")
    const headers = Signing.headers({ secrets: [secret], id: "msg_b", timestamp: now(), body })
    expect(await post(body.replace("TF-1", "TF-2"), headers)).toBe(401)
    expect(countOf("msg_b")).toBe(0)
  })

  it("accepts a delivery signed during a rotation when only the old secret is the receiver's", async () => {
    const body = message("c")
    const rotated = Signing.generateSecret()
    const headers = Signing.headers({ secrets: [rotated, secret], id: "msg_c", timestamp: now(), body })
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2)
    expect(await post(body, headers)).toBe(204)
    expect(countOf("msg_c")).toBe(1)
  })

  it("rejects a delivery signed only with another secret", async () => {
    const body = message("d")
    const headers = Signing.headers({ secrets: [Signing.generateSecret()], id: "msg_d", timestamp: now(), body })
    expect(await post(body, headers)).toBe(401)
    expect(countOf("msg_d")).toBe(0)
  })

  it("rejects a stale timestamp with 401", async () => {
    const body = message("e")
    const headers = Signing.headers({ secrets: [secret], id: "msg_e", timestamp: now() - 600, body })
    expect(await post(body, headers)).toBe(401)
    expect(countOf("msg_e")).toBe(0)
  })

  it("rejects missing signature headers with 401", async () => {
    expect(await post(message("f"), {})).toBe(401)
  })

  it("answers 400 to a correctly signed body that is not JSON", async () => {
    const body = "not json"
    const headers = Signing.headers({ secrets: [secret], id: "msg_g", timestamp: now(), body })
    expect(await post(body, headers)).toBe(400)
    expect(countOf("msg_g")).toBe(0)
  })

  it("labels a V3 tradeflow document as tradeflow", async () => {
    const body = JSON.stringify({ version: "3.0.0", tradeflow_reference: "TF-9" })
    const headers = Signing.headers({ secrets: [secret], id: "msg_h", timestamp: now(), body })
    expect(await post(body, headers)).toBe(204)
    expect(received.find((delivery) => delivery.id === "msg_h")?.type).toBe("tradeflow")
  })
})

describe("Receiver failures", () => {
  it("answers 500 when processing fails and processes the retry", async () => {
    let calls = 0
    const failing = createServer(
      makeReceiver({
        secret,
        log: () => {},
        onMessage: () => {
          calls += 1
          if (calls === 1) throw new Error("boom")
        }
      })
    )
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve))
    const target = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/`
    try {
      const body = message("z")
      const send = async () => {
        const headers = Signing.headers({ secrets: [secret], id: "msg_z", timestamp: now(), body })
        const response = await fetch(target, { method: "POST", headers, body })
        await response.arrayBuffer()
        return response.status
      }
      expect(await send()).toBe(500)
      expect(await send()).toBe(204)
      expect(await send()).toBe(204)
      expect(calls).toBe(2)
    } finally {
      await new Promise<void>((resolve) => failing.close(() => resolve()))
    }
  })
})
