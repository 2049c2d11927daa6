/**
 * A carrier's DCSA Track & Trace API (2.2 or 3.0) as a `TrackingSource` of `@tradeflow/core`,
 * made from its {@link DcsaProfile}.
 *
 * Polling: 2.2 `GET /v2/events?<reference>&eventCreatedDateTime:gte=<since − overlap>`, 3.0
 * `GET /events?<reference>&eventUpdatedDateTimeMin=<since − overlap>`, with `limit` (the page
 * size) unless the profile has no pagination. The reference is the target's: `equipmentReference`,
 * `carrierBookingReference`, `transportDocumentReference`, or a booking or bill of lading with the
 * container, as the profile's `references` allow. Pages follow `Next-Page-Cursor` or `Next-Page`
 * (a link or a cursor), every original parameter sent again with the `cursor`, up to `max_pages`.
 *
 * Answers: events → `found`, none → `awaiting`, 404 → `not-found`; 401 and 403
 * `SourceUnauthorized` (with OAuth2, a refused cached token is renewed once first), 429
 * `SourceRateLimited` with its Retry-After (seconds or an HTTP date), 408, 5xx, timeouts and
 * connection errors `SourceTransient`, another 4xx `SourceNotFound`, a body that cannot be read
 * `SourceMalformed`; one event that cannot be read is reported alone (`malformed`).
 *
 * A rate budget (`rate`: per minute, per day) is a token bucket each; a request beyond it waits
 * its turn when that comes within 10 seconds, and otherwise fails at once with `SourceRateLimited`
 * and the wait, as does one before a carrier's Retry-After has passed. Pushes: 2.2 event subscriptions (signed callbacks, {@link DcsaSignature}) or 3.0
 * `POST /events` to the host's consumer endpoint.
 *
 * @module
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { DcsaTnt22, DcsaTnt30, TrackingSource } from "@tradeflow/core"
import { Clock, Effect, Either, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { DcsaProfile } from "./DcsaProfile.js"
import * as DcsaSignature from "./DcsaSignature.js"
import * as Auth from "./internal/auth.js"
import {
  type Answer,
  defaultRetryAfterMillis,
  describeRequest,
  exchange,
  failure,
  retryAfterMillis
} from "./internal/http.js"
import * as RateBudget from "./internal/rateBudget.js"

type QueryKind = TrackingSource.QueryKind
type TargetQuery = TrackingSource.TargetQuery

const fieldsOf: Readonly<Record<QueryKind, ReadonlyArray<keyof TargetQuery>>> = {
  equipment: ["equipment"],
  booking: ["booking"],
  bill_of_lading: ["bill_of_lading"],
  "booking+equipment": ["booking", "equipment"],
  "bill_of_lading+equipment": ["bill_of_lading", "equipment"]
}

const parameterOf: Readonly<Record<keyof TargetQuery, string>> = {
  equipment: "equipmentReference",
  booking: "carrierBookingReference",
  bill_of_lading: "transportDocumentReference"
}

const present = (query: TargetQuery): ReadonlyArray<keyof TargetQuery> =>
  (["equipment", "booking", "bill_of_lading"] as const).filter((k) => (query[k]?.trim() ?? "") !== "")

/**
 * The kind a query is asked as: the accepted kind of exactly its references, else the first
 * accepted kind (in `queryKinds` order) whose references it has.
 */
export const kindOf = (query: TargetQuery, accepted: ReadonlyArray<QueryKind>): Option.Option<QueryKind> => {
  const has = present(query)
  const usable = TrackingSource.queryKinds.filter((k) =>
    accepted.includes(k) && fieldsOf[k].every((f) => has.includes(f))
  )
  return Option.fromNullable(usable.find((k) => fieldsOf[k].length === has.length) ?? usable[0])
}

/** The DCSA query parameters of a query asked as `kind`. */
export const parametersOf = (kind: QueryKind, query: TargetQuery): ReadonlyArray<readonly [string, string]> =>
  fieldsOf[kind].map((field) => [parameterOf[field], query[field]!.trim()] as const)

const narrowed = (kind: QueryKind, query: TargetQuery): TargetQuery =>
  Object.fromEntries(fieldsOf[kind].map((field) => [field, query[field]!.trim()]))

/** Where the next page is: a cursor to send with the original parameters, or a link to follow as it is. */
type NextPage = { readonly cursor: string } | { readonly link: string }

const nextPageOf = (answer: Answer, pagination: DcsaProfile["pagination"], url: string): NextPage | undefined => {
  const cursor = answer.headers["next-page-cursor"]?.trim()
  const page = answer.headers["next-page"]?.trim()
  if (pagination === "none") return undefined
  if ((pagination === "next-page-cursor" || pagination === "auto") && cursor !== undefined && cursor !== "") {
    return { cursor }
  }
  if ((pagination === "next-page" || pagination === "auto") && page !== undefined && page !== "") {
    if (!/^(?:https?:\/\/|\/|\?)/.test(page)) return { cursor: page }
    const link = new URL(page, url)
    const inLink = link.searchParams.get("cursor")
    return inLink === null ? { link: link.toString() } : { cursor: inLink }
  }
  return undefined
}

const parseJson = (body: string): Either.Either<unknown, string> => {
  try {
    return Either.right(JSON.parse(body))
  } catch {
    return Either.left("the answer is not JSON")
  }
}

const bodyText = (body: Uint8Array): Either.Either<unknown, string> => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body)
  } catch {
    return Either.left("the body is not UTF-8 text")
  }
  return Either.mapLeft(parseJson(text), () => "the body is not JSON")
}

/**
 * The source of a profile. It reads the `HttpClient` it is made with; its clock is the `Clock`
 * (the rate budget, token expiry, events created in the future).
 */
export const make = (
  profile: DcsaProfile
): Effect.Effect<TrackingSource.TrackingSource, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const budget = yield* RateBudget.make(profile.rate)
    const auth = yield* Auth.make(profile, client)
    const source = profile.id
    const apiVersion = profile.version === "2.2" ? "2" : "3.0.0"
    const eventsUrl = profile.version === "2.2" ? `${profile.base_url}/v2/events` : `${profile.base_url}/events`
    const subscriptionsUrl = `${profile.base_url}/v2/event-subscriptions`

    const spent = (wait: number) =>
      new TrackingSource.SourceRateLimited({
        source,
        retry_after_millis: wait,
        message: `the rate budget of ${source} is spent (or the carrier asked us to wait): ${wait} ms to wait`
      })

    /** One request: from the budget, with credentials (a refused token renewed once), its answer read. */
    const send = (build: () => HttpClientRequest.HttpClientRequest) =>
      Effect.gen(function*() {
        const attempt = Effect.gen(function*() {
          yield* Effect.mapError(budget.take, spent)
          const [request, used] = yield* auth.apply(
            build().pipe(HttpClientRequest.setHeader("api-version", apiVersion), HttpClientRequest.acceptJson)
          )
          const answer = yield* exchange(client, request, {
            source,
            timeoutMillis: profile.request_timeout_millis,
            redact: auth.redact
          })
          return [answer, used] as const
        })
        const [first, used] = yield* attempt
        const answer = first.status === 401 && (yield* auth.refused(used)) ? (yield* attempt)[0] : first
        if (answer.status === 429) {
          const now = yield* Clock.currentTimeMillis
          yield* budget.blockUntil(
            now + (retryAfterMillis(answer.headers["retry-after"], now) ?? defaultRetryAfterMillis)
          )
        }
        return answer
      })

    const fail = (answer: Answer, what: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(failure(answer, { source, what, now })))

    const malformed = (message: string) => new TrackingSource.SourceMalformed({ source, message })

    const kind = (query: TargetQuery) =>
      Option.match(kindOf(query, profile.references), {
        onNone: () =>
          Effect.fail(
            new TrackingSource.SourceNotFound({
              source,
              message: `${source} answers queries by ${profile.references.join(", ")}; the target names ${
                present(query).join(" and ") || "nothing"
              }`
            })
          ),
        onSome: Effect.succeed
      })

    const decodeEvents = profile.version === "2.2" ? DcsaTnt22.decodeEvents : DcsaTnt30.decodeEvents

    const eventsOf = (body: unknown): Either.Either<ReadonlyArray<unknown>, string> =>
      profile.version === "3.0"
        ? DcsaTnt30.eventsOf(body)
        : Array.isArray(body)
        ? Either.right(body)
        : Either.left("the answer must be a JSON array of DCSA Track & Trace 2.2 events")

    const fetch = Effect.fn("DcsaSource.fetch")(function*(request: TrackingSource.FetchRequest) {
      const asked = yield* kind(request.query)
      const since = request.since
      const parameters: ReadonlyArray<readonly [string, string]> = [
        ...parametersOf(asked, request.query),
        ...(since === null ? [] : [
          [
            profile.version === "2.2" ? "eventCreatedDateTime:gte" : "eventUpdatedDateTimeMin",
            new Date(Math.max(0, since - profile.overlap_millis)).toISOString()
          ] as const
        ]),
        ...(profile.pagination === "none" ? [] : [["limit", String(profile.page_size)] as const])
      ]
      const elements: Array<unknown> = []
      let next: NextPage | undefined
      let capped = false
      for (let page = 0; page < profile.max_pages; page++) {
        const at: NextPage | undefined = next
        const build = () =>
          at !== undefined && "link" in at
            ? HttpClientRequest.get(at.link)
            : HttpClientRequest.get(eventsUrl, {
              urlParams: [...parameters, ...(at === undefined ? [] : [["cursor", at.cursor] as const])]
            })
        const answer = yield* send(build)
        const what = `${describeRequest(build())} (page ${page + 1})`
        if (answer.status === 404 && page === 0) {
          return {
            status: "not-found",
            events: [],
            malformed: [],
            high_water: since
          } satisfies TrackingSource.FetchResult
        }
        if (answer.status === 404) {
          return yield* new TrackingSource.SourceTransient({ source, message: `${what}: the next page is gone (404)` })
        }
        if (answer.status < 200 || answer.status > 299) return yield* fail(answer, what)
        const list = Either.flatMap(parseJson(answer.body), eventsOf)
        if (Either.isLeft(list)) return yield* malformed(`${what}: ${list.left}`)
        elements.push(...list.right)
        next = nextPageOf(answer, profile.pagination, eventsUrl)
        if (next === undefined) break
        if (page === profile.max_pages - 1) capped = true
      }
      const now = yield* Clock.currentTimeMillis
      const decoded = decodeEvents(elements, {
        source,
        classifierAliases: profile.classifier_aliases,
        now,
        query: narrowed(asked, request.query)
      })
      const latest = decoded.events.reduce<number | null>(
        (high, e) => high === null || e.updated_at > high ? e.updated_at : high,
        since
      )
      return {
        status: decoded.events.length + decoded.malformed.length > 0 ? "found" : "awaiting",
        events: decoded.events,
        malformed: decoded.malformed,
        high_water: capped ? since : latest
      } satisfies TrackingSource.FetchResult
    })

    const subscribe = Effect.fn("DcsaSource.subscribe")(function*(query: TargetQuery, callbackUrl: string) {
      const asked = yield* kind(query)
      const secret = DcsaSignature.secret()
      const body = {
        callbackUrl,
        secret: Buffer.from(secret).toString("base64"),
        ...Object.fromEntries(parametersOf(asked, query))
      }
      const answer = yield* send(() =>
        HttpClientRequest.post(subscriptionsUrl).pipe(HttpClientRequest.bodyUnsafeJson(body))
      )
      const what = "POST /v2/event-subscriptions"
      if (answer.status < 200 || answer.status > 299) return yield* fail(answer, what)
      const id = Either.flatMap(parseJson(answer.body), (json) => {
        const value = typeof json === "object" && json !== null
          ? (json as Record<string, unknown>)["subscriptionID"]
          : undefined
        return typeof value === "string" && value.trim() !== ""
          ? Either.right(value.trim())
          : Either.left("the answer names no subscriptionID")
      })
      if (Either.isLeft(id)) return yield* malformed(`${what}: ${id.left}`)
      return { id: id.right, secret: Redacted.make(secret) } satisfies TrackingSource.Subscription
    })

    const unsubscribe = Effect.fn("DcsaSource.unsubscribe")(function*(subscriptionId: string) {
      const answer = yield* send(() =>
        HttpClientRequest.del(`${subscriptionsUrl}/${encodeURIComponent(subscriptionId)}`)
      )
      if (answer.status === 404 || (answer.status >= 200 && answer.status < 300)) return
      return yield* fail(answer, "DELETE /v2/event-subscriptions")
    })

    const refused = (message: string) => new TrackingSource.PushRefused({ source, message })

    /** Whether two texts are equal, compared in constant time (their SHA-256 digests). */
    const sameSecret = (a: string, b: string): boolean =>
      timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())

    /** A pushed body's events, read by `decode` (as the profile's version reads them). */
    const pushed = (
      request: TrackingSource.PushedRequest,
      decode: (body: unknown, options: DcsaTnt30.DecodeOptions) => Either.Either<TrackingSource.PushedEvents, string>
    ) =>
      Effect.gen(function*() {
        const body = bodyText(request.body)
        if (Either.isLeft(body)) return yield* new TrackingSource.PushUnreadable({ source, message: body.left })
        const now = yield* Clock.currentTimeMillis
        const decoded = decode(body.right, { source, classifierAliases: profile.classifier_aliases, now })
        if (Either.isLeft(decoded)) return yield* new TrackingSource.PushUnreadable({ source, message: decoded.left })
        return decoded.right
      })

    const verify = Effect.fn("DcsaSource.verify")(
      function*(request: TrackingSource.PushedRequest, subscription: TrackingSource.Subscription) {
        const named = request.headers["subscription-id"]?.trim()
        if (named === undefined || named === "") {
          return yield* refused("the push names no subscription (Subscription-ID)")
        }
        if (named !== subscription.id) {
          return yield* refused(`the push names subscription ${named}, not ${subscription.id}`)
        }
        const signature = request.headers["notification-signature"]
        if (signature === undefined) return yield* refused("the push is not signed (no Notification-Signature)")
        if (!DcsaSignature.verify(Redacted.value(subscription.secret), request.body, signature)) {
          return yield* refused("the Notification-Signature is not the body's under the subscription's secret")
        }
        return yield* pushed(request, DcsaTnt22.decode)
      }
    )

    const read = Effect.fn("DcsaSource.read")(function*(request: TrackingSource.PushedRequest) {
      const token = profile.consumer_token
      const given = /^\s*Bearer\s+(\S+)\s*$/i.exec(request.headers["authorization"] ?? "")?.[1]
      if (token === undefined || given === undefined || !sameSecret(Redacted.value(token), given)) {
        return yield* refused("the push does not carry the consumer token (Authorization: Bearer …)")
      }
      return yield* pushed(request, DcsaTnt30.decode)
    })

    const push: TrackingSource.TrackingSource["push"] = profile.push === "subscription"
      ? {
        _tag: "Subscription",
        subscribe,
        unsubscribe,
        subscriptionOf: (request) => Option.fromNullable(request.headers["subscription-id"]?.trim() || undefined),
        verify
      }
      : profile.push === "consumer"
      ? { _tag: "Consumer", read }
      : undefined

    return {
      id: source,
      carriers: profile.carriers,
      container_prefixes: profile.container_prefixes,
      queries: profile.references,
      fetch,
      push
    }
  })

/** The `TrackingSources` registry of these profiles (a duplicate id fails). */
export const layer = (
  profiles: ReadonlyArray<DcsaProfile>
): Layer.Layer<TrackingSource.TrackingSources, TrackingSource.DuplicateSource, HttpClient.HttpClient> =>
  Layer.effect(
    TrackingSource.TrackingSources,
    Effect.flatMap(Effect.forEach(profiles, make), TrackingSource.make)
  )
