/**
 * Port: the HTTP POST of one delivery attempt, and its `node:http` / `node:https` adapter. The
 * adapter resolves host names with {@link Ssrf.safeLookup} inside the connection, so the address
 * checked is the address connected to; it never follows redirects and gives the whole exchange
 * {@link Outcome.deliveryTimeout}.
 *
 * @module
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Outcome from "./Outcome.js"
import * as Ssrf from "./Ssrf.js"

/**
 * One POST: the destination (already checked with {@link Ssrf.checkUrl}), the headers to add
 * (the signature headers) and the JSON body.
 */
export interface Request {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * What the attempt came to, with the receiver's body (at most {@link Outcome.maxLoggedBodyBytes}
 * of it; empty for an error).
 */
export type Response = Outcome.Attempt & { readonly body: string }

export class WebhookClient extends Context.Tag("@tradeflow/webhook/WebhookClient")<WebhookClient, {
  /** Never fails: transport errors, timeouts and blocked addresses are `{ _tag: "Error" }`. */
  readonly post: (request: Request) => Effect.Effect<Response>
}>() {}

/**
 * Options of {@link layer}. `allowPrivate` lets host names resolve to non-public addresses
 * (development, tests); `resolve` replaces the system resolver (tests).
 */
export interface Options {
  readonly allowPrivate: boolean
  readonly resolve?: Ssrf.Resolver
}

/**
 * The `User-Agent` of deliveries.
 */
export const userAgent = "tradeflow-webhook/0.1"

const timeoutError = () =>
  Object.assign(new Error(`no complete answer within ${Duration.format(Outcome.deliveryTimeout)}`), {
    code: "ETIMEDOUT"
  })

const timeoutMillis = Duration.toMillis(Outcome.deliveryTimeout)

/** A request in flight: answered (or interrupted) once `done`; `expire` answers it with a timeout. */
interface Open {
  readonly deadline: number
  readonly expire: () => void
  done: boolean
}

/**
 * The client over `node:http` and `node:https` with keep-alive agents (closed with the layer).
 * The {@link Outcome.deliveryTimeout} of the whole exchange runs on Effect's `Clock` (a
 * `TestClock` drives it in tests): one sweeper fiber per layer sleeps until the oldest open
 * request's deadline and answers it with a timeout; interrupting `post` destroys the request and
 * its socket.
 */
export const layer = (options: Options): Layer.Layer<WebhookClient> =>
  Layer.scoped(
    WebhookClient,
    Effect.gen(function*() {
      const lookup = Ssrf.safeLookup({
        allowPrivate: options.allowPrivate,
        ...(options.resolve === undefined ? {} : { resolve: options.resolve })
      })
      const agent = <A extends Http.Agent>(make: () => A) =>
        Effect.acquireRelease(Effect.sync(make), (a) => Effect.sync(() => a.destroy()))
      const http = yield* agent(() => new Http.Agent({ keepAlive: true, lookup }))
      const https = yield* agent(() => new Https.Agent({ keepAlive: true, lookup }))

      const open: Array<Open> = []
      let first = 0
      let wake: (() => void) | undefined
      const idle = Effect.async<void>((resume) => {
        if (first < open.length) return resume(Effect.void)
        wake = () => {
          wake = undefined
          resume(Effect.void)
        }
        return Effect.sync(() => void (wake = undefined))
      })
      const sweep = Effect.suspend(() => {
        let oldest = open[first]
        while (oldest?.done === true) oldest = open[++first]
        if (first > 1024 && first * 2 > open.length) {
          open.splice(0, first)
          first = 0
        }
        if (oldest === undefined) return idle
        return Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => now >= oldest.deadline ? Effect.sync(oldest.expire) : Effect.sleep(oldest.deadline - now)
        )
      })
      yield* Effect.forkScoped(Effect.forever(sweep))

      const exchange = (request: Request, deadline: number) =>
        Effect.async<Response>((resume) => {
          const entry: Open = {
            deadline,
            expire: () => {
              settle({ _tag: "Error", error: timeoutError(), body: "" })
              req.destroy()
            },
            done: false
          }
          const settle = (response: Response) => {
            if (entry.done) return
            entry.done = true
            resume(Effect.succeed(response))
          }
          const started = performance.now()
          const secure = request.url.protocol === "https:"
          const req = (secure ? Https.request : Http.request)(request.url, {
            method: "POST",
            agent: secure ? https : http,
            headers: {
              ...request.headers,
              "content-type": "application/json",
              "content-length": String(Buffer.byteLength(request.body, "utf8")),
              "user-agent": userAgent
            }
          })
          req.on("error", (error) => settle({ _tag: "Error", error, body: "" }))
          req.on("response", (res) => {
            const elapsed = Duration.millis(performance.now() - started)
            const chunks: Array<Buffer> = []
            let size = 0
            const finish = () =>
              settle({
                _tag: "Response",
                status: res.statusCode ?? 0,
                elapsed,
                retryAfter: res.headers["retry-after"],
                body: chunks.length === 0 ? "" : Outcome.truncateBody(Buffer.concat(chunks)).text
              })
            res.on("data", (chunk: Buffer) => {
              chunks.push(chunk)
              size += chunk.length
              if (size > Outcome.maxLoggedBodyBytes) {
                finish()
                res.destroy()
              }
            })
            res.on("end", finish)
            res.on("close", finish)
          })
          req.end(request.body, "utf8")
          open.push(entry)
          wake?.()
          return Effect.sync(() => {
            entry.done = true
            req.destroy()
          })
        })

      return WebhookClient.of({
        post: (request) => Effect.flatMap(Clock.currentTimeMillis, (now) => exchange(request, now + timeoutMillis))
      })
    })
  )
