import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, kill, start } from "./Process.js"

/** The status of `GET url` sent with this Host header (fetch cannot set one). */
const statusWithHost = (url: string, host: string) =>
  new Promise<number>((resolve, reject) => {
    get(url, { headers: { host } }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    }).on("error", reject)
  })

describe("metrics", () => {
  it(
    "with METRICS_PORT, /metrics answers on that port only; METRICS_HOSTS opens it on the API port for those hosts",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-metrics-"))
      const metricsPort = await freePort()
      const server = await start(join(dir, "tracking.sqlite"), {
        METRICS_PORT: String(metricsPort),
        METRICS_HOSTS: "metrics.internal"
      })
      try {
        const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
        expect(scraped.status).toBe(200)
        expect(scraped.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
        const text = await scraped.text()
        expect(text).toMatch(/^# TYPE tradeflow_jobs_pending gauge$/m)
        expect(text).toMatch(/^tradeflow_http_requests_total\{method="GET",route="\/health",status="200"\} [1-9]/m)
        expect(text).toMatch(/^process_resident_memory_bytes [1-9]/m)
        expect((await fetch(`http://127.0.0.1:${metricsPort}/health`)).status).toBe(404)
        const onApi = await fetch(`${server.base}/metrics`)
        expect(onApi.status).toBe(404)
        expect(await onApi.text()).not.toContain("tradeflow_")
        expect(await statusWithHost(`${server.base}/metrics`, "metrics.internal")).toBe(200)
        expect(await statusWithHost(`${server.base}/metrics`, "localhost")).toBe(404)
      } finally {
        await kill(server)
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000
  )
})
