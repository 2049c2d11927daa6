import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Accounts, Ingest, Service, Users, Worker } from "@tradeflow/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { HttpApp, HttpConfig, HttpMount } from "../src/index.js"
import { normalizePrefix, underPrefix } from "../src/internal/prefix.js"
import { consoleAuth, consoleToken, destinationLayer, oceanBasic, send } from "./Fixture.js"

const config = Layer.merge(HttpConfig.layer({ consoleToken }), destinationLayer())

const tracking = HttpMount.layer({ prefix: "/tracking" }).pipe(
  Layer.provideMerge(config),
  Layer.provideMerge(Service.layerMemory)
)

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

const json = async (response: Response) => ({ status: response.status, body: await response.json() as any })

/** What Express's `app.use(prefix, handler)` does to a request: strip `req.url`, keep `req.originalUrl`. */
const expressUse =
  (prefix: string, handler: HttpMount.NodeHandler) =>
  (request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const url = request.url ?? "/"
    if (url !== prefix && !url.startsWith(prefix + "/") && !url.startsWith(prefix + "?")) return next()
    Object.assign(request, { originalUrl: url, url: url.slice(prefix.length) || "/" })
    handler(request, response, () => {
      request.url = url
      next()
    })
  }

/** The OpenAPI document the Scalar page embeds. */
const embedded = (html: string): unknown =>
  JSON.parse(/<script id="api-reference" type="application\/json">([\s\S]*?)<\/script>/.exec(html)![1]!)

const hostRoute = (response: ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: "own" }))
}

describe("HttpMount", () => {
  it.effect("as an Effect app in a host's router, under /tracking: host route, API, docs, openapi servers, 404/405", () =>
    Effect.gen(function*() {
      const app = yield* HttpApp.makeApp({ prefix: "/tracking" })
      const router = HttpRouter.empty.pipe(
        HttpRouter.get("/hello", HttpServerResponse.json({ host: "own" })),
        HttpRouter.mountApp("/tracking", app, { includePrefix: true })
      )
      yield* Layer.launch(HttpServer.serve(router)).pipe(Effect.forkScoped)
      yield* Effect.yieldNow()
      assert.deepStrictEqual((yield* send("GET", "/hello")).body, { host: "own" })
      assert.deepStrictEqual((yield* send("GET", "/tracking/health")).body, { status: "ok" })
      assert.strictEqual((yield* send("GET", "/health")).status, 404)
      const openapi = yield* send("GET", "/tracking/openapi.json")
      assert.deepStrictEqual((openapi.body as { servers: unknown }).servers, [{ url: "/tracking" }])
      const docs = yield* send("GET", "/tracking/docs")
      assert.strictEqual(docs.status, 200)
      assert.include(docs.text, `"servers":[{"url":"/tracking"}]`)
      assert.deepStrictEqual(
        embedded(docs.text),
        openapi.body,
        "the docs page shows the document /openapi.json answers"
      )
      const missing = yield* send("GET", "/tracking/nowhere")
      assert.deepStrictEqual([missing.status, (missing.body as { detail: string }).detail], [
        404,
        "no resource at /tracking/nowhere"
      ])
      const wrong = yield* send("PUT", "/tracking/health")
      assert.deepStrictEqual(
        [wrong.status, wrong.headers["allow"], (wrong.body as { detail: string }).detail],
        [405, "GET", "PUT is not allowed on /tracking/health; allowed: GET"]
      )
      const organisation = yield* send("POST", "/tracking/console/organisations", {
        auth: consoleAuth,
        json: { name: "Effect Ltd" }
      })
      assert.deepStrictEqual([organisation.status, (organisation.body as { name: string }).name], [201, "Effect Ltd"])

      const users = yield* Users.Users
      yield* users.bootstrap("ops@example.com", "correct horse battery")
      const signIn = yield* send("GET", "/tracking/app/sign-in")
      assert.strictEqual(signIn.status, 200)
      assert.include(signIn.text, `action="/tracking/app/sign-in"`)
      assert.include(signIn.text, `href="/tracking/app/assets/app.css"`)
      const signedIn = yield* send("POST", "/tracking/app/sign-in", {
        text: "email=ops%40example.com&password=correct+horse+battery&next=%2Ftracking%2Fapp%2Foperator",
        contentType: "application/x-www-form-urlencoded",
        headers: { "sec-fetch-site": "same-origin" }
      })
      assert.strictEqual(signedIn.status, 303)
      assert.strictEqual(signedIn.headers["location"], "/tracking/app/operator")
      assert.match(signedIn.headers["set-cookie"]!, /; Path=\/tracking\/;/)
      assert.strictEqual((yield* send("GET", "/app/sign-in")).status, 404)
    }).pipe(
      Effect.provide(Layer.mergeAll(NodeHttpServer.layerTest, config, Service.layerMemory)),
      Effect.scoped
    ))

  it.effect("HttpMount's app, from the host's layer, in the host's router", () =>
    Effect.gen(function*() {
      const { app } = yield* HttpMount.HttpMount
      const router = HttpRouter.empty.pipe(
        HttpRouter.get("/hello", HttpServerResponse.json({ host: "own" })),
        HttpRouter.mountApp("/tracking", app, { includePrefix: true })
      )
      yield* Layer.launch(HttpServer.serve(router)).pipe(Effect.forkScoped)
      yield* Effect.yieldNow()
      assert.deepStrictEqual((yield* send("GET", "/hello")).body, { host: "own" })
      assert.deepStrictEqual((yield* send("GET", "/tracking/v3/health")).body, { status: "ok" })
      assert.strictEqual((yield* send("GET", "/v3/health")).status, 404)
    }).pipe(
      Effect.provide(Layer.merge(NodeHttpServer.layerTest, tracking)),
      Effect.scoped
    ))

  it.effect("without a prefix, the app serves the root", () =>
    Effect.gen(function*() {
      yield* Layer.launch(HttpServer.serve(yield* HttpApp.makeApp())).pipe(Effect.forkScoped)
      yield* Effect.yieldNow()
      assert.deepStrictEqual((yield* send("GET", "/health")).body, { status: "ok" })
      const openapi = yield* send("GET", "/openapi.json")
      assert.isUndefined((openapi.body as { servers?: unknown }).servers)
    }).pipe(
      Effect.provide(Layer.mergeAll(NodeHttpServer.layerTest, config, Service.layerMemory)),
      Effect.scoped
    ))

  it("as a Node handler on a host's node:http server, sharing its runtime with in-process use", async () => {
    const runtime = ManagedRuntime.make(tracking)
    const mount = await runtime.runPromise(HttpMount.HttpMount)
    const server = createServer((request, response) =>
      request.url === "/hello" ? hostRoute(response) : mount.nodeHandler(request, response)
    )
    const base = await listen(server)
    try {
      assert.deepStrictEqual(await json(await fetch(`${base}/hello`)), { status: 200, body: { host: "own" } })
      const { key, organisation } = await runtime.runPromise(Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        const organisation = yield* accounts.createOrganisation("Host Ltd")
        const { key } = yield* accounts.createApiKey(organisation.id, "production")
        return { key, organisation }
      }))
      await runtime.runPromise(Effect.gen(function*() {
        const ingest = yield* Ingest.Ingest
        yield* ingest.submit({
          organisation_id: organisation.id,
          environment: "production",
          body: [oceanBasic("HOST-1")],
          form: "array"
        })
        yield* Effect.flatMap(Worker.Worker, (worker) => worker.drain)
      }))
      const upstream = await json(
        await fetch(`${base}/tracking/upstream?tradeflow=HOST-1`, { headers: { authorization: key } })
      )
      assert.strictEqual(upstream.status, 200)
      assert.isAbove(upstream.body.length, 0)
      assert.strictEqual(upstream.body[0].tradeflow_reference, "HOST-1")
      const openapi = await json(await fetch(`${base}/tracking/openapi.json`))
      assert.deepStrictEqual(openapi.body.servers, [{ url: "/tracking" }])
      const docs = await fetch(`${base}/tracking/docs`)
      assert.strictEqual(docs.status, 200)
      assert.include(await docs.text(), `"servers":[{"url":"/tracking"}]`)
      const outside = await json(await fetch(`${base}/elsewhere`))
      assert.deepStrictEqual([outside.status, outside.body.detail], [404, "no resource at /elsewhere"])
      const organisations = await fetch(`${base}/tracking/console/organisations`, {
        headers: { authorization: consoleAuth }
      })
      assert.strictEqual(organisations.status, 200)
    } finally {
      await close(server)
      await runtime.dispose()
    }
    const after = new Promise<number>((resolve) => {
      const response = {
        writeHead: (status: number) => ({ end: () => resolve(status) })
      } as unknown as ServerResponse
      mount.nodeHandler({ url: "/tracking/health", headers: {} } as IncomingMessage, response)
    })
    assert.strictEqual(await after, 503)
  })

  it("behind Express's app.use(\"/tracking\", handler): reads req.originalUrl, and lets the host go on outside the prefix", async () => {
    const runtime = ManagedRuntime.make(tracking)
    const mount = await runtime.runPromise(HttpMount.HttpMount)
    const use = expressUse("/tracking", mount.nodeHandler)
    const server = createServer((request, response) => use(request, response, () => hostRoute(response)))
    const base = await listen(server)
    try {
      assert.deepStrictEqual(await json(await fetch(`${base}/tracking/health`)), {
        status: 200,
        body: { status: "ok" }
      })
      assert.deepStrictEqual(await json(await fetch(`${base}/tracking/v3/health`)), {
        status: 200,
        body: { status: "ok" }
      })
      assert.deepStrictEqual(
        (await json(await fetch(`${base}/tracking/openapi.json`))).body.servers,
        [{ url: "/tracking" }]
      )
      const missing = await json(await fetch(`${base}/tracking/nowhere`))
      assert.deepStrictEqual([missing.status, missing.body.detail], [404, "no resource at /tracking/nowhere"])
      assert.deepStrictEqual(await json(await fetch(`${base}/hello`)), { status: 200, body: { host: "own" } })
      let passed = false
      await new Promise<void>((resolve) => {
        const request = { url: "/trackingx", originalUrl: "/trackingx", headers: {} } as unknown as IncomingMessage
        mount.nodeHandler(request, {} as ServerResponse, () => {
          passed = true
          resolve()
        })
      })
      assert.isTrue(passed)
    } finally {
      await close(server)
      await runtime.dispose()
    }
  })

  it("as a web handler: Request in, Response out, 404 outside the prefix, 503 once disposed", async () => {
    const runtime = ManagedRuntime.make(tracking)
    const mount = await runtime.runPromise(HttpMount.HttpMount)
    assert.deepStrictEqual(await json(await mount.webHandler(new Request("http://localhost/tracking/health"))), {
      status: 200,
      body: { status: "ok" }
    })
    const organisation = await json(
      await mount.webHandler(
        new Request("http://localhost/tracking/console/organisations", {
          method: "POST",
          headers: { authorization: consoleAuth, "content-type": "application/json" },
          body: JSON.stringify({ name: "Web Ltd" })
        })
      )
    )
    assert.strictEqual(organisation.status, 201)
    assert.strictEqual(organisation.body.name, "Web Ltd")
    const openapi = await json(await mount.webHandler(new Request("http://localhost/tracking/openapi.json")))
    assert.deepStrictEqual(openapi.body.servers, [{ url: "/tracking" }])
    assert.strictEqual((await mount.webHandler(new Request("http://localhost/health"))).status, 404)
    await runtime.dispose()
    assert.strictEqual((await mount.webHandler(new Request("http://localhost/tracking/health"))).status, 503)
  })

  it("refuses a prefix that is not a path", () => {
    assert.strictEqual(normalizePrefix("/tracking/"), "/tracking")
    assert.strictEqual(normalizePrefix(undefined), "")
    assert.throws(() => normalizePrefix("tracking"))
    assert.throws(() => normalizePrefix("/a b"))
    assert.deepStrictEqual(
      ["/tracking", "/tracking/x?y", "/tracking?y", "/trackingx", "/other"].map((url) => underPrefix("/tracking", url)),
      ["/", "/x?y", "/?y", undefined, undefined]
    )
  })
})
