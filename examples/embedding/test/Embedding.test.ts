/**
 * The embedding host run as a process (its main.ts under tsx, the workspace packages from source):
 * its own routes, the API mounted under /tracking, and what it did in-process.
 */
import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"

const main = join(import.meta.dirname, "..", "src", "main.ts")

interface Host {
  readonly child: ChildProcess
  readonly base: string
}

const start = (dataDir: string) =>
  new Promise<Host>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@tradeflow/source", "--import", "tsx", main], {
      env: { ...process.env, PORT: "0", DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const port = /listening on http:\/\/localhost:(\d+)/.exec(out)?.[1]
      if (port !== undefined) resolve({ child, base: `http://localhost:${port}` })
    })
    child.once("exit", (code) => reject(new Error(`the host exited with ${code}: ${out}`)))
  })

const stop = (host: Host) =>
  new Promise<number | null>((resolve) => {
    host.child.once("exit", (code) => resolve(code))
    host.child.kill("SIGTERM")
  })

const get = async (host: Host, path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${host.base}${path}`, { headers })
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text.startsWith("<") ? "null" : text) as any }
}

describe("the embedding host", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "embedding-"))
  let host: Host
  beforeAll(async () => {
    host = await start(dataDir)
  }, 60_000)
  afterAll(async () => {
    if (host.child.exitCode === null) await stop(host)
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("answers its own route", async () => {
    assert.deepStrictEqual(await get(host, "/hello").then((r) => [r.status, r.body]), [200, { hello: "from the host" }])
  })

  it("serves the tradeflow it posted in-process at GET /tracking/upstream, and on its own route", async () => {
    const { apiKey } = JSON.parse(readFileSync(join(dataDir, "account.json"), "utf8")) as { apiKey: string }
    let upstream = await get(host, "/tracking/upstream?tradeflow=HOST-0001", { authorization: apiKey })
    for (let i = 0; i < 100 && upstream.body.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100))
      upstream = await get(host, "/tracking/upstream?tradeflow=HOST-0001", { authorization: apiKey })
    }
    assert.strictEqual(upstream.status, 200)
    assert.isAbove(upstream.body.length, 0)
    assert.isTrue(upstream.body.every((m: { tradeflow_reference: string }) => m.tradeflow_reference === "HOST-0001"))
    const shipments = await get(host, "/shipments")
    assert.deepStrictEqual(shipments.body, upstream.body)
  })

  it("serves the docs at /tracking/docs and the OpenAPI document, whose servers name /tracking", async () => {
    const openapi = await get(host, "/tracking/openapi.json")
    assert.deepStrictEqual(openapi.body.servers, [{ url: "/tracking" }])
    const docs = await get(host, "/tracking/docs")
    assert.strictEqual(docs.status, 200)
    assert.include(docs.text, `"servers":[{"url":"/tracking"}]`)
    assert.strictEqual((await get(host, "/upstream")).status, 404)
  })

  it("stops on SIGTERM with exit code 0, and keeps its account across starts", async () => {
    const before = readFileSync(join(dataDir, "account.json"), "utf8")
    assert.strictEqual(await stop(host), 0)
    host = await start(dataDir)
    assert.strictEqual(readFileSync(join(dataDir, "account.json"), "utf8"), before)
    const { apiKey } = JSON.parse(before) as { apiKey: string }
    assert.strictEqual((await get(host, "/tracking/upstream", { authorization: apiKey })).status, 200)
  })
})
