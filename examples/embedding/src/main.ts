/**
 * A host application with its own node:http server and routes, which mounts the tracking API
 * under /tracking and uses the tracking service in-process. `PORT` (default 3000), `DATA_DIR`
 * (default ./data), `CONSOLE_TOKEN` (default: a random one per start).
 */
import { HttpMount } from "@tradeflow/http-node"
import { randomBytes } from "node:crypto"
import { mkdirSync } from "node:fs"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { ensureAccount, makeTracking, messages, postTradeflows } from "./tracking.js"

const dataDir = process.env["DATA_DIR"] ?? "data"
mkdirSync(dataDir, { recursive: true })

// #region in-process-use
const tracking = makeTracking({
  dataDir,
  consoleToken: process.env["CONSOLE_TOKEN"] ?? randomBytes(24).toString("hex")
})
const account = await tracking.runPromise(ensureAccount(dataDir))
await tracking.runPromise(postTradeflows(account, [{
  tradeflow_reference: "HOST-0001",
  container_reference: "MSCU1234565",
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM"
}]))
// #endregion

// #region mount
const { nodeHandler } = await tracking.runPromise(HttpMount.HttpMount)

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const server = createServer((request, response) => {
  if (request.url === "/hello") return json(response, 200, { hello: "from the host" })
  if (request.url === "/shipments") {
    return void tracking.runPromise(messages(account)).then(
      (body) => json(response, 200, body),
      () => json(response, 500, { error: "the tracking service failed" })
    )
  }
  nodeHandler(request, response)
})
// #endregion

server.listen(Number(process.env["PORT"] ?? 3000), () => {
  const { port } = server.address() as AddressInfo
  console.log(`listening on http://localhost:${port} (API under /tracking, docs at /tracking/docs)`)
})

// #region shutdown
const stop = () => server.close(() => void tracking.dispose().then(() => process.exit(0)))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
// #endregion
