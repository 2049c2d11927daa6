import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { TradeflowRecord, Upstream } from "@tradeflow/core"
import { Effect } from "effect"
import type { Api, ApiV3, UpstreamParams } from "../Api.js"
import { CurrentCaller } from "../Authentication.js"
import * as Problem from "../Problem.js"
import { mapCoreErrors } from "./errors.js"

const upstreamFilters = (organisation_id: string, urlParams: typeof UpstreamParams.Type): Upstream.UpstreamFilters => ({
  organisation_id,
  ...(urlParams.tradeflow === undefined ? {} : { tradeflow: urlParams.tradeflow }),
  ...(urlParams.container === undefined ? {} : { container: urlParams.container }),
  ...(urlParams.type === undefined ? {} : { types: urlParams.type.split(",").map((t) => t.trim()) }),
  ...(urlParams.latest === undefined ? {} : { latest: urlParams.latest === "true" }),
  ...(urlParams.excludes === undefined ? {} : { exclude_shipment: true })
})

/**
 * The UTF-8 bytes of `<prefix>[<body>,<body>,…]<suffix>`, written straight into one buffer from the
 * stored JSON bodies (no page-sized string in between).
 */
const jsonArrayBytes = (messages: ReadonlyArray<{ readonly body: string }>, prefix = "", suffix = ""): Uint8Array => {
  let length = Buffer.byteLength(prefix) + Buffer.byteLength(suffix) + 1 + Math.max(1, messages.length)
  for (let i = 0; i < messages.length; i++) length += Buffer.byteLength(messages[i]!.body)
  const out = Buffer.allocUnsafe(length)
  let at = out.write(prefix, 0)
  out[at++] = 0x5b
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) out[at++] = 0x2c
    at += out.write(messages[i]!.body, at)
  }
  out[at++] = 0x5d
  at += out.write(suffix, at)
  return at === length ? out : out.subarray(0, at)
}

const listUpstream = Effect.gen(function*() {
  const upstream = yield* Upstream.Upstream
  return ({ urlParams }: { readonly urlParams: typeof UpstreamParams.Type }) =>
    Effect.gen(function*() {
      const { caller } = yield* CurrentCaller
      const filters = upstreamFilters(caller.organisation.id, urlParams)
      const since = urlParams.since === undefined ? {} : { since: TradeflowRecord.parseIsoDateTime(urlParams.since) }
      if (urlParams.per_page === undefined) {
        if (urlParams.cursor !== undefined) {
          return yield* Problem.make(400, "cursor: a cursor is only valid together with per_page", [
            { path: "cursor", message: "requires per_page" }
          ])
        }
        const messages = yield* mapCoreErrors(upstream.list({ ...filters, ...since }))
        return HttpServerResponse.uint8Array(jsonArrayBytes(messages), { contentType: "application/json" })
      }
      const page = yield* mapCoreErrors(upstream.pageBodies({
        ...filters,
        ...since,
        per_page: Number(urlParams.per_page),
        ...(urlParams.cursor === undefined ? {} : { cursor: urlParams.cursor })
      }))
      return HttpServerResponse.uint8Array(
        jsonArrayBytes(
          page.data,
          `{"data":`,
          `,"next_cursor":${JSON.stringify(page.next_cursor)},"has_more":${page.has_more}}`
        ),
        { contentType: "application/json" }
      )
    })
})

/** The upstream feed of `api`: `GET /upstream`, whole or a page at a time. */
export const upstreamGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "upstream",
    (handlers) => Effect.map(listUpstream, (list) => handlers.handle("list", list))
  )
