import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Users } from "@tradeflow/core"
import { Clock, Effect, Option } from "effect"
import * as Problem from "../Problem.js"
import { html } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** Where to go after signing in: a path of the web application, never another site. */
const nextPath = (prefix: string, next: string): string =>
  next.startsWith(`${prefix}/app`) && !next.startsWith("//") && !/[\\\r\n]/.test(next)
    ? next.slice(prefix.length)
    : "/app"

const insecure = Problem.make(
  403,
  "signing in needs HTTPS here: open this site over https (or, on a trusted network, set ALLOW_HTTP_SESSIONS)"
)

/** Sign in, sign out, and accepting an invitation. */
export const webSignIn = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { users } = kit.services
  const client = Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
    userAgent: request.headers["user-agent"] ?? "",
    address: WebKit.addressOf(kit.settings, request)
  }))
  const signedInAnswer = (token: string, to: string) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const prefix = yield* WebKit.href("")
      return yield* WebKit.seeOther(to, {
        "set-cookie": WebKit.sessionCookieValue(kit.settings, request, prefix, token)
      })
    })
  const secure = Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => WebKit.sessionAllowed(kit.settings, request) ? Effect.void : Effect.fail(insecure)
  )

  const signInPage = (
    options: { email: string; next: string; error?: string; status?: number; headers?: Record<string, string> }
  ) =>
    Effect.gen(function*() {
      const action = yield* WebKit.href("/app/sign-in")
      return yield* kit.page(
        {
          title: "Sign in",
          notice: options.error === undefined ? undefined : { kind: "error", text: options.error },
          body: html`<form class="stack" method="post" action="${action}">
<input type="hidden" name="next" value="${options.next}">
<div><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${options.email}"></div>
<div><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></div>
<div><button type="submit">Sign in</button></div>
</form>`
        },
        options.status ?? 200,
        options.headers ?? {}
      )
    })

  const showSignIn: WebKit.Route = Effect.gen(function*() {
    yield* secure
    const signedIn = yield* Effect.option(kit.visitor)
    if (signedIn._tag === "Some") return yield* WebKit.seeOther("/app")
    const next = (yield* WebKit.query).get("next") ?? ""
    return yield* signInPage({ email: "", next })
  })

  const signIn: WebKit.Route = Effect.gen(function*() {
    yield* secure
    const form = yield* kit.form
    const email = form.get("email")
    const from = yield* client
    const now = yield* Clock.currentTimeMillis
    const wait = kit.signInLimit.retryAfter(email, from.address, now)
    if (wait !== undefined) {
      return yield* signInPage({
        email,
        next: form.get("next"),
        status: 429,
        error: `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}.`,
        headers: { "retry-after": String(wait) }
      })
    }
    const check = users.signIn(email, form.get("password"), from).pipe(
      Effect.flatMap((session) =>
        Effect.flatMap(WebKit.href(""), (prefix) => signedInAnswer(session.token, nextPath(prefix, form.get("next"))))
      ),
      Effect.catchTag("SignInFailed", () => {
        kit.signInLimit.fail(email, from.address, now)
        return signInPage({ email, next: form.get("next"), status: 401, error: "The e-mail or the password is wrong." })
      })
    )
    return yield* kit.signInLimit.guard(
      email,
      from.address,
      check,
      signInPage({
        email,
        next: form.get("next"),
        status: 429,
        error: "Another sign-in with this e-mail, or from this address, is under way. Try again in a moment.",
        headers: { "retry-after": "1" }
      })
    )
  })

  const signOut: WebKit.Route = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = request.cookies[WebKit.sessionCookie]
    if (token !== undefined) yield* users.signOut(token)
    const prefix = yield* WebKit.href("")
    return yield* WebKit.seeOther("/app/sign-in", {
      "set-cookie": WebKit.sessionCookieValue(kit.settings, request, prefix, null)
    })
  })

  const token = Effect.map(HttpRouter.params, (params) => params["token"] ?? "")

  /**
   * The page of an invitation link: for an e-mail without an account, a password to choose; for
   * one with an account, its holder signed in accepts with one button (a link never checks a
   * password); anyone else is asked to sign in as it.
   */
  const invitationPage = (status = 200, error?: string) =>
    Effect.gen(function*() {
      const offer = yield* users.offer(yield* token)
      const path = `/app/invitations/${encodeURIComponent(yield* token)}`
      const action = yield* WebKit.href(path)
      const signedIn = Option.getOrUndefined(yield* Effect.option(kit.visitor))
      const asInvited = signedIn !== undefined && Users.emailKey(offer.email) === signedIn.user.email_key
      const signIn = yield* WebKit.href(`/app/sign-in?next=${encodeURIComponent(action)}`)
      const form = !offer.existing
        ? html`<p>Choose a password of at least ${Users.minPasswordLength} characters for your new account.</p>
<form class="stack" method="post" action="${action}">
<div><label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="new-password"></div>
<div><button type="submit">Accept invitation</button></div>
</form>`
        : asInvited
        ? html`<form method="post" action="${action}"><button type="submit">Accept invitation</button></form>`
        : html`<p>${offer.email} has an account: <a href="${signIn}">sign in as ${offer.email}</a>, and this page
will let you accept.</p>`
      return yield* kit.page({
        title: `Join ${offer.organisation.name}`,
        visitor: signedIn,
        notice: error === undefined ? undefined : { kind: "error", text: error },
        body:
          html`<p>You are invited to join <strong>${offer.organisation.name}</strong> as <strong>${offer.role}</strong>,
with the e-mail <strong>${offer.email}</strong>.</p>
${form}`
      }, status)
    })

  const accept: WebKit.Route = Effect.gen(function*() {
    yield* secure
    const offer = yield* users.offer(yield* token)
    if (offer.existing) {
      const visitor = yield* kit.visitor
      return yield* users.acceptAs(yield* token, visitor.user).pipe(
        Effect.zipRight(WebKit.seeOther(`/app/o/${encodeURIComponent(offer.organisation.id)}`)),
        Effect.catchTag("InvalidUserRequest", (error) => invitationPage(403, error.detail))
      )
    }
    const form = yield* kit.form
    return yield* users.accept(yield* token, form.get("password"), yield* client).pipe(
      Effect.flatMap((session) => signedInAnswer(session.token, "/app")),
      Effect.catchTag("InvalidUserRequest", (error) => invitationPage(422, error.detail))
    )
  })

  return [
    ["GET", "/app/sign-in", showSignIn],
    ["POST", "/app/sign-in", signIn],
    ["POST", "/app/sign-out", signOut],
    ["GET", "/app/invitations/:token", Effect.zipRight(secure, invitationPage())],
    ["POST", "/app/invitations/:token", accept]
  ]
}
