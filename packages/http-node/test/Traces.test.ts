import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { assert, describe, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer } from "effect"
import { makeAppLayer, newKey, oceanBasic, production, send, uat } from "./Fixture.js"

const exporter = new InMemorySpanExporter()
const tracing = NodeSdk.layer(() => ({
  resource: { serviceName: "tradeflow-test" },
  spanProcessor: new SimpleSpanProcessor(exporter)
}))

/** The server span of the request whose route is `route`, once it has ended. */
const serverSpan = (route: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      const found = exporter.getFinishedSpans().find((span) =>
        span.kind === SpanKind.SERVER && span.attributes["http.route"] === route
      )
      if (found !== undefined) return found
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
    return yield* Effect.dieMessage(`no server span of ${route}`)
  })

/** The spans below `root`, at any depth. */
const descendants = (root: ReadableSpan): ReadonlyArray<ReadableSpan> => {
  const spans = exporter.getFinishedSpans()
  const below = new Set([root.spanContext().spanId])
  const found: Array<ReadableSpan> = []
  for (let grew = true; grew;) {
    grew = false
    for (const span of spans) {
      const parent = span.parentSpanContext?.spanId
      if (parent !== undefined && below.has(parent) && !below.has(span.spanContext().spanId)) {
        below.add(span.spanContext().spanId)
        found.push(span)
        grew = true
      }
    }
  }
  return found
}

/** What the server's spans recorded (the test's own client spans left out). */
const everyAttribute = () =>
  exporter.getFinishedSpans().filter((span) => span.kind !== SpanKind.CLIENT).flatMap((span) => [
    span.name,
    ...Object.values(span.attributes).map(String),
    ...span.events.flatMap((event) => Object.values(event.attributes ?? {}).map(String))
  ])

describe("traces", () => {
  it.layer(makeAppLayer().pipe(Layer.provideMerge(tracing)))((it) => {
    it.effect("a request is one server span with its route and status, the services' spans its children", () =>
      Effect.gen(function*() {
        const key = yield* newKey("uat")
        const marker = "BODY-MARKER-7f3a9c"
        const answer = yield* send("POST", "/downstream/tradeflows", {
          host: uat,
          auth: key.key,
          json: { ...oceanBasic(marker), booking_reference: marker }
        })
        assert.isTrue(answer.status < 300, answer.text)
        const server = yield* serverSpan("/downstream/tradeflows")
        assert.strictEqual(server.attributes["http.request.method"], "POST")
        assert.strictEqual(server.attributes["http.response.status_code"], answer.status)
        const children = descendants(server)
        const names = children.map((span) => span.name)
        assert.include(names, "Accounts.authenticate")
        assert.include(names, "Ingest.submit")
        for (const child of children) assert.strictEqual(child.spanContext().traceId, server.spanContext().traceId)
        for (const value of everyAttribute()) {
          assert.notInclude(value, key.key)
          assert.notInclude(value, marker)
        }
      }))

    it.effect("a token in the path, the query or the Referer stays out of the span", () =>
      Effect.gen(function*() {
        const token = "invitation-token-5d1e0b"
        yield* send("GET", `/app/invitations/${token}?next=${token}`, {
          headers: { referer: `http://${production}/app/invitations/${token}` }
        })
        const server = yield* serverSpan("/app/invitations/:token")
        assert.strictEqual(server.attributes["url.path"], "/app/invitations/:token")
        assert.strictEqual(server.attributes["http.request.header.referer"], "<redacted>")
        yield* send("GET", "/app/assets/app.js", {
          headers: { referer: `http://${production}/app/invitations/${token}` }
        })
        for (const value of everyAttribute()) assert.notInclude(value, token)
      }))
  })
})
