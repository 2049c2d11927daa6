/**
 * Starting and killing the standalone server as a real process, for the tests of this folder.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"

export const main = join(import.meta.dirname, "..", "src", "main.ts")
export const root = join(import.meta.dirname, "..", "..", "..")
export const consoleToken = "restart-test-console-token-0123456789"

/** Bundles the server into `dist/server.mjs`, as `npm run build` does. */
export const build = () => {
  execFileSync(process.execPath, [
    "--conditions=@tradeflow/source",
    "--import",
    "tsx",
    join(root, "examples", "standalone", "build.ts")
  ], { cwd: root })
}

/** Node's arguments in the root `start` script (`… && node <args>`): how `npm start` runs the bundle. */
export const npmStartArgs = (): ReadonlyArray<string> => {
  const script =
    (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  const node = / && node (.+)$/.exec(script)
  if (node === null) throw new Error(`the start script does not end in "&& node <args>": ${script}`)
  return node[1]!.split(" ")
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const address = s.address()
      s.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export interface Server {
  readonly base: string
  readonly child: ChildProcess
  /** What the server wrote to stdout and stderr so far (its last 256 KiB). */
  readonly output: () => string
}

/** Node's arguments that run `main.ts` under the tsx loader. */
export const tsxArgs: ReadonlyArray<string> = ["--conditions=@tradeflow/source", "--import", "tsx", main]

/**
 * Spawns the server on the SQLite `file` (or the `DATABASE_URL` of `env`) on a free port (or the
 * `PORT` of `env`), without waiting for anything. `args` are node's arguments (default
 * {@link tsxArgs}); what it writes to stdout and stderr is kept (its last 256 KiB).
 */
export const spawnServer = async (
  file: string,
  env: Record<string, string> = {},
  args: ReadonlyArray<string> = tsxArgs
): Promise<Server> => {
  const port = env["PORT"] === undefined ? await freePort() : Number(env["PORT"])
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: `sqlite:${file}`,
      CONSOLE_TOKEN: consoleToken,
      PRODUCTION_HOSTS: "localhost",
      UAT_HOSTS: "127.0.0.1",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let written = ""
  const keep = (chunk: Buffer) => {
    written = (written + chunk.toString("utf8")).slice(-256 * 1024)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  return { base: `http://127.0.0.1:${port}`, child, output: () => written }
}

/**
 * Starts the server as {@link spawnServer} does and waits for its health check.
 */
export const start = async (
  file: string,
  env: Record<string, string> = {},
  args: ReadonlyArray<string> = tsxArgs
): Promise<Server> => {
  const server = await spawnServer(file, env, args)
  for (let i = 0; i < 300; i++) {
    if (server.child.exitCode !== null) throw new Error(`server exited with ${server.child.exitCode}`)
    // a request that reaches the listening socket before the app is built may never be answered
    const up = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false
    )
    if (up) return server
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("server did not start")
}

export const kill = (server: Server) =>
  new Promise<void>((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve()
    server.child.once("exit", () => resolve())
    server.child.kill("SIGKILL")
  })

export const call = async (
  server: Server,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: await res.json().catch(() => undefined) as any }
}

/** Starts the server expecting it to stop before it serves: its exit code and what it wrote. */
export const refusedStart = async (file: string, env: Record<string, string>) => {
  const server = await spawnServer(file, env)
  const code = await new Promise<number | null>((resolve) => server.child.once("exit", resolve))
  return { code, output: server.output() }
}
