import { Effect, type Scope } from "effect"
import { headersOf, listen } from "../test-kit/Loopback.js"

/** A request a receiver got: headers in lower case, the body's raw bytes. */
export interface Got {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array
}

/** A loopback receiver answering every request with `status`, closed with its scope. */
export const make = (
  status = 204
): Effect.Effect<{ readonly url: string; readonly got: ReadonlyArray<Got> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const got: Array<Got> = []
    const port = yield* listen((req, res, body) => {
      got.push({ method: req.method ?? "", path: req.url ?? "", headers: headersOf(req), body: new Uint8Array(body) })
      res.writeHead(status).end()
    })
    return { url: `http://127.0.0.1:${port}/callback`, got }
  })
