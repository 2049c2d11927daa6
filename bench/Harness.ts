/**
 * What the benchmarks that drive the real standalone server share: starting it as a child process
 * (`node --import tsx examples/standalone/src/main.ts`, as `npm start` runs it), keep-alive HTTP
 * calls, a UAT key, and record bodies.
 */
import { spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { consoleToken, freePort, main, root } from "../examples/standalone/test/Process.js"

/** A server process on a port. */
export interface Running {
  readonly port: number
  readonly pid: number
  /** SIGTERM, then waits for the exit. */
  readonly stop: () => Promise<void>
}

/**
 * Starts the server on `databaseUrl` with webhooks off and `env` on top; with `profileDir`, it runs
 * under `--cpu-prof` and writes its profile there when it stops.
 */
export const startServer = async (databaseUrl: string, env: Record<string, string> = {}, profileDir?: string): Promise<Running> => {
  const port = await freePort()
  const child = spawn(process.execPath, [...profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [], "--import", "tsx", main], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, CONSOLE_TOKEN: consoleToken,
      UAT_HOSTS: "127.0.0.1", PRODUCTION_HOSTS: "localhost", WEBHOOK_ENABLED: "false", ...env },
    stdio: ["ignore", "ignore", "inherit"]
  })
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i === 300) throw new Error(`server did not start (exit code ${child.exitCode})`)
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    port,
    pid: child.pid!,
    stop: () => new Promise((resolve) => {
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/** One keep-alive request to 127.0.0.1:`port`; answers the status and the body text. */
export const call = (port: number, method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, agent, headers: {
      ...body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      ...headers
    } }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (c: Buffer) => parts.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** A JSON POST. */
export const post = (port: number, path: string, body: string, headers: Record<string, string>) =>
  call(port, "POST", path, headers, body)

/** A new organisation and a UAT key of it, made through the console API. */
export const uatKey = async (port: number, name: string) => {
  const auth = { authorization: `Bearer ${consoleToken}` }
  const org = JSON.parse((await post(port, "/console/organisations", JSON.stringify({ name }), auth)).body)
  const key = JSON.parse((await post(port, `/console/organisations/${org.id}/api-keys`, JSON.stringify({ environment: "uat" }), auth)).body)
  return key.key as string
}

/** `size` records (no mock tracking) with references `<prefix>-0` … as a request body. */
export const bodyOf = (prefix: string, size: number) =>
  JSON.stringify(Array.from({ length: size }, (_, i) => ({
    tradeflow_reference: `${prefix}-${i}`,
    container_reference: "MSCU1234565",
    booking_reference: `BK-${prefix}-${i}`,
    port_of_loading: "CNSHA",
    port_of_discharge: "NLRTM"
  })))
