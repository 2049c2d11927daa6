/**
 * The least an `@effect/platform` HttpApi server does for a single-record POST, as the real server
 * is built (HttpApiBuilder, an API-key middleware providing the caller, a JSON payload decoded by
 * its schema, a 202 with a JSON body, `NodeHttpServer` on `node:http`), with no storage, no
 * validation beyond an array of objects and no work: bench/http-floor's measure of what the
 * framework costs per request. Listens on `PORT`; `BENCH_KEY` is the one key it accepts.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createServer } from "node:http"

class Caller extends Context.Tag("Caller")<Caller, { readonly organisation: string }>() {}

class KeyAuth extends HttpApiMiddleware.Tag<KeyAuth>()("KeyAuth", {
  failure: HttpApiError.Unauthorized,
  provides: Caller,
  security: { apiKey: HttpApiSecurity.apiKey({ key: "Authorization", in: "header" }) }
}) {}

const Accepted = Schema.Struct({ status: Schema.Literal("queued"), tradeflows: Schema.Array(Schema.String) })
  .pipe(HttpApiSchema.withEncoding({ kind: "Json" }))

const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("downstream").add(
    HttpApiEndpoint.post("post", "/v3/downstream/tradeflows")
      .setPayload(Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })))
      .addSuccess(Accepted, { status: 202 })
  ).middleware(KeyAuth)
)

const key = process.env["BENCH_KEY"] ?? "bench-key"

const KeyAuthLive = Layer.succeed(
  KeyAuth,
  KeyAuth.of({
    apiKey: (token) =>
      Redacted.value(token).replace(/^Bearer /, "") === key
        ? Effect.succeed({ organisation: "org" })
        : Effect.fail(new HttpApiError.Unauthorized())
  })
)

const DownstreamLive = HttpApiBuilder.group(
  Api,
  "downstream",
  (handlers) =>
    handlers.handle("post", ({ payload }) =>
      Effect.map(Caller, () => ({
        status: "queued" as const,
        tradeflows: payload.map((r) => String(r["tradeflow_reference"]))
      })))
)

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(DownstreamLive), Layer.provide(KeyAuthLive))),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env["PORT"] ?? 0), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
