import { Effect } from "effect"
import { html } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** The overview of an organisation: the first-steps checklist and the latest deliveries. */
export const webOverview = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { accounts, automations, deliveries, upstream } = kit.services

  const overview: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const org = view.organisation
    const base = yield* WebKit.href(`/app/o/${encodeURIComponent(org.id)}`)
    const keys = (yield* accounts.listApiKeys(view.live.id)).filter((k) =>
      k.organisation.id === org.id && k.revoked_at === null
    )
    const first = yield* upstream.page({ organisation_id: org.id, per_page: 1 })
    const mine = yield* automations.list(org.id)
    const logs = yield* Effect.forEach(
      mine,
      (a) => Effect.map(deliveries.log(a.id, 20), (entries) => entries.map((entry) => ({ automation: a, entry })))
    )
    const latest = logs.flat().sort((a, b) => b.entry.at < a.entry.at ? -1 : b.entry.at > a.entry.at ? 1 : 0)
      .slice(0, 10)
    const steps = [
      { done: keys.length > 0, text: "Create an API key", link: `${base}/api-keys` },
      { done: first.data.length > 0, text: "Send a tradeflow with it", link: `${base}/tradeflows` },
      { done: mine.length > 0, text: "Create an automation (a webhook)", link: `${base}/automations` },
      { done: mine.some((a) => a.enabled), text: "Enable it", link: `${base}/automations` },
      { done: latest.some((d) => d.entry.status === "delivered"), text: "Send test", link: `${base}/automations` }
    ]
    return yield* kit.page({
      title: "Overview",
      view,
      section: "",
      body: html`<h2>First steps</h2>
<ol class="checklist">${
        steps.map((s) =>
          html`<li class="${s.done ? "done" : "todo"}"><a href="${s.link}">${s.text}</a> — ${
            s.done ? "done" : "to do"
          }</li>`
        )
      }</ol>
<h2>Latest deliveries</h2>
<div data-live>${
        latest.length === 0
          ? html`<p>No delivery yet.</p>`
          : html`<table><thead><tr><th scope="col">When</th><th scope="col">Automation</th><th scope="col">Status</th><th scope="col">Response</th></tr></thead><tbody>${
            latest.map(({ automation, entry }) =>
              html`<tr><td>${entry.at}</td><td><a href="${base}/automations/${
                encodeURIComponent(automation.id)
              }">${automation.url}</a></td><td>${entry.status}</td><td>${
                entry.response_status ?? entry.error ?? ""
              }</td></tr>`
            )
          }</tbody></table>`
      }</div>`
    })
  })

  return [["GET", "/app/o/:org", overview]]
}
