import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Users } from "@tradeflow/core"
import { Clock, Effect, Either } from "effect"
import { type Html, html, trusted } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** The fixed messages of `?notice=`: the query names one, its text never reaches the page. */
const notices = new Map<string, string>([
  ["password", "Your password was changed. Your other sessions were ended."],
  ["session-ended", "The session was ended."],
  ["signed-out-everywhere", "Every other session was ended."]
])

/** The password form's error: the field at fault (`current_password` or `new_password`) and why. */
interface PasswordError {
  readonly field: string
  readonly detail: string
}

const fieldLabels: Record<string, string> = { current_password: "Current password", new_password: "New password" }

/**
 * The Account screen: the signed-in person's e-mail, a change-password form, and their sessions
 * (end one, or every other one).
 */
export const webAccount = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { users } = kit.services

  const passwordForm = (action: string, error: PasswordError | undefined): Html => {
    const invalid = (field: string, id: string, hint?: string) => {
      const ids = [...(hint === undefined ? [] : [hint]), ...(error?.field === field ? [id] : [])].join(" ")
      return trusted(
        (error?.field === field ? " aria-invalid=\"true\"" : "") + (ids === "" ? "" : ` aria-describedby="${ids}"`)
      )
    }
    const message = (field: string, id: string) =>
      error?.field === field ? html`<p class="notice error" id="${id}">${error.detail}</p>` : ""
    return html`<h2>Change password</h2>
<form method="post" action="${action}" class="stack">
<div>
<label for="current-password">Current password</label>
<input id="current-password" name="current_password" type="password" autocomplete="current-password" required${
      invalid("current_password", "current-password-error")
    }>
${message("current_password", "current-password-error")}
</div>
<div>
<label for="new-password">New password</label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required${
      invalid("new_password", "new-password-error", "new-password-hint")
    }>
<p class="muted" id="new-password-hint">${Users.minPasswordLength} to ${Users.maxPasswordLength} characters. Your other sessions end when it changes.</p>
${message("new_password", "new-password-error")}
</div>
<div><button type="submit">Change password</button></div>
</form>`
  }

  const render = (
    visitor: WebKit.Visitor,
    options: {
      readonly notice?: WebKit.PageOptions["notice"]
      readonly error?: PasswordError | undefined
    } = {},
    status = 200
  ) =>
    Effect.gen(function*() {
      const base = yield* WebKit.href("/app/account")
      const sessions = yield* users.sessionsOf(visitor.user)
      const others = sessions.some((s) => s.id !== visitor.session.id)
      const body = html`<h2>Sign-in</h2>
<p>You sign in as <strong>${visitor.user.email}</strong>.</p>
${passwordForm(`${base}/password`, options.error)}
<h2>Sessions</h2>
<p>Where you are signed in now. End a session you do not recognise, then change your password.</p>
<table>
<thead><tr><th scope="col">Started</th><th scope="col">Last seen</th><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Session</th></tr></thead>
<tbody>${
        sessions.map((session) =>
          html`<tr>
<td>${WebKit.when(session.created_at)}</td>
<td>${WebKit.when(session.last_seen_at)}</td>
<td>${session.user_agent === "" ? "—" : session.user_agent}</td>
<td>${session.address === "" ? "—" : session.address}</td>
<td>${
            session.id === visitor.session.id
              ? html`<strong>This session</strong>`
              : html`<form class="inline" method="post" action="${base}/sessions/${
                encodeURIComponent(session.id)
              }/end"><button type="submit" class="secondary">End</button></form>`
          }</td>
</tr>`
        )
      }</tbody>
</table>
<form method="post" action="${base}/sign-out-everywhere">
<p>${others ? "End every session but this one." : "No other session is running."}</p>
<button type="submit" class="danger">Sign out everywhere</button>
</form>`
      return yield* kit.page({ title: "Account", visitor, body, notice: options.notice }, status)
    })

  const account: WebKit.Route = Effect.gen(function*() {
    const visitor = yield* kit.visitor
    const text = notices.get((yield* WebKit.query).get("notice") ?? "")
    return yield* render(visitor, { notice: text === undefined ? undefined : { kind: "success", text } })
  })

  /**
   * Changes the password. A wrong current password counts as a failed sign-in of the account
   * (the same limit, and one check at a time), so a session left open cannot be used to guess it.
   */
  const changePassword: WebKit.Route = Effect.gen(function*() {
    const visitor = yield* kit.visitor
    const form = yield* kit.form
    const address = WebKit.addressOf(kit.settings, yield* HttpServerRequest.HttpServerRequest)
    const now = yield* Clock.currentTimeMillis
    const limited = (text: string, wait: number) =>
      Effect.map(
        render(visitor, { notice: { kind: "error", text } }, 429),
        (response) => HttpServerResponse.setHeader(response, "retry-after", String(wait))
      )
    const wait = kit.signInLimit.retryAfter(visitor.user.email, address, now)
    if (wait !== undefined) {
      return yield* limited(
        `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}.`,
        wait
      )
    }
    const attempt = Effect.gen(function*() {
      const changed = yield* Effect.either(
        users.changePassword(visitor.user, form.get("current_password"), form.get("new_password"), visitor.session.id)
      )
      if (Either.isRight(changed)) return yield* WebKit.seeOther("/app/account?notice=password")
      const error = changed.left
      if (error._tag !== "InvalidUserRequest") return yield* error
      if (error.field === "current_password") kit.signInLimit.fail(visitor.user.email, address, now)
      return yield* render(visitor, {
        error: { field: error.field, detail: error.detail },
        notice: {
          kind: "error",
          text: `Your password was not changed. ${fieldLabels[error.field] ?? error.field}: ${error.detail}`
        }
      }, 422)
    })
    return yield* kit.signInLimit.guard(
      visitor.user.email,
      address,
      attempt,
      limited("Another password check for you is under way. Try again in a moment.", 1)
    )
  })

  const endSession: WebKit.Route = Effect.gen(function*() {
    const visitor = yield* kit.visitor
    const params = yield* HttpRouter.params
    yield* users.endSession(visitor.user, params["id"] ?? "")
    return yield* WebKit.seeOther("/app/account?notice=session-ended")
  })

  const signOutEverywhere: WebKit.Route = Effect.gen(function*() {
    const visitor = yield* kit.visitor
    yield* users.signOutEverywhere(visitor.user, visitor.session.id)
    return yield* WebKit.seeOther("/app/account?notice=signed-out-everywhere")
  })

  return [
    ["GET", "/app/account", account],
    ["POST", "/app/account/password", changePassword],
    ["POST", "/app/account/sessions/:id/end", endSession],
    ["POST", "/app/account/sign-out-everywhere", signOutEverywhere]
  ]
}
