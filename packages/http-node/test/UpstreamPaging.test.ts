import { assert, layer } from "@effect/vitest"
import { Worker } from "@tradeflow/core"
import { Effect } from "effect"
import { makeAppLayer, newKey, oceanBasic, send, uat } from "./Fixture.js"
import type { Received } from "./Fixture.js"

interface Message {
  readonly hash: string
  readonly type: string
  readonly tradeflow_reference: string
  readonly payload: Record<string, unknown>
}

interface PageBody {
  readonly data: ReadonlyArray<Message>
  readonly next_cursor: string
  readonly has_more: boolean
}

const asPage = (r: Received): PageBody => {
  assert.strictEqual(r.status, 200, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/json/)
  assert.deepStrictEqual(Object.keys(r.body as object).sort(), ["data", "has_more", "next_cursor"])
  return r.body as PageBody
}

const cursorProblem = (r: Received) => {
  assert.strictEqual(r.status, 400, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  const body = r.body as { detail: string; errors: Array<{ path: string; message: string }> }
  assert.deepStrictEqual(body.errors.map((e) => e.path), ["cursor"])
  return body
}

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

/** Posts ocean_basic tradeflows in UAT and processes them. */
const post = (key: string, ...references: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (const reference of references) {
      const r = yield* send("POST", "/v3/downstream/tradeflows", { host: uat, auth: key, json: oceanBasic(reference) })
      assert.strictEqual(r.status, 202, r.text)
    }
    yield* drain
  })

/** Walks every page from `cursor` (or the first page) with `query`; answers the messages and the last cursor. */
const walk = (key: string, query: string, cursor?: string) =>
  Effect.gen(function*() {
    const messages: Array<Message> = []
    let next = cursor
    let pages = 0
    while (true) {
      const page = asPage(
        yield* send("GET", `/upstream?${query}${next === undefined ? "" : `&cursor=${next}`}`, {
          host: uat,
          auth: key
        })
      )
      pages++
      messages.push(...page.data)
      next = page.next_cursor
      if (!page.has_more) return { messages, cursor: next, pages }
      assert.isAbove(page.data.length, 0)
    }
  })

const list = (key: string, query = "") =>
  Effect.map(send("GET", `/upstream?${query}`, { host: uat, auth: key }), (r) => {
    assert.strictEqual(r.status, 200, r.text)
    return r.body as Array<Message>
  })

layer(makeAppLayer(), { excludeTestServices: true })("GET /upstream with per_page", (it) => {
  it.effect("pages walk the unpaginated list in order; a stored cursor resumes with exactly the new messages", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("uat")
      yield* post(key, "PG-1", "PG-2")
      const all = yield* list(key)
      assert.isAbove(all.length, 6)
      const first = yield* walk(key, "per_page=3")
      assert.deepStrictEqual(first.messages, all)
      assert.strictEqual(first.pages, Math.ceil(all.length / 3))

      const idle = asPage(yield* send("GET", `/upstream?per_page=3&cursor=${first.cursor}`, { host: uat, auth: key }))
      assert.deepStrictEqual([idle.data, idle.has_more, idle.next_cursor], [[], false, first.cursor])

      yield* post(key, "PG-3")
      const after = yield* list(key)
      const resumed = yield* walk(key, "per_page=500", first.cursor)
      assert.deepStrictEqual(resumed.messages, after.slice(all.length))
      assert.isAbove(resumed.messages.length, 0)
      assert.isTrue(resumed.messages.every((m) => m.tradeflow_reference === "PG-3"))
    }))

  it.effect("filters and excludes apply on every page; per_page and excludes may change between pages", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("uat")
      yield* post(key, "F-1", "F-2")
      const query = "type=CONTAINER_MILESTONE,BASIC_STATUS&tradeflow=F-2"
      const expected = yield* list(key, query)
      assert.isAbove(expected.length, 2)
      const firstPage = asPage(
        yield* send("GET", `/upstream?${query}&per_page=2&excludes=shipment`, { host: uat, auth: key })
      )
      for (const m of firstPage.data) assert.notProperty(m.payload, "shipment")
      const rest = yield* walk(
        key,
        `type=BASIC_STATUS,CONTAINER_MILESTONE&tradeflow=F-2&per_page=7`,
        firstPage.next_cursor
      )
      const walked = [...firstPage.data, ...rest.messages]
      assert.deepStrictEqual(walked.map((m) => m.hash), expected.map((m) => m.hash))
      for (const m of walked) {
        assert.strictEqual(m.tradeflow_reference, "F-2")
        assert.include(["CONTAINER_MILESTONE", "BASIC_STATUS"], m.type)
      }
      const containers = yield* walk(key, "container=MSCU1234565&per_page=4")
      assert.isAbove(containers.messages.length, 0)
      assert.isTrue(containers.messages.every((m) => m.type !== "SHIPMENT_CHANGE"))
    }))

  it.effect("latest=true and since select on the first page; cursors reach the whole history", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("uat")
      yield* post(key, "L-1")
      const latest = yield* list(key, "latest=true")
      const walked = yield* walk(key, "latest=true&per_page=2")
      assert.deepStrictEqual(walked.messages, latest)
      const future = new Date(Date.now() + 3_600_000).toISOString()
      const empty = asPage(yield* send("GET", `/upstream?per_page=5&since=${future}`, { host: uat, auth: key }))
      assert.deepStrictEqual([empty.data, empty.has_more], [[], false])
      yield* post(key, "L-2")
      const resumed = yield* walk(key, "per_page=50", empty.next_cursor)
      assert.isAbove(resumed.messages.length, 0)
      assert.isTrue(resumed.messages.every((m) => m.tradeflow_reference === "L-2"))
    }))

  it.effect("tampered, truncated, garbage, foreign and other-filter cursors are 400 problems on `cursor`", () =>
    Effect.gen(function*() {
      const mine = yield* newKey("uat")
      const theirs = yield* newKey("uat")
      yield* post(mine.key, "C-1")
      const page = asPage(yield* send("GET", "/upstream?per_page=2&type=BASIC_STATUS", { host: uat, auth: mine.key }))
      const cursor = page.next_cursor
      assert.match(cursor, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
      for (
        const bad of [
          flip(cursor, 5),
          flip(cursor, cursor.length - 1),
          cursor.slice(0, -3),
          "garbage",
          "v2" + cursor.slice(2),
          ""
        ]
      ) {
        cursorProblem(
          yield* send("GET", `/upstream?per_page=2&type=BASIC_STATUS&cursor=${encodeURIComponent(bad)}`, {
            host: uat,
            auth: mine.key
          })
        )
      }
      const foreign = cursorProblem(
        yield* send("GET", `/upstream?per_page=2&type=BASIC_STATUS&cursor=${cursor}`, {
          host: uat,
          auth: theirs.key
        })
      )
      assert.include(foreign.detail, "organisation")
      for (
        const other of [
          "type=CONTAINER_MILESTONE",
          "",
          "type=BASIC_STATUS&tradeflow=C-1",
          "type=BASIC_STATUS&latest=true"
        ]
      ) {
        const problem = cursorProblem(
          yield* send("GET", `/upstream?per_page=2&${other}&cursor=${cursor}`, { host: uat, auth: mine.key })
        )
        assert.include(problem.detail, "filters")
      }
      const same = yield* send(
        "GET",
        `/v3/upstream?per_page=9&type=BASIC_STATUS,BASIC_STATUS&latest=false&excludes=shipment&cursor=${cursor}`,
        {
          host: uat,
          auth: mine.key
        }
      )
      asPage(same)
    }))

  it.effect("OpenAPI documents both answers of GET /upstream", () =>
    Effect.gen(function*() {
      const doc = yield* send("GET", "/openapi.json")
      const text = JSON.stringify((doc.body as { paths: Record<string, unknown> }).paths["/upstream"])
      assert.include(text, "#/components/schemas/UpstreamPage")
      assert.include(text, "#/components/schemas/APIMessage")
      const schemas =
        (doc.body as { components: { schemas: Record<string, { required?: Array<string> }> } }).components.schemas
      assert.deepStrictEqual([...(schemas["UpstreamPage"]?.required ?? [])].sort(), ["data", "has_more", "next_cursor"])
      assert.include(text, "per_page")
    }))
})
