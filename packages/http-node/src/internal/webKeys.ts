import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Accounts, type Environment, Permission } from "@tradeflow/core"
import { Effect, Either } from "effect"
import * as Problem from "../Problem.js"
import { type Html, html } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

const notices: Record<string, string> = {
  revoked: "The key was revoked: requests with it are refused from now on.",
  "widget-revoked": "The widget key was revoked."
}

/** The fixed message of a `?notice=` code, if it is one. */
const noticeOf = (code: string | null) =>
  code !== null && Object.hasOwn(notices, code) ? { kind: "success" as const, text: notices[code]! } : undefined

/** A key as its table shows it: instants as epoch milliseconds, the environment of an API key. */
interface KeyRow {
  readonly id: string
  readonly name: string
  readonly environment?: string
  readonly created_by: string | null
  readonly created_at: number
  readonly last_used_at: number | null
  readonly revoked_at: number | null
}

/** The table of API or widget keys; with `configure`, a Revoke button on each active one. */
const keyTable = (keys: ReadonlyArray<KeyRow>, action: string, configure: boolean) => {
  const environments = keys.some((k) => k.environment !== undefined)
  return html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th>${
    environments ? html`<th scope="col">Environment</th>` : ""
  }<th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th>${
    configure ? html`<th scope="col">Action</th>` : ""
  }</tr></thead>
<tbody>${
    keys.map((k) =>
      html`<tr><td>${k.name === "" ? "—" : k.name}</td><td><code>${k.id}</code></td>${
        environments ? html`<td>${k.environment}</td>` : ""
      }<td>${k.created_by ?? "—"}</td><td>${WebKit.when(k.created_at)}</td><td>${
        k.last_used_at === null ? "never" : WebKit.when(k.last_used_at)
      }</td><td>${k.revoked_at === null ? "active" : `revoked ${WebKit.when(k.revoked_at)}`}</td>${
        configure
          ? html`<td>${
            k.revoked_at === null
              ? html`<form class="inline" method="post" action="${action}/${
                encodeURIComponent(k.id)
              }/revoke"><button type="submit" class="danger">Revoke</button></form>`
              : ""
          }</td>`
          : ""
      }</tr>`
    )
  }</tbody></table>`
}

/** API keys and widget keys of an organisation. */
export const webKeys = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { accounts, users, widgets } = kit.services
  const base = (view: WebKit.OrgView) => `/app/o/${encodeURIComponent(view.organisation.id)}`
  /**
   * The API keys a page shows: on a `(UAT)` companion its own; on a live organisation its own,
   * and its companion's to those with UAT access (UAT keys are created there too).
   */
  const apiKeysOf = (view: WebKit.OrgView) =>
    Effect.gen(function*() {
      const keys = yield* accounts.listApiKeys(view.live.id)
      if (view.organisation.id !== view.live.id) return keys.filter((k) => k.organisation.id === view.organisation.id)
      const uat = Either.isRight(yield* Effect.either(users.authorizeUat(view.visitor.actor, view.live.id, "read")))
      return uat ? keys : keys.filter((k) => k.organisation.id === view.organisation.id)
    })

  const apiKeysPage = (view: WebKit.OrgView, extra: Html | "" = "", notice?: WebKit.PageOptions["notice"]) =>
    Effect.gen(function*() {
      const keys = yield* apiKeysOf(view)
      const action = yield* WebKit.href(`${base(view)}/api-keys`)
      const configure = Permission.permits(view.role, "configure")
      const uatAllowed = view.organisation.environment === "uat" ||
        Either.isRight(yield* Effect.either(users.authorizeUat(view.visitor.actor, view.live.id, "configure")))
      const environments: ReadonlyArray<Environment.Environment> = view.organisation.environment === "uat"
        ? ["uat"]
        : uatAllowed
        ? ["production", "uat"]
        : ["production"]
      return yield* kit.page({
        title: "API keys",
        view,
        section: "/api-keys",
        notice,
        body: html`${extra}
${
          configure
            ? html`<h2>New key</h2>
<form class="stack" method="post" action="${action}">
<div><label for="key-name">Name</label>
<input id="key-name" name="name" type="text" maxlength="${Accounts.maxKeyNameLength}" autocomplete="off" aria-describedby="key-name-hint">
<p id="key-name-hint" class="muted">Optional: what the key is for, such as the system that uses it.</p></div>
<div><label for="environment">Environment</label>
<select id="environment" name="environment">${
              environments.map((e) =>
                html`<option value="${e}">${e === "production" ? "Production" : "UAT sandbox"}</option>`
              )
            }</select></div>
${
              uatAllowed
                ? ""
                : html`<p class="muted">UAT keys need UAT access: an admin grants it on Members.</p>`
            }
<div><button type="submit">Create API key</button></div>
</form>`
            : ""
        }
<h2>Keys</h2>
${
          keys.length === 0
            ? html`<p>No API key yet.</p>`
            : keyTable(
              keys.map((k) => ({
                id: k.id,
                name: k.name,
                environment: k.environment === "uat" ? "UAT sandbox" : "Production",
                created_by: k.created_by,
                created_at: Date.parse(k.created_at),
                last_used_at: k.last_used_at === null ? null : Date.parse(k.last_used_at),
                revoked_at: k.revoked_at === null ? null : Date.parse(k.revoked_at)
              })),
              action,
              configure
            )
        }`
      })
    })

  const showApiKeys: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    return yield* apiKeysPage(view, yield* kit.revealed(view.visitor), noticeOf((yield* WebKit.query).get("notice")))
  })

  const createApiKey: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const form = yield* kit.form
    const environment = form.get("environment")
    if (environment !== "production" && environment !== "uat") {
      return yield* Problem.make(422, "environment must be production or uat", [
        { path: "/environment", message: "must be production or uat" }
      ])
    }
    if (environment === "uat" && view.organisation.id === view.live.id) {
      yield* users.authorizeUat(view.visitor.actor, view.live.id, "configure")
    }
    const created = yield* accounts.createApiKey(view.organisation.id, environment, {
      name: form.get("name"),
      createdBy: view.visitor.user.email
    })
    yield* users.record(
      view.visitor.actor,
      created.organisation.id,
      "api_key.created",
      `${created.id} (${environment})`
    )
    const request = yield* HttpServerRequest.HttpServerRequest
    const baseUrl = WebKit.baseUrlOf(kit.settings, request, environment)
    return yield* kit.revealAt(view.visitor, `${base(view)}/api-keys`, {
      label: `Your new ${environment === "uat" ? "UAT" : "production"} API key`,
      note: `API key ${created.id} was created for ${created.organisation.name}.`,
      secret: created.key,
      copy: "Copy the key",
      example: `curl -H 'Authorization: ${created.key}' ${baseUrl}/upstream`
    })
  })

  const revokeApiKey: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const id = (yield* HttpRouter.params)["id"] ?? ""
    const keys = yield* apiKeysOf(view)
    const key = keys.find((k) => k.id === id)
    if (key === undefined) return yield* Problem.make(404, `no API key with id ${JSON.stringify(id)} here`)
    yield* users.authorize(view.visitor.actor, key.organisation.id, "configure")
    yield* accounts.revokeApiKey(id)
    yield* users.record(view.visitor.actor, key.organisation.id, "api_key.revoked", id)
    return yield* WebKit.seeOther(`${base(view)}/api-keys?notice=revoked`)
  })

  const widgetPage = (view: WebKit.OrgView, extra: Html | "" = "", notice?: WebKit.PageOptions["notice"]) =>
    Effect.gen(function*() {
      const keys = yield* widgets.listKeys(view.organisation.id)
      const action = yield* WebKit.href(`${base(view)}/widget-keys`)
      const configure = Permission.permits(view.role, "configure")
      return yield* kit.page({
        title: "Widget keys",
        view,
        section: "/widget-keys",
        notice,
        body: html`<div class="notice" role="note"><strong>Deprecated.</strong> The widget search
(<code>GET /api/v2/widget-search</code>) is deprecated: new integrations should read <code>GET /upstream</code>
with an API key. A widget key reads this organisation only.</div>
${extra}
${
          configure
            ? html`<form class="stack" method="post" action="${action}">
<div><label for="widget-key-name">Name</label>
<input id="widget-key-name" name="name" type="text" maxlength="${Accounts.maxKeyNameLength}" autocomplete="off"></div>
<div><button type="submit">Create widget key</button></div>
</form>`
            : ""
        }
<h2>Keys</h2>
${
          keys.length === 0
            ? html`<p>No widget key.</p>`
            : keyTable(keys, action, configure)
        }`
      })
    })

  const showWidgetKeys: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    return yield* widgetPage(view, yield* kit.revealed(view.visitor), noticeOf((yield* WebKit.query).get("notice")))
  })

  const createWidgetKey: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const created = yield* widgets.createKey(view.organisation.id, {
      name: (yield* kit.form).get("name"),
      createdBy: view.visitor.user.email
    })
    yield* users.record(view.visitor.actor, view.organisation.id, "widget_key.created", created.id)
    return yield* kit.revealAt(view.visitor, `${base(view)}/widget-keys`, {
      label: "Your new widget key",
      note: `Widget key ${created.id} was created.`,
      secret: created.key,
      copy: "Copy the key"
    })
  })

  const revokeWidgetKey: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const id = (yield* HttpRouter.params)["id"] ?? ""
    if (!(yield* widgets.listKeys(view.organisation.id)).some((k) => k.id === id)) {
      return yield* Problem.make(404, `no widget key with id ${JSON.stringify(id)} here`)
    }
    yield* widgets.revokeKey(id)
    yield* users.record(view.visitor.actor, view.organisation.id, "widget_key.revoked", id)
    return yield* WebKit.seeOther(`${base(view)}/widget-keys?notice=widget-revoked`)
  })

  return [
    ["GET", "/app/o/:org/api-keys", showApiKeys],
    ["POST", "/app/o/:org/api-keys", createApiKey],
    ["POST", "/app/o/:org/api-keys/:id/revoke", revokeApiKey],
    ["GET", "/app/o/:org/widget-keys", showWidgetKeys],
    ["POST", "/app/o/:org/widget-keys", createWidgetKey],
    ["POST", "/app/o/:org/widget-keys/:id/revoke", revokeWidgetKey]
  ]
}
