import { HttpRouter } from "@effect/platform"
import { AutomationAdmin, DeliveryAdmin, Permission } from "@tradeflow/core"
import { Effect, Either } from "effect"
import { noneWithId } from "./errors.js"
import { type Html, html, trusted } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

type Automation = AutomationAdmin.AutomationInfo
type Attempt = DeliveryAdmin.DeliveryLogInfo

/** The statuses of an attempt the delivery log can be filtered by. */
const attemptStatuses: ReadonlyArray<Attempt["status"]> = ["delivered", "failed", "dead"]

/** The path of an organisation (without the mount prefix). */
const orgPath = (view: WebKit.OrgView): string => `/app/o/${encodeURIComponent(view.organisation.id)}`

const listPath = (view: WebKit.OrgView): string => `${orgPath(view)}/automations`

const automationPath = (view: WebKit.OrgView, id: string): string => `${listPath(view)}/${encodeURIComponent(id)}`

const can = (view: WebKit.OrgView, action: Permission.Action): boolean => Permission.permits(view.role, action)

const idParam = Effect.map(HttpRouter.params, (params) => params["id"] ?? "")

const digits = /^[0-9]{1,15}$/

/** What a submitted automation form held: re-rendered as it was sent when it is refused. */
interface Draft {
  readonly url: string
  readonly format: string
  readonly types: ReadonlyArray<string>
}

const emptyDraft: Draft = { url: "", format: "message", types: AutomationAdmin.integrationTypes }

/** The issues of a refused form by field (`url`, `format`, `types`; `""` for the others). */
type FieldIssues = ReadonlyMap<string, ReadonlyArray<string>>

const fieldLabels: Record<string, string> = { url: "URL", format: "Format", types: "Types" }

const byField = (issues: ReadonlyArray<{ readonly path: string; readonly message: string }>): FieldIssues => {
  const fields = new Map<string, Array<string>>()
  for (const issue of issues) {
    const field = issue.path.split("/")[1] ?? ""
    const key = field in fieldLabels ? field : ""
    fields.set(key, [...(fields.get(key) ?? []), issue.message])
  }
  return fields
}

/** The issues of one field, next to it: each names the field. */
const fieldErrors = (id: string, field: string, issues: FieldIssues): Html => {
  const messages = issues.get(field) ?? []
  return messages.length === 0
    ? html``
    : html`<p id="${id}-error" class="notice error">${
      messages.map((m) => `${fieldLabels[field]}: ${m}`).join("; ")
    }</p>`
}

const invalid = (id: string, field: string, issues: FieldIssues): Html =>
  (issues.get(field) ?? []).length === 0 ? html`` : html` aria-invalid="true" aria-describedby="${id}-error"`

const typesText = (types: ReadonlyArray<string>): string => types.join(", ")

/** The status of an automation: enabled, or disabled with why and since when its deliveries fail. */
const statusOf = (a: Automation): Html =>
  html`${a.enabled ? "Enabled" : "Disabled"}${
    a.disabled_reason === null ? "" : html` <span class="muted">(${a.disabled_reason})</span>`
  }${
    a.failing_since === null
      ? ""
      : html`<br><span class="muted">Failing since ${WebKit.when(Date.parse(a.failing_since))}</span>`
  }`

/** The fixed message of a `?notice=` code (and of the delivery id or count beside it, digits only). */
const noticeOf = (params: URLSearchParams): WebKit.PageOptions["notice"] => {
  const delivery = params.get("delivery") ?? ""
  const count = params.get("count") ?? ""
  const success = (text: string) => ({ kind: "success" as const, text })
  switch (params.get("notice")) {
    case "enabled":
      return success("The automation is enabled: new messages of its types are delivered to it.")
    case "disabled":
      return success("The automation is disabled: nothing is delivered to it until it is enabled again.")
    case "deleted":
      return success("The automation was deleted.")
    case "saved":
      return success("The automation was saved: deliveries from now on follow its new settings.")
    case "test":
      return digits.test(delivery)
        ? success(`Test delivery ${delivery} was queued; its result appears in the delivery log below.`)
        : success("A test delivery was queued; its result appears in the delivery log below.")
    case "retried":
      return digits.test(delivery)
        ? success(`Delivery ${delivery} will be retried now.`)
        : success("The delivery will be retried now.")
    case "redelivered":
      return digits.test(count)
        ? success(
          count === "0"
            ? "No failed delivery since that instant was left to retry."
            : `${count} failed ${count === "1" ? "delivery" : "deliveries"} will be retried now.`
        )
        : undefined
    default:
      return undefined
  }
}

/** The filters of the delivery log (`?status=&type=&tradeflow=`); unknown values are ignored. */
interface LogFilter {
  readonly status: string
  readonly type: string
  readonly tradeflow: string
}

const filterOf = (params: URLSearchParams): LogFilter => {
  const status = params.get("status") ?? ""
  const type = params.get("type") ?? ""
  return {
    status: (attemptStatuses as ReadonlyArray<string>).includes(status) ? status : "",
    type: (AutomationAdmin.integrationTypes as ReadonlyArray<string>).includes(type) ? type : "",
    tradeflow: (params.get("tradeflow") ?? "").trim().slice(0, 512)
  }
}

/** Parses the instant of "Redeliver failed since": a `datetime-local` value or a date, in UTC. */
const parseSince = (value: string): number | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::(\d{2})(?:\.\d{1,3})?)?)?$/.exec(value.trim())
  if (match === null) return undefined
  const millis = Date.parse(`${match[1]}T${match[2] ?? "00:00"}:${match[3] ?? "00"}Z`)
  if (Number.isNaN(millis) || !new Date(millis).toISOString().startsWith(match[1]!)) return undefined
  return millis
}

/** The newest attempt of each delivery of a log (newest first). */
const latestAttempts = (log: ReadonlyArray<Attempt>): ReadonlyMap<number, Attempt> => {
  const latest = new Map<number, Attempt>()
  for (const entry of log) if (!latest.has(entry.id)) latest.set(entry.id, entry)
  return latest
}

const retryable = (entry: Attempt): boolean => entry.status === "failed" || entry.status === "dead"

/** Automations: list, create, settings, enable/disable, Send test, secret rotation, delete, the delivery log and retries. */
export const webAutomations = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { automations, deliveries, destinations, users } = kit.services

  /** The automation of the route when it belongs to the organisation of the route; otherwise a 404. */
  const owned = (view: WebKit.OrgView, id: string) =>
    Effect.filterOrFail(
      automations.get(id),
      (a) => a.organisation_id === view.organisation.id,
      () => noneWithId("automation", id)
    )

  const record = (view: WebKit.OrgView, action: string, target: string) =>
    users.record(view.visitor.actor, view.organisation.id, action, target)

  /**
   * The form creating an automation (or, given one, editing it), with what was sent and its issues
   * when it was refused.
   */
  const automationForm = (view: WebKit.OrgView, draft: Draft, issues: FieldIssues, editing?: Automation) =>
    Effect.gen(function*() {
      const action = yield* WebKit.href(
        editing === undefined ? listPath(view) : `${automationPath(view, editing.id)}/edit`
      )
      const others = issues.get("") ?? []
      return html`<h2>${editing === undefined ? "Create an automation" : "Edit"}</h2>
<form class="stack" method="post" action="${action}" novalidate>
${others.length === 0 ? "" : html`<ul class="notice error">${others.map((m) => html`<li>${m}</li>`)}</ul>`}
<div><label for="automation-url">URL</label>
<input id="automation-url" name="url" type="text" inputmode="url" autocomplete="off" spellcheck="false" size="60" value="${draft.url}"${
        invalid("automation-url", "url", issues)
      }>
${fieldErrors("automation-url", "url", issues)}</div>
<div><label for="automation-format">Format</label>
<select id="automation-format" name="format"${invalid("automation-format", "format", issues)}>${
        AutomationAdmin.formats.map((f) =>
          html`<option value="${f}"${trusted(draft.format === f ? " selected" : "")}>${
            f === "message" ? "message: each APIMessage" : "tradeflow: the V3 document after each change"
          }</option>`
        )
      }</select>
${fieldErrors("automation-format", "format", issues)}</div>
<fieldset${
        (issues.get("types") ?? []).length === 0 ? "" : html` aria-describedby="automation-types-error"`
      }><legend>Types</legend>
${
        AutomationAdmin.integrationTypes.map((t) =>
          html`<label for="automation-type-${t}"><input type="checkbox" id="automation-type-${t}" name="types" value="${t}"${
            trusted(draft.types.includes(t) ? " checked" : "")
          }> ${t}</label>`
        )
      }
${fieldErrors("automation-types", "types", issues)}</fieldset>
${
        editing === undefined
          ? html`<p class="muted">The automation is created disabled: enable it once your endpoint checks the signature.</p>
<div><button type="submit">Create automation</button></div>`
          : html`<div><button type="submit">Save</button></div>`
      }
</form>`
    })

  const listPage = (
    view: WebKit.OrgView,
    options: {
      readonly draft?: Draft
      readonly issues?: FieldIssues
      readonly notice?: WebKit.PageOptions["notice"]
      readonly status?: number
    } = {}
  ) =>
    Effect.gen(function*() {
      const list = yield* automations.list(view.organisation.id)
      const rows = yield* Effect.forEach(list, (a) =>
        Effect.map(
          WebKit.href(automationPath(view, a.id)),
          (link) =>
            html`<tr><td><a href="${link}">${a.url}</a></td><td>${a.format}</td><td>${typesText(a.types)}</td><td>${
              statusOf(a)
            }</td></tr>`
        ))
      const table = list.length === 0
        ? html`<p>No automation yet: an automation pushes this organisation's messages to a URL of yours, signed.</p>`
        : html`<table>
<caption class="muted">Automations of ${view.organisation.name}, oldest first</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Format</th><th scope="col">Types</th><th scope="col">Status</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
      const form = can(view, "configure")
        ? yield* automationForm(view, options.draft ?? emptyDraft, options.issues ?? new Map())
        : ""
      return yield* kit.page({
        title: "Automations",
        view,
        section: "/automations",
        notice: options.notice,
        body: html`${table}
${form}`
      }, options.status ?? 200)
    })

  /** The log entries that pass the filters (a Send test has no type: a type filter leaves it out). */
  const applyFilter = (filter: LogFilter, log: ReadonlyArray<Attempt>) =>
    log.filter((e) =>
      (filter.status === "" || e.status === filter.status) &&
      (filter.type === "" || e.type === filter.type) &&
      (filter.tradeflow === "" || e.tradeflow_reference === filter.tradeflow)
    )

  /** The delivery log: the filter form, then the attempts (refreshed by the page's script). */
  const logSection = (view: WebKit.OrgView, automation: Automation) =>
    Effect.gen(function*() {
      const params = yield* WebKit.query
      const filter = filterOf(params)
      const log = yield* deliveries.log(automation.id, DeliveryAdmin.maxLogEntries)
      const latest = latestAttempts(log)
      const entries = applyFilter(filter, log)
      const self = yield* WebKit.href(automationPath(view, automation.id))
      const retryAction = (id: number) => WebKit.href(`${orgPath(view)}/deliveries/${id}/retry`)
      const operate = can(view, "operate")
      const rows = yield* Effect.forEach(entries, (e) =>
        Effect.gen(function*() {
          const retry = operate && latest.get(e.id) === e && retryable(e)
            ? html`<form class="inline" method="post" action="${yield* retryAction(e.id)}">
<input type="hidden" name="automation" value="${automation.id}">
<button type="submit" class="secondary" aria-describedby="delivery-${e.id}">Retry</button></form>`
            : ""
          return html`<tr>
<td${latest.get(e.id) === e ? html` id="delivery-${e.id}"` : ""}>${e.id}${
            e.test ? html` <span class="muted">(test)</span>` : ""
          }</td>
<td>${e.attempt}</td>
<td>${e.status}</td>
<td>${WebKit.when(Date.parse(e.at))}</td>
<td>${e.response_status ?? "—"}${
            e.response_body === null || e.response_body === ""
              ? ""
              : html`<details><summary>Answer</summary><pre>${e.response_body}</pre></details>`
          }</td>
<td>${e.error ?? ""}</td>
<td><code>${e.message_hash}</code></td>
${operate ? html`<td>${retry}</td>` : ""}
</tr>`
        }))
      const filtered = filter.status !== "" || filter.type !== "" || filter.tradeflow !== ""
      const table = entries.length === 0
        ? html`<p>${filtered ? "No delivery attempt matches these filters." : "No delivery attempt yet."}</p>`
        : html`<table>
<caption class="muted">The newest ${
          DeliveryAdmin.maxLogEntries.toLocaleString("en")
        } attempts at most, newest first</caption>
<thead><tr><th scope="col">Delivery</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">At</th>
<th scope="col">Response</th><th scope="col">Error</th><th scope="col">Message</th>${
          operate ? html`<th scope="col">Action</th>` : ""
        }</tr></thead>
<tbody>${rows}</tbody>
</table>`
      const option = (value: string, selected: string, label: string) =>
        html`<option value="${value}"${trusted(value === selected ? " selected" : "")}>${label}</option>`
      return html`<h2>Delivery log</h2>
<form method="get" action="${self}" class="card">
<div><label for="log-status">Status</label>
<select id="log-status" name="status">${option("", filter.status, "Any")}${
        attemptStatuses.map((s) => option(s, filter.status, s))
      }</select></div>
<div><label for="log-type">Type</label>
<select id="log-type" name="type">${option("", filter.type, "Any")}${
        AutomationAdmin.integrationTypes.map((t) => option(t, filter.type, t))
      }</select></div>
<div><label for="log-tradeflow">Tradeflow</label>
<input id="log-tradeflow" name="tradeflow" type="text" spellcheck="false" value="${filter.tradeflow}"></div>
<div><button type="submit" class="secondary">Filter</button>${
        filtered ? html` <a href="${self}">Clear filters</a>` : ""
      }</div>
</form>
<div data-live>
${table}
</div>`
    })

  const detailPage = (
    view: WebKit.OrgView,
    automation: Automation,
    options: {
      readonly notice?: WebKit.PageOptions["notice"]
      readonly since?: { readonly value: string; readonly error: string }
      readonly status?: number
      readonly revealed?: Html | ""
      readonly draft?: Draft
      readonly issues?: FieldIssues
    } = {}
  ) =>
    Effect.gen(function*() {
      const path = automationPath(view, automation.id)
      const action = (verb: string) => WebKit.href(`${path}/${verb}`)
      const configure = can(view, "configure")
      const operate = can(view, "operate")
      const controls: Array<Html> = []
      if (configure) {
        controls.push(
          automation.enabled
            ? html`<form class="inline" method="post" action="${yield* action(
              "disable"
            )}"><button type="submit" class="secondary">Disable</button></form>`
            : html`<form class="inline" method="post" action="${yield* action(
              "enable"
            )}"><button type="submit">Enable</button></form>`
        )
      }
      if (operate) {
        controls.push(
          html`<form class="inline" method="post" action="${yield* action(
            "test"
          )}"><button type="submit" class="secondary">Send test</button></form>`
        )
      }
      if (configure) {
        controls.push(
          html`<form class="inline" method="post" action="${yield* action(
            "rotate-secret"
          )}"><button type="submit" class="secondary">Rotate secret</button></form>`,
          html`<form class="inline" method="post" action="${yield* action(
            "delete"
          )}"><button type="submit" class="danger">Delete</button></form>`
        )
      }
      const since = options.since
      const redeliver = operate
        ? html`<h2>Redeliver failed since</h2>
<form class="stack" method="post" action="${yield* action("redeliver")}" novalidate>
<div><label for="redeliver-since">Failed since (UTC)</label>
<input id="redeliver-since" name="since" type="datetime-local" value="${since?.value ?? ""}"${
          since === undefined ? "" : html` aria-invalid="true" aria-describedby="redeliver-since-error"`
        }>
${
          since === undefined
            ? ""
            : html`<p id="redeliver-since-error" class="notice error">Failed since: ${since.error}</p>`
        }</div>
<p class="muted">Retries every failed or dead delivery of this automation whose last attempt was at or after this instant
(among the newest ${DeliveryAdmin.maxLogEntries.toLocaleString("en")} attempts).</p>
<div><button type="submit">Redeliver</button></div>
</form>`
        : ""
      return yield* kit.page({
        title: "Automation",
        view,
        section: "/automations",
        notice: options.notice,
        body: html`${options.revealed ?? ""}<p><a href="${yield* WebKit.href(listPath(view))}">All automations</a></p>
<h2>Settings</h2>
<dl>
<dt>URL</dt><dd><code>${automation.url}</code></dd>
<dt>Format</dt><dd>${automation.format}</dd>
<dt>Types</dt><dd>${typesText(automation.types)}</dd>
<dt>Status</dt><dd>${statusOf(automation)}</dd>
<dt>Created</dt><dd>${WebKit.when(Date.parse(automation.created_at))}</dd>
</dl>
${
          controls.length === 0
            ? ""
            : html`<h2>Actions</h2>
<div class="card">${controls}</div>`
        }
${
          configure
            ? yield* automationForm(
              view,
              options.draft ?? { url: automation.url, format: automation.format, types: automation.types },
              options.issues ?? new Map(),
              automation
            )
            : ""
        }
${yield* logSection(view, automation)}
${redeliver}`
      }, options.status ?? 200)
    })

  const list: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    return yield* listPage(view, { notice: noticeOf(yield* WebKit.query) })
  })

  /** The submitted automation form, as a new automation, with the issues of the rules and of the destination check. */
  const submitted = Effect.gen(function*() {
    const form = yield* kit.form
    const draft: Draft = { url: form.get("url").trim(), format: form.get("format"), types: form.all("types") }
    const input = {
      url: draft.url,
      format: draft.format as NonNullable<AutomationAdmin.NewAutomation["format"]>,
      types: draft.types,
      enabled: false
    }
    const rules = yield* Effect.either(AutomationAdmin.validate(input))
    const issues = Either.isLeft(rules) ? rules.left.errors : []
    const destination = issues.some((i) => i.path === "/url")
      ? Either.right(undefined)
      : yield* Effect.either(destinations.check(input.url))
    const refused = Either.isLeft(destination) ? [{ path: "/url", message: destination.left.message }] : []
    return { draft, input, issues: [...refused, ...issues] }
  })

  const edit: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const automation = yield* owned(view, yield* idParam)
    const { draft, input, issues } = yield* submitted
    if (issues.length > 0) {
      return yield* detailPage(view, automation, {
        draft,
        issues: byField(issues),
        notice: { kind: "error", text: "The automation was not saved: correct the fields below." },
        status: 422
      })
    }
    const updated = yield* automations.update(automation.id, input)
    yield* record(
      view,
      "automation.updated",
      `${automation.url} → ${updated.url} (${updated.format}: ${typesText(updated.types)})`
    )
    return yield* WebKit.seeOther(`${automationPath(view, automation.id)}?notice=saved`)
  })

  const create: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const { draft, input, issues } = yield* submitted
    if (issues.length > 0) {
      return yield* listPage(view, {
        draft,
        issues: byField(issues),
        notice: { kind: "error", text: "The automation was not created: correct the fields below." },
        status: 422
      })
    }
    const created = yield* automations.create(view.organisation.id, input)
    yield* record(view, "automation.created", created.url)
    return yield* kit.revealAt(view.visitor, automationPath(view, created.id), {
      label: "The signing secret",
      note:
        `The automation to ${created.url} was created, disabled: enable it once its receiver is ready. The receiver checks the signature of each delivery with this secret.`,
      secret: created.secret,
      copy: "Copy the secret"
    })
  })

  const show: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const automation = yield* owned(view, yield* idParam)
    return yield* detailPage(view, automation, {
      notice: noticeOf(yield* WebKit.query),
      revealed: yield* kit.revealed(view.visitor)
    })
  })

  /** A change of the automation of the route by a role that may do `action`, then back to its page. */
  const change = (
    action: Permission.Action,
    run: (view: WebKit.OrgView, automation: Automation) => Effect.Effect<string, WebKit.WebFailure>
  ): WebKit.Route =>
    Effect.gen(function*() {
      const view = yield* kit.inOrganisation(action)
      const automation = yield* owned(view, yield* idParam)
      return yield* WebKit.seeOther(yield* run(view, automation))
    })

  const enable = change("configure", (view, a) =>
    Effect.gen(function*() {
      yield* automations.enable(a.id)
      yield* record(view, "automation.enabled", a.url)
      return `${automationPath(view, a.id)}?notice=enabled`
    }))

  const disable = change("configure", (view, a) =>
    Effect.gen(function*() {
      yield* automations.disable(a.id)
      yield* record(view, "automation.disabled", a.url)
      return `${automationPath(view, a.id)}?notice=disabled`
    }))

  const remove = change("configure", (view, a) =>
    Effect.gen(function*() {
      yield* automations.remove(a.id)
      yield* record(view, "automation.deleted", a.url)
      return `${listPath(view)}?notice=deleted`
    }))

  const test = change("operate", (view, a) =>
    Effect.gen(function*() {
      const sent = yield* deliveries.sendTest(a.id)
      yield* record(view, "automation.test_sent", `${a.url} (delivery ${sent.delivery_id})`)
      return `${automationPath(view, a.id)}?notice=test&delivery=${sent.delivery_id}`
    }))

  const rotate: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("configure")
    const automation = yield* owned(view, yield* idParam)
    const { secret } = yield* automations.rotateSecret(automation.id)
    yield* record(view, "automation.secret_rotated", automation.url)
    return yield* kit.revealAt(view.visitor, automationPath(view, automation.id), {
      label: "The new signing secret",
      note:
        `The automation to ${automation.url} has a new signing secret. The previous one keeps signing deliveries for 24 hours: switch your receiver to the new one within that time.`,
      secret,
      copy: "Copy the secret"
    })
  })

  const redeliver: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("operate")
    const automation = yield* owned(view, yield* idParam)
    const value = (yield* kit.form).get("since")
    const since = parseSince(value)
    if (since === undefined) {
      return yield* detailPage(view, automation, {
        since: {
          value: value.slice(0, 64),
          error: value.trim() === ""
            ? "is required: a date and time (UTC)"
            : "must be a date and time such as 2025-01-31T08:00 (UTC)"
        },
        notice: { kind: "error", text: "Nothing was redelivered: correct the field below." },
        status: 422
      })
    }
    const log = yield* deliveries.log(automation.id, DeliveryAdmin.maxLogEntries)
    const due = [...latestAttempts(log).values()].filter((e) => retryable(e) && Date.parse(e.at) >= since)
    const retried = yield* Effect.forEach(due, (e) =>
      deliveries.retry(e.id).pipe(
        Effect.as(1),
        Effect.catchTags({ DeliveryNotRetryable: () => Effect.succeed(0), DeliveryNotFound: () => Effect.succeed(0) })
      ))
    const count = retried.reduce((a, b) => a + b, 0)
    if (count > 0) {
      yield* record(
        view,
        "automation.redelivered",
        `${automation.url}: ${count} failed since ${new Date(since).toISOString()}`
      )
    }
    return yield* WebKit.seeOther(`${automationPath(view, automation.id)}?notice=redelivered&count=${count}`)
  })

  /**
   * Retries one delivery. The form names its automation: the delivery must be in that automation's
   * log, and the automation in the organisation of the route (DeliveryAdmin has no way to read
   * one delivery's owner).
   */
  const retry: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("operate")
    const raw = yield* idParam
    if (!digits.test(raw)) return yield* noneWithId("delivery", raw)
    const id = Number(raw)
    if ((yield* deliveries.organisationOf(id)) !== view.organisation.id) return yield* noneWithId("delivery", id)
    const automation = yield* owned(view, (yield* kit.form).get("automation"))
    yield* deliveries.retry(id)
    yield* record(view, "delivery.retried", `delivery ${id} to ${automation.url}`)
    return yield* WebKit.seeOther(`${automationPath(view, automation.id)}?notice=retried&delivery=${id}`)
  })

  return [
    ["GET", "/app/o/:org/automations", list],
    ["POST", "/app/o/:org/automations", create],
    ["GET", "/app/o/:org/automations/:id", show],
    ["POST", "/app/o/:org/automations/:id/enable", enable],
    ["POST", "/app/o/:org/automations/:id/disable", disable],
    ["POST", "/app/o/:org/automations/:id/rotate-secret", rotate],
    ["POST", "/app/o/:org/automations/:id/edit", edit],
    ["POST", "/app/o/:org/automations/:id/delete", remove],
    ["POST", "/app/o/:org/automations/:id/test", test],
    ["POST", "/app/o/:org/automations/:id/redeliver", redeliver],
    ["POST", "/app/o/:org/deliveries/:id/retry", retry]
  ]
}
