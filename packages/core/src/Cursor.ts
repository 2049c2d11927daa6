/**
 * Resumable cursors of the paginated upstream feed (DECISIONS.md §5).
 *
 * A cursor is `v1.<payload>.<mac>`: `payload` is base64url JSON `{ "s": <sequence>, "f": <filter
 * fingerprint> }` and `mac` the base64url HMAC-SHA256, under the server's cursor secret, of
 * `v1.<payload>` and the organisation id. It resumes after sequence `s` of the organisation and is
 * bound to the organisation (through the MAC) and to the filters that select messages
 * (`tradeflow`, `container`, the normalised `type` list and `latest`, through the fingerprint).
 * `excludes` and `per_page` only shape the answer and may change between pages.
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js"
import {
  type Config,
  type ConfigError,
  Context,
  Effect,
  Either,
  Encoding,
  Layer,
  Option,
  Redacted,
  Schema
} from "effect"
import { constantTimeEqual, hmacSha256Base64Url, randomToken } from "./internal/crypto.js"
import { Settings } from "./Settings.js"
import type { StorageError } from "./StorageError.js"

/** A cursor that this server did not issue for this organisation and these filters. */
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", {
  detail: Schema.String
}) {}

/** What a cursor is bound to: the organisation and the filters that select messages. */
export interface CursorScope {
  readonly organisation_id: string
  readonly tradeflow?: string | undefined
  readonly container?: string | undefined
  readonly types?: ReadonlyArray<string> | undefined
  readonly latest?: boolean | undefined
}

/** Signs and verifies the cursors of one scope (its filter fingerprint computed once). */
export interface ScopedSigner {
  /** The cursor that resumes after sequence number `afterSeq` of the scope. */
  readonly sign: (afterSeq: number) => Effect.Effect<string>
  /** The sequence number a cursor resumes after, if it was issued for exactly the scope. */
  readonly verify: (cursor: string) => Effect.Effect<number, InvalidCursor>
}

/** Signs and verifies cursors with one secret. */
export interface Signer {
  /** The cursor that resumes after sequence number `afterSeq` of this scope. */
  readonly sign: (scope: CursorScope, afterSeq: number) => Effect.Effect<string>
  /** The sequence number a cursor resumes after, if it was issued for exactly this scope. */
  readonly verify: (scope: CursorScope, cursor: string) => Effect.Effect<number, InvalidCursor>
  /** Both, bound to one scope: what one page needs (verify the request's cursor, sign the next). */
  readonly scoped: (scope: CursorScope) => Effect.Effect<ScopedSigner>
}

/**
 * A configured cursor secret. When present in the context of `Upstream.layer` it is used instead
 * of the secret stored through the {@link Settings} port.
 */
export class CursorSecret
  extends Context.Tag("@tradeflow/core/CursorSecret")<CursorSecret, Redacted.Redacted<string>>()
{}

/** The name of the setting that holds the generated cursor secret. */
export const settingName = "cursor_secret"

/** The version prefix of the cursors this module issues. */
export const version = "v1"

/** A fixed cursor secret. */
export const layerSecret = (secret: Redacted.Redacted<string> | string): Layer.Layer<CursorSecret> =>
  Layer.succeed(CursorSecret, Redacted.isRedacted(secret) ? secret : Redacted.make(secret))

/**
 * The secret stored in the database: the first process to ask stores a random one, and every
 * process sharing the database gets that one.
 */
export const storedSecret: Effect.Effect<Redacted.Redacted<string>, StorageError, Settings> = Effect.flatMap(
  Settings,
  (settings) => Effect.map(settings.getOrCreate(settingName, randomToken(32)), Redacted.make)
)

/** The secret `config` gives when it gives one (not empty), otherwise {@link storedSecret}. */
export const layerConfig = (
  config: Config.Config<Option.Option<Redacted.Redacted<string>>>
): Layer.Layer<CursorSecret, ConfigError.ConfigError | StorageError, Settings> =>
  Layer.effect(
    CursorSecret,
    Effect.gen(function*() {
      const configured = yield* config
      return Option.isSome(configured) && Redacted.value(configured.value).length > 0
        ? configured.value
        : yield* storedSecret
    })
  )

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Unique and sorted, so `type=A,B` and `type=B,A` select the same messages and cursors. */
export const normaliseTypes = (types: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(types)].sort()

const filtersOf = (scope: CursorScope): string =>
  JSON.stringify([
    scope.tradeflow ?? null,
    scope.container ?? null,
    scope.types === undefined ? null : normaliseTypes(scope.types),
    scope.latest === true
  ])

const fingerprintOf = (filters: string): string =>
  Encoding.encodeBase64Url(sha256(encoder.encode(filters)).subarray(0, 12))

/** The fingerprints of the filter sets a signer saw last (they are not secret: cursors carry them). */
const fingerprintCacheSize = 256

const signedText = (payload: string, organisationId: string): string => `${version}.${payload}\n${organisationId}`

/** Decodes base64url, refusing every text that is not the canonical encoding of its bytes. */
const decodeCanonical = (text: string): Option.Option<Uint8Array> => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return Option.none()
  const decoded = Encoding.decodeBase64Url(text)
  return Either.isRight(decoded) && Encoding.encodeBase64Url(decoded.right) === text
    ? Option.some(decoded.right)
    : Option.none()
}

/** The JSON payload `{ "s": <non-negative safe integer>, "f": <string> }` (other keys ignored), checked by hand. */
const decodePayload = (text: string): Option.Option<{ readonly s: number; readonly f: string }> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Option.none()
  }
  if (typeof value !== "object" || value === null) return Option.none()
  const { f, s } = value as { readonly s?: unknown; readonly f?: unknown }
  return typeof s === "number" && Number.isSafeInteger(s) && s >= 0 && typeof f === "string"
    ? Option.some({ s, f })
    : Option.none()
}

const malformed = new InvalidCursor({
  detail: "the cursor is malformed or truncated; pass next_cursor exactly as a previous page returned it"
})
const foreign = new InvalidCursor({
  detail: "the cursor was not issued by this server for this organisation, or it was altered"
})
const otherFilters = new InvalidCursor({
  detail:
    "the cursor was issued for other filters; tradeflow, container, type and latest must stay as on the first page"
})

/**
 * A signer over this secret (HMAC-SHA-256, computed synchronously, natively where the runtime
 * can). Verification recomputes the MAC and compares it in constant time. The filter fingerprint
 * (SHA-256) of the last 256 filter sets is kept, so a page costs one HMAC verification and one
 * HMAC signature.
 */
export const makeSigner = (secret: Redacted.Redacted<string>): Effect.Effect<Signer> =>
  Effect.sync((): Signer => {
    const key = encoder.encode(Redacted.value(secret))
    const macOf = (payload: string, organisationId: string) =>
      hmacSha256Base64Url(key, signedText(payload, organisationId))
    const fingerprints = new Map<string, string>()
    const fingerprint = (scope: CursorScope): Effect.Effect<string> =>
      Effect.sync(() => {
        const filters = filtersOf(scope)
        const known = fingerprints.get(filters)
        if (known !== undefined) return known
        const computed = fingerprintOf(filters)
        if (fingerprints.size >= fingerprintCacheSize) fingerprints.clear()
        fingerprints.set(filters, computed)
        return computed
      })
    const bind = (scope: CursorScope, filterHash: string): ScopedSigner => ({
      sign: (afterSeq) =>
        Effect.sync(() => {
          const payload = Encoding.encodeBase64Url(JSON.stringify({ s: afterSeq, f: filterHash }))
          return `${version}.${payload}.${macOf(payload, scope.organisation_id)}`
        }),
      verify: (cursor) =>
        Effect.suspend(() => {
          const parts = cursor.split(".")
          if (parts.length !== 3 || parts[0] !== version) return malformed
          const payloadText = parts[1]!
          const payloadBytes = decodeCanonical(payloadText)
          const mac = decodeCanonical(parts[2]!)
          if (Option.isNone(payloadBytes) || Option.isNone(mac) || mac.value.length !== 32) return malformed
          if (!constantTimeEqual(parts[2]!, macOf(payloadText, scope.organisation_id))) return foreign
          const payload = decodePayload(decoder.decode(payloadBytes.value))
          if (Option.isNone(payload)) return malformed
          if (payload.value.f !== filterHash) return otherFilters
          return Effect.succeed(payload.value.s)
        })
    })
    const scoped = (scope: CursorScope) => Effect.map(fingerprint(scope), (filterHash) => bind(scope, filterHash))
    return {
      sign: (scope, afterSeq) => Effect.flatMap(scoped(scope), (signer) => signer.sign(afterSeq)),
      verify: (scope, cursor) => Effect.flatMap(scoped(scope), (signer) => signer.verify(cursor)),
      scoped
    }
  })
