import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, layer } from "@effect/vitest"
import { Worker } from "@tradeflow/core"
import { Effect, FastCheck as fc, Stream } from "effect"
import { consoleAuth, makeAppLayer, newKey, oceanBasic, production, send, uat } from "./Fixture.js"
import type { Received } from "./Fixture.js"

const assertProblem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  const body = r.body as Record<string, unknown>
  assert.strictEqual(body["status"], status)
  assert.strictEqual(body["type"], "about:blank")
  assert.isString(body["title"])
  assert.isString(body["detail"])
  return body as { status: number; title: string; detail: string; errors?: Array<{ path: string; message: string }> }
}

const prefixes = ["", "/v3"] as const

layer(makeAppLayer(), { excludeTestServices: true })("HttpApp", (it) => {
  for (const prefix of prefixes) {
    describe(`served at ${prefix === "" ? "the root" : prefix}`, () => {
      it.effect("GET /health answers 200 without auth on any host", () =>
        Effect.gen(function*() {
          for (const host of [production, uat, "elsewhere.example"]) {
            const r = yield* send("GET", `${prefix}/health`, { host })
            assert.deepStrictEqual([r.status, r.body], [200, { status: "ok" }])
          }
        }))

      it.effect("401 without or with an unknown key", () =>
        Effect.gen(function*() {
          assertProblem(yield* send("GET", `${prefix}/upstream`), 401)
          assertProblem(yield* send("GET", `${prefix}/upstream`, { auth: "prod_nope" }), 401)
          assertProblem(yield* send("POST", `${prefix}/downstream`, { auth: "", json: [] }), 401)
          assertProblem(
            yield* send("DELETE", `${prefix}/downstream/tradeflows/*`, { auth: "uat_nope", host: uat }),
            401
          )
        }))

      it.effect("403 when the key's environment does not match the host, both ways", () =>
        Effect.gen(function*() {
          const prodKey = yield* newKey("production")
          const uatKey = yield* newKey("uat")
          const a = assertProblem(yield* send("GET", `${prefix}/upstream`, { host: uat, auth: prodKey.key }), 403)
          assert.include(a.detail, "does not match the host")
          const b = assertProblem(yield* send("GET", `${prefix}/upstream`, { host: production, auth: uatKey.key }), 403)
          assert.include(b.detail, "the token environment (uat) does not match the host (production)")
          assert.strictEqual((yield* send("GET", `${prefix}/upstream`, { host: uat, auth: uatKey.key })).status, 200)
          assert.strictEqual(
            (yield* send("GET", `${prefix}/upstream`, { host: production, auth: prodKey.key })).status,
            200
          )
        }))

      it.effect("403 for a revoked key; Bearer prefix accepted", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          assert.strictEqual((yield* send("GET", `${prefix}/upstream`, { auth: `Bearer ${k.key}` })).status, 200)
          const revoked = yield* send("DELETE", `/console/api-keys/${k.id}`, { auth: consoleAuth })
          assert.strictEqual(revoked.status, 204)
          assertProblem(yield* send("GET", `${prefix}/upstream`, { auth: k.key }), 403)
        }))

      it.effect("421 for a host of neither environment", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          assertProblem(yield* send("GET", `${prefix}/upstream`, { host: "evil.example", auth: k.key }), 421)
          assertProblem(
            yield* send("POST", `${prefix}/downstream`, { host: "evil.example", auth: k.key, json: [] }),
            421
          )
        }))

      it.effect("hosts: port ignored, case-insensitive", () =>
        Effect.gen(function*() {
          const k = yield* newKey("uat")
          assert.strictEqual(
            (yield* send("GET", `${prefix}/upstream`, { host: "UAT.LocalHost:9999", auth: k.key })).status,
            200
          )
        }))

      it.effect("422 with JSON pointers; nothing is queued", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const r = yield* send("POST", `${prefix}/downstream`, {
            auth: k.key,
            json: [
              { tradeflow_reference: "OK-1", container_reference: "MSCU1234565" },
              { tradeflow_reference: "BAD-1", container_reference: "MSCU1234565", port_of_loading: "TOOLONG" },
              { container_reference: "MSCU1234565" }
            ]
          })
          const problem = assertProblem(r, 422)
          const paths = (problem.errors ?? []).map((e) => e.path)
          assert.include(paths, "/1/port_of_loading")
          assert.isTrue(paths.some((p) => p.startsWith("/2")), JSON.stringify(paths))
          yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
          const feed = yield* send("GET", `${prefix}/upstream`, { auth: k.key })
          assert.deepStrictEqual(feed.body, [])
        }))

      it.effect("POST /downstream requires an array (422); /downstream/tradeflows takes an object", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const record = { tradeflow_reference: "OBJ-1", booking_reference: "BK1" }
          assertProblem(yield* send("POST", `${prefix}/downstream`, { auth: k.key, json: record }), 422)
          const ok = yield* send("POST", `${prefix}/downstream/tradeflows`, { auth: k.key, json: record })
          assert.strictEqual(ok.status, 202, ok.text)
          assert.deepStrictEqual((ok.body as { status: string }).status, "queued")
          const arr = yield* send("POST", `${prefix}/downstream`, { auth: k.key, json: [record] })
          assert.strictEqual(arr.status, 202, arr.text)
        }))

      it.effect("400 for a body that is not JSON, 415 for one that is not application/json", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const bad = assertProblem(yield* send("POST", `${prefix}/downstream`, { auth: k.key, text: "[{nope" }), 400)
          assert.include(bad.detail, "JSON")
          assertProblem(yield* send("POST", `${prefix}/downstream`, { auth: k.key, text: "" }), 400)
          assertProblem(
            yield* send("POST", `${prefix}/downstream`, { auth: k.key, text: "[]", contentType: "text/plain" }),
            415
          )
          const charset = yield* send("POST", `${prefix}/downstream`, {
            auth: k.key,
            json: [{ tradeflow_reference: "CS-1", booking_reference: "B" }],
            contentType: "application/json; charset=utf-8"
          })
          assert.strictEqual(charset.status, 202, charset.text)
        }))

      it.effect("413 over 10,000 records and over the size limit", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const many = Array.from({ length: 10_001 }, () => ({}))
          assertProblem(yield* send("POST", `${prefix}/downstream`, { auth: k.key, json: many }), 413)
          const big = `[${JSON.stringify("x".repeat(5 * 1024 * 1024))}]`
          assertProblem(yield* send("POST", `${prefix}/downstream/tradeflows`, { auth: k.key, text: big }), 413)
        }))

      it.effect("idempotency: a replay returns the first answer; another body is 422", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const headers = { "idempotency-key": "idem-1" }
          const body = [{ tradeflow_reference: "ID-1", booking_reference: "B1" }]
          const first = yield* send("POST", `${prefix}/downstream`, { auth: k.key, json: body, headers })
          const again = yield* send("POST", `${prefix}/downstream`, { auth: k.key, json: body, headers })
          assert.strictEqual(first.status, 202)
          assert.deepStrictEqual([again.status, again.body], [202, first.body])
          const other = yield* send("POST", `${prefix}/downstream`, {
            auth: k.key,
            json: [{ tradeflow_reference: "ID-2", booking_reference: "B2" }],
            headers
          })
          assertProblem(other, 422)
        }))

      it.effect("DELETE: wildcard needs confirm=PRODUCTION in production, not in UAT; unknown reference 404", () =>
        Effect.gen(function*() {
          const prod = yield* newKey("production")
          const uatKey = yield* newKey("uat")
          const record = [{ tradeflow_reference: "DEL-1", booking_reference: "B" }]
          yield* send("POST", `${prefix}/downstream`, { auth: prod.key, json: record })
          yield* send("POST", `${prefix}/downstream`, { auth: uatKey.key, host: uat, json: record })
          assertProblem(yield* send("DELETE", `${prefix}/downstream/tradeflows/*`, { auth: prod.key }), 400)
          const confirmed = yield* send("DELETE", `${prefix}/downstream/tradeflows/*?confirm=PRODUCTION`, {
            auth: prod.key
          })
          assert.deepStrictEqual([confirmed.status, confirmed.body], [200, { status: "deactivated", count: 1 }])
          const inUat = yield* send("DELETE", `${prefix}/downstream/tradeflows/*?hard=true`, {
            auth: uatKey.key,
            host: uat
          })
          assert.deepStrictEqual([inUat.status, inUat.body], [200, { status: "deleted", count: 1 }])
          assertProblem(yield* send("DELETE", `${prefix}/downstream/tradeflows/NOPE`, { auth: prod.key }), 404)
          const one = yield* send("DELETE", `${prefix}/downstream/tradeflows/DEL-1?hard=true`, { auth: prod.key })
          assert.deepStrictEqual([one.status, one.body], [200, { status: "deleted", count: 1 }])
          const bad = assertProblem(
            yield* send("DELETE", `${prefix}/downstream/tradeflows/DEL-1?hard=maybe`, { auth: prod.key }),
            400
          )
          assert.deepStrictEqual(bad.errors?.map((e) => e.path), ["hard"])
        }))

      it.effect("GET /upstream: malformed parameters are 400 problems naming the parameter", () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          for (
            const [query, name] of [
              ["since=yesterday", "since"],
              ["latest=maybe", "latest"],
              ["excludes=events", "excludes"],
              ["type=NOT_A_TYPE", "type"],
              ["type=SHIPMENT_CHANGE,NOPE", "type"],
              ["per_page=0", "per_page"],
              ["per_page=501", "per_page"],
              ["per_page=ten", "per_page"],
              ["per_page=2.5", "per_page"],
              ["per_page=-1", "per_page"],
              ["cursor=abc", "cursor"],
              ["per_page=10&cursor=abc", "cursor"]
            ] as const
          ) {
            const problem = assertProblem(yield* send("GET", `${prefix}/upstream?${query}`, { auth: k.key }), 400)
            assert.deepStrictEqual(problem.errors?.map((e) => e.path), [name], query)
          }
          const unpaged = assertProblem(yield* send("GET", `${prefix}/upstream?cursor=abc`, { auth: k.key }), 400)
          assert.strictEqual(unpaged.detail, "cursor: a cursor is only valid together with per_page")
          const ok = yield* send(
            "GET",
            `${prefix}/upstream?since=2026-01-01T00:00:00Z&latest=false&type=SHIPMENT_CHANGE,BASIC_STATUS&excludes=shipment`,
            { auth: k.key }
          )
          assert.strictEqual(ok.status, 200, ok.text)
        }))
    })
  }

  it.effect("size caps over HTTP: the issue's 2,500-container UAT tradeflow and a stored tradeflow past 1,000 containers are 422, nothing queued", () =>
    Effect.gen(function*() {
      const k = yield* newKey("uat")
      const container = (i: number) => `ABCU${String(i).padStart(7, "0")}`
      const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => container(from + i))
      const issue = {
        tradeflow_reference: "UAT-BIG",
        container_reference: range(0, 2_500),
        port_of_loading: "CNSHA",
        port_of_discharge: "NLRTM",
        events: range(0, 2_500).map((c) => ({ message: "Gate out empty", container_reference: c }))
      }
      const refused = assertProblem(
        yield* send("POST", "/v3/downstream/tradeflows", { host: uat, auth: k.key, json: issue }),
        422
      )
      assert.isTrue(
        (refused.errors ?? []).some((e) => e.path === "/container_reference"),
        JSON.stringify(refused.errors)
      )
      const first = { tradeflow_reference: "TF-CAP", container_reference: range(0, 600) }
      assert.strictEqual(
        (yield* send("POST", "/v3/downstream/tradeflows", { host: uat, auth: k.key, json: first })).status,
        202
      )
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
      const more = { tradeflow_reference: "TF-CAP", container_reference: range(600, 1_001) }
      const over = assertProblem(
        yield* send("POST", "/v3/downstream/tradeflows", { host: uat, auth: k.key, json: more }),
        422
      )
      assert.deepStrictEqual(over.errors, [{
        path: "/container_reference",
        message: "tradeflow \"TF-CAP\" would hold 1,001 containers; at most 1,000 per tradeflow (it holds 600)"
      }])
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
      const feed = yield* send("GET", "/v3/upstream?tradeflow=UAT-BIG", { host: uat, auth: k.key })
      assert.deepStrictEqual((feed.body as { data?: ReadonlyArray<unknown> }).data ?? feed.body, [])
    }))

  it.effect("the UAT walk-through: console, uat key, ocean_basic, milestones upstream", () =>
    Effect.gen(function*() {
      const created = yield* send("POST", "/console/organisations", {
        auth: consoleAuth,
        json: { name: "Walkthrough BV" }
      })
      assert.strictEqual(created.status, 201)
      const org = created.body as { id: string; name: string }
      assert.deepStrictEqual(Object.keys(org).sort(), ["id", "name"])
      const keyResponse = yield* send("POST", `/console/organisations/${org.id}/api-keys`, {
        auth: consoleAuth,
        json: { environment: "uat" }
      })
      assert.strictEqual(keyResponse.status, 201)
      const key = keyResponse.body as {
        id: string
        key: string
        environment: string
        organisation: { id: string; name: string }
      }
      assert.strictEqual(key.environment, "uat")
      assert.strictEqual(key.organisation.name, "Walkthrough BV (UAT)")
      const posted = yield* send("POST", "/v3/downstream/tradeflows", {
        host: uat,
        auth: key.key,
        json: oceanBasic("PO-4711")
      })
      assert.strictEqual(posted.status, 202, posted.text)
      const accepted = posted.body as {
        status: string
        tradeflows: Array<{ tradeflow_reference: string; warnings: Array<string> }>
      }
      assert.strictEqual(accepted.status, "queued")
      assert.strictEqual(accepted.tradeflows[0]?.tradeflow_reference, "PO-4711")
      assert.isArray(accepted.tradeflows[0]?.warnings)
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
      const feed = yield* send("GET", "/v3/upstream?type=CONTAINER_MILESTONE", { host: uat, auth: key.key })
      assert.strictEqual(feed.status, 200)
      assert.match(feed.headers["content-type"] ?? "", /^application\/json/)
      const messages = feed.body as Array<
        { type: string; tradeflow_reference: string; payload: { type: string; status_code: string } }
      >
      assert.isTrue(messages.length > 0)
      for (const m of messages) {
        assert.strictEqual(m.type, "CONTAINER_MILESTONE")
        assert.strictEqual(m.payload.type, "CONTAINER_MILESTONES")
        assert.strictEqual(m.tradeflow_reference, "PO-4711")
      }
      const codes = new Set(messages.map((m) => m.payload.status_code))
      for (const code of ["GE", "GN", "AE", "VA", "UV", "GT", "GR"]) {
        assert.isTrue(codes.has(code), `${code} in ${[...codes]}`)
      }
      const withoutShipment = yield* send("GET", "/upstream?excludes=shipment&container=MSCU1234565", {
        host: uat,
        auth: key.key
      })
      const slim = withoutShipment.body as Array<{ type: string; payload: Record<string, unknown> }>
      assert.isTrue(slim.length > 0)
      for (const m of slim) {
        assert.notStrictEqual(m.type, "SHIPMENT_CHANGE")
        assert.notProperty(m.payload, "shipment")
      }
      const listed = yield* send("GET", `/console/organisations/${org.id}/api-keys`, { auth: consoleAuth })
      assert.deepStrictEqual(
        (listed.body as Array<{ id: string }>).map((k) => k.id),
        [key.id]
      )
    }))

  it.effect("console: bearer token required, lists, 404s, 422s", () =>
    Effect.gen(function*() {
      assertProblem(yield* send("GET", "/console/organisations"), 401)
      assertProblem(yield* send("GET", "/console/organisations", { auth: "Bearer wrong" }), 401)
      assertProblem(yield* send("GET", "/console/organisations", { auth: "console-token-for-tests" }), 401)
      const ok = yield* send("GET", "/console/organisations", { auth: consoleAuth, host: "anything.example" })
      assert.strictEqual(ok.status, 200)
      const k = yield* newKey("production", "Listed Org")
      const orgs = (yield* send("GET", "/console/organisations", { auth: consoleAuth })).body as Array<
        Record<string, unknown>
      >
      const listed = orgs.find((o) => o["id"] === k.organisationId)
      assert.deepStrictEqual(listed, {
        id: k.organisationId,
        name: "Listed Org",
        environment: "production",
        live_organisation_id: null
      })
      assertProblem(
        yield* send("POST", "/console/organisations/org_missing/api-keys", {
          auth: consoleAuth,
          json: { environment: "uat" }
        }),
        404
      )
      assertProblem(yield* send("GET", "/console/organisations/org_missing/api-keys", { auth: consoleAuth }), 404)
      assertProblem(yield* send("DELETE", "/console/api-keys/key_missing", { auth: consoleAuth }), 404)
      const invalid = assertProblem(
        yield* send("POST", "/console/organisations", { auth: consoleAuth, json: { name: 7 } }),
        422
      )
      assert.deepStrictEqual(invalid.errors?.map((e) => e.path), ["/name"])
      const env = assertProblem(
        yield* send("POST", `/console/organisations/${k.organisationId}/api-keys`, {
          auth: consoleAuth,
          json: { environment: "staging" }
        }),
        422
      )
      assert.deepStrictEqual(env.errors?.map((e) => e.path), ["/environment"])
      assertProblem(yield* send("POST", "/console/organisations", { auth: consoleAuth, text: "{" }), 400)
      assertProblem(
        yield* send("POST", "/console/organisations", { auth: consoleAuth, text: "{}", contentType: "text/plain" }),
        415
      )
    }))

  it.effect("404 and 405 are problems; 405 carries Allow", () =>
    Effect.gen(function*() {
      assertProblem(yield* send("GET", "/nowhere"), 404)
      assertProblem(yield* send("GET", "/v3/console/organisations", { auth: consoleAuth }), 404)
      const r = yield* send("GET", "/v3/downstream")
      assertProblem(r, 405)
      assert.strictEqual(r.headers["allow"], "POST")
      const put = yield* send("PUT", "/downstream/tradeflows/X")
      assertProblem(put, 405)
      assert.strictEqual(put.headers["allow"], "DELETE")
      assertProblem(yield* send("PATCH", "/upstream"), 405)
    }))

  it.effect("OpenAPI lists every path at the root and under /v3; /docs is HTML", () =>
    Effect.gen(function*() {
      const doc = yield* send("GET", "/openapi.json")
      assert.strictEqual(doc.status, 200)
      const paths = Object.keys((doc.body as { paths: Record<string, unknown> }).paths)
      for (
        const p of [
          "/downstream",
          "/downstream/tradeflows",
          "/downstream/tradeflows/{reference}",
          "/upstream",
          "/health"
        ]
      ) {
        assert.include(paths, p)
        assert.include(paths, `/v3${p}`)
      }
      assert.include(paths, "/console/organisations")
      assert.include(paths, "/console/api-keys/{id}")
      const docs = yield* send("GET", "/docs")
      assert.strictEqual(docs.status, 200)
      assert.match(docs.headers["content-type"] ?? "", /^text\/html/)
      assert.include(docs.text, "<html")
    }))

  it.effect("a chunked body over the limit is refused with 413 without buffering it", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const client = yield* HttpClient.HttpClient
      const chunk = new TextEncoder().encode("[" + " ".repeat(64 * 1024 - 1))
      const response = yield* client.execute(
        HttpClientRequest.post("/downstream").pipe(
          HttpClientRequest.setHeader("host", production),
          HttpClientRequest.setHeader("authorization", k.key),
          HttpClientRequest.bodyStream(Stream.fromIterable(Array.from({ length: 90 }, () => chunk)), {
            contentType: "application/json"
          })
        )
      ).pipe(Effect.scoped, Effect.either)
      assert.strictEqual(response._tag === "Right" ? response.right.status : String(response.left), 413)
      const huge = new TextEncoder().encode(" ".repeat(1024 * 1024))
      yield* client.execute(
        HttpClientRequest.post("/downstream").pipe(
          HttpClientRequest.setHeader("host", production),
          HttpClientRequest.setHeader("authorization", k.key),
          HttpClientRequest.bodyStream(Stream.fromIterable(Array.from({ length: 12 }, () => huge)), {
            contentType: "application/json"
          })
        )
      ).pipe(Effect.scoped, Effect.either)
      assert.strictEqual((yield* send("GET", "/health")).status, 200)
    }))

  it.effect("no JSON body, however odd, gets a 5xx", () =>
    Effect.gen(function*() {
      const k = yield* newKey("uat")
      const bodies = fc.sample(
        fc.oneof(
          fc.jsonValue(),
          fc.array(fc.dictionary(
            fc.constantFrom(
              "tradeflow_reference",
              "container_reference",
              "booking_reference",
              "port_of_loading",
              "estimated_time_of_arrival",
              "events",
              "mock_tracking",
              "partners",
              "active",
              "references"
            ),
            fc.jsonValue()
          ))
        ),
        { numRuns: 150, seed: 7 }
      )
      for (const body of bodies) {
        for (const path of ["/downstream", "/v3/downstream/tradeflows"]) {
          const r = yield* send("POST", path, { host: uat, auth: k.key, text: JSON.stringify(body) ?? "null" })
          assert.isBelow(r.status, 500, `${path} ${JSON.stringify(body)}: ${r.text}`)
        }
      }
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
      const feed = yield* send("GET", "/upstream", { host: uat, auth: k.key })
      assert.strictEqual(feed.status, 200)
    }))
})

layer(makeAppLayer({ trustProxy: true, productionHosts: ["api.example.com", "[::1]"] }), { excludeTestServices: true })(
  "behind a proxy",
  (it) => {
    it.effect("X-Forwarded-Host decides the environment when the proxy is trusted", () =>
      Effect.gen(function*() {
        const k = yield* newKey("production")
        const r = yield* send("GET", "/upstream", {
          host: "internal:1234",
          auth: k.key,
          headers: { "x-forwarded-host": "API.example.com" }
        })
        assert.strictEqual(r.status, 200, r.text)
        assertProblem(
          yield* send("GET", "/upstream", {
            host: "api.example.com",
            auth: k.key,
            headers: { "x-forwarded-host": "other.example" }
          }),
          421
        )
        assert.strictEqual((yield* send("GET", "/upstream", { host: "[::1]:8080", auth: k.key })).status, 200)
      }))
  }
)
