/**
 * The long kill test (issue 6): `tsx --conditions=@tradeflow/source bench/kill-soak/run.ts [sqlite|postgres|both]` runs the soak
 * of `Soak.ts` on each selected backend (see `bench/Backends.ts`): SOAK_RECORDS records (default
 * 10000) posted by SOAK_CLIENTS concurrent clients (default 16) over SOAK_ORGS organisations
 * (default 4) while the server is SIGKILLed SOAK_KILLS times (default 20) and restarted (on
 * PostgreSQL its backends are also ended with `pg_terminate_backend`). SOAK_SEED fixes the batch
 * sizes and timings; SOAK_SERVER_LOG names a file (e.g. under /tmp) the servers' stderr is appended to;
 * SOAK_TERMINATE_MS="min,max" the interval of the `pg_terminate_backend` rounds (default 300,2000);
 * SOAK_DEBUG=1 logs every request attempt. Progress goes to stderr; stdout gets one JSON line per backend and a Markdown
 * table. Exits 1 when a run lost, duplicated or left anything (`ok: false`).
 */
import { selectedBackends } from "../Backends.js"
import { runSoak, type SoakSummary } from "./Soak.js"

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)

const terminate = process.env["SOAK_TERMINATE_MS"]?.split(",").map(Number)
const results: Array<SoakSummary> = []
for (const backend of selectedBackends()) {
  const seed = process.env["SOAK_SEED"]
  const summary = await runSoak({
    backend,
    records: env("SOAK_RECORDS", 10_000),
    kills: env("SOAK_KILLS", 20),
    clients: env("SOAK_CLIENTS", 16),
    organisations: env("SOAK_ORGS", 4),
    ...(seed === undefined ? {} : { seed: Number(seed) }),
    ...(terminate === undefined ? {} : { terminateMinMillis: terminate[0]!, terminateMaxMillis: terminate[1]! }),
    ...(process.env["SOAK_SERVER_LOG"] === undefined ? {} : { serverLog: process.env["SOAK_SERVER_LOG"] }),
    log: (line) => console.error(`[${backend}] ${line}`)
  })
  console.log(JSON.stringify(summary))
  results.push(summary)
}

console.log(
  "\n| backend | records | accepted | rejected | unanswered (landed) | kills | crashes | terminations (backends) | messages | duplicates | lost | unexpected | seconds | ok |"
)
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (const r of results) {
  console.log(
    `| ${r.backend} | ${r.records} | ${r.accepted} | ${r.rejected} | ${r.unanswered} (${r.unanswered_landed}) | ${r.kills} | ${r.crashes} | ${r.terminations} (${r.backends_terminated}) | ${r.messages} | ${r.duplicates} | ${r.lost} | ${r.unexpected} | ${r.seconds} | ${r.ok} |`
  )
}
if (results.some((r) => !r.ok)) process.exit(1)
