/**
 * What the benchmarks that drive the real standalone server share: starting it as a child process
 * (`node --import tsx examples/standalone/src/main.ts`, as `npm run start:dev` runs it), keep-alive HTTP
 * calls, a UAT key, record bodies, a fresh database per run, and the machine line.
 */
import { PgStorage } from "@tradeflow/storage-pg"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { consoleToken, freePort, main, root } from "../examples/standalone/test/Process.js"

/** The PostgreSQL database the benchmarks use (`TRADEFLOW_TEST_PG_URL`). */
export const pgUrl = process.env["TRADEFLOW_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

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

/** A fresh database for one benchmark run: a SQLite file in a temporary directory, or a PostgreSQL schema. */
export interface BenchDatabase {
  /** The server's `DATABASE_URL`. */
  readonly url: string
  /** The SQLite file (`sqlite`) or the schema (`postgres`). */
  readonly file: string
  readonly schema: string
  /** A one-connection pool on the PostgreSQL test database (both backends, for the bare floor). */
  readonly admin: InstanceType<typeof pg.Pool>
}

/** Runs `use` on a fresh database of `backend`, dropped (schema) or deleted (file) afterwards. */
export const withDatabase = async <A>(
  backend: "sqlite" | "postgres",
  name: string,
  use: (database: BenchDatabase) => Promise<A>
): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), `tradeflow-bench-${name}-`))
  const schema = `bench_${name}_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 })
  const file = join(dir, "server.sqlite")
  try {
    if (backend === "postgres") await admin.query(`CREATE SCHEMA ${schema}`)
    return await use({ url: backend === "sqlite" ? `sqlite:${file}` : PgStorage.urlWithSchema(pgUrl, schema), file, schema, admin })
  } finally {
    if (backend === "postgres") await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The machine and its load average, as the first line of a benchmark's output. */
export const machineLine = () =>
  `# ${new Date().toISOString()} · ${cpus().length} × ${cpus()[0]?.model} · load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`
