import { Effect, type Scope } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** How the receiver answers a request: a response, no answer at all, or a dropped connection. */
export type Reply =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  | "hang"
  | "reset"

/** One request as the receiver saw it, and how it answered. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly reply: Reply
}

/** A `node:http` receiver on 127.0.0.1 (port 0), closed with its scope. */
export interface LocalReceiver {
  readonly port: number
  /** `http://127.0.0.1:<port><path>` */
  readonly url: (path?: string) => string
  readonly received: ReadonlyArray<Received>
  /** Requests answered with a 2xx, in arrival order. */
  readonly receipts: () => ReadonlyArray<Received>
  /** TCP connections accepted. */
  readonly connections: () => number
  /** Requests whose connection closed before they were answered. */
  readonly abandoned: () => number
  /** Waits (in real time, without the clock) until `count` requests have arrived. */
  readonly arrived: (count: number) => Effect.Effect<void>
  /** Waits until `count` requests have been abandoned by the client. */
  readonly closed: (count: number) => Effect.Effect<void>
}

/** Starts a receiver answering the `n`th request (1-based) with `reply(n, request)`. */
export const make = (
  reply: (n: number, request: Omit<Received, "reply">) => Reply
): Effect.Effect<LocalReceiver, never, Scope.Scope> =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    const waiters = new Set<() => void>()
    const notify = () => waiters.forEach((check) => check())
    let connections = 0
    let abandoned = 0
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const request = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        const answer = reply(received.length + 1, request)
        received.push({ ...request, reply: answer })
        if (answer === "reset") {
          req.socket.destroy()
        } else if (answer !== "hang") {
          res.writeHead(answer.status, answer.headers).end(answer.body ?? "")
        }
        notify()
      })
      res.on("close", () => {
        if (!res.writableEnded) {
          abandoned++
          notify()
        }
      })
    })
    server.on("connection", () => connections++)
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const until = (done: () => boolean) =>
      Effect.async<void>((resume) => {
        const check = () => {
          if (!done()) return
          waiters.delete(check)
          resume(Effect.void)
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      })
    return {
      port,
      url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
      received,
      receipts: () =>
        received.filter((r) => typeof r.reply === "object" && r.reply.status >= 200 && r.reply.status < 300),
      connections: () => connections,
      abandoned: () => abandoned,
      arrived: (count) => until(() => received.length >= count),
      closed: (count) => until(() => abandoned >= count)
    }
  })
