import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect, record, uatKey } from "./Fixtures.js"
import { call, kill, type Server, start } from "./Process.js"

const graceMillis = 15_000
const env = { WORKER_LEASE_MILLIS: "2000", SHUTDOWN_GRACE_MILLIS: String(graceMillis), RATE_LIMIT_API_UAT: "off" }

const exited = (server: Server) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      return resolve({ code: server.child.exitCode, signal: server.child.signalCode })
    }
    server.child.once("exit", (code, signal) => resolve({ code, signal }))
  })

/** A raw connection that sends `first` now and the rest on `send`; `answers` are the heads (status line and headers) it received once it closes. */
const raw = (server: Server, first: string) => {
  const socket = connect(Number(new URL(server.base).port), "127.0.0.1")
  let received = ""
  socket.on("data", (chunk) => received += chunk.toString("latin1"))
  const answers = new Promise<Array<string>>((resolve) => {
    socket.on("close", () => resolve(received.match(/HTTP\/1\.1 \d{3}[^\r]*\r\n(?:[^\r]+\r\n)*/g) ?? []))
  })
  socket.write(first)
  return { answers, send: (rest: string) => socket.write(rest) }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("graceful shutdown", () => {
  it(
    "SIGTERM mid-stream: exit 0 within the grace period, every 202 processed exactly once after a restart",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-shutdown-"))
      const file = join(dir, "tracking.sqlite")
      let first: Server | undefined
      try {
        first = await start(file, env)
        const server = first
        const key = await uatKey(server, "Shutdown Freight")
        const headers = { authorization: key.key }
        const path = "/v3/downstream/tradeflows"
        const accepted: Array<string> = []
        const afterSignal: Array<number | "no answer"> = []
        let signalled = false
        const client = async (c: number) => {
          for (let i = 0; i < 100_000; i++) {
            const reference = `S-${c}-${i}`
            const sentAfterSignal = signalled
            const answer = await call(server, "POST", path, [record(reference), record(`${reference}-b`)], headers)
              .catch(() => undefined)
            if (sentAfterSignal) afterSignal.push(answer?.status ?? "no answer")
            if (answer?.status === 202) accepted.push(reference, `${reference}-b`)
            if (answer === undefined) return
          }
        }
        const clients = Array.from({ length: 8 }, (_, c) => client(c))
        while (accepted.length < 100) await sleep(20)

        const body = JSON.stringify([record("SLOW")])
        const slow = raw(
          server,
          [
            `POST ${path} HTTP/1.1`,
            "host: 127.0.0.1",
            "content-type: application/json",
            `content-length: ${Buffer.byteLength(body)}`,
            `authorization: ${key.key}`,
            "",
            body.slice(0, 10)
          ].join("\r\n")
        )
        const late = raw(server, "GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        await sleep(200)
        const exit = exited(server)
        const signalledAt = Date.now()
        signalled = true
        server.child.kill("SIGTERM")
        await sleep(500)
        expect(server.child.exitCode).toBe(null)
        const fresh = await call(server, "GET", "/health").then((r) => r.status, () => "no answer")
        expect(["no answer", 503]).toContain(fresh)
        late.send("\r\n")
        const [unavailable, ...more] = await late.answers
        expect(unavailable).toMatch(/^HTTP\/1\.1 503 .*\r\n(.*\r\n)*connection: close\r\n/i)
        expect(more).toEqual([])
        expect(server.child.exitCode).toBe(null)
        slow.send(body.slice(10))
        const [queued, ...none] = await slow.answers
        expect(queued).toMatch(/^HTTP\/1\.1 202 .*\r\n(.*\r\n)*connection: close\r\n/i)
        expect(none).toEqual([])
        accepted.push("SLOW")

        const { code, signal } = await exit
        const shutdownMillis = Date.now() - signalledAt
        await Promise.all(clients)
        expect({ code, signal }).toEqual({ code: 0, signal: null })
        expect(shutdownMillis).toBeLessThan(graceMillis)
        expect(afterSignal.every((s) => s === 202 || s === 503 || s === "no answer")).toBe(true)

        const second = await start(file, env)
        try {
          let after = await inspect(file, key.organisation.id)
          for (let i = 0; i < 300 && after.pending > 0; i++) {
            await sleep(100)
            after = await inspect(file, key.organisation.id)
          }
          expect(after.pending).toBe(0)
          for (const reference of accepted) expect(after.created.get(reference)).toBe(1)
          expect([...after.created.values()].every((n) => n === 1)).toBe(true)
          expect(new Set(after.hashes).size).toBe(after.hashes.length)
        } finally {
          await kill(second)
        }
      } finally {
        if (first !== undefined) await kill(first)
        rmSync(dir, { recursive: true, force: true })
      }
    },
    90_000
  )

  it("SIGINT on an idle server exits 0 at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-sigint-"))
    try {
      const server = await start(join(dir, "tracking.sqlite"), env)
      const exit = exited(server)
      const signalledAt = Date.now()
      server.child.kill("SIGINT")
      expect(await exit).toEqual({ code: 0, signal: null })
      expect(Date.now() - signalledAt).toBeLessThan(5_000)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
