/**
 * Which databases a benchmark runs on: the first CLI argument (`sqlite`, `postgres`, `both`, or
 * `--storage=<one of those>`), else `BENCH_STORAGE`, default both. An unknown name exits with 2.
 */
export type Backend = "sqlite" | "postgres"

const aliases: Record<string, ReadonlyArray<Backend>> = {
  both: ["sqlite", "postgres"],
  sqlite: ["sqlite"],
  postgres: ["postgres"],
  postgresql: ["postgres"],
  pg: ["postgres"]
}

/** The selected backends, in run order. */
export const selectedBackends = (): ReadonlyArray<Backend> => {
  const storageArg = process.argv.slice(2).find((a) => !a.startsWith("-") || a.startsWith("--storage="))
  const selected = (storageArg?.replace(/^--storage=/, "") ?? process.env["BENCH_STORAGE"] ?? "both").toLowerCase()
  const backends = aliases[selected]
  if (backends === undefined) {
    console.error(`unknown storage ${selected}: expected sqlite, postgres or both`)
    process.exit(2)
  }
  return backends
}
