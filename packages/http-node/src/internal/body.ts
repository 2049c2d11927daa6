import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Context, Duration, Effect, Fiber, Layer, Stream } from "effect"
import { isUtf8 } from "node:buffer"
import { IncomingMessage } from "node:http"
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

/** What a body read took from its chunks: the bytes kept (within the limit and the budget) and the size. */
interface Reading {
  readonly chunks: Array<Uint8Array>
  size: number
  held: number
  overBudget: boolean
}

/** Counts a chunk against the limit and the budget; false once the body is past what is read at all. */
const take = (reading: Reading, chunk: Uint8Array, { budget, maxBytes }: BodyOptions): boolean => {
  reading.size += chunk.length
  if (reading.size <= maxBytes && !reading.overBudget) {
    if (budget.take(chunk.length)) {
      reading.held += chunk.length
      reading.chunks.push(chunk)
    } else {
      reading.overBudget = true
      budget.give(reading.held)
      reading.held = 0
      reading.chunks.length = 0
    }
  }
  return reading.size <= maxBytes + drainAllowance
}

/** The body a finished reading answers: 503 over the budget, 413 over the limit, else its bytes. */
const outcome = (reading: Reading, maxBytes: number): Effect.Effect<Uint8Array, Problem.Problem> => {
  if (reading.overBudget) {
    return Problem.make(503, "the server holds too many request bodies at once; retry shortly")
  }
  if (reading.size > maxBytes) return Problem.make(413, `the request body is larger than ${maxBytes} bytes`)
  if (reading.chunks.length === 1) return Effect.succeed(reading.chunks[0]!)
  const bytes = new Uint8Array(reading.size)
  let offset = 0
  for (const chunk of reading.chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return Effect.succeed(bytes)
}

const timedOut = (timeoutMillis: number) =>
  Problem.make(408, `the request body did not arrive within ${timeoutMillis / 1000} s`)

const liveClock = Clock.make()

/**
 * Runs `task` after `millis` on `clock` (a timer on the live clock; a fiber sleeping on any other,
 * such as a test's); answers its cancellation.
 */
const schedule = (clock: Clock.Clock, millis: number, task: () => void): () => void => {
  if (clock.constructor === liveClock.constructor) {
    const timer = setTimeout(task, millis)
    return () => clearTimeout(timer)
  }
  const fiber = Effect.runFork(Effect.zipRight(clock.sleep(Duration.millis(millis)), Effect.sync(task)))
  return () => void Effect.runFork(Fiber.interrupt(fiber))
}

/**
 * {@link readBytes} straight from Node's `IncomingMessage`: one listener per event and one timer,
 * instead of a stream, a channel and a racing fiber per request. A body left unread (past the
 * allowance, timed out, interrupted) is destroyed, which ends its connection, as the stream does; a
 * body no longer readable (already read or ended) is empty, as the stream answers it.
 */
const readIncoming = (
  source: IncomingMessage,
  options: BodyOptions,
  clock: Clock.Clock
): Effect.Effect<Uint8Array, Problem.Problem> =>
  Effect.async<Uint8Array, Problem.Problem>((resume) => {
    const reading: Reading = { chunks: [], size: 0, held: 0, overBudget: false }
    let settled = false
    const settle = (answer: Effect.Effect<Uint8Array, Problem.Problem>, complete: boolean) => {
      if (settled) return
      settled = true
      cancel()
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("close", onClose)
      options.budget.give(reading.held)
      reading.held = 0
      if (!complete && !source.destroyed) source.destroy()
      resume(answer)
    }
    const onData = (chunk: Uint8Array) => {
      if (!take(reading, chunk, options)) settle(outcome(reading, options.maxBytes), false)
    }
    const onEnd = () => settle(outcome(reading, options.maxBytes), true)
    const onError = () => settle(Problem.make(400, "the request body could not be read"), false)
    const onClose = () => {
      if (!source.complete) onError()
    }
    if (!source.readable) {
      resume(outcome(reading, options.maxBytes))
      return
    }
    const cancel = schedule(clock, options.timeoutMillis, () => settle(timedOut(options.timeoutMillis), false))
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    source.on("close", onClose)
    return Effect.sync(() => settle(Effect.interrupt, false))
  })

/** The Node request behind `request`, when it is one. */
const incomingOf = (request: HttpServerRequest.HttpServerRequest): IncomingMessage | undefined => {
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  return source instanceof IncomingMessage ? source : undefined
}

/** {@link readBytes} over the platform's body stream, for a request that is not Node's. */
const readStream = (
  request: HttpServerRequest.HttpServerRequest,
  options: BodyOptions
): Effect.Effect<Uint8Array, Problem.Problem> => {
  const reading: Reading = { chunks: [], size: 0, held: 0, overBudget: false }
  const read = request.stream.pipe(
    Stream.runForEachWhile((chunk) => Effect.sync(() => take(reading, chunk, options))),
    Effect.catchAll(() => Problem.make(400, "the request body could not be read")),
    Effect.timeoutFail({
      duration: Duration.millis(options.timeoutMillis),
      onTimeout: () => timedOut(options.timeoutMillis)
    })
  )
  return Effect.ensuring(
    Effect.zipRight(read, Effect.suspend(() => outcome(reading, options.maxBytes))),
    Effect.sync(() => options.budget.give(reading.held))
  )
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
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const declared = request.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared.trim()) && Number(declared) > options.maxBytes) {
      return Problem.make(413, `the request body is larger than ${options.maxBytes} bytes`)
    }
    const source = incomingOf(request)
    return source === undefined
      ? readStream(request, options)
      : Effect.clockWith((clock) => readIncoming(source, options, clock))
  })

/**
 * The text of UTF-8 `bytes` as a fatal `TextDecoder` answers it (a leading byte order mark
 * dropped), or undefined when they are not UTF-8; Node's native check and decoder, several times
 * faster on a large body.
 */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (!isUtf8(buffer)) return undefined
  const bom = buffer.length >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf
  return buffer.toString("utf8", bom ? 3 : 0)
}

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
    const text = decodeUtf8(bytes)
    if (text === undefined) return yield* Problem.make(400, "the request body is not valid UTF-8")
    if (!/\S/.test(text)) return yield* Problem.make(400, "the request body is empty; JSON was expected")
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
