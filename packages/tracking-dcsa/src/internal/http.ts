import { Headers, type HttpClient, type HttpClientRequest } from "@effect/platform"
import { TrackingSource } from "@tradeflow/core"
import { Effect } from "effect"

/** An answer, read whole. */
export interface Answer {
  readonly status: number
  readonly headers: Headers.Headers
  readonly body: string
}

/** What a request is for, in messages (`"GET /v2/events"`). */
export const describeRequest = (request: HttpClientRequest.HttpClientRequest): string => {
  try {
    return `${request.method} ${new URL(request.url).pathname}`
  } catch {
    return request.method
  }
}

/**
 * Sends a request and reads its answer within `timeoutMillis`. No answer in time, a refused or
 * broken connection: `SourceTransient` (its message never holds the request's headers).
 * `redact` names headers that hold secrets besides the usual ones, so that traces leave them out.
 */
export const exchange = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  options: { readonly source: string; readonly timeoutMillis: number; readonly redact: ReadonlyArray<string> }
): Effect.Effect<Answer, TrackingSource.SourceTransient> => {
  const what = describeRequest(request)
  const transient = (message: string) => new TrackingSource.SourceTransient({ source: options.source, message })
  return client.execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text, (body): Answer => ({ status: response.status, headers: response.headers, body }))
    ),
    Effect.scoped,
    Effect.timeoutFail({
      duration: options.timeoutMillis,
      onTimeout: () => transient(`${what}: no answer within ${options.timeoutMillis} ms`)
    }),
    Effect.catchTags({
      RequestError: (e) =>
        Effect.fail(
          transient(
            `${what}: ${e.reason.toLowerCase()} error${e.description === undefined ? "" : ` (${e.description})`}`
          )
        ),
      ResponseError: (e) => Effect.fail(transient(`${what}: the answer could not be read (${e.reason})`))
    }),
    Effect.locallyWith(Headers.currentRedactedNames, (names) => [...names, ...options.redact])
  )
}

/** Milliseconds a `Retry-After` header asks for: seconds, or an HTTP date (from `now`); undefined if it is neither. */
export const retryAfterMillis = (value: string | undefined, now: number): number | undefined => {
  const text = value?.trim()
  if (text === undefined || text === "") return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1_000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** How long to wait after a 429 that says nothing. */
export const defaultRetryAfterMillis = 60_000

const carrierMessage = (body: string): string => {
  try {
    const json: unknown = JSON.parse(body)
    const pick = (list: unknown) =>
      Array.isArray(list) ? list.map((e) => e?.message).find((m): m is string => typeof m === "string") : undefined
    const message = typeof json === "object" && json !== null
      ? pick((json as Record<string, unknown>)["feedbackElements"]) ?? pick((json as Record<string, unknown>)["errors"])
      : undefined
    return message === undefined ? "" : `: ${message.slice(0, 200)}`
  } catch {
    return ""
  }
}

/**
 * The failure of an answer that is not a success: 401 and 403 `SourceUnauthorized`, 429
 * `SourceRateLimited` (its Retry-After), 404 `SourceNotFound`, 408 and 5xx `SourceTransient`,
 * any other status `SourceNotFound` (the carrier refuses what was asked).
 */
export const failure = (
  answer: Answer,
  options: { readonly source: string; readonly what: string; readonly now: number }
): TrackingSource.TrackingSourceError => {
  const { now, source, what } = options
  const status = answer.status
  const detail = carrierMessage(answer.body)
  if (status === 401 || status === 403) {
    return new TrackingSource.SourceUnauthorized({
      source,
      message: `${what}: the carrier refused our credentials (${status})${detail}`
    })
  }
  if (status === 429) {
    const wait = retryAfterMillis(answer.headers["retry-after"], now) ?? defaultRetryAfterMillis
    return new TrackingSource.SourceRateLimited({
      source,
      retry_after_millis: wait,
      message: `${what}: the carrier asks us to slow down (429), for ${wait} ms`
    })
  }
  if (status === 408 || status >= 500) {
    return new TrackingSource.SourceTransient({ source, message: `${what}: the carrier answered ${status}${detail}` })
  }
  return new TrackingSource.SourceNotFound({
    source,
    message: status === 404
      ? `${what}: the carrier does not know it (404)${detail}`
      : `${what}: the carrier refused the request (${status})${detail}`
  })
}
