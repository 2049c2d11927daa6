import { assert, describe, layer } from "@effect/vitest"
import { Worker } from "@tradeflow/core"
import { Effect, TestClock } from "effect"
import { assertHistograms, type Exposition, parse, value } from "./Exposition.js"
import { consoleAuth, makeAppLayer, newKey, oceanBasic, production, send, uat } from "./Fixture.js"

const metricsHost = "metrics.internal"

const scrape = Effect.gen(function*() {
  const r = yield* send("GET", "/metrics", { host: metricsHost })
  assert.strictEqual(r.status, 200, r.text)
  assert.strictEqual(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
  const exposition = parse(r.text)
  assertHistograms(exposition)
  return exposition
})

const requests = (e: Exposition, method: string, route: string, status: string) =>
  value(e, "tradeflow_http_requests_total", { method, route, status })
const durations = (e: Exposition, method: string, route: string, status: string) =>
  value(e, "tradeflow_http_request_duration_seconds_count", { method, route, status })
const lagCount = (e: Exposition) => value(e, "tradeflow_processing_lag_seconds_count")
const messages = (e: Exposition) =>
  e.samples.filter((s) => s.name === "tradeflow_messages_generated_total").reduce((sum, s) => sum + s.value, 0)

describe("metrics", () => {
  layer(makeAppLayer({ background: false, metricsHosts: [metricsHost] }))((it) => {
    it.effect("GET /metrics is served on a metrics host only", () =>
      Effect.gen(function*() {
        for (const host of [production, uat, "other.example"]) {
          const r = yield* send("GET", "/metrics", { host })
          assert.strictEqual(r.status, 404, host)
          assert.notInclude(r.text, "tradeflow_")
        }
        assert.strictEqual((yield* send("POST", "/metrics", { host: metricsHost })).status, 404)
        const exposition = yield* scrape
        assert.strictEqual(exposition.types.get("process_resident_memory_bytes"), "gauge")
        assert.isAbove(value(exposition, "process_resident_memory_bytes"), 0)
        assert.isAbove(value(exposition, "nodejs_heap_size_used_bytes"), 0)
        assert.isAtLeast(
          value(exposition, "nodejs_heap_size_total_bytes"),
          value(exposition, "nodejs_heap_size_used_bytes")
        )
        assert.strictEqual(exposition.types.get("nodejs_eventloop_lag_max_seconds"), "gauge")
      }))

    it.effect("requests are counted by route template and status, with their latency", () =>
      Effect.gen(function*() {
        const before = yield* scrape
        assert.strictEqual((yield* send("GET", "/health")).status, 200)
        assert.strictEqual((yield* send("GET", "/health")).status, 200)
        const missing = yield* send("GET", "/console/organisations/no-such-org/api-keys", { auth: consoleAuth })
        assert.strictEqual(missing.status, 404)
        assert.strictEqual((yield* send("GET", "/no/such/path/12345")).status, 404)
        assert.strictEqual((yield* send("GET", "/app/o/whatever")).status < 500, true)
        const after = yield* scrape
        const delta = (method: string, route: string, status: string) =>
          requests(after, method, route, status) - requests(before, method, route, status)
        assert.strictEqual(delta("GET", "/health", "200"), 2)
        assert.strictEqual(
          durations(after, "GET", "/health", "200") - durations(before, "GET", "/health", "200"),
          2
        )
        assert.strictEqual(delta("GET", "/console/organisations/:id/api-keys", "404"), 1)
        assert.strictEqual(delta("GET", "unmatched", "404"), 1)
        assert.isTrue(
          after.samples.some((s) => s.name === "tradeflow_http_requests_total" && s.labels["route"] === "/app/*")
        )
        for (const s of after.samples) {
          if (s.name === "tradeflow_http_requests_total") assert.notInclude(s.labels["route"], "no-such-org")
        }
      }))

    it.effect("the job backlog is sampled at each scrape; a commit records its lag and messages", () =>
      Effect.gen(function*() {
        const key = yield* newKey("uat")
        const before = yield* scrape
        assert.strictEqual(value(before, "tradeflow_jobs_pending"), 0)
        for (const reference of ["M-1", "M-2"]) {
          const r = yield* send("POST", "/downstream", { host: uat, auth: key.key, json: [oceanBasic(reference)] })
          assert.strictEqual(r.status, 202, r.text)
        }
        yield* TestClock.adjust("90 seconds")
        const queued = yield* scrape
        assert.strictEqual(value(queued, "tradeflow_jobs_pending"), 2)
        assert.strictEqual(value(queued, "tradeflow_jobs_oldest_pending_age_seconds"), 90)
        assert.strictEqual(value(queued, "tradeflow_organisations_by_pending_jobs", { le: "1" }), 0)
        assert.strictEqual(value(queued, "tradeflow_organisations_by_pending_jobs", { le: "10" }), 1)
        assert.strictEqual(value(queued, "tradeflow_organisations_by_pending_jobs", { le: "+Inf" }), 1)
        assert.strictEqual(value(queued, "tradeflow_webhook_backlog"), 0)

        yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
        const done = yield* scrape
        assert.strictEqual(value(done, "tradeflow_jobs_pending"), 0)
        assert.strictEqual(value(done, "tradeflow_jobs_oldest_pending_age_seconds"), 0)
        assert.strictEqual(value(done, "tradeflow_organisations_by_pending_jobs", { le: "+Inf" }), 0)
        assert.strictEqual(lagCount(done) - lagCount(queued), 2)
        assert.isAtLeast(
          value(done, "tradeflow_processing_lag_seconds_bucket", { le: "+Inf" }) -
            value(queued, "tradeflow_processing_lag_seconds_bucket", { le: "+Inf" }),
          2
        )
        assert.isAtLeast(
          value(done, "tradeflow_processing_lag_seconds_sum") - value(queued, "tradeflow_processing_lag_seconds_sum"),
          180
        )
        assert.isAbove(messages(done), messages(queued))
      }))
  })
})
