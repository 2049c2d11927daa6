import { type HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import type {
  Accounts,
  AutomationAdmin,
  DeliveryAdmin,
  Documents,
  Environment,
  JobAdmin,
  Organisation,
  Permission,
  TrackingAdmin,
  Upstream,
  User,
  Users,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import { Effect } from "effect"
import type { TLSSocket } from "node:tls"
import type { HttpSettings } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { decodeUtf8 } from "./body.js"
import type { CoreError } from "./errors.js"
import { clientAddress, requestHost } from "./hosts.js"
import { type Html, html, trusted } from "./html.js"
import { MountPrefix } from "./prefix.js"

/** The core services the web application calls. */
export interface WebServices {
  readonly users: Users.Users["Type"]
  readonly accounts: Accounts.Accounts["Type"]
  readonly automations: AutomationAdmin.AutomationAdmin["Type"]
  readonly deliveries: DeliveryAdmin.DeliveryAdmin["Type"]
  readonly documents: Documents.Documents["Type"]
  readonly jobs: JobAdmin.JobAdmin["Type"]
  readonly tracking: TrackingAdmin.TrackingAdmin["Type"]
  readonly upstream: Upstream.Upstream["Type"]
  readonly widgets: WidgetSearch.WidgetSearch["Type"]
  readonly destinations: WebhookDestination.WebhookDestination["Type"]
}

/** A signed-in person: the session's user and record, and the token of its cookie. */
export interface Visitor {
  readonly user: User.User
  readonly session: User.SessionRecord
  readonly token: string
  readonly actor: Users.Actor
}

/** A signed-in person inside one organisation: its role there, and every organisation they may open. */
export interface OrgView {
  readonly visitor: Visitor
  readonly organisation: Organisation.Organisation
  /** The live organisation (the organisation itself, or the one a `(UAT)` companion belongs to). */
  readonly live: Organisation.Organisation
  readonly role: User.Role
  readonly access: ReadonlyArray<Users.Access>
}

/** A submitted form (`application/x-www-form-urlencoded`). */
export interface Form {
  /** The first value of a field, "" when absent. */
  readonly get: (name: string) => string
  /** Every value of a field. */
  readonly all: (name: string) => ReadonlyArray<string>
}

/** What a screen's route may fail with: a problem, a core error, or the need to sign in. */
export type WebFailure = Problem.Problem | CoreError

/** A route of the web application. */
export type Route = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  WebFailure,
  HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
>

/** The header of the page script's own refreshes: they do not keep a session alive. */
export const refreshHeader = "x-tradeflow-refresh"

/** The name of the session cookie. */
export const sessionCookie = "tf_session"

/** The security headers of every page: no framing, no inline script, no referrer leaving the site. */
export const pageHeaders: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

/** Whether the request came over HTTPS: its own TLS socket, or a trusted proxy's `X-Forwarded-Proto`. */
export const isHttps = (settings: HttpSettings, request: HttpServerRequest.HttpServerRequest): boolean => {
  if (settings.trustProxy) {
    const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
    if (proto !== undefined && proto !== "") return proto === "https"
  }
  const incoming: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  return (incoming as { readonly socket?: Partial<TLSSocket> } | undefined)?.socket?.encrypted === true
}

const loopback = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|::1|\[::1\])(:\d+)?$/i

/** Whether sessions may run over this request: HTTPS, a loopback host, or plain http allowed by the settings. */
export const sessionAllowed = (settings: HttpSettings, request: HttpServerRequest.HttpServerRequest): boolean =>
  isHttps(settings, request) || settings.allowHttpSessions ||
  loopback.test(requestHost(settings, request.headers) ?? "")

/**
 * Whether a state-changing request comes from this site: `Sec-Fetch-Site: same-origin`, or, from
 * a browser that sends no `Sec-Fetch-Site`, an `Origin` equal to the request's own.
 */
export const sameOrigin = (settings: HttpSettings, request: HttpServerRequest.HttpServerRequest): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site.trim().toLowerCase() === "same-origin"
  const origin = request.headers["origin"]
  const host = requestHost(settings, request.headers)
  if (origin === undefined || host === undefined) return false
  return origin.trim().toLowerCase() === `${isHttps(settings, request) ? "https" : "http"}://${host}`.toLowerCase()
}

/** The `Set-Cookie` value of a new session (or of its removal, with `null`). */
export const sessionCookieValue = (
  settings: HttpSettings,
  request: HttpServerRequest.HttpServerRequest,
  prefix: string,
  token: string | null
): string =>
  [
    `${sessionCookie}=${token ?? ""}`,
    `Path=${prefix}/`,
    "HttpOnly",
    "SameSite=Lax",
    ...(isHttps(settings, request) ? ["Secure"] : []),
    ...(token === null ? ["Max-Age=0"] : [])
  ].join("; ")

/** Reads a submitted form within the body limits: 415 unless it is `application/x-www-form-urlencoded`. */
export const readForm = (
  readBytes: Effect.Effect<Uint8Array, Problem.Problem, HttpServerRequest.HttpServerRequest>
): Effect.Effect<Form, Problem.Problem, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (type !== "application/x-www-form-urlencoded") {
      return yield* Problem.make(415, "a form must be sent as application/x-www-form-urlencoded")
    }
    const text = decodeUtf8(yield* readBytes)
    if (text === undefined) return yield* Problem.make(400, "the form is not valid UTF-8")
    const params = new URLSearchParams(text)
    return { get: (name) => params.get(name) ?? "", all: (name) => params.getAll(name) }
  })

/** The query parameters of the request. */
export const query = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => new URLSearchParams(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "")
)

/** A path of the web application as its client sees it (the mount prefix before it). */
export const href = (path: string): Effect.Effect<string> => Effect.map(MountPrefix, (prefix) => prefix + path)

/** An HTML page answer with the security headers. */
export const htmlResponse = (status: number, body: Html, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(body.value, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...pageHeaders, ...headers }
  })

/** A 303 to a path of the web application (after a form, Post/Redirect/Get). */
export const seeOther = (path: string, headers: Readonly<Record<string, string>> = {}) =>
  Effect.map(
    href(path),
    (location) => HttpServerResponse.empty({ status: 303, headers: { ...pageHeaders, ...headers, location } })
  )

/** The API base URL of an environment as this request reaches the server: its scheme and port, the environment's first host. */
export const baseUrlOf = (
  settings: HttpSettings,
  request: HttpServerRequest.HttpServerRequest,
  environment: Environment.Environment
): string => {
  const host = requestHost(settings, request.headers) ?? ""
  const port = /:(\d+)$/.exec(host)?.[1]
  const name = (environment === "production" ? settings.productionHosts : settings.uatHosts)[0] ?? host
  return `${isHttps(settings, request) ? "https" : "http"}://${name}${port === undefined ? "" : `:${port}`}`
}

/** The navigation of an organisation: label, path under `/app/o/<id>`, and the action it needs. */
export const sections: ReadonlyArray<readonly [string, string, Permission.Action]> = [
  ["Overview", "", "read"],
  ["API keys", "/api-keys", "read"],
  ["Widget keys", "/widget-keys", "read"],
  ["Automations", "/automations", "read"],
  ["Tradeflows", "/tradeflows", "read"],
  ["Members", "/members", "read"],
  ["Audit log", "/audit", "manage_members"]
]

/** What the layout needs to draw a page. */
export interface PageOptions {
  readonly title: string
  readonly body: Html
  /** The organisation the page is in: its banner, switcher and navigation. */
  readonly view?: OrgView | undefined
  /** The signed-in person, on a page outside organisations (account, operator area). */
  readonly visitor?: Visitor | undefined
  /** The navigation entry of the page (its path under the organisation). */
  readonly section?: string | undefined
  readonly notice?: { readonly kind: "success" | "error"; readonly text: string } | undefined
}

/**
 * The layout of every page: the environment banner, the organisation switcher, the account links
 * and the navigation of the organisation, then the page's own content under its heading.
 */
export const layout = (
  settings: HttpSettings,
  options: PageOptions,
  permits: (role: User.Role, action: Permission.Action) => boolean
): Effect.Effect<Html, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const prefix = yield* MountPrefix
    const app = `${prefix}/app`
    const view = options.view
    const visitor = view?.visitor ?? options.visitor
    const environment = view?.organisation.environment
    const banner = view === undefined ?
      "" :
      html`<div class="banner ${environment}" role="region" aria-label="Environment">
  <strong>${environment === "production" ? "Production" : "UAT sandbox"}</strong>
  <span>${view.organisation.name}</span>
  <span>API base URL <code>${baseUrlOf(settings, request, view.organisation.environment)}</code></span>
</div>`
    const switcher = view === undefined || view.access.length < 2 ? "" : html`<form method="get" action="${app}/switch">
  <label for="switch-organisation">Organisation</label>
  <select id="switch-organisation" name="to">${
      view.access.map((a) =>
        html`<option value="${a.organisation.id}"${
          trusted(a.organisation.id === view.organisation.id ? " selected" : "")
        }>${a.organisation.name}${a.organisation.environment === "uat" ? "" : " (Production)"}</option>`
      )
    }</select>
  <button type="submit" class="secondary">Switch</button>
</form>`
    const account = visitor === undefined ? "" : html`<div>
  <a href="${app}/account">Account</a>
  ${visitor.user.operator ? html`· <a href="${app}/operator">Operator</a>` : ""}
  <span class="muted">${visitor.user.email}</span>
  <form class="inline" method="post" action="${app}/sign-out"><button type="submit" class="secondary">Sign out</button></form>
</div>`
    const nav = view === undefined ?
      "" :
      html`<nav class="main" aria-label="Organisation"><ul>${
        sections.filter(([, , action]) => permits(view.role, action)).map(([label, path]) =>
          html`<li><a href="${app}/o/${encodeURIComponent(view.organisation.id)}${path}"${
            trusted(options.section === path ? " aria-current=\"page\"" : "")
          }>${label}</a></li>`
        )
      }</ul></nav>`
    const notice = options.notice === undefined
      ? ""
      : html`<div class="notice ${options.notice.kind}" role="${
        options.notice.kind === "error" ? "alert" : "status"
      }">${options.notice.text}</div>`
    return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}${view === undefined ? "" : ` · ${view.organisation.name}`} · Tradeflow</title>
<link rel="stylesheet" href="${app}/assets/app.css">
<script src="${app}/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
${banner}
<header class="top">
<a href="${app}">Tradeflow</a>
${switcher}
${account}
</header>
${nav}
<main id="main">
<h1>${options.title}</h1>
${notice}
${options.body}
</main>
</body>
</html>`
  })

/** An instant as the pages show it: ISO 8601 in UTC, to the second. */
export const when = (millis: number | null | undefined): string =>
  millis === null || millis === undefined ? "—" : new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** The organisation id of the route (`:org`). */
export const orgParam = (params: Readonly<Record<string, string | undefined>>): string => params["org"] ?? ""

/** The client's address (the trusted proxy's `X-Forwarded-For` entry, else the socket's). */
export const addressOf = (settings: HttpSettings, request: HttpServerRequest.HttpServerRequest): string =>
  clientAddress(settings, request.headers, request.remoteAddress)

/** A secret made by a form, held for the page that shows it once. */
export interface Reveal {
  /** What it is, e.g. "Your new UAT API key." */
  readonly label: string
  readonly secret: string
  /** The copy button's text. */
  readonly copy: string
  /** A sentence before the secret. */
  readonly note?: string | undefined
  /** A usage example after it (a curl command), with its own copy button. */
  readonly example?: string | undefined
}

/**
 * Secrets held between the POST that made them and the one GET that shows them (Post/Redirect/Get:
 * reloading the page neither repeats the action nor shows the secret again). Each is bound to its
 * session, taken once, and dropped after 5 minutes; at most 10,000 are held (the oldest go first).
 * They live in the process: a GET that reaches another process shows that the secret is gone.
 */
export interface Reveals {
  readonly put: (sessionId: string, reveal: Reveal, now: number) => string
  readonly take: (sessionId: string, id: string, now: number) => Reveal | undefined
}

const revealMillis = 5 * 60_000

/** A new, empty {@link Reveals}. */
export const makeReveals = (): Reveals => {
  const held = new Map<string, { readonly sessionId: string; readonly reveal: Reveal; readonly until: number }>()
  return {
    put: (sessionId, reveal, now) => {
      const id = Array.from(
        globalThis.crypto.getRandomValues(new Uint8Array(16)),
        (b) => b.toString(16).padStart(2, "0")
      )
        .join("")
      held.set(id, { sessionId, reveal, until: now + revealMillis })
      if (held.size > 10_000) held.delete(held.keys().next().value!)
      return id
    },
    take: (sessionId, id, now) => {
      const entry = held.get(id)
      if (entry === undefined || entry.sessionId !== sessionId) return undefined
      held.delete(id)
      return entry.until > now ? entry.reveal : undefined
    }
  }
}

/** A secret shown once, with a copy button (the script copies it; without it, select and copy). */
export const revealCard = (reveal: Reveal): Html =>
  html`<section class="card" aria-labelledby="reveal-heading">
<h2 id="reveal-heading">${reveal.label}</h2>
${reveal.note === undefined ? "" : html`<p>${reveal.note}</p>`}
<p>It is shown this once and never again: copy it now.</p>
<p class="secret" id="revealed">${reveal.secret}</p>
<p><button type="button" data-copy="revealed">${reveal.copy}</button> <span id="revealed-status" role="status" aria-live="polite"></span></p>
${
    reveal.example === undefined ? "" : html`<p>Try it:</p>
<pre id="revealed-example">${reveal.example}</pre>
<p><button type="button" class="secondary" data-copy="revealed-example">Copy the example</button> <span id="revealed-example-status" role="status" aria-live="polite"></span></p>`
  }
</section>`

/** What a page shows for `?reveal=`: the secret once, or a note that it was shown already. */
export const revealedOn = (
  reveals: Reveals,
  visitor: Visitor,
  params: URLSearchParams,
  now: number
): Html | "" => {
  const id = params.get("reveal")
  if (id === null) return ""
  const reveal = reveals.take(visitor.session.id, id, now)
  return reveal === undefined
    ? html`<div class="notice" role="status">That secret was shown already, or its page expired: it is not shown again. Revoke or rotate it, and make a new one, if it was not copied.</div>`
    : revealCard(reveal)
}
