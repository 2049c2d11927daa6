/**
 * A fake DCSA carrier on loopback (`node:http`, 127.0.0.1) that behaves like the real thing, for
 * tests and by hand (`npm run fake-carrier`):
 *
 * - DCSA 2.2 `GET /v2/events` with its filters (`equipmentReference`, `carrierBookingReference`,
 *   `transportDocumentReference`, `eventType`, `eventCreatedDateTime` with `:gte` `:gt` `:lte`
 *   `:lt` `:eq`, `limit`, `cursor`), paged with `Next-Page` (a link or a cursor) or
 *   `Next-Page-Cursor`; a reference it does not know is a 404;
 * - DCSA 3.0 `GET /events` with its mandatory filter combinations (400 otherwise),
 *   `eventTypes`, `eventUpdatedDateTimeMin` / `Max`, paged with `Next-Page-Cursor`; each event
 *   answered in its latest version (retractions included);
 * - 2.2 event subscriptions (`POST`, `GET`, `DELETE /v2/event-subscriptions`) whose callbacks,
 *   signed with the subscriber's secret, {@link FakeCarrier.deliver} sends; 3.0 pushes to a
 *   consumer ({@link FakeCarrier.pushTo});
 * - an OAuth 2.0 token endpoint (`POST /oauth/token`, client credentials by Basic or in the body).
 *
 * Cursors keep the original query: a page asked without every original parameter is a 400. The
 * journeys are our mock journeys, released on the `Clock` the fake is made with (a `TestClock`
 * in tests). Faults: {@link FakeCarrier.failNext} answers the next requests as told (429 with
 * Retry-After, 5xx, never, a reset connection); quirks ({@link Quirks}) change how it answers
 * for as long as they are set. Without faults and quirks its answers validate against DCSA's
 * schemas.
 *
 * @module
 */
import { DcsaTnt22, DcsaTnt30 } from "@tradeflow/core"
import { Effect, type Scope } from "effect"
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as DcsaSignature from "../src/DcsaSignature.js"
import { type ReleaseOptions, type ShipmentInput, type Version, versionsOf } from "./FakeCarrierJourney.js"
import { headersOf, listen } from "./Loopback.js"

/** How the fake authenticates requests to its events and subscriptions. */
export type FakeAuth =
  | { readonly type: "none" }
  | { readonly type: "api-key"; readonly header: string; readonly value: string }
  | {
    readonly type: "oauth2"
    readonly client_id: string
    readonly client_secret: string
    /** Lifetime of a token (default 3600 s). */
    readonly expires_in_seconds?: number | undefined
  }

/** Ways the fake departs from the standard, as real carriers do. Each holds while it is set. */
export interface Quirks {
  /** Writes `PLAN` for the classifier `PLN`. */
  readonly planAlias: boolean
  /** 2.2: answers a container only together with its booking (400 for `equipmentReference` alone). */
  readonly bookingWithEquipment: boolean
  /** The second event of each page is malformed (its `eventDateTime` is not a date). */
  readonly malformed: boolean
  /** Answers in the reverse order of publication. */
  readonly outOfOrder: boolean
  /** Signs callbacks with a wrong secret. */
  readonly badSignature: boolean
}

/**
 * How the fake answers one request: a status (and headers, body), never, a dropped connection, or
 * as it normally would (`"normal"`, to script a later request).
 */
export type Reply =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  | "hang"
  | "reset"
  | "normal"

/** A request the fake received. */
export interface Received {
  readonly method: string
  /** The path, without the query. */
  readonly path: string
  /** The query parameters, decoded, in order. */
  readonly params: ReadonlyArray<readonly [string, string]>
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
  /** The status it was answered with (undefined: not answered). */
  readonly status: number | undefined
  /** The answer's headers (names in lower case) and body, when it was answered. */
  readonly answer: { readonly headers: Readonly<Record<string, string>>; readonly body: string } | undefined
}

/** A subscription the fake holds. */
export interface FakeSubscription {
  readonly subscriptionID: string
  readonly callbackUrl: string
  readonly filters: Readonly<Record<string, unknown>>
  readonly created_at: number
  /** The ids (2.2) of the events its callbacks delivered. */
  readonly delivered: ReadonlySet<string>
}

/** A callback the fake sent, and how it was answered. */
export interface Callback {
  readonly subscriptionID: string
  readonly url: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  readonly status: number | "failed"
}

/** The options of {@link make}. */
export interface FakeCarrierOptions {
  /** 127.0.0.1's port (0, the default: any free one). */
  readonly port?: number | undefined
  readonly auth?: FakeAuth | undefined
  /** The 2.2 page header: `next-page-cursor` (default) or `next-page`. */
  readonly pagination?: "next-page" | "next-page-cursor" | undefined
  /** What a 2.2 `Next-Page` holds: a link to the next page (default) or the bare cursor. */
  readonly nextPageForm?: "link" | "cursor" | undefined
  /** The most events the carrier answers per page, whatever `limit` asks (default 100). */
  readonly maxPageSize?: number | undefined
  readonly shipments?: ReadonlyArray<ShipmentInput> | undefined
  readonly release?: Partial<ReleaseOptions> | undefined
  readonly quirks?: Partial<Quirks> | undefined
  /**
   * false: `received` keeps each request without its body and answer (a benchmark's hundreds of
   * thousands of requests); default true.
   */
  readonly recordBodies?: boolean | undefined
}

/** A running fake carrier. */
export interface FakeCarrier {
  /** `http://127.0.0.1:<port>`: a profile's `base_url`. */
  readonly url: string
  /** Its OAuth 2.0 token endpoint. */
  readonly tokenUrl: string
  /** Every request, in arrival order. */
  readonly received: ReadonlyArray<Received>
  /** Adds a shipment, published from now on. */
  readonly addShipment: (input: ShipmentInput) => Effect.Effect<void>
  /** Answers the next `count` requests (the token endpoint's included) with `reply`. */
  readonly failNext: (count: number, reply: Reply) => void
  /** Sets quirks (the others stay as they are). */
  readonly setQuirks: (quirks: Partial<Quirks>) => void
  /** Tokens issued so far. */
  readonly tokensIssued: () => number
  /** Every token issued so far is refused from now on. */
  readonly revokeTokens: () => void
  readonly subscriptions: () => ReadonlyArray<FakeSubscription>
  /** Sends each subscription's callback with its events published (since it was made) and not yet delivered. */
  readonly deliver: Effect.Effect<ReadonlyArray<Callback>>
  /**
   * Posts the latest 3.0 version of every event published since `since` to a consumer's
   * `POST /events` URL, with `Authorization: Bearer <token>` when a token is given.
   */
  readonly pushTo: (url: string, since?: number, token?: string) => Effect.Effect<Callback>
  /** Waits (in real time, without the clock) until `count` requests have arrived. */
  readonly arrived: (count: number) => Effect.Effect<void>
}

const defaults: ReleaseOptions = { stepMillis: 3_600_000, reportDelayMillis: 900_000, lateMillis: 0, duplicates: false }

const noQuirks: Quirks = {
  planAlias: false,
  bookingWithEquipment: false,
  malformed: false,
  outOfOrder: false,
  badSignature: false
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i

const operators: Readonly<Record<string, (a: number, b: number) => boolean>> = {
  "": (a, b) => a === b,
  eq: (a, b) => a === b,
  gte: (a, b) => a >= b,
  gt: (a, b) => a > b,
  lte: (a, b) => a <= b,
  lt: (a, b) => a < b
}

class BadRequest {
  constructor(readonly message: string) {}
}

interface Shipment {
  readonly input: ShipmentInput
  /** Every version it publishes, worked out when asked (a benchmark's fake holds 100,000 shipments). */
  readonly versions: () => ReadonlyArray<Version>
}

interface Cursor {
  readonly path: string
  readonly params: ReadonlyArray<readonly [string, string]>
  readonly events: ReadonlyArray<Record<string, unknown>>
  readonly offset: number
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  for (const [name, value] of Object.entries({ "content-type": "application/json", ...headers })) {
    res.setHeader(name, value)
  }
  res.writeHead(status).end(JSON.stringify(body))
}

const sameText = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)]
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Starts a fake carrier on 127.0.0.1, closed with its scope; its clock is the `Clock` it is made with. */
export const make = (options: FakeCarrierOptions = {}): Effect.Effect<FakeCarrier, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const release = { ...defaults, ...options.release }
    const auth = options.auth ?? { type: "none" }
    const maxPageSize = options.maxPageSize ?? 100
    let quirks: Quirks = { ...noQuirks, ...options.quirks }
    const shipments: Array<Shipment> = []
    const byBooking = new Map<string, Array<Shipment>>()
    const byBill = new Map<string, Array<Shipment>>()
    const byContainer = new Map<string, Array<Shipment>>()
    const index = (map: Map<string, Array<Shipment>>, key: string | undefined, shipment: Shipment) => {
      if (key === undefined) return
      const list = map.get(key)
      if (list === undefined) map.set(key, [shipment])
      else list.push(shipment)
    }
    const received: Array<Received> = []
    const cursors = new Map<string, Cursor>()
    const tokens = new Map<string, number>()
    let issued = 0
    const subscriptions = new Map<string, FakeSubscription & { readonly secret: Uint8Array; delivered: Set<string> }>()
    const pending: Array<Reply> = []
    const waiters = new Set<() => void>()
    const notify = () => waiters.forEach((check) => check())

    const addShipment = (input: ShipmentInput) =>
      Effect.sync(() => {
        const createdAt = now()
        const shipment = { input, versions: () => versionsOf(input, createdAt, release) }
        shipments.push(shipment)
        index(byBooking, input.booking, shipment)
        index(byBill, input.bill_of_lading, shipment)
        for (const container of new Set(input.containers)) index(byContainer, container, shipment)
      })
    for (const input of options.shipments ?? []) yield* addShipment(input)

    const released = (shipment: Shipment) => shipment.versions().filter((v) => v.released_at <= now())

    const latest = (versions: ReadonlyArray<Version>): ReadonlyArray<Version> => {
      const byId = new Map<string, Version>()
      for (const v of versions) byId.set(v.id30, v)
      return [...byId.values()].sort((a, b) => a.released_at - b.released_at)
    }

    const encode22 = (v: Version) => DcsaTnt22.encode({ ...v.event, event_id: v.id22, updated_at: v.released_at })
    const encode30 = (v: Version) => DcsaTnt30.encode({ ...v.event, updated_at: v.released_at })

    const withQuirks = (events: ReadonlyArray<Record<string, unknown>>, version: "2.2" | "3.0") =>
      events.map((event, i) => {
        let out = event
        if (quirks.planAlias) {
          out = version === "2.2"
            ? out["eventClassifierCode"] === "PLN" ? { ...out, eventClassifierCode: "PLAN" } : out
            : (out["eventClassification"] as Record<string, unknown> | undefined)?.["eventClassifierCode"] === "PLN"
            ? {
              ...out,
              eventClassification: { ...(out["eventClassification"] as object), eventClassifierCode: "PLAN" }
            }
            : out
        }
        return quirks.malformed && i === 1 ? { ...out, eventDateTime: "not a date" } : out
      })

    const param = (params: URLSearchParams, name: string) => {
      const value = params.get(name)?.trim()
      return value === undefined || value === "" ? undefined : value
    }

    const limitOf = (params: URLSearchParams) => {
      const limit = param(params, "limit")
      if (limit !== undefined && !/^[1-9]\d*$/.test(limit)) throw new BadRequest("limit must be a positive integer")
      return Math.min(maxPageSize, limit === undefined ? maxPageSize : Number(limit))
    }

    const dateOf = (name: string, value: string) => {
      if (!rfc3339.test(value) || Number.isNaN(Date.parse(value))) {
        throw new BadRequest(`${name} must be an RFC 3339 date-time`)
      }
      return Date.parse(value)
    }

    const matching = (booking?: string, bill?: string, container?: string) =>
      (booking !== undefined
        ? byBooking.get(booking) ?? []
        : bill !== undefined
        ? byBill.get(bill) ?? []
        : container !== undefined
        ? byContainer.get(container) ?? []
        : shipments).filter((s) =>
          (booking === undefined || s.input.booking === booking) &&
          (bill === undefined || s.input.bill_of_lading === bill) &&
          (container === undefined || s.input.containers.includes(container))
        )

    const ofContainer = (container: string | undefined) => (v: Version) =>
      container === undefined || v.event.event_type !== "EQUIPMENT" || v.event.container_reference === container

    const ordered = <A>(list: ReadonlyArray<A>) => quirks.outOfOrder ? [...list].reverse() : list

    /** A page of an answer, and where the next one is. */
    const page = (
      path: string,
      params: ReadonlyArray<readonly [string, string]>,
      events: ReadonlyArray<Record<string, unknown>>,
      offset: number,
      limit: number
    ) => {
      const slice = events.slice(offset, offset + limit)
      if (offset + limit >= events.length) return { slice, next: undefined }
      const cursor = randomBytes(12).toString("base64url")
      cursors.set(cursor, { path, params, events, offset: offset + limit })
      return { slice, next: cursor }
    }

    const continued = (path: string, params: URLSearchParams) => {
      const cursor = param(params, "cursor")
      if (cursor === undefined) return undefined
      const saved = cursors.get(cursor)
      if (saved === undefined || saved.path !== path) throw new BadRequest("unknown cursor")
      const given = [...params].filter(([k]) => k !== "cursor")
      const same = given.length === saved.params.length &&
        saved.params.every(([k, v]) => given.some(([k2, v2]) => k2 === k && v2 === v))
      if (!same) throw new BadRequest("a page must be asked with every original query parameter and the cursor")
      cursors.delete(cursor)
      return saved
    }

    const events22 = (params: URLSearchParams): ReadonlyArray<Record<string, unknown>> | "unknown" => {
      const container = param(params, "equipmentReference")
      const booking = param(params, "carrierBookingReference")
      const bill = param(params, "transportDocumentReference")
      if (quirks.bookingWithEquipment && container !== undefined && booking === undefined) {
        throw new BadRequest("this carrier answers a container only with its carrierBookingReference")
      }
      const types = param(params, "eventType")?.split(",")
      if (types?.some((t) => !DcsaTnt22.eventTypes.includes(t as never))) {
        throw new BadRequest("eventType must list SHIPMENT, TRANSPORT or EQUIPMENT")
      }
      const created = [...params].filter(([k]) => k.startsWith("eventCreatedDateTime")).map(([k, v]) => {
        const op = k.slice("eventCreatedDateTime".length).replace(/^:/, "")
        const compare = operators[op]
        if (compare === undefined) throw new BadRequest(`unknown operator ${op}`)
        const at = dateOf(k, v)
        return (t: number) => compare(t, at)
      })
      const found = matching(booking, bill, container)
      if (found.length === 0 && (booking ?? bill ?? container) !== undefined) return "unknown"
      const versions = found.flatMap(released)
        .filter((v) => !v.event.retracted)
        .filter(ofContainer(container))
        .filter((v) => types === undefined || types.includes(v.event.event_type))
        .filter((v) => created.every((test) => test(v.released_at)))
        .sort((a, b) => a.released_at - b.released_at)
      return ordered(versions).map(encode22)
    }

    const events30 = (params: URLSearchParams): ReadonlyArray<Record<string, unknown>> => {
      const container = param(params, "equipmentReference")
      const booking = param(params, "carrierBookingReference")
      const bill = param(params, "transportDocumentReference")
      if ((booking !== undefined && bill !== undefined) || (booking ?? bill ?? container) === undefined) {
        throw new BadRequest(
          "the filters must be carrierBookingReference, transportDocumentReference or equipmentReference, " +
            "or one of the first two with equipmentReference"
        )
      }
      const types = param(params, "eventTypes")?.split(",")
      const min = param(params, "eventUpdatedDateTimeMin")
      const max = param(params, "eventUpdatedDateTimeMax")
      const [from, to] = [
        min === undefined ? -Infinity : dateOf("eventUpdatedDateTimeMin", min),
        max === undefined ? Infinity : dateOf("eventUpdatedDateTimeMax", max)
      ]
      const versions = latest(matching(booking, bill, container).flatMap(released))
        .filter(ofContainer(container))
        .filter((v) => types === undefined || types.includes(v.event.event_type))
        .filter((v) => v.released_at >= from && v.released_at <= to)
      return ordered(versions).map(encode30)
    }

    const authorized = (req: IncomingMessage): boolean => {
      if (auth.type === "none") return true
      if (auth.type === "api-key") {
        const given = req.headers[auth.header.toLowerCase()]
        return typeof given === "string" && sameText(given, auth.value)
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const expires = bearer === undefined ? undefined : tokens.get(bearer)
      return expires !== undefined && expires > now()
    }

    const token = (req: IncomingMessage, body: string, res: ServerResponse) => {
      if (auth.type !== "oauth2") return json(res, 404, { error: "not_found" })
      const form = new URLSearchParams(body)
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      const [id, secret] = basic === undefined
        ? [form.get("client_id") ?? "", form.get("client_secret") ?? ""]
        : Buffer.from(basic, "base64").toString("utf8").split(":").map(decodeURIComponent)
      if (form.get("grant_type") !== "client_credentials") return json(res, 400, { error: "unsupported_grant_type" })
      if (!sameText(id ?? "", auth.client_id) || !sameText(secret ?? "", auth.client_secret)) {
        return json(res, 401, { error: "invalid_client" })
      }
      const lifetime = auth.expires_in_seconds ?? 3_600
      const value = randomBytes(24).toString("base64url")
      tokens.set(value, now() + lifetime * 1_000)
      issued++
      json(res, 200, { access_token: value, token_type: "Bearer", expires_in: lifetime })
    }

    const error22 = (res: ServerResponse, req: IncomingMessage, status: number, reason: string, message: string) =>
      json(res, status, {
        httpMethod: req.method,
        requestUri: req.url,
        statusCode: status,
        statusCodeText: status === 400 ? "Bad Request" : status === 404 ? "Not Found" : "Unauthorized",
        errorDateTime: new Date(now()).toISOString(),
        errors: [{ reason, message }]
      }, { "api-version": "2.2.0" })

    const subscribe = (req: IncomingMessage, body: string, res: ServerResponse) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(body)
      } catch {
        return error22(res, req, 400, "invalidInput", "the body is not JSON")
      }
      const input = typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : {}
      const { callbackUrl, secret, ...filters } = input
      if (typeof callbackUrl !== "string" || !/^https?:\/\//.test(callbackUrl)) {
        return error22(res, req, 400, "invalidInput", "callbackUrl must be a URL")
      }
      if (typeof secret !== "string" || !/^[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
        return error22(res, req, 400, "invalidInput", "secret must be Base64")
      }
      const subscription = {
        subscriptionID: randomUUID(),
        callbackUrl,
        filters,
        created_at: now(),
        secret: new Uint8Array(Buffer.from(secret, "base64")),
        delivered: new Set<string>()
      }
      subscriptions.set(subscription.subscriptionID, subscription)
      json(res, 201, { subscriptionID: subscription.subscriptionID, callbackUrl, ...filters }, {
        "api-version": "2.2.0"
      })
    }

    const view = (s: FakeSubscription) => ({
      subscriptionID: s.subscriptionID,
      callbackUrl: s.callbackUrl,
      ...s.filters
    })

    const handle = (req: IncomingMessage, res: ServerResponse, url: URL, body: string): void => {
      const path = url.pathname
      const params = url.searchParams
      if (req.method === "POST" && path === "/oauth/token") return token(req, body, res)
      if (!authorized(req)) {
        return path.startsWith("/v2/")
          ? error22(res, req, 401, "unauthorized", "missing or invalid credentials")
          : json(res, 401, { feedbackElements: [{ severity: "ERROR", message: "missing or invalid credentials" }] })
      }
      if (req.method === "GET" && path === "/v2/events") {
        const saved = continued(path, params)
        const original = saved?.params ?? [...params]
        const events = saved?.events ?? events22(params)
        if (events === "unknown") return error22(res, req, 404, "notFound", "no shipment has these references")
        const { next, slice } = page(path, original, withQuirks(events, "2.2"), saved?.offset ?? 0, limitOf(params))
        const header = options.pagination === "next-page" ? "next-page" : "next-page-cursor"
        const value = next === undefined
          ? undefined
          : header === "next-page" && options.nextPageForm !== "cursor"
          ? `/v2/events?cursor=${encodeURIComponent(next)}`
          : next
        return json(res, 200, slice, {
          "api-version": "2.2.0",
          "current-page": `${path}${url.search}`,
          ...(value === undefined ? {} : { [header]: value })
        })
      }
      if (req.method === "GET" && path === "/events") {
        const saved = continued(path, params)
        const original = saved?.params ?? [...params]
        const events = saved?.events ?? events30(params)
        const { next, slice } = page(path, original, withQuirks(events, "3.0"), saved?.offset ?? 0, limitOf(params))
        return json(res, 200, { events: slice }, {
          "api-version": "3.0.0",
          ...(next === undefined ? {} : { "next-page-cursor": next })
        })
      }
      if (path === "/v2/event-subscriptions") {
        if (req.method === "POST") return subscribe(req, body, res)
        if (req.method === "GET") return json(res, 200, [...subscriptions.values()].map(view))
      }
      const one = /^\/v2\/event-subscriptions\/([^/]+)$/.exec(path)?.[1]
      if (one !== undefined) {
        const subscription = subscriptions.get(decodeURIComponent(one))
        if (subscription === undefined) return error22(res, req, 404, "notFound", "no such subscription")
        if (req.method === "GET") return json(res, 200, view(subscription))
        if (req.method === "DELETE") {
          subscriptions.delete(subscription.subscriptionID)
          return void res.writeHead(204).end()
        }
      }
      json(res, 404, { message: "not found" })
    }

    const port = yield* listen((req, res, raw) => {
      const body = raw.toString("utf8")
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const entry = {
        method: req.method ?? "",
        path: url.pathname,
        params: [...url.searchParams],
        headers: headersOf(req),
        body
      }
      const scripted = pending.shift()
      const reply = scripted === "normal" ? undefined : scripted
      let answered: string | undefined
      const end = res.end.bind(res) as (chunk?: string) => ServerResponse
      ;(res as unknown as { end: (chunk?: string) => ServerResponse }).end = (chunk?: string) => {
        answered = chunk ?? ""
        return end(chunk)
      }
      let status: number | undefined
      if (reply === "reset") {
        req.socket.destroy()
      } else if (reply === "hang") {
        status = undefined
      } else if (reply !== undefined) {
        res.writeHead(reply.status, reply.headers).end(reply.body ?? "")
        status = reply.status
      } else {
        try {
          handle(req, res, url, body)
        } catch (e) {
          const message = e instanceof BadRequest ? e.message : String(e)
          const code = e instanceof BadRequest ? 400 : 500
          if (url.pathname.startsWith("/v2/")) error22(res, req, code, "invalidQuery", message)
          else json(res, code, { feedbackElements: [{ severity: "ERROR", message }] })
        }
        status = res.statusCode
      }
      const answer = answered === undefined ? undefined : {
        headers: Object.fromEntries(Object.entries(res.getHeaders()).map(([k, v]) => [k, String(v)])),
        body: answered
      }
      received.push(
        options.recordBodies === false ? { ...entry, body: "", status, answer: undefined } : {
          ...entry,
          status,
          answer
        }
      )
      notify()
    }, options.port ?? 0)
    const url = `http://127.0.0.1:${port}`

    const post = (target: string, body: string, headers: Record<string, string>) =>
      Effect.promise(() =>
        fetch(target, { method: "POST", body, headers: { "content-type": "application/json", ...headers } })
          .then(async (r) => {
            await r.arrayBuffer()
            return r.status
          })
          .catch(() => "failed" as const)
      )

    const deliver = Effect.gen(function*() {
      const sent: Array<Callback> = []
      for (const subscription of subscriptions.values()) {
        const filters = subscription.filters
        const text = (k: string) => typeof filters[k] === "string" ? filters[k] as string : undefined
        const types = Array.isArray(filters["eventType"]) ? filters["eventType"] as Array<string> : undefined
        const container = text("equipmentReference")
        const versions = matching(text("carrierBookingReference"), text("transportDocumentReference"), container)
          .flatMap(released)
          .filter((v) => !v.event.retracted && v.released_at >= subscription.created_at)
          .filter(ofContainer(container))
          .filter((v) => types === undefined || types.includes(v.event.event_type))
          .filter((v) => !subscription.delivered.has(v.id22))
          .sort((a, b) => a.released_at - b.released_at)
        if (versions.length === 0) continue
        const body = JSON.stringify(withQuirks(versions.map(encode22), "2.2"))
        const secret = quirks.badSignature ? randomBytes(32) : subscription.secret
        const headers = {
          "subscription-id": subscription.subscriptionID,
          "notification-signature": DcsaSignature.sign(secret, Buffer.from(body, "utf8")),
          "api-version": "2.2.0"
        }
        const status = yield* post(subscription.callbackUrl, body, headers)
        if (typeof status === "number" && status >= 200 && status < 300) {
          for (const v of versions) subscription.delivered.add(v.id22)
        }
        sent.push({ subscriptionID: subscription.subscriptionID, url: subscription.callbackUrl, body, headers, status })
      }
      return sent
    })

    const pushTo = (target: string, since = -Infinity, token?: string) =>
      Effect.gen(function*() {
        const versions = latest(shipments.flatMap(released)).filter((v) => v.released_at >= since)
        const body = JSON.stringify({ events: withQuirks(versions.map(encode30), "3.0") })
        const headers: Record<string, string> = {
          "api-version": "3.0.0",
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
        }
        const status = yield* post(target, body, headers)
        return { subscriptionID: "", url: target, body, headers, status }
      })

    return {
      url,
      tokenUrl: `${url}/oauth/token`,
      received,
      addShipment,
      failNext: (count, reply) => {
        for (let i = 0; i < count; i++) pending.push(reply)
      },
      setQuirks: (changes) => {
        quirks = { ...quirks, ...changes }
      },
      tokensIssued: () => issued,
      revokeTokens: () => tokens.clear(),
      subscriptions: () => [...subscriptions.values()].map(({ secret: _, ...s }) => s),
      deliver,
      pushTo,
      arrived: (count) =>
        Effect.async<void>((resume) => {
          const check = () => {
            if (received.length < count) return
            waiters.delete(check)
            resume(Effect.void)
          }
          waiters.add(check)
          check()
          return Effect.sync(() => waiters.delete(check))
        })
    }
  })
