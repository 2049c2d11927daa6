import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const specifiers = (file: string): Array<string> =>
  [...readFileSync(file, "utf8").matchAll(/(?:import|export)[^"'`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)]
    .map((m) => m[1] ?? m[2] ?? "")

describe("core dependency rule", () => {
  it("src imports only effect and its own modules", () => {
    const offending = sources(join(root, "src")).flatMap((file) =>
      specifiers(file)
        .filter((s) => !(s.startsWith("./") || s.startsWith("../") || s === "effect" || s.startsWith("effect/")))
        .map((s) => `${file}: ${s}`)
    )
    expect(offending).toEqual([])
  })

  it("the package depends on effect only", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies?: Record<string, string> }
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(["effect"])
  })

  it("the rule catches a forbidden import", () => {
    const sample = join(import.meta.dirname, "fixtures", "forbidden.ts.txt")
    expect(specifiers(sample)).toEqual(["@effect/sql", "@tradeflow/http-node", "node:crypto", "./ok.js"])
  })
})
