/**
 * A carrier's profile: how one carrier's DCSA Track & Trace API is reached and read. It is
 * configuration, not code: a JSON object decoded with {@link DcsaProfile}, one per carrier (or per
 * platform serving several carriers).
 *
 * Secrets are values here (`Redacted`): the host reads them from wherever it keeps them (the
 * standalone server from the environment variables its profile file names) before decoding.
 *
 * @module
 */
import { TrackingEvent, TrackingSource } from "@tradeflow/core"
import { type Effect, type ParseResult, Schema } from "effect"

const NonEmpty = Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "must not be empty" }))

/** An absolute http(s) URL, without a trailing slash. */
export const HttpUrl = Schema.Trim.pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === ""
    } catch {
      return false
    }
  }, { message: () => "must be an absolute http(s) URL without query or fragment" }),
  Schema.transform(Schema.String, { strict: true, decode: (s) => s.replace(/\/+$/, ""), encode: (s) => s })
)

/** A carrier's SCAC code: 2 to 4 letters, upper-cased. */
export const Scac = Schema.compose(Schema.Trim, Schema.Uppercase).pipe(
  Schema.compose(
    Schema.String.pipe(Schema.pattern(/^[A-Z]{2,4}$/, { message: () => "must be a SCAC code (2 to 4 letters)" }))
  )
)

/** A container owner code: three letters and the category U, J or Z, upper-cased. */
export const OwnerCode = Schema.compose(Schema.Trim, Schema.Uppercase).pipe(
  Schema.compose(Schema.String.pipe(Schema.pattern(/^[A-Z]{3}[UJZ]$/, {
    message: () => "must be a container owner code (three letters and U, J or Z)"
  })))
)

/** The query kinds of `@tradeflow/core`'s `TrackingSource`. */
export const QueryKind = Schema.Literal(
  "equipment",
  "booking",
  "bill_of_lading",
  "booking+equipment",
  "bill_of_lading+equipment"
)

/** No authentication. */
export const AuthNone = Schema.Struct({ type: Schema.Literal("none") })

/** An API key sent in a header of every request. */
export const AuthApiKey = Schema.Struct({
  type: Schema.Literal("api-key"),
  /** The header's name (`Consumer-Key`, `X-API-Key`, …). */
  header: Schema.Trim.pipe(
    Schema.pattern(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, { message: () => "must be a header name" })
  ),
  value: Schema.Redacted(NonEmpty)
})

/** OAuth 2.0 client credentials (RFC 6749 §4.4): a bearer token from the token endpoint, cached until shortly before it expires. */
export const AuthOAuth2 = Schema.Struct({
  type: Schema.Literal("oauth2"),
  token_url: HttpUrl,
  client_id: NonEmpty,
  client_secret: Schema.Redacted(NonEmpty),
  /** The scope asked for, if the carrier wants one. */
  scope: Schema.optional(NonEmpty),
  /** How the client authenticates at the token endpoint: HTTP Basic (default, RFC 6749 §2.3.1) or in the body. */
  client_authentication: Schema.optionalWith(Schema.Literal("basic", "body"), { default: () => "basic" as const })
})

/** How requests are authenticated. */
export const Auth = Schema.Union(AuthNone, AuthApiKey, AuthOAuth2)
export type Auth = typeof Auth.Type

/** A rate budget: at most so many requests a minute and a day (a token bucket each). */
export const Rate = Schema.Struct({
  per_minute: Schema.optional(Schema.Int.pipe(Schema.positive())),
  per_day: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
export type Rate = typeof Rate.Type

/**
 * How an answer continues: the `Next-Page` header of 2.2 (a link or a cursor), the
 * `Next-Page-Cursor` header (3.0, and some 2.2 carriers), `none` (one page), or `auto`: whichever
 * header the answers carry.
 */
export const Pagination = Schema.Literal("next-page", "next-page-cursor", "none", "auto")

/** A carrier's DCSA Track & Trace profile. */
export const DcsaProfile = Schema.Struct({
  /** The source id (unique in a process). */
  id: NonEmpty,
  version: Schema.Literal("2.2", "3.0"),
  /** The API's root: 2.2 requests go to `<base_url>/v2/events`, 3.0 requests to `<base_url>/events`. */
  base_url: HttpUrl,
  /** The carriers (SCAC codes) whose tradeflows the source tracks. */
  carriers: Schema.optionalWith(Schema.Array(Scac), { default: () => [] }),
  /** The container owner codes it tracks. */
  container_prefixes: Schema.optionalWith(Schema.Array(OwnerCode), { default: () => [] }),
  auth: Schema.optionalWith(Auth, { default: () => ({ type: "none" as const }) }),
  /** The query kinds the carrier answers (all by default). */
  references: Schema.optionalWith(Schema.NonEmptyArray(QueryKind), {
    default: () => [...TrackingSource.queryKinds] as [TrackingSource.QueryKind, ...Array<TrackingSource.QueryKind>]
  }),
  /** Classifier codes the carrier writes for DCSA's (`{ "PLAN": "PLN" }`). */
  classifier_aliases: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: TrackingEvent.Classifier }),
    { default: () => ({}) }
  ),
  pagination: Schema.optionalWith(Pagination, { default: () => "auto" as const }),
  /** Events asked for per page (`limit`). */
  page_size: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1_000)), { default: () => 100 }),
  /** The most pages one fetch reads; a longer answer is read again from the same high-water mark next time. */
  max_pages: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1_000)), { default: () => 20 }),
  rate: Schema.optional(Rate),
  /** How the carrier pushes events: 2.2 event subscriptions, 3.0 `POST /events` to our consumer endpoint, or not at all. */
  push: Schema.optionalWith(Schema.Literal("none", "subscription", "consumer"), { default: () => "none" as const }),
  /**
   * The bearer token the carrier sends with its pushes to our consumer endpoint (`push: consumer`):
   * `Authorization: Bearer <token>`, compared in constant time; required with that push.
   */
  consumer_token: Schema.optional(Schema.Redacted(NonEmpty)),
  /** How far before the high-water mark a poll asks from (default 5 minutes): events created late are not missed. */
  overlap_millis: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 300_000 }),
  /** How long a request may take, answer included (default 30 seconds). */
  request_timeout_millis: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { default: () => 30_000 })
}).pipe(Schema.filter((profile) =>
  profile.push === "subscription" && profile.version !== "2.2"
    ? "push subscription is DCSA 2.2's: use version 2.2, or push consumer for 3.0"
    : profile.push === "consumer" && profile.version !== "3.0"
    ? "push consumer is DCSA 3.0's: use version 3.0, or push subscription for 2.2"
    : profile.push === "consumer" && profile.consumer_token === undefined
    ? { path: ["consumer_token"], message: "push consumer needs the token the carrier's pushes carry" }
    : undefined
))
export type DcsaProfile = typeof DcsaProfile.Type

/** A profile as written in configuration (defaults left out, secrets as strings). */
export type DcsaProfileInput = typeof DcsaProfile.Encoded

/** Decodes a profile from configuration (JSON). */
export const decode: (input: unknown) => Effect.Effect<DcsaProfile, ParseResult.ParseError> = Schema.decodeUnknown(
  DcsaProfile,
  { errors: "all" }
)
