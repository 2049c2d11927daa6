/**
 * The shared fixture of the HTTP tests: the app over `Service.layerMemory` on a random port, and a
 * small request helper that sets the Host header explicitly.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Locations, Schemes, Service, Storage, TrackingConfig, TrackingSource } from "@tradeflow/core"
import { Ssrf } from "@tradeflow/webhook"
import { Effect, Layer } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"

export const consoleToken = "console-token-for-tests-0123456789abcdef"
export const production = "localhost:8080"
export const uat = "uat.localhost"

/** What the fixture's webhook destination check lets through: by default public `https:` only. */
export interface DestinationOptions {
  /** Private addresses and plain http too. */
  readonly webhookAllowPrivate?: boolean
  /** Host names reachable over plain http. */
  readonly webhookHttpHosts?: ReadonlyArray<string>
}

/** The webhook destination check of `@tradeflow/webhook`, as the standalone server provides it. */
export const destinationLayer = ({ webhookAllowPrivate = false, webhookHttpHosts = [] }: DestinationOptions = {}) =>
  Ssrf.layer({ allowPrivate: webhookAllowPrivate, allowHttp: webhookAllowPrivate, httpHosts: webhookHttpHosts })

/** The in-memory service; with `background: false` no worker, scheduler, tracker or retention runs by itself. */
const memoryService = (background: boolean) =>
  background ? Service.layerMemory : Service.layer({ background: false }).pipe(
    Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
  )

/**
 * The app, the in-memory service (exposed, for `Worker.drain`) and an `HttpClient` pointed at it.
 * Every test client shares one address, so failed console authentications are not limited unless
 * a test asks for it (`consoleFailures`). With `background: false` no worker, scheduler, tracker or
 * retention loop runs by itself (a test moves the `TestClock` by days without them).
 * `schemes` are added to (or replace) the built-in schemes;
 * `trackingSources`, when given, are the service's tracking sources.
 */
export const makeAppLayer = (
  { background = true, webhookAllowPrivate, webhookHttpHosts, ...options }:
    & Partial<HttpConfig.Options>
    & DestinationOptions
    & { readonly background?: boolean } = {},
  schemes: Readonly<Record<string, Schemes.Scheme>> = {},
  trackingSources?: ReadonlyArray<TrackingSource.TrackingSource>
) =>
  HttpApp.layer.pipe(
    Layer.provide(Schemes.add(schemes)),
    Layer.provide(destinationLayer({
      ...(webhookAllowPrivate === undefined ? {} : { webhookAllowPrivate }),
      ...(webhookHttpHosts === undefined ? {} : { webhookHttpHosts })
    })),
    Layer.provide(
      HttpConfig.layer({ consoleToken, consoleFailures: { failures: 1_000_000, windowMillis: 60_000 }, ...options })
    ),
    Layer.provideMerge(
      trackingSources === undefined
        ? memoryService(background)
        : memoryService(background).pipe(Layer.provide(Layer.orDie(TrackingSource.layer(trackingSources))))
    ),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )

export interface Sent {
  readonly host?: string
  readonly auth?: string
  readonly json?: unknown
  readonly text?: string
  readonly bytes?: Uint8Array
  readonly contentType?: string
  readonly headers?: Record<string, string>
}

export interface Received {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly body: unknown
}

/** Sends one request and reads the whole answer. */
export const send = (method: "GET" | "POST" | "DELETE" | "PUT" | "PATCH", url: string, sent: Sent = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeader("host", sent.host ?? production))
    if (sent.auth !== undefined) request = HttpClientRequest.setHeader(request, "authorization", sent.auth)
    for (const [k, v] of Object.entries(sent.headers ?? {})) request = HttpClientRequest.setHeader(request, k, v)
    if (sent.json !== undefined) {
      request = HttpClientRequest.bodyText(request, JSON.stringify(sent.json), sent.contentType ?? "application/json")
    } else if (sent.text !== undefined) {
      request = HttpClientRequest.bodyText(request, sent.text, sent.contentType ?? "application/json")
    } else if (sent.bytes !== undefined) {
      request = HttpClientRequest.bodyUint8Array(request, sent.bytes, sent.contentType ?? "application/json")
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, text, body } satisfies Received
  }).pipe(Effect.scoped)

/** The console's bearer header. */
export const consoleAuth = `Bearer ${consoleToken}`

/** Creates an organisation and a key of `environment` through the console; answers the key. */
export const newKey = (environment: "production" | "uat", name = `org-${Math.random().toString(36).slice(2)}`) =>
  Effect.gen(function*() {
    const org = yield* send("POST", "/console/organisations", { auth: consoleAuth, json: { name } })
    const id = (org.body as { id: string }).id
    const key = yield* send("POST", `/console/organisations/${id}/api-keys`, {
      auth: consoleAuth,
      json: { environment }
    })
    return {
      organisationId: id,
      ...(key.body as { id: string; key: string; organisation: { id: string; name: string } })
    }
  })

/** An ocean_basic record (UAT mock tracking). */
export const oceanBasic = (reference: string) => ({
  tradeflow_reference: reference,
  container_reference: "MSCU1234565",
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  mock_tracking: { scenario: "ocean_basic" }
})
