/**
 * The no-op webhook receiver of bench/webhook-throughput/bench.ts, run as a child process (plain
 * `node`, IPC channel) so it never shares an event loop with the delivery worker.
 *
 * Answers every request 204 at once and keeps, per `webhook-id`, the wall-clock time
 * (`performance.timeOrigin + performance.now()`, comparable across processes) of its first
 * arrival. IPC: sends `{ type: "listening", port }` once listening; answers `{ type: "report" }`
 * with `{ type: "report", requests, connections, receipts: [[webhookId, at], …] }`. Exits when the
 * parent disconnects.
 */
import { createServer } from "node:http"

const receipts = new Map()
let requests = 0
let connections = 0

const server = createServer((req, res) => {
  const at = performance.timeOrigin + performance.now()
  requests++
  const id = req.headers["webhook-id"]
  if (typeof id === "string" && !receipts.has(id)) receipts.set(id, at)
  req.resume()
  res.writeHead(204).end()
})
server.keepAliveTimeout = 60_000
server.on("connection", () => connections++)

server.listen(0, "127.0.0.1", () => process.send({ type: "listening", port: server.address().port }))

process.on("message", (message) => {
  if (message?.type === "report") process.send({ type: "report", requests, connections, receipts: [...receipts] })
})
process.on("disconnect", () => process.exit(0))
