import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { syncMillis } from "../../../packages/http-node/src/internal/rateLimit.js"
import { makeTestSchema } from "../../../packages/storage-pg/test/TestDatabase.js"
import { uatKey } from "./Fixtures.js"
import { kill, type Server, start } from "./Process.js"

const upstream = async (server: Server, key: string) => {
  const res = await fetch(`${server.base}/upstream`, { headers: { authorization: key } })
  await res.arrayBuffer()
  return { status: res.status, limit: res.headers.get("ratelimit"), retryAfter: res.headers.get("retry-after") }
}

describe("rate limits shared by the processes of one PostgreSQL database", () => {
  it(
    "two processes count one key's requests together: a request after a sync interval sees every earlier hit",
    async () => {
      const scope = Effect.runSync(Scope.make())
      const servers: Array<Server> = []
      try {
        const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
        const env = { DATABASE_URL: test.url, RATE_LIMIT_API_UAT: "5/86400", PG_MAX_CONNECTIONS: "4" }
        servers.push(...await Promise.all([start("", env), start("", env)]))
        const [a, b] = servers as [Server, Server]
        const { key } = await uatKey(a, "Shared quota")
        const seen: Array<string | null> = []
        for (let i = 0; i < 5; i++) {
          await new Promise((resolve) => setTimeout(resolve, 2 * syncMillis))
          const answer = await upstream(i % 2 === 0 ? a : b, key)
          expect(answer.status).toBe(200)
          seen.push(answer.limit?.replace(/;t=\d+$/, "") ?? null)
        }
        expect(seen).toEqual([4, 3, 2, 1, 0].map((r) => `"default";r=${r}`))
        for (const server of [a, b]) {
          const refused = await upstream(server, key)
          expect(refused.status).toBe(429)
          expect(Number(refused.retryAfter)).toBeGreaterThan(0)
        }
      } finally {
        await Promise.all(servers.map(kill))
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    },
    120_000
  )
})
