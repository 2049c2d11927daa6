import { describe, expect, it } from "@effect/vitest"
import { AutomationStore, Cursor, Settings } from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Signing } from "@tradeflow/webhook"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "./Fixtures.js"
import { call, consoleToken, kill, refusedStart, type Server, start } from "./Process.js"

const consoleAuth = { authorization: `Bearer ${consoleToken}` }

/** The stored automation and cursor secret, read from the file without any key (what the database holds). */
const stored = (file: string, automationId: string) =>
  Effect.gen(function*() {
    const automation = Option.getOrThrow(yield* (yield* AutomationStore.AutomationStore).get(automationId))
    const cursor = Option.getOrThrow(yield* (yield* Settings.Settings).get(Cursor.settingName))
    return { secrets: automation.secrets.map((s) => s.secret), cursor }
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: file })), Effect.scoped, Effect.runPromise)

describe("SECRETS_KEY", () => {
  it(
    "encrypts plaintext secrets at start, signs with them, and a wrong key, no key or a malformed key stops the start",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-secrets-"))
      const file = join(dir, "tracking.sqlite")
      const received: Array<{ headers: IncomingHttpHeaders; body: string }> = []
      const receiver = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
          res.writeHead(204).end()
        })
      })
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      const servers: Array<Server> = []
      const env = { WEBHOOK_ALLOW_PRIVATE: "true" }
      try {
        const plain = await start(file, env)
        servers.push(plain)
        const key = await uatKey(plain, "Secret Freight")
        const created = await call(plain, "POST", `/console/organisations/${key.organisation.id}/automations`, {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
          enabled: true
        }, consoleAuth)
        expect(created.status).toBe(201)
        const page = await call(plain, "GET", "/v3/upstream?per_page=10", undefined, { authorization: key.key })
        expect(page.status).toBe(200)
        await kill(plain)
        const before = await stored(file, created.body.id)
        expect(before.secrets).toEqual([created.body.secret])

        const secretsKey = randomBytes(32).toString("base64")
        const keyed = await start(file, { ...env, SECRETS_KEY: secretsKey })
        servers.push(keyed)
        const after = await stored(file, created.body.id)
        expect(after.secrets.every((s) => s.startsWith("enc:v1:") && !s.includes(created.body.secret))).toBe(true)
        expect(after.cursor).toMatch(/^enc:v1:/)
        expect(after.cursor).not.toContain(before.cursor)
        const next = await call(
          keyed,
          "GET",
          `/v3/upstream?per_page=10&cursor=${encodeURIComponent(page.body.next_cursor)}`,
          undefined,
          {
            authorization: key.key
          }
        )
        expect(next.status).toBe(200)
        const test = await call(keyed, "POST", `/console/automations/${created.body.id}/test`, undefined, consoleAuth)
        expect(test.status).toBe(202)
        for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100))
        expect(received.length).toBe(1)
        expect(Signing.verify({
          secrets: [created.body.secret],
          headers: received[0]!.headers as Record<string, string>,
          body: received[0]!.body,
          now: Date.now() / 1000
        })).toBe(true)
        await kill(keyed)

        const wrong = await refusedStart(file, { SECRETS_KEY: randomBytes(32).toString("hex") })
        expect(wrong.code).not.toBe(0)
        expect(wrong.output).toContain("SECRETS_KEY: the key is not the one the stored secrets were encrypted with")
        const none = await refusedStart(file, {})
        expect(none.code).not.toBe(0)
        expect(none.output).toContain("SECRETS_KEY: no key is configured, but the stored secrets are encrypted")
        const malformed = await refusedStart(file, { SECRETS_KEY: "too-short" })
        expect(malformed.code).not.toBe(0)
        expect(malformed.output).toContain("SECRETS_KEY: the key must be 32 bytes")
        expect(malformed.output).not.toContain("too-short")
      } finally {
        await Promise.all(servers.map(kill))
        await new Promise<void>((resolve) => receiver.close(() => resolve()))
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000
  )
})
