/**
 * The server's JSON log lines and its OTLP/HTTP traces, from a real process: what they hold, and
 * that no key, token, secret, password or body is in them.
 */
import { mkdtempSync } from "node:fs"
import { createServer, type Server as HttpServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { record, uatKey } from "./Fixtures.js"
import { call, consoleToken, refusedStart, type Server, start } from "./Process.js"

const dir = mkdtempSync(join(tmpdir(), "tradeflow-telemetry-"))
let databases = 0
const database = () => join(dir, `db-${++databases}.sqlite`)

/** Sends SIGTERM and waits for the exit code. */
const stop = (server: Server) =>
  new Promise<number | null>((resolve) => {
    server.child.once("exit", (code) => resolve(code))
    server.child.kill("SIGTERM")
  })

const lines = (output: string) => output.split("\n").filter((line) => line.trim() !== "")

interface LogLine {
  readonly time: string
  readonly level: string
  readonly message: string
  readonly [annotation: string]: unknown
}

const parsed = (output: string): ReadonlyArray<LogLine> => lines(output).map((line) => JSON.parse(line) as LogLine)

const requests = (output: string) => parsed(output).filter((line) => line.message === "Request answered")

const consoleAuth = { authorization: `Bearer ${consoleToken}` }

describe("LOG_FORMAT=json", () => {
  it("one JSON object per line; a request line names route, status, duration, trace and organisation; no secret appears", async () => {
    const email = "ops@example.com"
    const password = "admin-password-b7c2e19f"
    const server = await start(database(), {
      LOG_FORMAT: "json",
      ADMIN_EMAIL: email,
      ADMIN_PASSWORD: password,
      WEBHOOK_ALLOW_PRIVATE: "true"
    })
    const marker = "BODY-MARKER-0c5d7a11"
    const { key, organisation } = await uatKey(server, "telemetry")
    const submitted = await call(server, "POST", "/downstream/tradeflows", {
      tradeflow_reference: marker,
      booking_reference: marker,
      port_of_loading: "CNSHA",
      port_of_discharge: "NLRTM",
      mock_tracking: { scenario: "ocean_basic" }
    }, { authorization: key })
    assert.isBelow(submitted.status, 300)
    const wrongKey = "uat_wrong-key-4f9e2d6b8a1c"
    assert.strictEqual((await call(server, "GET", "/upstream", undefined, { authorization: wrongKey })).status, 401)
    const automation = await call(server, "POST", `/console/organisations/${organisation.id}/automations`, {
      url: "http://127.0.0.1:9999/hook",
      format: "message",
      enabled: false
    }, consoleAuth)
    assert.strictEqual(automation.status, 201, JSON.stringify(automation.body))
    const secret = automation.body.secret as string
    const signIn = await fetch(`${server.base}/app/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ email, password, next: "" }),
      redirect: "manual"
    })
    const session = /tf_session=([^;]*)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1] ?? ""
    assert.notStrictEqual(session, "")
    assert.strictEqual(await stop(server), 0)

    const output = server.output()
    const logged = parsed(output)
    assert.isAbove(logged.length, 0)
    for (const line of logged) {
      assert.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.include(["trace", "debug", "info", "warning", "error", "fatal"], line.level)
    }
    const submit = requests(output).find((line) => line.route === "/downstream/tradeflows")
    assert.isDefined(submit)
    assert.strictEqual(submit!.level, "info")
    assert.strictEqual(submit!.method, "POST")
    assert.strictEqual(submit!.status, submitted.status)
    assert.strictEqual(submit!.organisation_id, organisation.id)
    assert.isNumber(submit!.duration_ms)
    assert.match(String(submit!.trace_id), /^[0-9a-f]{32}$/)
    assert.match(String(submit!.span_id), /^[0-9a-f]{16}$/)
    const refused = requests(output).find((line) => line.route === "/upstream")
    assert.strictEqual(refused?.status, 401)
    assert.isDefined(requests(output).find((line) => line.route === "/app/sign-in" && line.method === "POST"))
    for (const secretValue of [key, consoleToken, wrongKey, secret, password, session, marker]) {
      assert.notInclude(output, secretValue)
    }
  })

  it("LOG_LEVEL=warning leaves the info lines out", async () => {
    const server = await start(database(), { LOG_FORMAT: "json", LOG_LEVEL: "Warning" })
    assert.strictEqual((await call(server, "GET", "/health")).status, 200)
    assert.strictEqual(await stop(server), 0)
    assert.deepStrictEqual(parsed(server.output()).filter((line) => line.level === "info"), [])
  })

  it("an invalid LOG_LEVEL refuses the start, naming it", async () => {
    const refused = await refusedStart(database(), { LOG_LEVEL: "verbose" })
    assert.notStrictEqual(refused.code, 0)
    assert.include(refused.output, "LOG_LEVEL")
  })
})

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** A plain OTLP/HTTP receiver on loopback: what was posted to `/v1/traces`. */
const receiver = async () => {
  const bodies: Array<{ readonly contentType: string; readonly body: string }> = []
  const server: HttpServer = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/traces") {
        bodies.push({
          contentType: request.headers["content-type"] ?? "",
          body: Buffer.concat(chunks).toString("utf8")
        })
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { endpoint: `http://127.0.0.1:${port}`, bodies }
}

const spansOf = (bodies: ReadonlyArray<{ readonly body: string }>): ReadonlyArray<OtlpSpan> =>
  bodies.flatMap(({ body }) =>
    (JSON.parse(body) as {
      resourceSpans: ReadonlyArray<{ scopeSpans: ReadonlyArray<{ spans: ReadonlyArray<OtlpSpan> }> }>
    }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
  )

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value

describe("OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("after a request and a graceful stop the collector has its spans, under the trace id of its log line", async () => {
    const collector = await receiver()
    const server = await start(database(), {
      LOG_FORMAT: "json",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_SERVICE_NAME: "tradeflow-test"
    })
    const name = "telemetry-organisation"
    const created = await call(server, "POST", "/console/organisations", { name }, consoleAuth)
    assert.strictEqual(created.status, 201)
    const { key } = await uatKey(server, "Traced Freight")
    const marker = "TRACED-BODY-MARKER-7f3a"
    const posted = await call(server, "POST", "/v3/downstream/tradeflows", record(marker), { authorization: key })
    assert.strictEqual(posted.status, 202)
    assert.strictEqual(await stop(server), 0)

    assert.isAbove(collector.bodies.length, 0)
    for (const { contentType } of collector.bodies) assert.include(contentType, "application/json")
    assert.include(collector.bodies.map((b) => b.body).join(""), "tradeflow-test")
    const line = requests(server.output()).find((l) => l.route === "/console/organisations" && l.method === "POST")
    assert.isDefined(line)
    const spans = spansOf(collector.bodies).filter((span) => span.traceId === line!.trace_id)
    const root = spans.find((span) => span.spanId === line!.span_id)
    assert.isDefined(root)
    assert.strictEqual(root!.name, "http.server POST")
    assert.deepStrictEqual(attribute(root!, "http.route"), { stringValue: "/console/organisations" })
    assert.deepStrictEqual(attribute(root!, "http.response.status_code"), { intValue: 201 })
    const children = spans.filter((span) => span.parentSpanId === root!.spanId).map((span) => span.name)
    assert.include(children, "Accounts.createOrganisation")
    for (const { body } of collector.bodies) {
      for (const secret of [consoleToken, key, marker]) assert.notInclude(body, secret)
    }
  })
})
