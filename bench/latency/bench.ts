/**
 * Latency benchmark: the time from a 202 to the first upstream message of the record it accepted,
 * for one record at a time on an idle server, and with background load at half the maximum rate.
 * The real standalone server runs as a child process, as `npm start` runs it (`BENCH_SERVER=tsx`
 * for the loader); each probe posts one record (a new tradeflow
 * reference) and then asks `GET /v3/upstream?tradeflow=<reference>&per_page=1` every POLL_MILLIS
 * until the message is there, so a latency is exact to about POLL_MILLIS plus one such request.
 *
 * "Maximum rate": records of one per request from 16 clients for 4 s, end to end (accepted and
 * processed); the loaded run posts single-record requests at half that rate (open loop, evenly
 * spaced) from 8 clients while the probes run.
 *
 * `npm run bench:latency [-- sqlite|postgres|both]`. Env: LATENCY_PROBES (default 200),
 * POLL_MILLIS (default 2), BENCH_SERVER, TRADEFLOW_TEST_PG_URL. Prints a JSON line per case and a Markdown table.
 */
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { bodyOf, call, machineLine, post, startServer, withDatabase } from "../Harness.js"

const probes = Number(process.env["LATENCY_PROBES"] ?? 200)
const pollMillis = Number(process.env["POLL_MILLIS"] ?? 2)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** Posts one record and answers the milliseconds from its 202 to its first upstream message. */
const probe = async (port: number, key: string, reference: string) => {
  const accepted = await post(port, "/v3/downstream/tradeflows", bodyOf(reference, 1), { authorization: key })
  if (accepted.status !== 202) throw new Error(`probe answered ${accepted.status}: ${accepted.body}`)
  const at = performance.now()
  for (;;) {
    const page = await call(port, "GET", `/v3/upstream?tradeflow=${encodeURIComponent(`${reference}-0`)}&per_page=1`, {
      authorization: key
    })
    if (page.status !== 200) throw new Error(`upstream answered ${page.status}: ${page.body}`)
    if ((JSON.parse(page.body) as { data: ReadonlyArray<unknown> }).data.length > 0) return performance.now() - at
    await sleep(pollMillis)
  }
}

/** Runs `probes` probes one after another, `gapMillis` apart. */
const measure = async (port: number, key: string, tag: string, gapMillis: number) => {
  const latencies: Array<number> = []
  for (let i = 0; i < probes; i++) {
    latencies.push(await probe(port, key, `${tag}-${i}`))
    await sleep(gapMillis)
  }
  const sorted = latencies.sort((a, b) => a - b)
  return {
    p50: Number(percentile(sorted, 0.5).toFixed(1)),
    p99: Number(percentile(sorted, 0.99).toFixed(1)),
    max: Number(sorted.at(-1)!.toFixed(1))
  }
}

/** Single-record requests from 16 clients for 4 s; answers records per second accepted and processed. */
const maximumRate = async (port: number, key: string) => {
  let records = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: 16 }, async (_, c) => {
    for (let n = 0; performance.now() - started < 4_000; n++) {
      if (
        (await post(port, "/v3/downstream/tradeflows", bodyOf(`max-${c}-${n}`, 1), { authorization: key })).status ===
          202
      ) records++
    }
  }))
  const last = `max-probe`
  await probe(port, key, last)
  return Math.round(records / ((performance.now() - started) / 1000))
}

/** Posts single-record requests at `rate` per second from 8 clients until `stop` resolves. */
const background = (port: number, key: string, rate: number, stop: Promise<void>) => {
  let stopped = false
  void stop.then(() => stopped = true)
  const clients = 8
  const interval = 1000 * clients / rate
  return Promise.all(Array.from({ length: clients }, async (_, c) => {
    const started = performance.now() + c * interval / clients
    for (let n = 0; !stopped; n++) {
      const due = started + n * interval
      if (due > performance.now()) await sleep(due - performance.now())
      await post(port, "/v3/downstream/tradeflows", bodyOf(`bg-${c}-${n}`, 1), { authorization: key })
    }
  }))
}

const results: Array<Record<string, unknown>> = []

const runBackend = (backend: Backend) =>
  withDatabase(backend, "latency", async (database) => {
    const server = await startServer(database.url)
    try {
      const { key } = await uatKey(server, "Latency bench")
      await measure(server.port, key, "warmup", 5)
      const idle = await measure(server.port, key, "idle", 50)
      results.push({ backend, load: "idle", rate: 0, ...idle })
      console.log(JSON.stringify(results.at(-1)))
      const max = await maximumRate(server.port, key)
      const rate = Math.max(1, Math.round(max / 2))
      let release = () => {}
      const stop = new Promise<void>((resolve) => release = resolve)
      const load = background(server.port, key, rate, stop)
      await sleep(1_000)
      const loaded = await measure(server.port, key, "loaded", 20)
      release()
      await load
      results.push({ backend, load: `half of max (${max} rec/s)`, rate, ...loaded })
      console.log(JSON.stringify(results.at(-1)))
    } finally {
      await server.stop()
    }
  })

console.log(machineLine())
for (const backend of selectedBackends()) await runBackend(backend)
console.log("\n| storage | load | background rec/s | p50 ms | p99 ms | max ms |\n|---|---|---:|---:|---:|---:|")
for (const r of results) {
  console.log(`| ${r["backend"]} | ${r["load"]} | ${r["rate"]} | ${r["p50"]} | ${r["p99"]} | ${r["max"]} |`)
}
