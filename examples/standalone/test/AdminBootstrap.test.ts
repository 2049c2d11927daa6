import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { kill, refusedStart, start } from "./Process.js"

const email = "Ops@Example.com"
const password = "an operator's long password"

/** Signs in through the web application: the status of the answer (303 when signed in). */
const signIn = async (base: string, secret: string) => {
  const answer = await fetch(`${base}/app/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ email: "ops@example.com", password: secret, next: "" }).toString()
  })
  return answer.status
}

describe("ADMIN_EMAIL and ADMIN_PASSWORD", () => {
  it(
    "create the first operator once, never log the password, and refuse to start when half set or too weak",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-admin-"))
      const file = join(dir, "tracking.sqlite")
      try {
        const half = await refusedStart(file, { ADMIN_EMAIL: email })
        expect(half.code).not.toBe(0)
        expect(half.output).toContain("ADMIN_PASSWORD")
        const weak = await refusedStart(file, { ADMIN_EMAIL: email, ADMIN_PASSWORD: "short" })
        expect(weak.code).not.toBe(0)
        expect(weak.output).toMatch(/ADMIN_PASSWORD.*12/s)
        expect(weak.output).not.toContain("short\"")

        const first = await start(file, { ADMIN_EMAIL: email, ADMIN_PASSWORD: password })
        try {
          expect(await signIn(first.base, password)).toBe(303)
          expect(await signIn(first.base, "not the password at all")).toBe(401)
          expect(first.output()).toContain(`created the operator account ${email}`)
          expect(first.output()).not.toContain(password)
        } finally {
          await kill(first)
        }

        const again = await start(file, { ADMIN_EMAIL: "other@example.com", ADMIN_PASSWORD: "another long password" })
        try {
          expect(again.output()).toContain("users exist already")
          expect(await signIn(again.base, password)).toBe(303)
          expect(await signIn(again.base, "another long password")).toBe(401)
          expect(again.output()).not.toContain("another long password")
        } finally {
          await kill(again)
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000
  )
})
