/**
 * The role × action matrix of the web application, over HTTP: for each role (and a member of
 * another organisation), every action on its own fresh organisation, answered as the matrix of
 * docs/console.md says (403 for what the role may not do).
 */
import { assert, layer } from "@effect/vitest"
import { Accounts, AutomationAdmin, DeliveryAdmin, DeliveryStore, Users, WidgetSearch } from "@tradeflow/core"
import { Clock, Effect } from "effect"
import { makeAppLayer, send } from "./Fixture.js"

const password = "correct horse battery"
const client = { userAgent: "", address: "" }
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

type Role = "viewer" | "member" | "admin" | "owner" | "outsider"

/** A fresh organisation with one of everything an action can touch, and a session of `role` (outsider: of another one). */
const world = (role: Role) =>
  Effect.gen(function*() {
    const users = yield* Users.Users
    const accounts = yield* Accounts.Accounts
    const automations = yield* AutomationAdmin.AutomationAdmin
    const org = yield* accounts.createOrganisation(`Org ${role} ${Math.random()}`)
    const join = (organisationId: string, email: string, as: Exclude<Role, "outsider">) =>
      Effect.flatMap(
        users.invite(Users.operatorToken, organisationId, { email, role: as, uat: false }),
        ({ token }) => users.accept(token, password, client)
      )
    const other = yield* accounts.createOrganisation(`Other ${Math.random()}`)
    const session = role === "outsider"
      ? yield* join(other.id, `outsider-${org.id}@example.com`, "owner")
      : yield* join(org.id, `${role}-${org.id}@example.com`, role)
    const peer = yield* join(org.id, `peer-${org.id}@example.com`, "viewer")
    const key = yield* accounts.createApiKey(org.id, "production")
    const widget = yield* Effect.flatMap(WidgetSearch.WidgetSearch, (w) => w.createKey(org.id))
    const automation = yield* automations.create(org.id, { url: "https://hooks.example.com/x" })
    const doomed = yield* automations.create(org.id, { url: "https://hooks.example.com/doomed" })
    const sent = yield* Effect.flatMap(DeliveryAdmin.DeliveryAdmin, (d) => d.sendTest(automation.id))
    const store = yield* DeliveryStore.DeliveryStore
    const now = yield* Clock.currentTimeMillis
    const claimed = (yield* store.claim({ worker: "test", limit: 1000, leaseMillis: 60_000, now })).find((d) =>
      d.id === sent.delivery_id
    )!
    yield* store.record([{
      delivery_id: claimed.id,
      claim: claimed.claim,
      at: now,
      status: "dead",
      response_status: 500,
      error: "HTTP 500",
      response_body: null,
      retry_at: null,
      disable: null
    }])
    const { invitation } = yield* users.invite(Users.operatorToken, org.id, {
      email: `pending-${org.id}@example.com`,
      role: "viewer",
      uat: false
    })
    return { org, session, peer, key, widget, automation, doomed, delivery: sent.delivery_id, invitation }
  })

type World = Effect.Effect.Success<ReturnType<typeof world>>

const call = (w: World, method: "GET" | "POST", path: string, fields: Record<string, string> = {}) =>
  send(method, `/app/o/${w.org.id}${path}`, {
    headers: {
      cookie: `tf_session=${w.session.token}`,
      ...(method === "POST" ? { "sec-fetch-site": "same-origin" } : {})
    },
    ...(method === "POST" ? { text: form(fields), contentType: "application/x-www-form-urlencoded" } : {})
  })

/** Every action, and the least role that may do it (docs/console.md). */
const actions: ReadonlyArray<readonly [string, Exclude<Role, "outsider">, (w: World) => ReturnType<typeof call>]> = [
  ["see the overview", "viewer", (w) => call(w, "GET", "")],
  ["see the API keys", "viewer", (w) => call(w, "GET", "/api-keys")],
  ["see the widget keys", "viewer", (w) => call(w, "GET", "/widget-keys")],
  ["see the automations", "viewer", (w) => call(w, "GET", "/automations")],
  ["see an automation and its log", "viewer", (w) => call(w, "GET", `/automations/${w.automation.id}`)],
  ["search tradeflows", "viewer", (w) => call(w, "GET", "/tradeflows?q=PO-1")],
  ["see the members", "viewer", (w) => call(w, "GET", "/members")],
  ["Send test", "member", (w) => call(w, "POST", `/automations/${w.automation.id}/test`)],
  [
    "Retry a dead delivery",
    "member",
    (w) => call(w, "POST", `/deliveries/${w.delivery}/retry`, { automation: w.automation.id })
  ],
  [
    "redeliver failed since",
    "member",
    (w) => call(w, "POST", `/automations/${w.automation.id}/redeliver`, { since: "2020-01-01T00:00" })
  ],
  ["create an API key", "admin", (w) => call(w, "POST", "/api-keys", { environment: "production" })],
  ["revoke an API key", "admin", (w) => call(w, "POST", `/api-keys/${w.key.id}/revoke`)],
  ["create a widget key", "admin", (w) => call(w, "POST", "/widget-keys")],
  ["revoke a widget key", "admin", (w) => call(w, "POST", `/widget-keys/${w.widget.id}/revoke`)],
  ["create an automation", "admin", (w) =>
    call(w, "POST", "/automations", {
      url: "https://hooks.example.com/new",
      format: "message",
      types: "SHIPMENT_CHANGE"
    })],
  ["edit an automation", "admin", (w) =>
    call(w, "POST", `/automations/${w.automation.id}/edit`, {
      url: "https://hooks.example.com/edited",
      format: "message",
      types: "SHIPMENT_CHANGE"
    })],
  ["enable an automation", "admin", (w) => call(w, "POST", `/automations/${w.automation.id}/enable`)],
  ["disable an automation", "admin", (w) => call(w, "POST", `/automations/${w.automation.id}/disable`)],
  ["rotate a secret", "admin", (w) => call(w, "POST", `/automations/${w.automation.id}/rotate-secret`)],
  ["delete an automation", "admin", (w) => call(w, "POST", `/automations/${w.doomed.id}/delete`)],
  ["invite a viewer", "admin", (w) => call(w, "POST", "/members/invite", { email: "x@example.com", role: "viewer" })],
  ["change a viewer's role", "admin", (w) => call(w, "POST", `/members/${w.peer.user.id}/role`, { role: "member" })],
  ["grant UAT access", "admin", (w) => call(w, "POST", `/members/${w.peer.user.id}/uat`, { granted: "true" })],
  ["withdraw an invitation", "admin", (w) => call(w, "POST", `/invitations/${w.invitation.id}/withdraw`)],
  ["read the audit log", "admin", (w) => call(w, "GET", "/audit")],
  ["deactivate a viewer", "admin", (w) => call(w, "POST", `/members/${w.peer.user.id}/deactivate`)],
  ["invite an owner", "owner", (w) => call(w, "POST", "/members/invite", { email: "o@example.com", role: "owner" })]
]

const rank: Record<Role, number> = { outsider: -1, viewer: 0, member: 1, admin: 2, owner: 3 }

layer(makeAppLayer({ background: false }), { timeout: 120_000 })("the role × action matrix of /app", (it) => {
  for (const role of ["viewer", "member", "admin", "owner", "outsider"] as const) {
    it.effect(
      `a ${role} can do exactly what the matrix permits, and gets 403 for the rest`,
      () =>
        Effect.gen(function*() {
          const w = yield* world(role)
          const wrong: Array<string> = []
          for (const [name, least, act] of actions) {
            const answer = yield* act(w)
            const permitted = rank[role] >= rank[least]
            const ok = permitted ? answer.status >= 200 && answer.status < 400 : answer.status === 403
            if (!ok) wrong.push(`${name}: ${answer.status} (${permitted ? "permitted" : "forbidden"})`)
          }
          assert.deepStrictEqual(wrong, [])
        }),
      60_000
    )
  }
})
