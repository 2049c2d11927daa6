import { mkdtempSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kill, type Server, start } from "./Process.js"

/** A raw connection: what the server sent on it, and a promise that settles when it closes. */
const connect = (port: number) => {
  const socket = Net.connect(port, "127.0.0.1")
  let received = ""
  socket.on("data", (d) => void (received += d.toString("utf8")))
  socket.on("error", () => {})
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(received)))
  const open = new Promise<void>((resolve) => socket.on("connect", () => resolve()))
  return { socket, open, closed }
}

describe("connections of the standalone server", () => {
  let server: Server
  beforeAll(async () => {
    server = await start(join(mkdtempSync(join(tmpdir(), "tradeflow-connections-")), "tracking.sqlite"), {
      MAX_CONNECTIONS: "3",
      SOCKET_IDLE_TIMEOUT_MILLIS: "1000"
    })
  }, 60_000)
  afterAll(() => kill(server))

  it("holds at most MAX_CONNECTIONS: one more is closed unanswered, and the server serves again once they go", async () => {
    const port = Number(new URL(server.base).port)
    const held = [connect(port), connect(port), connect(port)]
    await Promise.all(held.map((c) => c.open))
    for (const c of held) c.socket.write("GET /health HTTP/1.1\r\nhost: localhost\r\n")
    const extra = connect(port)
    await extra.open
    extra.socket.write("GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n")
    expect(await extra.closed).toBe("")
    for (const c of held) c.socket.destroy()
    await Promise.all(held.map((c) => c.closed))
    const health = await fetch(`${server.base}/health`)
    expect(health.status).toBe(200)
  })

  it("closes a connection on which the client stopped sending after SOCKET_IDLE_TIMEOUT_MILLIS", async () => {
    const port = Number(new URL(server.base).port)
    const idle = connect(port)
    await idle.open
    idle.socket.write("POST /downstream/tradeflows HTTP/1.1\r\nhost: localhost\r\ncontent-length: 100\r\n")
    expect(await idle.closed).toBe("")
    expect((await fetch(`${server.base}/health`)).status).toBe(200)
  })
})
