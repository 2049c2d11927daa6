import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const specifiers = (file: string): Array<string> =>
  [
    ...readFileSync(file, "utf8").matchAll(
      /(?:import|export)[^"'`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g
    )
  ]
    .map((m) => m[1] ?? m[2] ?? "")

/**
 * What core may use besides its own modules: effect, and @noble/hashes (synchronous SHA-256 in plain
 * JavaScript, no platform API), so that core runs on any JavaScript runtime.
 */
const packages = ["@noble/hashes", "effect"]

const allowed = (specifier: string) =>
  specifier.startsWith("./") || specifier.startsWith("../") ||
  packages.some((p) => specifier === p || specifier.startsWith(`${p}/`))

describe("core dependency rule", () => {
  it("src imports only effect, @noble/hashes and its own modules", () => {
    const offending = sources(join(root, "src")).flatMap((file) =>
      specifiers(file).filter((s) => !allowed(s)).map((s) => `${file}: ${s}`)
    )
    expect(offending).toEqual([])
  })

  it("the package depends on @noble/hashes, on effect as a peer, and on @effect/vitest (its test kits') as an optional peer only", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>
      peerDependencies?: Record<string, string>
      peerDependenciesMeta?: Record<string, { optional?: boolean }>
    }
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(["@noble/hashes"])
    expect(Object.keys(pkg.peerDependencies ?? {}).sort()).toEqual(["@effect/vitest", "effect"])
    expect(pkg.peerDependenciesMeta).toEqual({ "@effect/vitest": { optional: true } })
  })

  it("the rule catches a forbidden import", () => {
    const sample = join(import.meta.dirname, "fixtures", "forbidden.ts.txt")
    expect(specifiers(sample)).toEqual(["@effect/sql", "@tradeflow/http-node", "node:crypto", "./ok.js"])
  })
})
