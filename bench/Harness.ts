/**
 * What the benchmarks that drive the real standalone server share: starting it as a child process
 * (as `npm start` runs it, or under tsx with `BENCH_SERVER=tsx`), keep-alive HTTP calls, record
 * bodies, a fresh database per run, and the machine line.
 */
import { PgStorage } from "@tradeflow/storage-pg"
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import pg from "pg"
import {
  build,
  call as callServer,
  consoleToken,
  main,
  npmStartArgs,
  type Server,
  start
} from "../examples/standalone/test/Process.js"

/** The PostgreSQL database the benchmarks use (`TRADEFLOW_TEST_PG_URL`). */
export const pgUrl = process.env["TRADEFLOW_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

/** `BENCH_SERVER=tsx`: the benchmarks run main.ts under the tsx loader, as `npm run start:dev` does. */
export const underTsx = process.env["BENCH_SERVER"] === "tsx"

let built = false

/**
 * Node's arguments that run the server: the bundle with the start script's own flags, as `npm start`
 * runs it (bundled by `npm run build` on the first call), or main.ts under tsx (`underTsx`).
 */
export const serverArgs = (): ReadonlyArray<string> => {
  if (underTsx) return ["--conditions=@tradeflow/source", "--import", "tsx", main]
  if (!built) build()
  built = true
  return npmStartArgs()
}

/** A server process on a port (see `Process.start`). */
export interface Running extends Server {
  readonly port: number
  /** SIGTERM, then waits for the exit. */
  readonly stop: () => Promise<void>
}

/** The rate limits per key turned off: a benchmark measures the server, not its quotas (`env` may set them). */
export const unlimited: Readonly<Record<string, string>> = {
  RATE_LIMIT_API_PRODUCTION: "off",
  RATE_LIMIT_API_UAT: "off",
  RATE_LIMIT_WIDGET_PRODUCTION: "off",
  RATE_LIMIT_WIDGET_UAT: "off"
}

/**
 * Starts the server (`Process.start`) on `databaseUrl` with webhooks off, the rate limits off
 * ({@link unlimited}) and `env` on top, its
 * stderr passed through; with `profileDir`, it runs under `--cpu-prof` and writes its profile there
 * when it stops; `nodeArgs` go to node before the server's own (an {@link eventLoopProbe}).
 */
export const startServer = async (
  databaseUrl: string,
  env: Record<string, string> = {},
  profileDir?: string,
  nodeArgs: ReadonlyArray<string> = []
): Promise<Running> => {
  const server = await start("", { DATABASE_URL: databaseUrl, WEBHOOK_ENABLED: "false", ...unlimited, ...env }, [
    ...profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    ...nodeArgs,
    ...serverArgs()
  ])
  server.child.stderr?.pipe(process.stderr)
  return {
    ...server,
    port: Number(new URL(server.base).port),
    stop: () =>
      new Promise((resolve) => {
        server.child.once("exit", () => resolve())
        server.child.kill("SIGTERM")
      })
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/** One keep-alive request to 127.0.0.1:`port`; answers the status and the body text. */
export const call = (port: number, method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      method,
      agent,
      headers: {
        ...body === undefined
          ? {}
          : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        ...headers
      }
    }, (res) => {
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
    return await use({
      url: backend === "sqlite" ? `sqlite:${file}` : PgStorage.urlWithSchema(pgUrl, schema),
      file,
      schema,
      admin
    })
  } finally {
    if (backend === "postgres") await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The machine and its load average, as the first line of a benchmark's output. */
export const machineLine = () =>
  `# ${new Date().toISOString()} · ${cpus().length} × ${cpus()[0]?.model} · load ${
    loadavg().map((l) => l.toFixed(1)).join(" ")
  }`

/** The machine a benchmark ran on: date, cores, CPU model, RAM, Node and PostgreSQL versions, load average. */
export const machine = () => {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8")
  const memKb = Number(/MemTotal:\s*(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0)
  return {
    date: new Date().toISOString(),
    nproc: cpus().length,
    cpu: (/model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown").trim(),
    memory_gib: Math.round(memKb / 1024 / 1024 * 10) / 10,
    node: process.version,
    load: loadavg().map((l) => l.toFixed(2)).join(", "),
    postgres: (() => {
      try {
        return execFileSync("psql", ["-XAtc", "SHOW server_version", pgUrl], { encoding: "utf8" }).trim()
      } catch {
        return "unknown"
      }
    })()
  }
}

/** What the event-loop-delay probe saw in a server process between two reads (milliseconds). */
export interface EventLoopDelay {
  readonly samples: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** The probe's last snapshot, or undefined while there is none or it is being written. */
const readSnapshot = (file: string): (EventLoopDelay & { readonly snapshot: number }) | undefined => {
  if (!existsSync(file)) return undefined
  try {
    return JSON.parse(readFileSync(file, "utf8")) as EventLoopDelay & { readonly snapshot: number }
  } catch {
    return undefined
  }
}

/**
 * The event-loop-delay probe of a server (bench/event-loop-probe.mjs, `perf_hooks.monitorEventLoopDelay`):
 * the node arguments and environment to start the server with ({@link startServer}), and `read`,
 * which answers what the probe saw since the previous read (or the start) and starts over.
 */
export const eventLoopProbe = (dir: string) => {
  const file = join(dir, `event-loop-delay-${globalThis.crypto.randomUUID()}.json`)
  let snapshot = 0
  return {
    nodeArgs: ["--import", pathToFileURL(join(import.meta.dirname, "event-loop-probe.mjs")).href],
    env: { BENCH_ELD_FILE: file },
    read: async (server: Server): Promise<EventLoopDelay> => {
      snapshot++
      server.child.kill("SIGUSR2")
      for (let i = 0; i < 1_000; i++) {
        const seen = readSnapshot(file)
        if (seen?.snapshot === snapshot) return { samples: seen.samples, p50: seen.p50, p99: seen.p99, max: seen.max }
        await new Promise((r) => setTimeout(r, 10))
      }
      throw new Error("the event-loop probe did not answer")
    }
  }
}

/**
 * A new organisation and `count` UAT keys of it, through the console: the server lets one key have
 * at most 16 requests in flight (`MAX_IN_FLIGHT_PER_KEY`), so 64 clients share 4 keys.
 */
export const organisationKeys = async (server: Server, count: number) => {
  const auth = { authorization: `Bearer ${consoleToken}` }
  const org = await callServer(server, "POST", "/console/organisations", { name: "Bench" }, auth)
  const keys: Array<string> = []
  for (let i = 0; i < count; i++) {
    const created = await callServer(
      server,
      "POST",
      `/console/organisations/${org.body.id}/api-keys`,
      { environment: "uat" },
      auth
    )
    keys.push((created.body as { key: string }).key)
  }
  return keys
}
