import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { ApiMessage, Documents } from "@tradeflow/core"
import { Effect, Option, Schema } from "effect"
import * as Problem from "../Problem.js"
import { attachment } from "./contentDisposition.js"
import { type Html, html } from "./html.js"
import type { Kit, WebRoute } from "./webApp.js"
import * as WebKit from "./webKit.js"

/** The longest search the page takes. */
const maxQueryLength = 200

/** Upstream messages per page of a tradeflow's page. */
const messagesPerPage = 50

const placeholder = "Reference, container, bill of lading or booking"

const orgPath = (view: WebKit.OrgView): string => `/app/o/${encodeURIComponent(view.organisation.id)}`

const searchPath = (view: WebKit.OrgView): string => `${orgPath(view)}/tradeflows`

const tradeflowPath = (view: WebKit.OrgView, reference: string): string =>
  `${searchPath(view)}/${encodeURIComponent(reference)}`

const referenceParam = Effect.map(HttpRouter.params, (params) => params["reference"] ?? "")

/** An ISO 8601 instant of a document as the pages show it. */
const at = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const millis = Date.parse(iso)
  return Number.isNaN(millis) ? iso : WebKit.when(millis)
}

const locationName = (l: ApiMessage.Location | null | undefined): string =>
  l === null || l === undefined ? "—" : l.unlocode === "" ? l.name : `${l.name} (${l.unlocode})`

/** A signed duration in days, hours and minutes: `+1 d 4 h`, `−30 min`, `on time`. */
const shift = (millis: number): string => {
  if (Math.abs(millis) < 60_000) return "on time"
  const sign = millis > 0 ? "+" : "−"
  let minutes = Math.round(Math.abs(millis) / 60_000)
  const days = Math.floor(minutes / 1440)
  minutes -= days * 1440
  const hours = Math.floor(minutes / 60)
  minutes -= hours * 60
  const parts = [days > 0 ? `${days} d` : "", hours > 0 ? `${hours} h` : "", minutes > 0 ? `${minutes} min` : ""]
  return `${sign}${parts.filter((p) => p !== "").join(" ")}`
}

/** How an event's date stands against its first predicted date (`—` without an earlier prediction). */
const againstFirstPrediction = (e: ApiMessage.TradeflowEvent): string => {
  const first = e.history.find((h) => !h.actual)
  if (first === undefined) return "—"
  const firstDate = Date.parse(first.event_date)
  const date = Date.parse(e.event_date)
  if (Number.isNaN(firstDate) || Number.isNaN(date)) return "—"
  if (!e.actual && e.history.filter((h) => !h.actual).length < 2) return "—"
  return shift(date - firstDate)
}

/** One line of what an upstream message says. */
const summaryOf = (body: string): string =>
  Option.match(Schema.decodeUnknownOption(ApiMessage.ApiMessageFromJson)(body), {
    onNone: () => "",
    onSome: (m) => {
      switch (m.type) {
        case "SHIPMENT_CHANGE": {
          const c = m.payload.change
          return `${c.move_type} ${c.actual ? "actual" : "predicted"} ${at(c.reading)} at ${locationName(c.location)}`
        }
        case "CONTAINER_MILESTONE": {
          const p = m.payload
          return `${p.status_code} ${p.message} (${p.actual ? "actual" : "predicted"} ${at(p.event_date)})${
            p.location === null ? "" : ` at ${locationName(p.location)}`
          }`
        }
        case "LOCATION_UPDATE":
          return `${m.payload.vessel_name} at ${m.payload.lat}, ${m.payload.lng}`
        case "BASIC_STATUS":
          return `${m.payload.status}: ${m.payload.message}`
      }
    }
  })

/** A stored body pretty-printed for reading (as it is when it is not JSON). */
const pretty = (body: string): string => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

/** Tradeflows: search, a tradeflow's containers, timeline and messages, and its V3 download. */
export const webTradeflows = (kit: Kit): ReadonlyArray<WebRoute> => {
  const { documents, upstream } = kit.services

  /** The V3 document of a tradeflow of the organisation of the route (a 404 when it has none such). */
  const documentOf = (view: WebKit.OrgView, reference: string) => documents.download(view.organisation.id, reference)

  const searchRoute: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const q = ((yield* WebKit.query).get("q") ?? "").trim()
    const action = yield* WebKit.href(searchPath(view))
    const tooLong = q.length > maxQueryLength
    const form = html`<form method="get" action="${action}" role="search" class="stack">
<div><label for="tradeflow-search">Search</label>
<input id="tradeflow-search" name="q" type="search" spellcheck="false" placeholder="${placeholder}" value="${
      q.slice(0, maxQueryLength)
    }"${tooLong ? html` aria-invalid="true" aria-describedby="tradeflow-search-error"` : ""}>
${
      tooLong
        ? html`<p id="tradeflow-search-error" class="notice error">Search: at most ${maxQueryLength} characters.</p>`
        : ""
    }</div>
<div><button type="submit">Search</button></div>
</form>`
    let results: Html | "" = ""
    if (q === "") {
      results =
        html`<p class="muted">Search for a tradeflow of ${view.organisation.name} by its reference, a container number, a bill of lading or a booking.</p>`
    } else if (!tooLong) {
      const { found, more } = yield* documents.search(view.organisation.id, q)
      const rows = yield* Effect.forEach(found, (f) =>
        Effect.map(
          WebKit.href(tradeflowPath(view, f.reference)),
          (link) =>
            html`<tr><td><a href="${link}">${f.reference}</a>${f.active ? "" : " (deactivated)"}</td><td>${
              f.containers.join(", ")
            }</td><td>${[...f.bill_of_lading_references, ...f.booking_references].join(", ")}</td><td>${
              WebKit.when(f.updated_at)
            }</td></tr>`
        ))
      results = html`<h2>Results</h2>
${
        found.length === 0
          ? html`<p>No tradeflow of this organisation matches “${q}”.</p>`
          : html`<table>
<thead><tr><th scope="col">Reference</th><th scope="col">Containers</th><th scope="col">Bills of lading and bookings</th><th scope="col">Last change</th></tr></thead>
<tbody>${rows}</tbody>
</table>${
            more
              ? html`<p class="muted">More tradeflows match: only the newest ${Documents.maxFound} are listed.</p>`
              : ""
          }`
      }`
    }
    return yield* kit.page({
      title: "Tradeflows",
      view,
      section: "/tradeflows",
      body: html`${form}
${results}`
    }, tooLong ? 422 : 200)
  })

  /** The upstream messages of a tradeflow, a page at a time (`?after=` the cursor of the previous page). */
  const messagesSection = (view: WebKit.OrgView, reference: string) =>
    Effect.gen(function*() {
      const after = (yield* WebKit.query).get("after") ?? ""
      const page = yield* upstream.page({
        organisation_id: view.organisation.id,
        tradeflow: reference,
        per_page: messagesPerPage,
        ...(after === "" ? {} : { cursor: after })
      })
      const self = yield* WebKit.href(tradeflowPath(view, reference))
      const rows = page.data.map((m) =>
        html`<tr>
<td>${WebKit.when(m.generated_at)}</td>
<td>${m.type}</td>
<td>${m.container_reference ?? "—"}</td>
<td>${summaryOf(m.body)}</td>
<td><details><summary>JSON</summary><pre>${pretty(m.body)}</pre></details></td>
</tr>`
      )
      const links = [
        after === "" ? "" : html`<a href="${self}">First messages</a>`,
        page.has_more ? html`<a href="${self}?after=${encodeURIComponent(page.next_cursor)}">Later messages</a>` : ""
      ].filter((l) => l !== "")
      return html`<h2>Upstream messages</h2>
${
        page.data.length === 0
          ? html`<p>${after === "" ? "No upstream message of this tradeflow is kept." : "No later message."}</p>`
          : html`<table>
<caption class="muted">Oldest first, ${messagesPerPage} at a time</caption>
<thead><tr><th scope="col">Generated</th><th scope="col">Type</th><th scope="col">Container</th><th scope="col">Summary</th><th scope="col">Body</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
      }
${links.length === 0 ? "" : html`<p>${links.map((l, i) => html`${i === 0 ? "" : " · "}${l}`)}</p>`}`
    })

  const showRoute: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const reference = yield* referenceParam
    const document = yield* documentOf(view, reference)
    const download = yield* WebKit.href(`${tradeflowPath(view, reference)}/download`)
    const back = yield* WebKit.href(searchPath(view))
    const legs = document.shipment.transport_plan_legs
    const sea = legs.flatMap((l) => l.sea_shipment_legs)
    const bookings = [...new Set(legs.flatMap((l) => l.booking_number ?? []))]
    const bills = [...new Set(legs.flatMap((l) => l.bill_of_lading_number ?? []))]
    const tracking = document.metadata.tracking
    const summary = html`<h2>Summary</h2>
<dl>
<dt>Reference</dt><dd>${document.tradeflow_reference}</dd>
<dt>Status</dt><dd>${document.metadata.is_active ? "Active" : "Inactive"}</dd>
<dt>Carrier</dt><dd>${document.metadata.carrier_name ?? "—"}${
      document.metadata.carrier_scac === null ? "" : ` (${document.metadata.carrier_scac})`
    }</dd>
<dt>Booking</dt><dd>${bookings.length === 0 ? "—" : bookings.join(", ")}</dd>
<dt>Bill of lading</dt><dd>${bills.length === 0 ? "—" : bills.join(", ")}</dd>
<dt>Port of loading</dt><dd>${locationName(sea[0]?.departure.location)}</dd>
<dt>Port of discharge</dt><dd>${locationName(sea.at(-1)?.arrival.location)}</dd>
<dt>Vessel</dt><dd>${(document.vessels ?? []).map((v) => v.name).join(", ") || "—"}</dd>
<dt>Last updated</dt><dd>${at(document.metadata.last_updated)}</dd>
</dl>`
    const containers = html`<h2>Containers</h2>
${
      document.containers.length === 0
        ? html`<p>No container yet.</p>`
        : html`<table>
<thead><tr><th scope="col">Container</th><th scope="col">Type</th><th scope="col">Length</th><th scope="col">Reefer</th></tr></thead>
<tbody>${
          document.containers.map((c) =>
            html`<tr><td>${c.reference}</td><td>${c.container_type}</td><td>${c.container_length}</td><td>${
              c.container_is_reefer ? "Yes" : "No"
            }</td></tr>`
          )
        }</tbody>
</table>`
    }`
    const timeline = html`<h2>Timeline</h2>
${
      document.events.length === 0
        ? html`<p>No milestone yet.</p>`
        : html`<table>
<caption class="muted">Milestones in date order; each date is actual or predicted, with every prediction recorded</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Actual or predicted</th><th scope="col">Milestone</th><th scope="col">Location</th>
<th scope="col">Container</th><th scope="col">Against first prediction</th><th scope="col">Predicted-date history</th></tr></thead>
<tbody>${
          document.events.map((e) =>
            html`<tr>
<td>${at(e.event_date)}</td>
<td>${e.actual ? "Actual" : "Predicted"}</td>
<td>${e.status_code} ${e.message}</td>
<td>${
              e.location_name === null
                ? "—"
                : e.location === null
                ? e.location_name
                : `${e.location_name} (${e.location})`
            }</td>
<td>${e.transport_unit_reference ?? "Shipment"}</td>
<td>${againstFirstPrediction(e)}</td>
<td>${
              e.history.length === 0
                ? "—"
                : html`<ol>${
                  e.history.map((h) =>
                    html`<li>${at(h.event_date)} ${h.actual ? "actual" : "predicted"} <span class="muted">(recorded ${
                      at(h.predicted_at)
                    }, ${h.source})</span></li>`
                  )
                }</ol>`
            }</td>
</tr>`
          )
        }</tbody>
</table>`
    }`
    const trackingSection = tracking === undefined ? "" : html`<h2>Tracking</h2>
<p>Tracked by ${tracking.source}.</p>
${
      tracking.targets.length === 0 ? "" : html`<table>
<thead><tr><th scope="col">Target</th><th scope="col">State</th><th scope="col">Last check</th><th scope="col">Next check</th>
<th scope="col">Last event</th><th scope="col">Failures</th><th scope="col">Last error</th></tr></thead>
<tbody>${
        tracking.targets.map((t) =>
          html`<tr><td>${t.kind} ${
            t.container_reference ?? t.booking_reference ?? t.bill_of_lading_reference ?? ""
          }</td><td>${t.state}${t.stop_reason === null ? "" : ` (${t.stop_reason})`}</td><td>${
            at(t.last_check)
          }</td><td>${at(t.next_check)}</td><td>${at(t.last_event)}</td><td>${t.failures}</td><td>${
            t.last_error ?? ""
          }</td></tr>`
        )
      }</tbody>
</table>`
    }`
    return yield* kit.page({
      title: `Tradeflow ${reference}`,
      view,
      section: "/tradeflows",
      body: html`<p><a href="${back}">Search tradeflows</a> · <a href="${download}">Download V3</a></p>
${summary}
${containers}
${timeline}
${trackingSection}
${yield* messagesSection(view, reference)}`
    })
  })

  /** The V3 document as the console's download encodes it, as an attachment. */
  const downloadRoute: WebKit.Route = Effect.gen(function*() {
    const view = yield* kit.inOrganisation("read")
    const reference = yield* referenceParam
    if (reference === "") return yield* Problem.make(404, "no tradeflow with an empty reference")
    const document = yield* documentOf(view, reference)
    const encoded = yield* Schema.encode(ApiMessage.TradeflowDocument)(document).pipe(Effect.orDie)
    return HttpServerResponse.text(JSON.stringify(encoded), {
      contentType: "application/json",
      headers: {
        "content-disposition": attachment(reference),
        "x-content-type-options": "nosniff",
        "cache-control": "no-store"
      }
    })
  })

  return [
    ["GET", "/app/o/:org/tradeflows", searchRoute],
    ["GET", "/app/o/:org/tradeflows/:reference", showRoute],
    ["GET", "/app/o/:org/tradeflows/:reference/download", downloadRoute]
  ]
}
