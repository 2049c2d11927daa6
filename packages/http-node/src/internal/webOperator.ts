import { Effect, Either } from "effect"
import * as Problem from "../Problem.js"
import { type Html, html, trusted } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** The create form as sent, with why it was refused. */
interface CreateState {
  readonly name: string
  readonly error?: string
}

/**
 * The operator area: every organisation and every user of the service, and the creation of an
 * organisation (then the invitation of its first owner, on its Members page). Operators only.
 */
export const webOperator = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { accounts, users } = kit.services

  const operator = Effect.flatMap(kit.visitor, (visitor) =>
    visitor.user.operator
      ? Effect.succeed(visitor)
      : Effect.fail(Problem.make(403, "the operator area is for the operators of the service")))

  const createForm = (action: string, state: CreateState | undefined): Html =>
    html`<h2>Create an organisation</h2>
<form method="post" action="${action}" class="stack">
<div>
<label for="organisation-name">Name</label>
<input id="organisation-name" name="name" type="text" autocomplete="off" required maxlength="200" value="${
      state?.name ?? ""
    }"${
      trusted(state?.error === undefined ? "" : " aria-invalid=\"true\" aria-describedby=\"organisation-name-error\"")
    }>
${state?.error === undefined ? "" : html`<p class="notice error" id="organisation-name-error">${state.error}</p>`}
</div>
<div><button type="submit">Create organisation</button></div>
</form>
<p class="muted">A new organisation has no member yet: its Members page, where you land next, invites its first owner.</p>`

  const render = (
    visitor: WebKit.Visitor,
    options: {
      readonly create?: CreateState | undefined
      readonly notice?: WebKit.PageOptions["notice"]
    } = {},
    status = 200
  ) =>
    Effect.gen(function*() {
      const organisations = yield* accounts.listOrganisations
      const everyone = yield* users.users(visitor.actor)
      const changes = yield* users.accountAudit(visitor.actor, { limit: 50 })
      const names = new Map(organisations.map((o) => [o.id, o.name]))
      const app = yield* WebKit.href("/app")
      const body = html`${createForm(`${app}/operator/organisations`, options.create)}
<h2>Organisations</h2>
${
        organisations.length === 0
          ? html`<p>No organisation yet.</p>`
          : html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Environment</th><th scope="col">Live organisation</th><th scope="col">Open</th></tr></thead>
<tbody>${
            organisations.map((o) => {
              const path = `${app}/o/${encodeURIComponent(o.id)}`
              return html`<tr>
<th scope="row">${o.name}</th>
<td>${o.environment === "production" ? "Production" : "UAT"}</td>
<td>${o.live_organisation_id === null ? "—" : names.get(o.live_organisation_id) ?? o.live_organisation_id}</td>
<td><a href="${path}">Open</a> · <a href="${path}/members">Members</a></td>
</tr>`
            })
          }</tbody>
</table>`
      }
<h2>Users</h2>
${
        everyone.length === 0
          ? html`<p>No user yet.</p>`
          : html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Operator</th><th scope="col">Created</th></tr></thead>
<tbody>${
            everyone.map((user) =>
              html`<tr><th scope="row">${user.email}</th><td>${user.operator ? "Yes" : "No"}</td><td>${
                WebKit.when(user.created_at)
              }</td></tr>`
            )
          }</tbody>
</table>`
      }
<h2>Account and operator changes</h2>
${
        changes.length === 0
          ? html`<p>None yet.</p>`
          : html`<table>
<caption class="muted">The newest 50; changes inside an organisation are in its audit log</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th></tr></thead>
<tbody>${
            changes.map((e) =>
              html`<tr><td>${WebKit.when(e.at)}</td><td>${e.actor}</td><td>${e.action}</td><td>${e.target}</td></tr>`
            )
          }</tbody>
</table>`
      }`
      return yield* kit.page({ title: "Operator", visitor, body, notice: options.notice }, status)
    })

  const overview: WebKit.Route = Effect.flatMap(operator, (visitor) => render(visitor))

  const create: WebKit.Route = Effect.gen(function*() {
    const visitor = yield* operator
    const name = (yield* kit.form).get("name")
    const created = yield* Effect.either(accounts.createOrganisation(name))
    if (Either.isLeft(created)) {
      const error = created.left
      if (error._tag !== "InvalidOrganisationRequest") return yield* error
      return yield* render(visitor, {
        create: { name, error: error.detail },
        notice: { kind: "error", text: `No organisation was created. Name: ${error.detail}` }
      }, 422)
    }
    const organisation = created.right
    yield* users.record(visitor.actor, organisation.id, "organisation.created", organisation.name)
    return yield* WebKit.seeOther(`/app/o/${encodeURIComponent(organisation.id)}/members?notice=created`)
  })

  return [
    ["GET", "/app/operator", overview],
    ["POST", "/app/operator/organisations", create]
  ]
}
