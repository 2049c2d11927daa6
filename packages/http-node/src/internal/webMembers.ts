import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Permission, User, type Users } from "@tradeflow/core"
import { Effect, Either, Option } from "effect"
import * as Problem from "../Problem.js"
import { requestHost } from "./hosts.js"
import { type Html, html, trusted } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** How a role reads on a page. */
const roleNames: Record<User.Role, string> = { viewer: "Viewer", member: "Member", admin: "Admin", owner: "Owner" }

/** The role a form field names, if it names one. */
const parseRole = (value: string): User.Role | undefined => User.roles.find((r) => r === value)

/** The roles `role` may give and manage: every role for an owner, those below owner for an admin, none below. */
const givable = (role: User.Role): ReadonlyArray<User.Role> =>
  User.roles.filter((r) => Permission.permits(role, Permission.toManage(r)))

/** The fixed messages of `?notice=`: the query names one, its text never reaches the page. */
const notices = new Map<string, string>([
  ["created", "The organisation was created. Invite its first owner below."],
  ["role", "The role was changed."],
  ["uat-granted", "UAT access was granted."],
  ["uat-withdrawn", "UAT access was withdrawn."],
  ["deactivated", "The member was deactivated: they can no longer open this organisation or its UAT companion."],
  ["withdrawn", "The invitation was withdrawn: its link no longer works."]
])

const fieldLabels: Record<string, string> = { email: "Email", role: "Role" }

/** The invite form as sent, with the error of the field at fault. */
interface InviteState {
  readonly email: string
  readonly role: User.Role
  readonly uat: boolean
  readonly error?: { readonly field: string; readonly detail: string }
}

/** A new invitation and its absolute link, shown once. */
interface MembersOptions {
  readonly notice?: WebKit.PageOptions["notice"]
  readonly invite?: InviteState | undefined
  readonly revealed?: Html | "" | undefined
}

const daysText = (millis: number): string => {
  const days = Math.max(1, Math.round(millis / 86_400_000))
  return `${days} day${days === 1 ? "" : "s"}`
}

/**
 * The Members screen: the members of the live organisation; for admins and owners the controls
 * that change them, an invite form with its one-time link, the pending invitations, and the
 * audit log.
 */
export const webMembers = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { users } = kit.services

  const orgPath = (organisationId: string) => `/app/o/${encodeURIComponent(organisationId)}`

  /** The invitation link as its recipient opens it: the request's scheme and host, the mount prefix. */
  const invitationLink = (token: string) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = yield* WebKit.href(`/app/invitations/${encodeURIComponent(token)}`)
      const host = requestHost(kit.settings, request.headers)
      return host === undefined || host === ""
        ? path
        : `${WebKit.isHttps(kit.settings, request) ? "https" : "http"}://${host}${path}`
    })

  const inviteForm = (base: string, offered: ReadonlyArray<User.Role>, state: InviteState | undefined): Html => {
    const errorOf = (field: string) => state?.error?.field === field ? state.error.detail : undefined
    const described = (field: string, id: string) =>
      errorOf(field) === undefined ? "" : trusted(` aria-invalid="true" aria-describedby="${id}"`)
    const message = (field: string, id: string) => {
      const detail = errorOf(field)
      return detail === undefined ? "" : html`<p class="notice error" id="${id}">${detail}</p>`
    }
    const chosen = state?.role ?? "member"
    return html`<h2>Invite a member</h2>
<form method="post" action="${base}/members/invite" class="stack">
<div>
<label for="invite-email">Email</label>
<input id="invite-email" name="email" type="email" autocomplete="off" required value="${state?.email ?? ""}"${
      described("email", "invite-email-error")
    }>
${message("email", "invite-email-error")}
</div>
<div>
<label for="invite-role">Role</label>
<select id="invite-role" name="role"${described("role", "invite-role-error")}>${
      offered.map((r) => html`<option value="${r}"${trusted(r === chosen ? " selected" : "")}>${roleNames[r]}</option>`)
    }</select>
${message("role", "invite-role-error")}
</div>
<div>
<label for="invite-uat"><input id="invite-uat" name="uat" type="checkbox" value="true"${
      trusted(state?.uat === true ? " checked" : "")
    }> Also grant UAT access</label>
</div>
<div><button type="submit">Invite</button></div>
</form>`
  }

  const invitationsTable = (base: string, invitations: ReadonlyArray<User.Invitation>): Html =>
    html`<h2>Pending invitations</h2>
${
      invitations.length === 0
        ? html`<p>No invitation is waiting to be accepted.</p>`
        : html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">UAT access</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead>
<tbody>${
          invitations.map((invitation) =>
            html`<tr>
<th scope="row">${invitation.email}</th>
<td>${roleNames[invitation.role]}</td>
<td>${invitation.uat ? "Yes" : "No"}</td>
<td>${WebKit.when(invitation.expires_at)}</td>
<td><form class="inline" method="post" action="${base}/invitations/${
              encodeURIComponent(invitation.id)
            }/withdraw"><button type="submit" class="secondary">Withdraw</button></form></td>
</tr>`
          )
        }</tbody>
</table>`
    }`

  const membersTable = (
    view: WebKit.OrgView,
    base: string,
    members: ReadonlyArray<Users.Member>,
    manages: boolean
  ): Html => {
    const offered = givable(view.role)
    const self = view.visitor.user.id
    const controls = (member: Users.Member, index: number) => {
      if (!Permission.permits(view.role, Permission.toManage(member.role))) {
        return html`<span class="muted">Only an owner may change an owner.</span>`
      }
      const path = `${base}/members/${encodeURIComponent(member.user_id)}`
      return html`<form class="inline" method="post" action="${path}/role">
<label for="member-role-${index}">New role</label>
<select id="member-role-${index}" name="role">${
        offered.map((r) =>
          html`<option value="${r}"${trusted(r === member.role ? " selected" : "")}>${roleNames[r]}</option>`
        )
      }</select>
<button type="submit" class="secondary">Change role</button>
</form>
<form class="inline" method="post" action="${path}/uat">
<input type="hidden" name="granted" value="${member.uat ? "false" : "true"}">
<button type="submit" class="secondary">${member.uat ? "Withdraw UAT access" : "Grant UAT access"}</button>
</form>
<form class="inline" method="post" action="${path}/deactivate"><button type="submit" class="danger">Deactivate</button></form>`
    }
    return html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">UAT access</th><th scope="col">Since</th>${
      manages ? html`<th scope="col">Actions</th>` : ""
    }</tr></thead>
<tbody>${
      members.map((member, index) =>
        html`<tr>
<th scope="row">${member.email}${member.user_id === self ? html` <span class="muted">(you)</span>` : ""}</th>
<td>${roleNames[member.role]}</td>
<td>${member.uat ? "Yes" : "No"}</td>
<td>${WebKit.when(member.since)}</td>
${manages ? html`<td>${controls(member, index)}</td>` : ""}
</tr>`
      )
    }</tbody>
</table>`
  }

  /** The Members page of the route's organisation (on a companion, the live organisation's members, read only). */
  const render = (view: WebKit.OrgView, options: MembersOptions = {}, status = 200) =>
    Effect.gen(function*() {
      const base = yield* WebKit.href(orgPath(view.organisation.id))
      const companion = view.organisation.id !== view.live.id
      const manages = !companion && Permission.permits(view.role, "manage_members")
      const members = yield* users.members(view.visitor.actor, view.organisation.id)
      const invitations = manages ? yield* users.invitations(view.visitor.actor, view.live.id) : []
      const liveOpen = view.access.some((a) => a.organisation.id === view.live.id)
      const liveMembers = yield* WebKit.href(`${orgPath(view.live.id)}/members`)
      const intro = companion
        ? html`<p>This is the UAT companion of ${view.live.name}. Its members are those of ${view.live.name}
with UAT access: members, their roles and their UAT access are managed there${
          liveOpen ? html`, on <a href="${liveMembers}">the members of ${view.live.name}</a>` : ""
        }.</p>`
        : html`<p>The people who may open ${view.live.name}. “UAT access” lets a member also open its UAT companion.</p>`
      const body = html`${options.revealed ?? ""}
${intro}
<h2>Members</h2>
${members.length === 0 ? html`<p>No member yet.</p>` : membersTable(view, base, members, manages)}
${manages ? inviteForm(base, givable(view.role), options.invite) : ""}
${manages ? invitationsTable(base, invitations) : ""}`
      return yield* kit.page({ title: "Members", view, section: "/members", body, notice: options.notice }, status)
    })

  const members: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const text = notices.get((yield* WebKit.query).get("notice") ?? "")
    return yield* render(view, {
      notice: text === undefined ? undefined : { kind: "success", text },
      revealed: yield* kit.revealed(view.visitor)
    })
  })

  const invalidInvite = (view: WebKit.OrgView, state: InviteState, field: string, detail: string) =>
    render(view, {
      invite: { ...state, error: { field, detail } },
      notice: { kind: "error", text: `No invitation was made. ${fieldLabels[field] ?? field}: ${detail}` }
    }, 422)

  const invite: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("manage_members")
    const form = yield* kit.form
    const email = form.get("email")
    const uat = form.get("uat") === "true" || form.get("uat") === "on"
    const role = parseRole(form.get("role"))
    const state: InviteState = { email, role: role ?? "member", uat }
    if (role !== undefined && !givable(view.role).includes(role)) {
      return yield* Problem.make(403, `a ${view.role} may not invite a ${role}`)
    }
    if (role === undefined) {
      return yield* invalidInvite(
        view,
        state,
        "role",
        `choose one of the roles you may give: ${givable(view.role).map((r) => roleNames[r]).join(", ")}`
      )
    }
    const made = yield* Effect.either(users.invite(view.visitor.actor, view.live.id, { email, role, uat }))
    if (Either.isLeft(made)) {
      const error = made.left
      if (error._tag !== "InvalidUserRequest") return yield* error
      return yield* invalidInvite(view, state, error.field, error.detail)
    }
    const invitation = made.right.invitation
    const link = yield* invitationLink(made.right.token)
    const expiry = `${daysText(invitation.expires_at - invitation.created_at)} (${WebKit.when(invitation.expires_at)})`
    const mailed = Option.isNone(kit.mailer) ? Option.none<string>() : Option.some(
      yield* kit.mailer.value.send({
        to: invitation.email,
        subject: `You are invited to ${view.live.name}`,
        text: `${view.visitor.user.email} invites you to ${view.live.name} on Tradeflow, as ${
          roleNames[role]
        }.\n\nOpen this link to accept (it works once, and expires in ${expiry}):\n\n${link}\n`
      }).pipe(
        Effect.as("An e-mail with this link was sent to them."),
        Effect.catchTag("MailFailed", (error) =>
          Effect.as(
            Effect.logWarning("the invitation e-mail could not be sent", error.detail),
            `The e-mail to them could not be sent (${error.detail}): send them this link yourself.`
          ))
      )
    )
    return yield* kit.revealAt(view.visitor, `${orgPath(view.organisation.id)}/members`, {
      label: `Invitation link for ${invitation.email}`,
      note: `${invitation.email} was invited as ${roleNames[role]}. ${
        Option.getOrElse(mailed, () => "Send them this link.")
      } It works once and expires in ${expiry}.`,
      secret: link,
      copy: "Copy link"
    })
  })

  /** A change of one member (`:user`), then back to the Members page with the notice it answers. */
  const memberChange = (
    change: (
      view: WebKit.OrgView,
      userId: string
    ) => Effect.Effect<string, WebKit.WebFailure, HttpServerRequest.HttpServerRequest>
  ): WebKit.Route =>
    Effect.gen(function*() {
      const view = yield* kit.inOrganisation("manage_members")
      const params = yield* HttpRouter.params
      const notice = yield* change(view, params["user"] ?? "")
      return yield* WebKit.seeOther(`${orgPath(view.organisation.id)}/members?notice=${notice}`)
    })

  const changeRole = memberChange((view, userId) =>
    Effect.gen(function*() {
      const role = parseRole((yield* kit.form).get("role"))
      if (role === undefined) {
        return yield* Problem.make(422, "choose a role", [{ path: "/role", message: "choose a role" }])
      }
      yield* users.changeRole(view.visitor.actor, view.live.id, userId, role)
      return "role"
    })
  )

  const setUat = memberChange((view, userId) =>
    Effect.gen(function*() {
      const granted = (yield* kit.form).get("granted")
      if (granted !== "true" && granted !== "false") {
        return yield* Problem.make(422, "granted is true or false", [{ path: "/granted", message: "true or false" }])
      }
      yield* users.setUatAccess(view.visitor.actor, view.live.id, userId, granted === "true")
      return granted === "true" ? "uat-granted" : "uat-withdrawn"
    })
  )

  const deactivate = memberChange((view, userId) =>
    Effect.as(users.deactivate(view.visitor.actor, view.live.id, userId), "deactivated")
  )

  const withdraw: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("manage_members")
    const params = yield* HttpRouter.params
    yield* users.withdrawInvitation(view.visitor.actor, view.live.id, params["id"] ?? "")
    return yield* WebKit.seeOther(`${orgPath(view.organisation.id)}/members?notice=withdrawn`)
  })

  const auditPage = 50

  const audit: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("manage_members")
    const raw = (yield* WebKit.query).get("before") ?? ""
    if (raw !== "" && !/^\d{1,15}$/.test(raw)) {
      return yield* Problem.make(400, "before is the number of an entry of the log", [{
        path: "/before",
        message: "a whole number"
      }])
    }
    const before = raw === "" ? undefined : Number(raw)
    const entries = yield* users.audit(
      view.visitor.actor,
      view.organisation.id,
      before === undefined ? { limit: auditPage } : { limit: auditPage, before }
    )
    const base = yield* WebKit.href(`${orgPath(view.organisation.id)}/audit`)
    const last = entries.at(-1)
    const links = [
      ...(before === undefined ? [] : [html`<a href="${base}">Newest</a>`]),
      ...(entries.length === auditPage && last !== undefined
        ? [html`<a href="${base}?before=${last.seq}">Older</a>`]
        : [])
    ]
    const pages = links.length === 0
      ? ""
      : html`<nav aria-label="Audit log pages"><p>${
        links.map((link, i) => i === 0 ? link : html` · ${link}`)
      }</p></nav>`
    const body = html`<p>Every change to ${view.live.name} and its UAT companion, newest first.</p>
<h2>${before === undefined ? "Latest changes" : "Older changes"}</h2>
${
      entries.length === 0
        ? html`<p>${before === undefined ? "Nothing has been recorded yet." : "There are no older changes."}</p>`
        : html`<table>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th></tr></thead>
<tbody>${
          entries.map((entry) =>
            html`<tr><td>${
              WebKit.when(entry.at)
            }</td><td>${entry.actor}</td><td>${entry.action}</td><td>${entry.target}</td></tr>`
          )
        }</tbody>
</table>`
    }
${pages}`
    return yield* kit.page({ title: "Audit log", view, section: "/audit", body })
  })

  return [
    ["GET", "/app/o/:org/members", members],
    ["POST", "/app/o/:org/members/invite", invite],
    ["POST", "/app/o/:org/members/:user/role", changeRole],
    ["POST", "/app/o/:org/members/:user/uat", setUat],
    ["POST", "/app/o/:org/members/:user/deactivate", deactivate],
    ["POST", "/app/o/:org/invitations/:id/withdraw", withdraw],
    ["GET", "/app/o/:org/audit", audit]
  ]
}
