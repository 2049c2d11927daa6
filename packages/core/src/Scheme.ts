/**
 * One integration scheme: the decoder interface every scheme implements, the payload it gets and
 * the error it refuses a payload with. The registry of schemes is `Schemes`.
 *
 * @module
 */
import { type Effect, Schema } from "effect"
import { Issue, listIssues, maxIssues } from "./DownstreamError.js"

/** What a scheme receives: the request's media type, its raw body and its query parameters. */
export interface Payload {
  /** The `Content-Type` header as sent (parameters included), `""` when absent. */
  readonly contentType: string
  readonly body: string | Uint8Array
  readonly query: Readonly<Record<string, string>>
}

/**
 * Why a payload was refused; http-node maps it to a status: `malformed` → 400 (not parseable
 * at all, for example not JSON or not UTF-8), `unsupported_media_type` → 415, `too_large` → 413,
 * `invalid` → 422 (parsed, but breaks the scheme's or the record rules).
 */
export const SchemeErrorReason = Schema.Literal("malformed", "unsupported_media_type", "too_large", "invalid")
export type SchemeErrorReason = typeof SchemeErrorReason.Type

/**
 * A payload the scheme refuses. `errors[].path` is a JSON Pointer into the payload as the scheme
 * sees it: into the JSON body for JSON schemes (`/3/eventDateTime`), `/rows/{row}/{column}` for
 * `csv`, `""` for the payload as a whole; a query parameter by its name. Every message names the
 * place too (`row 4: …`, `event 3: …`).
 */
export class SchemeError extends Schema.TaggedError<SchemeError>()("SchemeError", {
  reason: SchemeErrorReason,
  errors: Schema.Array(Issue)
}) {}

/** No scheme of this name is registered (HTTP 404). */
export class UnknownScheme extends Schema.TaggedError<UnknownScheme>()("UnknownScheme", {
  scheme: Schema.String,
  known: Schema.Array(Schema.String)
}) {}

/**
 * A decoder from a scheme's payload to raw tradeflow records: plain JSON-like objects in the
 * input form of SERVICE.md (DECISIONS.md §3), validated afterwards exactly like the body of
 * `POST /downstream/tradeflows`.
 */
export interface Scheme {
  readonly decode: (payload: Payload) => Effect.Effect<ReadonlyArray<unknown>, SchemeError>
}

/**
 * How a built-in scheme shares the thread while it decodes: it works in slices and lets the event
 * loop turn between them, so that other requests are answered while a large payload is decoded.
 */
export interface DecodeOptions {
  /** The event loop turns once this many milliseconds of work have passed since the last turn (default 2). */
  readonly sliceMillis?: number
  /** How the event loop turns (default: one `setImmediate`); tests count turns with it. */
  readonly turn?: Effect.Effect<void>
}

/** At most this many problems are listed in one {@link SchemeError}; the rest are counted in a last entry. */
export const maxErrors = maxIssues

/**
 * A {@link SchemeError} listing at most {@link maxErrors} of `errors`, then the count of the rest
 * of `total` (by default `errors.length`).
 */
export const schemeError = (
  reason: SchemeErrorReason,
  errors: ReadonlyArray<Issue>,
  total = errors.length
): SchemeError => new SchemeError({ reason, errors: listIssues(errors, total) })
