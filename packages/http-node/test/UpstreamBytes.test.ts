/**
 * `GET /upstream` answers are written as bytes straight from the stored bodies: for random pages
 * (random bodies, non-ASCII and lone surrogates included; random sizes, cursors and `has_more`) the
 * response must be byte for byte the earlier rendering, the UTF-8 of one string built by
 * concatenation, with the same content-type and content-length.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Cursor, MessageStore, Service, Storage, type StoredMessage, Upstream } from "@tradeflow/core"
import { Effect, FastCheck as fc, Layer, Redacted } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"
import { consoleToken, destinationLayer, newKey, uat } from "./Fixture.js"

let stored: ReadonlyArray<StoredMessage.StoredMessage> = []

const store = MessageStore.MessageStore.of({
  list: (query) => Effect.sync(() => Storage.selectMessages(stored, query)),
  read: (query) => Effect.sync(() => Storage.readMessages(stored, query)),
  readBodies: (query) => Effect.sync(() => Storage.readMessageBodies(stored, query)),
  startOf: (_, since) => Effect.sync(() => Storage.startOfLog(stored, stored.length, since))
})

const secret = "upstream-bytes-secret"

const appLayer = HttpApp.layer.pipe(
  Layer.provide(destinationLayer()),
  Layer.provide(HttpConfig.layer({ consoleToken })),
  Layer.provide(
    Layer.fresh(Upstream.layer()).pipe(
      Layer.provide(Layer.succeed(MessageStore.MessageStore, store)),
      Layer.provide(Cursor.layerSecret(secret))
    )
  ),
  Layer.provideMerge(Service.layerMemory),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
  .map((units) => String.fromCharCode(...units))
const bodyText = fc.oneof(codeUnits, fc.string({ unit: "grapheme", maxLength: 40 }), fc.json({ maxDepth: 2 }))

const messagesOf = (bodies: ReadonlyArray<string>, now: number): ReadonlyArray<StoredMessage.StoredMessage> =>
  bodies.map((body, i) => ({
    seq: i + 1,
    hash: `h${i}`,
    type: "BASIC_STATUS",
    tradeflow_reference: "T",
    container_reference: null,
    generated_at: now,
    body
  }))

const get = (url: string, auth: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.get(url).pipe(HttpClientRequest.setHeaders({ host: uat, authorization: auth }))
    )
    return { status: response.status, headers: response.headers, bytes: new Uint8Array(yield* response.arrayBuffer) }
  }).pipe(Effect.scoped)

const sameBytes = (actual: Uint8Array, expected: string) => {
  const bytes = new TextEncoder().encode(expected)
  assert.strictEqual(Buffer.compare(Buffer.from(actual), Buffer.from(bytes)), 0, expected)
  return bytes
}

layer(appLayer, { excludeTestServices: true })("GET /upstream bytes", (it) => {
  it.effect("pages and the array form are byte-identical to the concatenated-string rendering", () =>
    Effect.gen(function*() {
      const { key, organisation } = yield* newKey("uat")
      const organisationId = organisation.id
      const signer = yield* Cursor.makeSigner(Redacted.make(secret))
      const samples = fc.sample(
        fc.record({
          bodies: fc.array(bodyText, { maxLength: 30 }),
          perPage: fc.integer({ min: 1, max: 12 }),
          after: fc.integer({ min: 0, max: 31 })
        }),
        { numRuns: 60, seed: 6 }
      )
      for (const { after, bodies, perPage } of samples) {
        stored = messagesOf(bodies, Date.now())
        const cursor = yield* signer.sign({ organisation_id: organisationId }, after)
        const page = yield* get(`/v3/upstream?per_page=${perPage}&cursor=${cursor}`, key)
        assert.strictEqual(page.status, 200, new TextDecoder().decode(page.bytes))
        const data = stored.filter((m) => m.seq > after).slice(0, perPage)
        const last = data[data.length - 1]
        const next = yield* signer.sign({ organisation_id: organisationId }, last === undefined ? after : last.seq)
        const hasMore = stored.filter((m) => m.seq > after).length > perPage
        const expected = sameBytes(
          page.bytes,
          `{"data":[${data.map((m) => m.body).join(",")}],"next_cursor":${JSON.stringify(next)},"has_more":${hasMore}}`
        )
        assert.strictEqual(page.headers["content-type"], "application/json")
        assert.strictEqual(page.headers["content-length"], String(expected.length))

        const list = yield* get("/v3/upstream", key)
        assert.strictEqual(list.status, 200)
        const listed = sameBytes(list.bytes, `[${stored.map((m) => m.body).join(",")}]`)
        assert.strictEqual(list.headers["content-type"], "application/json")
        assert.strictEqual(list.headers["content-length"], String(listed.length))
      }
    }))
})
