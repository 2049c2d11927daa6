import { assert, layer } from "@effect/vitest"
import { Accounts, AutomationAdmin, type User, Users } from "@tradeflow/core"
import { Effect } from "effect"
import { consoleAuth, makeAppLayer, send } from "./Fixture.js"

const password = "correct horse battery"
const client = { userAgent: "", address: "" }

/** Two organisations, an automation in each, and a session of each role in the first. */
const world = Effect.gen(function*() {
  const users = yield* Users.Users
  const accounts = yield* Accounts.Accounts
  const automations = yield* AutomationAdmin.AutomationAdmin
  const org = yield* accounts.createOrganisation("Mine")
  const other = yield* accounts.createOrganisation("Theirs")
  const mine = yield* automations.create(org.id, { url: "https://hooks.example.com/mine" })
  const theirs = yield* automations.create(other.id, { url: "https://hooks.example.com/theirs" })
  const cookies: Partial<Record<User.Role, string>> = {}
  for (const role of ["viewer", "member", "admin"] as const) {
    const { token } = yield* users.invite(Users.operatorToken, org.id, {
      email: `${role}-${org.id}@example.com`,
      role,
      uat: false
    })
    cookies[role] = `tf_session=${(yield* users.accept(token, password, client)).token}`
  }
  return { org, other, mine, theirs, cookies: cookies as Record<"viewer" | "member" | "admin", string> }
})

const same = { "sec-fetch-site": "same-origin" }

layer(makeAppLayer(), { excludeTestServices: true })("the console on a session", (it) => {
  it.effect("a session reads what its role permits and changes nothing else; 401 without token or session", () =>
    Effect.gen(function*() {
      const { cookies, mine, org, other, theirs } = yield* world
      const listed = yield* send("GET", "/console/organisations", { headers: { cookie: cookies.viewer } })
      assert.strictEqual(listed.status, 200)
      assert.deepStrictEqual((listed.body as Array<{ id: string }>).map((o) => o.id), [org.id])
      assert.strictEqual(
        (yield* send("GET", `/console/organisations/${org.id}/api-keys`, { headers: { cookie: cookies.viewer } }))
          .status,
        200
      )
      assert.strictEqual(
        (yield* send("GET", `/console/organisations/${other.id}/api-keys`, { headers: { cookie: cookies.admin } }))
          .status,
        403
      )
      const create = (cookie: string, headers: Record<string, string> = same) =>
        send("POST", `/console/organisations/${org.id}/api-keys`, {
          json: { environment: "production" },
          headers: { cookie, ...headers }
        })
      assert.strictEqual((yield* create(cookies.viewer)).status, 403)
      assert.strictEqual((yield* create(cookies.member)).status, 403)
      assert.strictEqual((yield* create(cookies.admin, {})).status, 403)
      assert.strictEqual((yield* create(cookies.admin, { origin: "https://evil.example" })).status, 403)
      assert.strictEqual((yield* create(cookies.admin)).status, 201)
      const uatKey = (cookie: string) =>
        send("POST", `/console/organisations/${org.id}/api-keys`, {
          json: { environment: "uat" },
          headers: { cookie, ...same }
        })
      assert.strictEqual((yield* uatKey(cookies.admin)).status, 403, "a UAT key needs UAT access")
      const operatorUat = yield* send("POST", `/console/organisations/${org.id}/api-keys`, {
        auth: consoleAuth,
        json: { environment: "uat" }
      })
      assert.strictEqual(operatorUat.status, 201)
      const adminKeys = yield* send("GET", `/console/organisations/${org.id}/api-keys`, {
        headers: { cookie: cookies.admin }
      })
      assert.deepStrictEqual(
        (adminKeys.body as Array<{ environment: string }>).map((k) => k.environment),
        ["production"],
        "without UAT access the companion's keys are not listed"
      )
      const revokeUat = yield* send("DELETE", `/console/api-keys/${(operatorUat.body as { id: string }).id}`, {
        headers: { cookie: cookies.admin, ...same }
      })
      assert.strictEqual(revokeUat.status, 404)
      const test = (cookie: string, id: string) =>
        send("POST", `/console/automations/${id}/test`, { headers: { cookie, ...same } })
      assert.strictEqual((yield* test(cookies.viewer, mine.id)).status, 403)
      assert.strictEqual((yield* test(cookies.member, mine.id)).status, 202)
      assert.strictEqual((yield* test(cookies.admin, theirs.id)).status, 404)
      assert.strictEqual(
        (yield* send("POST", `/console/automations/${theirs.id}/enable`, {
          headers: { cookie: cookies.admin, ...same }
        }))
          .status,
        404
      )
      assert.strictEqual(
        (yield* send("POST", "/console/organisations", {
          json: { name: "x" },
          headers: { cookie: cookies.admin, ...same }
        }))
          .status,
        403
      )
      assert.strictEqual((yield* send("GET", "/console/organisations")).status, 401)
      assert.strictEqual(
        (yield* send("GET", "/console/organisations", { headers: { cookie: "tf_session=not-a-session" } })).status,
        401
      )
      const all = yield* send("GET", "/console/organisations", { auth: consoleAuth })
      assert.includeMembers((all.body as Array<{ id: string }>).map((o) => o.id), [org.id, other.id])
      assert.strictEqual(
        (yield* send("POST", `/console/automations/${theirs.id}/enable`, { auth: consoleAuth })).status,
        200
      )
      const audit = yield* Effect.flatMap(Users.Users, (u) => u.audit(Users.operatorToken, org.id))
      assert.includeMembers(audit.map((e) => e.action), ["api_key.created", "automation.test_sent"])
    }))
})
