/**
 * What the HTTP framework alone costs a single-record POST (goal b of issue 14): 64 keep-alive
 * clients post one record per request for BENCH_SECONDS (default 6) to, one after the other,
 * - **bare**: a `node:http` server that checks the key, `JSON.parse`s the body and answers 202 with
 *   the references (no storage);
 * - **effect**: bench/http-floor/EffectServer.ts, the same on `@effect/platform`'s HttpApi as the
 *   real server is built (an API-key middleware providing the caller, the payload decoded by its
 *   schema), no storage;
 * - **accept**: the real server (`npm start`'s bundle) on SQLite with `WORKER_ENABLED=false`:
 *   authentication, validation, the durable enqueue and the 202, nothing processed;
 * - **server**: the real server as it runs, processing what it accepts (requests/s to the last 202).
 * Two rounds. Per run: requests/s, POST p50/p99 and the server's CPU (utime + stime) per request.
 * `npm run bench:http-floor`; BENCH_SECONDS, BENCH_RESULTS (default bench/http-floor/RESULTS.md), BENCH_PROFILE (a
 * directory: the real server's runs under `--cpu-prof` into it).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { bodyOf, machine, organisationKeys, post, startServer, withDatabase } from "../Harness.js"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 6)
const resultsFile = process.env["BENCH_RESULTS"] ?? join(import.meta.dirname, "RESULTS.md")
const profileDir = process.env["BENCH_PROFILE"]
const clients = 64
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const bareSource = `
const http = require("node:http")
const key = process.env.BENCH_KEY
http.createServer((req, res) => {
  const parts = []
  req.on("data", (c) => parts.push(c))
  req.on("end", () => {
    if ((req.headers.authorization ?? "").replace(/^Bearer /, "") !== key) { res.writeHead(401); res.end(); return }
    const records = JSON.parse(Buffer.concat(parts).toString())
    const body = JSON.stringify({ status: "queued", tradeflows: records.map((r) => String(r.tradeflow_reference)) })
    res.writeHead(202, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
}).listen(Number(process.env.PORT), "127.0.0.1")
`

/** A child server on `port`, answered once it accepts a connection. */
const child = async (args: ReadonlyArray<string>, port: number, key: string): Promise<ChildProcess> => {
  const process_ = spawn(process.execPath, args, {
    cwd: join(import.meta.dirname, "..", ".."),
    env: { ...process.env, PORT: String(port), BENCH_KEY: key },
    stdio: ["ignore", "ignore", "inherit"]
  })
  for (let i = 0; i < 200; i++) {
    const up = await post(port, "/v3/downstream/tradeflows", "[]", { authorization: key }).then(() => true, () => false)
    if (up) return process_
    await sleep(50)
  }
  throw new Error(`the server ${args.join(" ")} did not start`)
}

interface Run {
  readonly server: string
  readonly round: number
  readonly requests: number
  readonly failed: number
  readonly requests_per_second: number
  readonly post_p50_ms: number
  readonly post_p99_ms: number
  readonly server_cpu_ms_per_request: number
}

/** 64 clients posting one record per request for `seconds`, keys taken in turn. */
const load = async (server: string, round: number, port: number, pid: number, keys: ReadonlyArray<string>) => {
  const latencies: Array<number> = []
  let failed = 0
  let next = 0
  const cpu = cpuSeconds(pid)
  const started = performance.now()
  const end = started + seconds * 1000
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    while (performance.now() < end) {
      const i = next++
      const sent = performance.now()
      const answer = await post(port, "/v3/downstream/tradeflows", bodyOf(`${server}-${round}-${i}`, 1), {
        authorization: `Bearer ${keys[c % keys.length]}`
      })
      if (answer.status !== 202) failed++
      latencies.push(performance.now() - sent)
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  const used = cpuSeconds(pid) - cpu
  latencies.sort((a, b) => a - b)
  const at = (p: number) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(1))
  const run: Run = {
    server,
    round,
    requests: latencies.length,
    failed,
    requests_per_second: Math.round(latencies.length / elapsed),
    post_p50_ms: at(0.5),
    post_p99_ms: at(0.99),
    server_cpu_ms_per_request: Number((used * 1000 / latencies.length).toFixed(3))
  }
  console.log(JSON.stringify(run))
  return run
}

const started = machine()
console.log(JSON.stringify({ machine: started }))
const runs: Array<Run> = []
const key = "bench-floor-key-0123456789"
for (const round of [1, 2]) {
  for (
    const [name, args] of [
      ["bare", ["-e", bareSource]],
      ["effect", ["--conditions=@tradeflow/source", "--import", "tsx", "bench/http-floor/EffectServer.ts"]]
    ] as const
  ) {
    const port = await freePort()
    const server = await child(args, port, key)
    try {
      await load(name, 0, port, server.pid!, [key])
      runs.push(await load(name, round, port, server.pid!, [key]))
    } finally {
      server.kill("SIGTERM")
    }
  }
  for (const [name, env] of [["accept", { WORKER_ENABLED: "false" }], ["server", {}]] as const) {
    await withDatabase("sqlite", "http-floor", async ({ url }) => {
      const server = await startServer(url, env, profileDir === undefined ? undefined : join(profileDir, name))
      try {
        const keys = await organisationKeys(server, clients / 16)
        await load(name, 0, server.port, server.child.pid!, keys)
        runs.push(await load(name, round, server.port, server.child.pid!, keys))
      } finally {
        await server.stop()
      }
    })
  }
}

const best = (server: string) =>
  runs.filter((r) => r.server === server).reduce((a, b) => (b.requests_per_second > a.requests_per_second ? b : a))
const bare = best("bare")
const rows = ["bare", "effect", "accept", "server"].map((name) => {
  const r = best(name)
  return `| ${name} | ${r.requests_per_second.toLocaleString("en")} | ${
    (r.requests_per_second / bare.requests_per_second * 100).toFixed(1)
  } % | ${r.post_p50_ms} / ${r.post_p99_ms} ms | ${r.server_cpu_ms_per_request} ms |`
})
const report = [
  "# HTTP floor (`npm run bench:http-floor`)",
  "",
  `${started.date} – ${
    new Date().toISOString()
  }; ${started.nproc} × ${started.cpu}, ${started.memory_gib} GiB, Node ${started.node}; load average at the start ${started.load}.`,
  "",
  `64 clients, one record per request, ${seconds} s per run, the better of two rounds per server:`,
  "",
  "| server | requests/s | of bare | POST p50 / p99 | server CPU per request |",
  "|---|---:|---:|---:|---:|",
  ...rows,
  "",
  "```",
  ...runs.map((r) => JSON.stringify(r)),
  "```",
  ""
].join("\n")
console.log(report)
if (resultsFile !== "-") writeFileSync(resultsFile, report)
