import { assert, describe, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { consoleAuth, makeAppLayer, newKey, send } from "./Fixture.js"
import type { Received } from "./Fixture.js"

interface Issue {
  readonly path: string
  readonly message: string
}

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  const body = r.body as { status: number; detail: string; errors?: ReadonlyArray<Issue> }
  assert.strictEqual(body.status, status)
  return body
}

const newOrganisation = Effect.gen(function*() {
  const r = yield* send("POST", "/console/organisations", { auth: consoleAuth, json: { name: `org-${Math.random()}` } })
  return (r.body as { id: string }).id
})

const create = (organisationId: string, json: unknown) =>
  send("POST", `/console/organisations/${organisationId}/automations`, { auth: consoleAuth, json })

interface Created {
  readonly id: string
  readonly url: string
  readonly format: string
  readonly types: ReadonlyArray<string>
  readonly enabled: boolean
  readonly secret: string
}

const privateUrls = [
  "https://127.0.0.1/hook",
  "https://10.1.2.3/hook",
  "https://192.168.0.10/hook",
  "https://169.254.169.254/latest/meta-data",
  "https://100.64.0.1/hook",
  "https://[::1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://2130706433/hook",
  "https://0x7f000001/hook",
  "https://127.1/hook",
  "https://localhost/hook"
]

describe("console automations", () => {
  layer(makeAppLayer(), { excludeTestServices: true })("private destinations refused (default)", (it) => {
    it.effect("create: defaults are disabled, message format, all three types and a 32-byte whsec_ secret", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        const r = yield* create(org, { url: "https://hooks.example.com/tracking" })
        assert.strictEqual(r.status, 201, r.text)
        const body = r.body as Created
        assert.deepStrictEqual(Object.keys(body).sort(), ["enabled", "format", "id", "secret", "types", "url"])
        assert.deepStrictEqual(
          [body.url, body.format, body.types, body.enabled],
          ["https://hooks.example.com/tracking", "message", [
            "SHIPMENT_CHANGE",
            "CONTAINER_MILESTONE",
            "LOCATION_UPDATE"
          ], false]
        )
        assert.match(body.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
        assert.strictEqual(Buffer.from(body.secret.slice(6), "base64").length, 32)
        const explicit = yield* create(org, {
          url: "https://hooks.example.com/b",
          format: "tradeflow",
          types: ["CONTAINER_MILESTONE"],
          enabled: true
        })
        assert.strictEqual(explicit.status, 201, explicit.text)
        const b = explicit.body as Created
        assert.deepStrictEqual([b.format, b.types, b.enabled], ["tradeflow", ["CONTAINER_MILESTONE"], true])
      }))

    it.effect("BASIC_STATUS is refused with 422 naming /types/0", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        const body = problem(yield* create(org, { url: "https://h.example.com/x", types: ["BASIC_STATUS"] }), 422)
        assert.deepStrictEqual(body.errors?.map((e) => e.path), ["/types/0"])
        assert.include(body.errors?.[0]?.message, "not an integration type")
        problem(yield* create(org, { url: "https://h.example.com/x", types: [] }), 422)
        const format = problem(yield* create(org, { url: "https://h.example.com/x", format: "xml" }), 422)
        assert.deepStrictEqual(format.errors?.map((e) => e.path), ["/format"])
        const list = yield* send("GET", `/console/organisations/${org}/automations`, { auth: consoleAuth })
        assert.deepStrictEqual(list.body, [])
      }))

    it.effect("a bad url is 422 naming /url; a missing url and a non-object body are 422 too", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        for (
          const url of [
            "not a url",
            "ftp://h.example.com/x",
            "https://user:pw@h.example.com/x",
            "http://h.example.com/x",
            ""
          ]
        ) {
          const body = problem(yield* create(org, { url }), 422)
          assert.deepStrictEqual(body.errors?.map((e) => e.path), ["/url"], url)
        }
        const missing = problem(yield* create(org, { types: ["SHIPMENT_CHANGE"] }), 422)
        assert.deepStrictEqual(missing.errors?.map((e) => e.path), ["/url"])
        problem(yield* create(org, ["https://h.example.com/x"]), 422)
        problem(yield* send("POST", `/console/organisations/${org}/automations`, { auth: consoleAuth, text: "{" }), 400)
      }))

    it.effect("literal non-public destinations are refused with /url", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        for (const url of privateUrls) {
          const body = problem(yield* create(org, { url }), 422)
          assert.deepStrictEqual(body.errors?.map((e) => e.path), ["/url"], url)
        }
        for (
          const url of [
            "https://hooks.example.com:22/x",
            "https://hooks.example.com:25/x",
            "https://hooks.example.com:1023/x"
          ]
        ) {
          const body = problem(yield* create(org, { url }), 422)
          assert.deepStrictEqual(body.errors?.map((e) => [e.path, e.message]), [[
            "/url",
            `port ${new URL(url).port} is not allowed; use 80, 443 or a port above 1023`
          ]], url)
        }
        for (const url of ["https://hooks.example.com:80/x", "https://hooks.example.com:8443/x"]) {
          assert.strictEqual((yield* create(org, { url })).status, 201, url)
        }
        const both = problem(yield* create(org, { url: "https://10.0.0.1/x", types: ["BASIC_STATUS"] }), 422)
        assert.deepStrictEqual(both.errors?.map((e) => e.path), ["/url", "/types/0"])
      }))

    it.effect.prop(
      "any IPv4 literal in 10/8 or 127/8 is refused, in dotted and decimal form",
      [
        fc.constantFrom(10, 127),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 1, max: 254 })
      ],
      ([a, b, c, d]) =>
        Effect.gen(function*() {
          const org = yield* newOrganisation
          const decimal = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d
          for (const host of [`${a}.${b}.${c}.${d}`, String(decimal)]) {
            const body = problem(yield* create(org, { url: `https://${host}/hook` }), 422)
            assert.deepStrictEqual(body.errors?.map((e) => e.path), ["/url"], host)
          }
        }),
      { fastCheck: { numRuns: 10 } }
    )

    it.effect("list has no secrets; enable/disable round trip; rotate; delete 204 then 404", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        const a = (yield* create(org, { url: "https://a.example.com/hook" })).body as Created
        const b = (yield* create(org, { url: "https://b.example.com/hook", enabled: true })).body as Created
        const list = yield* send("GET", `/console/organisations/${org}/automations`, { auth: consoleAuth })
        assert.strictEqual(list.status, 200, list.text)
        const items = list.body as ReadonlyArray<Record<string, unknown>>
        assert.deepStrictEqual(items.map((x) => [x["id"], x["enabled"]]), [[a.id, false], [b.id, true]])
        assert.notInclude(list.text, "whsec_")
        assert.notInclude(list.text, "secret")
        assert.deepStrictEqual(
          Object.keys(items[0]!).sort(),
          [
            "created_at",
            "disabled_reason",
            "enabled",
            "failing_since",
            "format",
            "id",
            "organisation_id",
            "types",
            "url"
          ]
        )
        assert.strictEqual(items[0]!["organisation_id"], org)

        const enabled = yield* send("POST", `/console/automations/${a.id}/enable`, { auth: consoleAuth })
        assert.strictEqual(enabled.status, 200, enabled.text)
        assert.deepStrictEqual(
          [(enabled.body as Record<string, unknown>)["id"], (enabled.body as Record<string, unknown>)["enabled"]],
          [a.id, true]
        )
        const disabled = yield* send("POST", `/console/automations/${a.id}/disable`, { auth: consoleAuth })
        assert.strictEqual(disabled.status, 200, disabled.text)
        assert.strictEqual((disabled.body as Record<string, unknown>)["enabled"], false)
        assert.strictEqual((disabled.body as Record<string, unknown>)["disabled_reason"], null)

        const rotated = yield* send("POST", `/console/automations/${a.id}/rotate-secret`, { auth: consoleAuth })
        assert.strictEqual(rotated.status, 200, rotated.text)
        const secret = (rotated.body as { secret: string }).secret
        assert.match(secret, /^whsec_/)
        assert.notStrictEqual(secret, a.secret)

        const removed = yield* send("DELETE", `/console/automations/${a.id}`, { auth: consoleAuth })
        assert.deepStrictEqual([removed.status, removed.text], [204, ""])
        problem(yield* send("DELETE", `/console/automations/${a.id}`, { auth: consoleAuth }), 404)
        for (const op of ["enable", "disable", "rotate-secret"]) {
          const r = problem(yield* send("POST", `/console/automations/${a.id}/${op}`, { auth: consoleAuth }), 404)
          assert.include(r.detail, a.id)
        }
        const after = yield* send("GET", `/console/organisations/${org}/automations`, { auth: consoleAuth })
        assert.deepStrictEqual((after.body as ReadonlyArray<{ id: string }>).map((x) => x.id), [b.id])
      }))

    it.effect("unknown organisation is 404", () =>
      Effect.gen(function*() {
        problem(yield* create("org_nope", { url: "https://h.example.com/x" }), 404)
        problem(yield* send("GET", "/console/organisations/org_nope/automations", { auth: consoleAuth }), 404)
      }))

    it.effect("401 without or with a wrong console token", () =>
      Effect.gen(function*() {
        const org = yield* newOrganisation
        const a = (yield* create(org, { url: "https://a.example.com/hook" })).body as Created
        for (const auth of [undefined, "Bearer wrong", "console-token-for-tests"]) {
          const sent = auth === undefined ? {} : { auth }
          problem(
            yield* send("POST", `/console/organisations/${org}/automations`, {
              ...sent,
              json: { url: "https://x.example.com/" }
            }),
            401
          )
          problem(yield* send("GET", `/console/organisations/${org}/automations`, sent), 401)
          problem(yield* send("POST", `/console/automations/${a.id}/enable`, sent), 401)
          problem(yield* send("POST", `/console/automations/${a.id}/disable`, sent), 401)
          problem(yield* send("POST", `/console/automations/${a.id}/rotate-secret`, sent), 401)
          problem(yield* send("DELETE", `/console/automations/${a.id}`, sent), 401)
        }
        const list = yield* send("GET", `/console/organisations/${org}/automations`, { auth: consoleAuth })
        assert.deepStrictEqual(
          (list.body as ReadonlyArray<{ id: string; enabled: boolean }>).map((x) => [x.id, x.enabled]),
          [[a.id, false]]
        )
      }))

    it.effect("UAT destinations are configured on the (UAT) organisation's id", () =>
      Effect.gen(function*() {
        const key = yield* newKey("uat")
        assert.notStrictEqual(key.organisation.id, key.organisationId)
        const r = yield* create(key.organisation.id, { url: "https://uat-hooks.example.com/in", enabled: true })
        assert.strictEqual(r.status, 201, r.text)
        const list = yield* send("GET", `/console/organisations/${key.organisation.id}/automations`, {
          auth: consoleAuth
        })
        assert.deepStrictEqual(
          (list.body as ReadonlyArray<{ id: string; organisation_id: string }>).map((x) => [x.id, x.organisation_id]),
          [
            [(r.body as Created).id, key.organisation.id]
          ]
        )
        const live = yield* send("GET", `/console/organisations/${key.organisationId}/automations`, {
          auth: consoleAuth
        })
        assert.deepStrictEqual(live.body, [])
      }))

    it.effect("the OpenAPI document describes the automation operations", () =>
      Effect.gen(function*() {
        const doc = (yield* send("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> }
        assert.containsAllKeys(doc.paths["/console/organisations/{id}/automations"], ["get", "post"])
        assert.containsAllKeys(doc.paths["/console/automations/{id}"], ["delete"])
        for (const op of ["enable", "disable", "rotate-secret"]) {
          assert.containsAllKeys(doc.paths[`/console/automations/{id}/${op}`], ["post"])
        }
      }))
  })

  layer(makeAppLayer({ webhookAllowPrivate: true }), { excludeTestServices: true })(
    "private destinations allowed",
    (it) => {
      it.effect("private literals and plain http are accepted when the server allows private destinations", () =>
        Effect.gen(function*() {
          const org = yield* newOrganisation
          for (const url of [...privateUrls, "http://127.0.0.1:9999/hook", "http://hooks.example.com/x"]) {
            const r = yield* create(org, { url })
            assert.strictEqual(r.status, 201, `${url}: ${r.text}`)
          }
          const basic = problem(yield* create(org, { url: "http://127.0.0.1/x", types: ["BASIC_STATUS"] }), 422)
          assert.deepStrictEqual(basic.errors?.map((e) => e.path), ["/types/0"])
          problem(yield* create(org, { url: "https://u:p@127.0.0.1/x" }), 422)
        }))
    }
  )

  layer(makeAppLayer({ webhookHttpHosts: ["hooks.example.com"] }), { excludeTestServices: true })(
    "http allowlist",
    (it) => {
      it.effect("plain http is accepted only to the hosts of WEBHOOK_HTTP_ALLOWLIST", () =>
        Effect.gen(function*() {
          const org = yield* newOrganisation
          const listed = yield* create(org, { url: "http://hooks.example.com/in" })
          assert.strictEqual(listed.status, 201, listed.text)
          assert.deepStrictEqual(
            problem(yield* create(org, { url: "http://other.example.com/in" }), 422).errors?.map((e) => e.path),
            ["/url"]
          )
          problem(yield* create(org, { url: "http://127.0.0.1/in" }), 422)
        }))
    }
  )
})
