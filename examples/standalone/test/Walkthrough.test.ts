import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { kill, root, start } from "./Process.js"

const walkthrough = (): string => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const block = /```sh walkthrough\n([\s\S]*?)```/.exec(readme)
  if (block === null) throw new Error("README.md has no walkthrough block")
  return block[1]!
}

describe("README", () => {
  it("the UAT walk-through works as printed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-readme-"))
    const server = await start(join(dir, "tracking.sqlite"), {
      CONSOLE_TOKEN: "dev-console-token-0123456789abcdef",
      PRODUCTION_HOSTS: "localhost,127.0.0.1",
      UAT_HOSTS: "uat.localhost"
    })
    try {
      const port = new URL(server.base).port
      const script = walkthrough().replaceAll("localhost:8080", `localhost:${port}`)
      expect(script).toContain(`localhost:${port}`)
      const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], { cwd: root })
      const [accepted, milestones] = stdout.trim().split("\n")
      expect(JSON.parse(accepted!)).toEqual({
        status: "queued",
        tradeflows: [{ tradeflow_reference: "PO-2026-0042", warnings: [] }]
      })
      const messages = JSON.parse(milestones!) as Array<{ type: string; payload: Record<string, unknown> }>
      expect(messages.map((m) => m.type)).toEqual(Array(7).fill("CONTAINER_MILESTONE"))
      expect(messages.map((m) => m.payload["status_code"])).toEqual(["GE", "GN", "AE", "VA", "UV", "GT", "GR"])
      expect(messages.map((m) => m.payload["actual"])).toEqual([true, true, true, false, false, false, false])
      expect(messages.every((m) => !("shipment" in m.payload))).toBe(true)
    } finally {
      await kill(server)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
