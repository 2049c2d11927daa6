/**
 * A minimal receiver for tradeflow webhook deliveries: verifies the Standard Webhooks signature
 * with the `standardwebhooks` package and processes each `webhook-id` once.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Webhook } from "standardwebhooks"

/**
 * A verified delivery: its `webhook-id`, its message type (`type` of an APIMessage, or
 * `"tradeflow"` for a V3 tradeflow document) and the parsed JSON body.
 */
export interface Delivery {
  readonly id: string
  readonly type: string
  readonly payload: unknown
}

/**
 * Options of {@link makeReceiver}. `secret` is the automation's `whsec_…` secret; `onMessage` runs
 * once per `webhook-id` (a rejection answers 500 so that the sender retries); `log` receives one
 * line per verified delivery (default `console.log`); `maxBodyBytes` defaults to 1 MiB and
 * `rememberedIds` (how many ids are kept for deduplication) to 100,000.
 */
export interface ReceiverOptions {
  readonly secret: string
  readonly onMessage: (delivery: Delivery) => void | Promise<void>
  readonly log?: (line: string) => void
  readonly maxBodyBytes?: number
  readonly rememberedIds?: number
}

/**
 * A `node:http` request handler.
 */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void

const messageType = (payload: unknown): string =>
  typeof payload === "object" && payload !== null && "type" in payload && typeof payload.type === "string"
    ? payload.type
    : "tradeflow"

const reply = (res: ServerResponse, status: number, error?: string): void => {
  if (error === undefined) {
    res.writeHead(status).end()
  } else {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error }))
  }
}

const readBody = (req: IncomingMessage, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        resolve(undefined)
        req.resume()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const signatureHeaders = (req: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = req.headers[name]
    if (typeof value === "string") headers[name] = value
  }
  return headers
}

/**
 * The request handler of a receiver: `POST` only (405 otherwise); 401 when the signature or the
 * timestamp does not verify; 400 when the verified body is not JSON; 413 above `maxBodyBytes`;
 * 204 on success. A repeated `webhook-id` is acknowledged with 204 without calling `onMessage`
 * again (deliveries are at-least-once).
 */
export const makeReceiver = (options: ReceiverOptions): Handler => {
  const webhook = new Webhook(options.secret)
  const log = options.log ?? ((line: string) => console.log(line))
  const limit = options.maxBodyBytes ?? 1024 * 1024
  const remembered = options.rememberedIds ?? 100_000
  const seen = new Set<string>()

  const remember = (id: string): void => {
    seen.add(id)
    if (seen.size > remembered) {
      const oldest = seen.values().next()
      if (!oldest.done) seen.delete(oldest.value)
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") return reply(res, 405, "method not allowed")
    const body = await readBody(req, limit)
    if (body === undefined) return reply(res, 413, "body too large")
    const headers = signatureHeaders(req)
    try {
      webhook.verify(body, headers, { jsonParse: false })
    } catch {
      return reply(res, 401, "invalid signature")
    }
    let payload: unknown
    try {
      payload = JSON.parse(body.toString("utf8"))
    } catch {
      return reply(res, 400, "body is not JSON")
    }
    const id = headers["webhook-id"] ?? ""
    const type = messageType(payload)
    if (seen.has(id)) {
      log(`duplicate delivery ${id} (${type}) acknowledged`)
      return reply(res, 204)
    }
    remember(id)
    log(`delivery ${id} (${type})`)
    try {
      await options.onMessage({ id, type, payload })
    } catch {
      seen.delete(id)
      return reply(res, 500, "processing failed")
    }
    reply(res, 204)
  }

  return (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "internal error")
    })
  }
}
