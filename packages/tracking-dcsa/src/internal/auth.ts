import { type HttpClient, HttpClientRequest } from "@effect/platform"
import { TrackingSource } from "@tradeflow/core"
import { Clock, Effect, Option, Redacted, SynchronizedRef } from "effect"
import type { DcsaProfile } from "../DcsaProfile.js"
import { exchange, failure } from "./http.js"

/** How the requests of a source are given their credentials. */
export interface Authorizer {
  /** The request with its credentials, and the generation of the token used (oauth2), if any. */
  readonly apply: (
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<
    readonly [HttpClientRequest.HttpClientRequest, number | undefined],
    TrackingSource.TrackingSourceError
  >
  /**
   * The carrier refused the credentials of generation `used`: that token is dropped (unless a newer
   * one replaced it already); true when asking again with fresh credentials may succeed (a token).
   */
  readonly refused: (used: number | undefined) => Effect.Effect<boolean>
  /** Header names that hold secrets. */
  readonly redact: ReadonlyArray<string>
}

interface Token {
  readonly value: Redacted.Redacted<string>
  readonly expiresAt: number
  readonly generation: number
}

/** A token is renewed this long before it expires (at most half its lifetime). */
export const renewBeforeMillis = 60_000

/** How long a token whose answer gives no `expires_in` is used. */
export const defaultTokenLifetimeMillis = 300_000

const tokenOf = (
  body: string
): { readonly access_token: string; readonly expires_in: number | undefined } | undefined => {
  try {
    const json: unknown = JSON.parse(body)
    if (typeof json !== "object" || json === null) return undefined
    const { access_token, expires_in } = json as Record<string, unknown>
    if (typeof access_token !== "string" || access_token === "") return undefined
    const seconds = typeof expires_in === "number"
      ? expires_in
      : typeof expires_in === "string"
      ? Number(expires_in)
      : NaN
    return { access_token, expires_in: Number.isFinite(seconds) && seconds > 0 ? seconds : undefined }
  } catch {
    return undefined
  }
}

/** The credentials of a profile: none, an API key header, or an OAuth 2.0 client-credentials token (cached, one request at a time). */
export const make = (profile: DcsaProfile, client: HttpClient.HttpClient): Effect.Effect<Authorizer> =>
  Effect.gen(function*() {
    const auth = profile.auth
    const source = profile.id
    if (auth.type === "none") {
      return {
        apply: (request) => Effect.succeed([request, undefined] as const),
        refused: () => Effect.succeed(false),
        redact: []
      }
    }
    if (auth.type === "api-key") {
      const header = auth.header.toLowerCase()
      return {
        apply: (request) =>
          Effect.succeed(
            [HttpClientRequest.setHeader(request, header, Redacted.value(auth.value)), undefined] as const
          ),
        refused: () => Effect.succeed(false),
        redact: [header]
      }
    }
    const cache = yield* SynchronizedRef.make(Option.none<Token>())
    let generations = 0
    const requestToken = Effect.gen(function*() {
      const form: Record<string, string> = {
        grant_type: "client_credentials",
        ...(auth.scope === undefined ? {} : { scope: auth.scope }),
        ...(auth.client_authentication === "body"
          ? { client_id: auth.client_id, client_secret: Redacted.value(auth.client_secret) }
          : {})
      }
      const base = HttpClientRequest.post(auth.token_url).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyUrlParams(form)
      )
      const request = auth.client_authentication === "basic"
        ? HttpClientRequest.basicAuth(
          base,
          encodeURIComponent(auth.client_id),
          Redacted.make(encodeURIComponent(Redacted.value(auth.client_secret)))
        )
        : base
      const answer = yield* exchange(client, request, {
        source,
        timeoutMillis: profile.request_timeout_millis,
        redact: []
      })
      const now = yield* Clock.currentTimeMillis
      const what = "the token endpoint"
      if (answer.status !== 200) {
        const failed = failure(answer, { source, what, now })
        return yield* failed._tag === "SourceNotFound" || failed._tag === "SourceUnauthorized"
          ? new TrackingSource.SourceUnauthorized({
            source,
            message: `${what} refused our client credentials (${answer.status})`
          })
          : Effect.fail(failed)
      }
      const token = tokenOf(answer.body)
      if (token === undefined) {
        return yield* new TrackingSource.SourceMalformed({ source, message: `${what} answered no access_token` })
      }
      const lifetime = token.expires_in === undefined ? defaultTokenLifetimeMillis : token.expires_in * 1_000
      return {
        value: Redacted.make(token.access_token),
        expiresAt: now + lifetime - Math.min(renewBeforeMillis, lifetime / 2),
        generation: ++generations
      }
    })
    const current = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        SynchronizedRef.modifyEffect(cache, (cached) =>
          Option.isSome(cached) && cached.value.expiresAt > now
            ? Effect.succeed([cached.value, cached] as const)
            : Effect.map(requestToken, (token) => [token, Option.some(token)] as const))
    )
    return {
      apply: (request) =>
        Effect.map(
          current,
          (token) => [HttpClientRequest.bearerToken(request, token.value), token.generation] as const
        ),
      refused: (used) =>
        used === undefined ? Effect.succeed(false) : SynchronizedRef.modify(cache, (cached) => [
          true,
          Option.isSome(cached) && cached.value.generation === used ? Option.none() : cached
        ]),
      redact: []
    }
  })
