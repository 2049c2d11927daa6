import { HttpServerRequest } from "@effect/platform"
import { Context, Duration, Effect, Layer, Stream } from "effect"
import { HttpConfig, type HttpSettings } from "../HttpConfig.js"
import * as Problem from "../Problem.js"

const isJsonMediaType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? ""
  return mediaType === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType)
}

/** How far past the limit a body is still read (and discarded) so that the 413 can be answered. */
const drainAllowance = 1024 * 1024

/** The bytes of request bodies an application may hold at once, across all its requests. */
export interface Budget {
  /** Takes `bytes` from the budget; false (and nothing taken) when that would exceed it. */
  readonly take: (bytes: number) => boolean
  /** Gives `bytes` back. */
  readonly give: (bytes: number) => void
}

/** A budget of `total` bytes. */
export const makeBudget = (total: number): Budget => {
  let held = 0
  return {
    take: (bytes) => {
      if (held + bytes > total) return false
      held += bytes
      return true
    },
    give: (bytes) => {
      held -= bytes
    }
  }
}

/** How a request body is read: its largest size, the time it may take, and the shared budget. */
export interface BodyOptions {
  readonly maxBytes: number
  readonly timeoutMillis: number
  readonly budget: Budget
}

/**
 * Reads the raw request body: 413 over `maxBytes` (at once when Content-Length says so;
 * otherwise while reading, never buffering more than the limit), 503 when the application already
 * holds its budget of body bytes (the rest of the body is read and dropped, holding nothing), 400
 * when it cannot be read. A body that has not wholly arrived within `timeoutMillis` ends the
 * connection without an answer (the rest is never read). The bytes held count against the budget
 * until the body is read, refused or abandoned.
 */
export const readBytes = (
  options: BodyOptions
): Effect.Effect<Uint8Array, Problem.Problem, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { budget, maxBytes } = options
    const tooLarge = Problem.make(413, `the request body is larger than ${maxBytes} bytes`)
    const declared = request.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes) {
      return yield* tooLarge
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    let held = 0
    let overBudget = false
    const read = request.stream.pipe(
      Stream.runForEachWhile((chunk) =>
        Effect.sync(() => {
          size += chunk.length
          if (size <= maxBytes && !overBudget) {
            if (budget.take(chunk.length)) {
              held += chunk.length
              chunks.push(chunk)
            } else {
              overBudget = true
              budget.give(held)
              held = 0
              chunks.length = 0
            }
          }
          return size <= maxBytes + drainAllowance
        })
      ),
      Effect.catchAll(() => Problem.make(400, "the request body could not be read")),
      Effect.timeoutFail({
        duration: Duration.millis(options.timeoutMillis),
        onTimeout: () => Problem.make(408, `the request body did not arrive within ${options.timeoutMillis / 1000} s`)
      })
    )
    return yield* Effect.ensuring(
      Effect.gen(function*() {
        yield* read
        if (overBudget) {
          return yield* Problem.make(503, "the server holds too many request bodies at once; retry shortly")
        }
        if (size > maxBytes) return yield* tooLarge
        const bytes = new Uint8Array(size)
        let offset = 0
        for (const chunk of chunks) {
          bytes.set(chunk, offset)
          offset += chunk.length
        }
        return bytes
      }),
      Effect.sync(() => budget.give(held))
    )
  })

/**
 * Reads the request body as JSON: 415 unless the media type is JSON, then {@link readBytes}, then
 * 400 when it is not UTF-8 JSON.
 */
export const readJson = (
  options: BodyOptions
): Effect.Effect<unknown, Problem.Problem, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const contentType = request.headers["content-type"]
    if (!isJsonMediaType(contentType)) {
      return yield* Problem.make(
        415,
        contentType === undefined
          ? "the request body must be application/json (no Content-Type was sent)"
          : `the request body must be application/json, not ${contentType}`
      )
    }
    const bytes = yield* readBytes(options)
    const text = yield* Effect.try({
      try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
      catch: () => Problem.make(400, "the request body is not valid UTF-8")
    })
    if (text.trim() === "") return yield* Problem.make(400, "the request body is empty; JSON was expected")
    const value = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) =>
        Problem.make(400, `the request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`)
    })
    if (!text.includes("\\u0000")) return value
    const paths = nulPaths(value)
    if (paths.length === 0) return value
    return yield* Problem.make(
      422,
      "the request body holds the NUL character (U+0000); nothing was done",
      paths.map((path) => ({
        path,
        message: "must not contain the NUL character (U+0000)"
      }))
    )
  })

/** The request body readers of one application, sharing its body budget. */
export class RequestBodies extends Context.Tag("@tradeflow/http-node/RequestBodies")<RequestBodies, {
  readonly readBytes: Effect.Effect<Uint8Array, Problem.Problem, HttpServerRequest.HttpServerRequest>
  readonly readJson: Effect.Effect<unknown, Problem.Problem, HttpServerRequest.HttpServerRequest>
}>() {
  /** Readers with the body limits of {@link HttpSettings} and a new budget. */
  static readonly layer = Layer.effect(
    RequestBodies,
    Effect.map(HttpConfig, (settings: HttpSettings) => {
      const options: BodyOptions = {
        maxBytes: settings.maxBodyBytes,
        timeoutMillis: settings.bodyTimeoutMillis,
        budget: makeBudget(settings.maxBufferedBodyBytes)
      }
      return RequestBodies.of({ readBytes: readBytes(options), readJson: readJson(options) })
    })
  )
}

const pointer = (path: ReadonlyArray<string | number>): string =>
  path.map((p) => "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("")

/** JSON Pointers of the strings and keys holding U+0000 (at most 100), without recursion. */
const nulPaths = (root: unknown): Array<string> => {
  const found: Array<string> = []
  const parents: Array<number> = []
  const keys: Array<string | number> = []
  const pathOf = (node: number, last?: string): string => {
    const path: Array<string | number> = last === undefined ? [] : [last]
    for (let n = node; n > 0; n = parents[n]!) path.push(keys[n]!)
    return pointer(path.reverse())
  }
  const stack: Array<readonly [unknown, number]> = [[root, 0]]
  parents.push(-1)
  keys.push("")
  while (stack.length > 0 && found.length < 100) {
    const [value, node] = stack.pop()!
    if (typeof value === "string") {
      if (value.includes("\u0000")) found.push(pathOf(node))
      continue
    }
    if (value === null || typeof value !== "object") continue
    const entries: Array<readonly [string | number, unknown]> = Array.isArray(value)
      ? value.map((v, i) => [i, v] as const)
      : Object.keys(value).map((k) => [k, (value as Record<string, unknown>)[k]] as const)
    for (const [key, child] of entries.reverse()) {
      if (typeof key === "string" && key.includes("\u0000")) found.push(pathOf(node, key))
      parents.push(node)
      keys.push(key)
      stack.push([child, parents.length - 1])
    }
  }
  return found
}
