import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import {
  Accounts,
  AutomationAdmin,
  DeliveryAdmin,
  Documents,
  JobAdmin,
  Mailer,
  Permission,
  TrackingAdmin,
  Upstream,
  Users,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import { Clock, Effect, Option } from "effect"
import { HttpConfig } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { makeBudget, readBytes } from "./body.js"
import { toProblem } from "./errors.js"
import * as FailureLimit from "./failureLimit.js"
import { consoleHost, requestHost } from "./hosts.js"
import { type Html, html } from "./html.js"
import { noteOrganisation } from "./requestLog.js"
import { webAccount } from "./webAccount.js"
import { css, js } from "./webAssets.js"
import { webAutomations } from "./webAutomations.js"
import { webKeys } from "./webKeys.js"
import * as WebKit from "./webKit.js"
import { webMembers } from "./webMembers.js"
import { webOperator } from "./webOperator.js"
import { webOverview } from "./webOverview.js"
import { webSignIn } from "./webSignIn.js"
import { webTradeflows } from "./webTradeflows.js"

/** The largest form the web application reads: 64 KiB, from a budget of 16 MiB held at once. */
const formBytes = (settings: HttpConfig["Type"]) =>
  readBytes({ maxBytes: 64 * 1024, timeoutMillis: settings.bodyTimeoutMillis, budget: makeBudget(16 * 1024 * 1024) })

/** Whether a path (without the mount prefix) belongs to the web application. */
export const isWebPath = (url: string): boolean => url === "/app" || url.startsWith("/app/") || url.startsWith("/app?")

/** What every screen module is given: the services, the settings and the helpers bound to them. */
export interface Kit {
  readonly services: WebKit.WebServices
  /** The host's mailer, when it has one: invitations are then e-mailed too. */
  readonly mailer: Option.Option<Mailer.Mailer["Type"]>
  readonly settings: HttpConfig["Type"]
  /** The signed-in person of the request. */
  readonly visitor: Effect.Effect<WebKit.Visitor, WebKit.WebFailure, HttpServerRequest.HttpServerRequest>
  /** The person inside the route's organisation (`:org`), when their role there permits `action`. */
  readonly inOrganisation: (
    action: Permission.Action
  ) => Effect.Effect<WebKit.OrgView, WebKit.WebFailure, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>
  /** The submitted form. */
  readonly form: Effect.Effect<WebKit.Form, Problem.Problem, HttpServerRequest.HttpServerRequest>
  /** A whole page, answered with `status`. */
  readonly page: (
    options: WebKit.PageOptions,
    status?: number,
    headers?: Readonly<Record<string, string>>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  /**
   * Holds `reveal` for the visitor's session, then answers 303 to `path` with `reveal=<id>` (the
   * page shows it once with {@link WebKit.revealedOn}).
   */
  readonly revealAt: (
    visitor: WebKit.Visitor,
    path: string,
    reveal: WebKit.Reveal
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** What the page of this request shows for its `?reveal=`, if anything. */
  readonly revealed: (visitor: WebKit.Visitor) => Effect.Effect<Html | "", never, HttpServerRequest.HttpServerRequest>
  /** Sign-in failures counted per e-mail and per address. */
  readonly signInLimit: {
    readonly retryAfter: (email: string, address: string, now: number) => number | undefined
    readonly fail: (email: string, address: string, now: number) => void
    /**
     * Runs a password check of `email` from `address` unless one of that e-mail, or 4 from that
     * address, are under way (then `busy`): checks run one after another, so the failure limit
     * holds against requests sent all at once.
     */
    readonly guard: <A, E, R>(
      email: string,
      address: string,
      check: Effect.Effect<A, E, R>,
      busy: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E, R>
  }
}

/** One route: method, path (under the mount prefix) and its handler. */
export type WebRoute = readonly ["GET" | "POST", HttpRouter.PathInput, WebKit.Route]

const errorPage = (kit: Kit, problem: Problem.Problem) =>
  Effect.flatMap(WebKit.href("/app"), (start) =>
    kit.page(
      {
        title: problem.title,
        body: html`<p>${problem.detail}</p>
${
          (problem.errors ?? []).length === 0
            ? ""
            : html`<ul>${(problem.errors ?? []).map((e) => html`<li>${e.path}: ${e.message}</li>`)}</ul>`
        }
<p><a href="${start}">Go to the start</a></p>`
      },
      problem.status
    ))

/** A route's failures as pages: sign in first, or the problem's status and detail; defects logged as 500. */
const answer = (
  kit: Kit,
  route: WebKit.Route
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
> =>
  route.pipe(
    Effect.catchAll((error) =>
      Effect.gen(function*() {
        if (error instanceof Problem.Problem) return yield* errorPage(kit, error)
        if (error._tag === "NotSignedIn") {
          const request = yield* HttpServerRequest.HttpServerRequest
          const next = request.method === "GET" ? `?next=${encodeURIComponent(yield* WebKit.href(request.url))}` : ""
          return yield* WebKit.seeOther(`/app/sign-in${next}`)
        }
        return yield* errorPage(kit, yield* toProblem(error))
      })
    ),
    Effect.catchAllDefect((defect) =>
      Effect.logError("web request failed", defect).pipe(
        Effect.zipRight(errorPage(kit, Problem.make(500, "the server failed to answer; the failure was logged")))
      )
    )
  )

/** A state-changing route: refused with 403 unless the request comes from this site. */
const sameSite = (kit: Kit, route: WebKit.Route): WebKit.Route =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    WebKit.sameOrigin(kit.settings, request)
      ? route
      : Effect.fail(
        Problem.make(403, "this form was not sent from this site (Sec-Fetch-Site or Origin); nothing was done")
      ))

/**
 * The web application at `/app`: server-rendered pages over the core services, signed-in people
 * only (but the sign-in and invitation pages). Served on console hosts alone, like the console.
 * With a `Mailer` in its context, invitations are e-mailed too.
 */
export const makeWebApp = Effect.gen(function*() {
  const settings = yield* HttpConfig
  const users = yield* Users.Users
  const services: WebKit.WebServices = {
    users,
    accounts: yield* Accounts.Accounts,
    automations: yield* AutomationAdmin.AutomationAdmin,
    deliveries: yield* DeliveryAdmin.DeliveryAdmin,
    documents: yield* Documents.Documents,
    jobs: yield* JobAdmin.JobAdmin,
    tracking: yield* TrackingAdmin.TrackingAdmin,
    upstream: yield* Upstream.Upstream,
    widgets: yield* WidgetSearch.WidgetSearch,
    destinations: yield* WebhookDestination.WebhookDestination
  }
  const byEmail = FailureLimit.make({
    failures: settings.signInFailures.perEmail,
    windowMillis: settings.signInFailures.windowMillis,
    maxClients: 10_000
  })
  const byAddress = FailureLimit.make({
    failures: settings.signInFailures.perAddress,
    windowMillis: settings.signInFailures.windowMillis,
    maxClients: 10_000
  })
  const visitor = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = request.cookies[WebKit.sessionCookie] ?? ""
    const signed = yield* users.session(token, { touch: request.headers[WebKit.refreshHeader] === undefined })
    return { ...signed, token, actor: Users.asActor(signed.user) }
  })
  const reveals = WebKit.makeReveals()
  /** Password checks under way, by `email:<key>` and by address. */
  const checking = new Map<string, number>()
  const kit: Kit = {
    services,
    mailer: yield* Effect.serviceOption(Mailer.Mailer),
    revealAt: (visitor, path, reveal) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const id = reveals.put(visitor.session.id, reveal, now)
        return WebKit.seeOther(`${path}${path.includes("?") ? "&" : "?"}reveal=${id}`)
      }),
    revealed: (visitor) =>
      Effect.zipWith(
        WebKit.query,
        Clock.currentTimeMillis,
        (params, now) => WebKit.revealedOn(reveals, visitor, params, now)
      ),
    settings,
    visitor,
    inOrganisation: (action) =>
      Effect.gen(function*() {
        const person = yield* visitor
        const id = WebKit.orgParam(yield* HttpRouter.params)
        const { organisation, role } = yield* users.authorize(person.actor, id, action)
        yield* noteOrganisation(organisation.id)
        const access = yield* users.accessOf(person.actor)
        const live = organisation.live_organisation_id === null
          ? organisation
          : Option.getOrElse(
            yield* services.accounts.organisation(organisation.live_organisation_id),
            () => organisation
          )
        return { visitor: person, organisation, live, role, access }
      }),
    form: WebKit.readForm(formBytes(settings)),
    page: (options, status = 200, headers = {}) =>
      Effect.map(
        WebKit.layout(settings, options, Permission.permits),
        (body) => WebKit.htmlResponse(status, body, headers)
      ),
    signInLimit: {
      retryAfter: (email, address, now) => {
        const waits = [byEmail.retryAfter(Users.emailKey(email), now), byAddress.retryAfter(address, now)]
          .filter((w): w is number => w !== undefined)
        return waits.length === 0 ? undefined : Math.max(...waits)
      },
      fail: (email, address, now) => {
        byEmail.fail(Users.emailKey(email), now)
        byAddress.fail(address, now)
      },
      guard: (email, address, check, busy) =>
        Effect.suspend(() => {
          const key = Users.emailKey(email)
          const fromAddress = checking.get(address) ?? 0
          if (checking.has(`email:${key}`) || fromAddress >= 4) return busy
          checking.set(`email:${key}`, 1)
          checking.set(address, fromAddress + 1)
          return Effect.ensuring(
            check,
            Effect.sync(() => {
              checking.delete(`email:${key}`)
              const left = (checking.get(address) ?? 1) - 1
              if (left <= 0) checking.delete(address)
              else checking.set(address, left)
            })
          )
        })
    }
  }
  const asset = (body: string, contentType: string): WebKit.Route =>
    Effect.succeed(HttpServerResponse.text(body, {
      contentType,
      headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
    }))
  const home: WebKit.Route = Effect.gen(function*() {
    const person = yield* visitor
    const access = yield* users.accessOf(person.actor)
    const first = access[0]
    if (first !== undefined) return yield* WebKit.seeOther(`/app/o/${encodeURIComponent(first.organisation.id)}`)
    return yield* kit.page({
      title: "No organisation yet",
      visitor: person,
      body: html`<p>You are not a member of any organisation yet. Ask an admin of yours for an invitation.</p>`
    })
  })
  const switchTo: WebKit.Route = Effect.flatMap(
    WebKit.query,
    (params) => WebKit.seeOther(`/app/o/${encodeURIComponent(params.get("to") ?? "")}`)
  )
  const routes: ReadonlyArray<WebRoute> = [
    ["GET", "/app", home],
    ["GET", "/app/switch", switchTo],
    ["GET", "/app/assets/app.css", asset(css, "text/css; charset=utf-8")],
    ["GET", "/app/assets/app.js", asset(js, "text/javascript; charset=utf-8")],
    ...webSignIn(kit),
    ...webOverview(kit),
    ...webKeys(kit),
    ...webAutomations(kit),
    ...webTradeflows(kit),
    ...webMembers(kit),
    ...webAccount(kit),
    ...webOperator(kit)
  ]
  let router: HttpRouter.HttpRouter<never, never> = HttpRouter.empty
  for (const [method, path, route] of routes) {
    router = method === "GET"
      ? HttpRouter.get(router, path, answer(kit, route))
      : HttpRouter.post(router, path, answer(kit, sameSite(kit, route)))
  }
  const app = yield* HttpRouter.toHttpApp(router)
  const notFound = errorPage(kit, Problem.make(404, "there is no page here"))
  return Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) =>
      consoleHost(settings, requestHost(settings, request.headers))
        ? Effect.catchTag(app, "RouteNotFound", () => notFound)
        : notFound
  )
})
