import { assert, layer } from "@effect/vitest"
import { Accounts, AutomationAdmin, type User, Users } from "@tradeflow/core"
import { Effect, Option, TestClock } from "effect"
import { makeAppLayer, send } from "./Fixture.js"

const password = "correct horse battery"
const sameSite = { "sec-fetch-site": "same-origin" }
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** The session token a response sets, if any. */
const tokenOf = (headers: Readonly<Record<string, string>>): string | undefined =>
  /tf_session=([^;]*)/.exec(headers["set-cookie"] ?? "")?.[1] || undefined

const signIn = (email: string, secret = password) =>
  Effect.gen(function*() {
    const answer = yield* send("POST", "/app/sign-in", {
      text: form({ email, password: secret, next: "" }),
      contentType: "application/x-www-form-urlencoded",
      headers: sameSite
    })
    return { answer, token: tokenOf(answer.headers) }
  })

const get = (path: string, token: string) => send("GET", path, { headers: { cookie: `tf_session=${token}` } })

const post = (
  path: string,
  token: string,
  fields: Record<string, string> = {},
  headers: Record<string, string> = sameSite
) =>
  send("POST", path, {
    text: form(fields),
    contentType: "application/x-www-form-urlencoded",
    headers: { cookie: `tf_session=${token}`, ...headers }
  })

/** The page a 303 leads to, as the same session. */
const follow = (answer: { readonly headers: Readonly<Record<string, string>> }, token: string) =>
  get(answer.headers["location"]!, token)

/** An operator, an organisation, an automation in it, and a signed-in member of each role. */
const world = Effect.gen(function*() {
  const users = yield* Users.Users
  const accounts = yield* Accounts.Accounts
  const operator = yield* users.bootstrap("ops@example.com", password).pipe(
    Effect.flatMap(Option.match({
      onSome: Effect.succeed,
      onNone: () =>
        Effect.flatMap(
          users.signIn("ops@example.com", password, { userAgent: "", address: "" }),
          (s) => Effect.succeed(s.user)
        )
    }))
  )
  const ops = Users.asActor(operator)
  const org = yield* accounts.createOrganisation(`Acme <script>alert(1)</script> ${Math.random()}`)
  const automation = yield* Effect.flatMap(
    AutomationAdmin.AutomationAdmin,
    (a) => a.create(org.id, { url: "https://hooks.example.com/x" })
  )
  const tokens: Partial<Record<User.Role, string>> = {}
  for (const role of ["viewer", "member", "admin", "owner"] as const) {
    const email = `${role}-${org.id}@example.com`
    const { token } = yield* users.invite(ops, org.id, { email, role, uat: false })
    yield* users.accept(token, password, { userAgent: "", address: "" })
    tokens[role] = (yield* signIn(email)).token!
  }
  const outsider = yield* accounts.createOrganisation(`Other ${Math.random()}`)
  const { token: outsiderInvite } = yield* users.invite(ops, outsider.id, {
    email: `outsider-${org.id}@example.com`,
    role: "owner",
    uat: false
  })
  yield* users.accept(outsiderInvite, password, { userAgent: "", address: "" })
  const outsiderToken = (yield* signIn(`outsider-${org.id}@example.com`)).token!
  return { org, automation, tokens: tokens as Record<User.Role, string>, outsiderToken }
})

layer(makeAppLayer({ background: false }))("web application", (it) => {
  it.effect("sign-in sets an HttpOnly, SameSite=Lax session cookie, a new token each time; a failure reads the same", () =>
    Effect.gen(function*() {
      yield* world
      const first = yield* signIn("ops@example.com")
      const second = yield* signIn("OPS@example.com")
      assert.strictEqual(first.answer.status, 303)
      assert.match(first.answer.headers["set-cookie"]!, /HttpOnly; SameSite=Lax/)
      assert.notMatch(first.answer.headers["set-cookie"]!, /Secure/)
      assert.notStrictEqual(first.token, second.token)
      const wrong = yield* signIn("ops@example.com", "not the password!")
      const unknown = yield* signIn("nobody@example.com")
      assert.deepStrictEqual([wrong.answer.status, unknown.answer.status], [401, 401])
      assert.strictEqual(
        wrong.answer.text.replace("ops@example.com", "X"),
        unknown.answer.text.replace("nobody@example.com", "X")
      )
      assert.isUndefined(wrong.token)
    }))

  it.effect("a session over plain http is refused on a host that is not loopback", () =>
    Effect.gen(function*() {
      const answer = yield* send("GET", "/app/sign-in", { host: "tracking.example.com" })
      assert.strictEqual(answer.status, 403)
      assert.match(answer.text, /HTTPS/)
    }))

  it.effect("a form sent from another site, or without Sec-Fetch-Site and Origin, is refused and does nothing", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const path = `/app/o/${org.id}/api-keys`
      const keys = Effect.flatMap(Accounts.Accounts, (a) => a.listApiKeys(org.id))
      for (
        const headers of [
          {},
          { "sec-fetch-site": "cross-site" },
          { "sec-fetch-site": "same-site" },
          { origin: "http://evil.example" },
          { origin: "null" }
        ]
      ) {
        const refused = yield* post(path, tokens.owner, { environment: "production" }, headers)
        assert.strictEqual(refused.status, 403, JSON.stringify(headers))
      }
      assert.strictEqual((yield* keys).length, 0)
      const allowed = yield* post(path, tokens.owner, { environment: "production" }, {
        origin: "http://localhost:8080"
      })
      assert.strictEqual(allowed.status, 303)
      assert.strictEqual((yield* keys).length, 1)
    }))

  it.effect(
    "a session ends after 30 minutes idle (TestClock); signing out ends it at once",
    () =>
      Effect.gen(function*() {
        const { org, tokens } = yield* world
        const overview = `/app/o/${org.id}`
        yield* TestClock.adjust("29 minutes")
        assert.strictEqual((yield* get(overview, tokens.viewer)).status, 200)
        yield* TestClock.adjust("31 minutes")
        const expired = yield* get(overview, tokens.viewer)
        assert.strictEqual(expired.status, 303)
        assert.match(expired.headers["location"]!, /^\/app\/sign-in\?next=/)
        const out = yield* post("/app/sign-out", tokens.member)
        assert.match(out.headers["set-cookie"]!, /tf_session=;.*Max-Age=0/)
        assert.strictEqual((yield* get(overview, tokens.member)).status, 303)
      }),
    120_000
  )

  it.effect("an invitation link is shown to the inviter, works once, and not after 7 days", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const answer = yield* post(`/app/o/${org.id}/members/invite`, tokens.admin, {
        email: "new@example.com",
        role: "member"
      })
      assert.strictEqual(answer.status, 303)
      const invited = yield* follow(answer, tokens.admin)
      assert.strictEqual(invited.status, 200)
      const link = /\/app\/invitations\/([A-Za-z0-9_-]{20,})/.exec(invited.text)![1]!
      const accept = () =>
        send("POST", `/app/invitations/${link}`, {
          text: form({ password }),
          contentType: "application/x-www-form-urlencoded",
          headers: sameSite
        })
      const first = yield* accept()
      assert.strictEqual(first.status, 303)
      assert.isDefined(tokenOf(first.headers))
      assert.strictEqual((yield* accept()).status, 410)
      assert.strictEqual((yield* send("GET", `/app/invitations/${link}`)).status, 410)
      const late = yield* follow(
        yield* post(`/app/o/${org.id}/members/invite`, tokens.admin, { email: "late@example.com", role: "viewer" }),
        tokens.admin
      )
      const lateLink = /\/app\/invitations\/([A-Za-z0-9_-]{20,})/.exec(late.text)![1]!
      yield* TestClock.adjust("167 hours")
      assert.strictEqual((yield* send("GET", `/app/invitations/${lateLink}`)).status, 200)
      yield* TestClock.adjust("1 hour")
      assert.strictEqual((yield* send("GET", `/app/invitations/${lateLink}`)).status, 410)
    }))

  it.effect("a UAT key needs UAT access; a new key is shown once, to its creator's session, never again", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const users = yield* Users.Users
      const withoutUat = yield* post(`/app/o/${org.id}/api-keys`, tokens.admin, { environment: "uat" })
      assert.strictEqual(withoutUat.status, 403, "a UAT key needs UAT access")
      const admin = (yield* users.members(Users.operatorToken, org.id)).find((m) => m.role === "admin")!
      yield* users.setUatAccess(Users.operatorToken, org.id, admin.user_id, true)
      const answer = yield* post(`/app/o/${org.id}/api-keys`, tokens.admin, { environment: "uat" })
      assert.strictEqual(answer.status, 303)
      assert.match(answer.headers["location"]!, /\/api-keys\?reveal=[0-9a-f]{32}$/)
      const stolen = yield* follow(answer, tokens.owner)
      assert.notMatch(stolen.text, /uat_[A-Za-z0-9_-]{43}/)
      const created = yield* follow(answer, tokens.admin)
      const key = /uat_[A-Za-z0-9_-]{43}/.exec(created.text)![0]
      assert.include(created.text, `curl -H &#39;Authorization: ${key}&#39;`)
      const reloaded = yield* follow(answer, tokens.admin)
      assert.strictEqual(reloaded.status, 200)
      assert.notInclude(reloaded.text, key)
      assert.include(reloaded.text, "shown already")
      const listed = yield* get(`/app/o/${org.id}/api-keys`, tokens.admin)
      assert.notInclude(listed.text, key)
      assert.strictEqual(
        (yield* Effect.flatMap(Accounts.Accounts, (a) => a.listApiKeys(org.id))).filter((k) => k.revoked_at === null)
          .length,
        1
      )
    }))

  it.effect("an invitation for an existing account asks its holder to sign in; a password is never checked there", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const users = yield* Users.Users
      const { token } = yield* users.invite(Users.operatorToken, org.id, {
        email: "ops@example.com",
        role: "viewer",
        uat: false
      })
      const page = yield* send("GET", `/app/invitations/${token}`)
      assert.strictEqual(page.status, 200)
      assert.include(page.text, "sign in as ops@example.com")
      assert.notInclude(page.text, `name="password"`)
      const guess = yield* send("POST", `/app/invitations/${token}`, {
        text: form({ password }),
        contentType: "application/x-www-form-urlencoded",
        headers: { "sec-fetch-site": "same-origin" }
      })
      assert.strictEqual(guess.status, 303)
      assert.match(guess.headers["location"]!, /^\/app\/sign-in/)
      assert.isUndefined(tokenOf(guess.headers))
      const other = yield* post(`/app/invitations/${token}`, tokens.viewer)
      assert.strictEqual(other.status, 403)
      const ops = (yield* signIn("ops@example.com")).token!
      const accepted = yield* post(`/app/invitations/${token}`, ops)
      assert.strictEqual(accepted.status, 303)
      assert.strictEqual(accepted.headers["location"], `/app/o/${org.id}`)
      assert.strictEqual((yield* post(`/app/invitations/${token}`, ops)).status, 410)
    }))

  it.effect("the (UAT) companion's API keys page lists its own keys only; the live one lists both", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const accounts = yield* Accounts.Accounts
      const users = yield* Users.Users
      const production = yield* accounts.createApiKey(org.id, "production")
      const uat = yield* accounts.createApiKey(org.id, "uat")
      const owner = (yield* users.members(Users.operatorToken, org.id)).find((m) => m.role === "owner")!
      yield* users.setUatAccess(Users.operatorToken, org.id, owner.user_id, true)
      const live = yield* get(`/app/o/${org.id}/api-keys`, tokens.owner)
      assert.include(live.text, production.id)
      assert.include(live.text, uat.id)
      const companion = yield* get(`/app/o/${uat.organisation.id}/api-keys`, tokens.owner)
      assert.strictEqual(companion.status, 200)
      assert.include(companion.text, uat.id)
      assert.notInclude(companion.text, production.id)
      const revoke = yield* post(`/app/o/${uat.organisation.id}/api-keys/${production.id}/revoke`, tokens.owner)
      assert.strictEqual(revoke.status, 404)
    }))

  it.effect("editing an automation is checked as creating one: 422 naming the field, nothing changed; then saved", () =>
    Effect.gen(function*() {
      const { automation, org, tokens } = yield* world
      const path = `/app/o/${org.id}/automations/${automation.id}`
      const refused = yield* post(`${path}/edit`, tokens.admin, { url: "ftp://files.example.com", format: "message" })
      assert.strictEqual(refused.status, 422)
      assert.include(refused.text, "URL: ")
      assert.include(refused.text, "Types: ")
      const automations = yield* AutomationAdmin.AutomationAdmin
      assert.strictEqual((yield* automations.get(automation.id)).url, "https://hooks.example.com/x")
      const saved = yield* post(`${path}/edit`, tokens.admin, {
        url: "https://hooks.example.com/v2",
        format: "tradeflow",
        types: "LOCATION_UPDATE"
      })
      assert.strictEqual(saved.status, 303)
      const after = yield* automations.get(automation.id)
      assert.deepStrictEqual([after.url, after.format, after.types], [
        "https://hooks.example.com/v2",
        "tradeflow",
        ["LOCATION_UPDATE"]
      ])
    }))

  it.effect("a <script> in an organisation's name or an automation's URL is rendered inert", () =>
    Effect.gen(function*() {
      const { org, tokens } = yield* world
      const automations = yield* AutomationAdmin.AutomationAdmin
      yield* automations.create(org.id, { url: "https://hooks.example.com/<script>alert(2)</script>" }).pipe(
        Effect.ignore
      )
      for (const path of ["", "/automations", "/members"]) {
        const page = yield* get(`/app/o/${org.id}${path}`, tokens.owner)
        assert.strictEqual(page.status, 200)
        assert.notMatch(page.text, /<script>alert/)
        assert.include(page.text, "Acme &lt;script&gt;alert(1)&lt;/script&gt;")
        assert.match(page.headers["content-security-policy"]!, /script-src 'self'/)
      }
    }))
})

layer(
  makeAppLayer({ background: false, signInFailures: { perEmail: 3, perAddress: 5, windowMillis: 60_000 } })
)("sign-in limits", (it) => {
  it.effect("failures are limited per e-mail, then per address, with 429 and Retry-After until the window ends", () =>
    Effect.gen(function*() {
      yield* world
      for (let i = 0; i < 3; i++) {
        assert.strictEqual((yield* signIn("ops@example.com", "wrong password!")).answer.status, 401)
      }
      const limited = yield* signIn("ops@example.com")
      assert.strictEqual(limited.answer.status, 429)
      assert.strictEqual(limited.answer.headers["retry-after"], "60")
      assert.isUndefined(limited.token)
      assert.strictEqual((yield* signIn("OPS@example.com")).answer.status, 429)
      assert.strictEqual((yield* signIn("nobody@example.com", "wrong password!")).answer.status, 401)
      assert.strictEqual((yield* signIn("nobody-2@example.com", "wrong password!")).answer.status, 401)
      const byAddress = yield* signIn("viewer@example.com")
      assert.strictEqual(byAddress.answer.status, 429)
      yield* TestClock.adjust("60 seconds")
      const again = yield* signIn("ops@example.com")
      assert.strictEqual(again.answer.status, 303)
    }))
})
