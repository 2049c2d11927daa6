/**
 * Runs a webhook receiver on `PORT` (default 3000) verifying deliveries with `WEBHOOK_SECRET`.
 */
import { createServer } from "node:http"
import { makeReceiver } from "./Receiver.js"

const secret = process.env["WEBHOOK_SECRET"]
if (!secret) {
  console.error("WEBHOOK_SECRET is required (the automation's whsec_… secret)")
  process.exit(1)
}
const port = Number(process.env["PORT"] ?? 3000)

const server = createServer(makeReceiver({ secret, onMessage: () => {} }))

server.listen(port, () => console.log(`webhook receiver listening on port ${port}`))

const shutdown = (signal: string): void => {
  console.log(`${signal} received, shutting down`)
  server.close(() => process.exit(0))
  server.closeIdleConnections()
}
process.once("SIGTERM", () => shutdown("SIGTERM"))
process.once("SIGINT", () => shutdown("SIGINT"))
