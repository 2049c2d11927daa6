/**
 * A `node:http` server on 127.0.0.1, listening for the lifetime of a scope.
 *
 * @module
 */
import { Effect, type Scope } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A request whose body has been read whole. */
export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void

/** Serves `handler` on 127.0.0.1 (`port`, or any free one) until the scope closes (open connections are dropped); its port. */
export const listen = (handler: Handler, port = 0): Effect.Effect<number, never, Scope.Scope> => {
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => handler(req, res, Buffer.concat(chunks)))
  })
  return Effect.acquireRelease(
    Effect.async<number>((resume) => {
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    }),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
}

/** Header names in lower case, repeated headers joined. */
export const headersOf = (req: IncomingMessage): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : v]))
