import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"

const packagesDir = join(import.meta.dirname, "..", "..")

/** The folders of a package that others install: its sources, `testing` and `test-kit`. */
const libraryFolders = ["src", "testing", "test-kit"]

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** The `Config` constructors that read a named value as their first argument. */
const readers =
  "string|nonEmptyString|number|integer|boolean|bigint|redacted|secret|port|url|date|duration|logLevel|nested"

/** Arguments with parentheses nested up to three deep. */
const nestedArguments = "(?:[^()]|\\((?:[^()]|\\((?:[^()]|\\([^()]*\\))*\\))*\\))*"

const rules: ReadonlyArray<RegExp> = [
  /\bprocess(?:\.env\b|\s*\[\s*["'`]env["'`]\s*\])/g,
  new RegExp(`\\bConfig\\.(?:${readers})\\(\\s*["'\`][A-Z][A-Z0-9_]+["'\`]`, "g"),
  /\bConfig\.\w+\([^()]*\)\(\s*["'`][A-Z][A-Z0-9_]+["'`]/g,
  new RegExp(
    `\\bConfig\\.(?:nested|array|chunk|hashSet|hashMap)\\(${nestedArguments},\\s*["'\`][A-Z][A-Z0-9_]+["'\`]`,
    "g"
  ),
  /\bSchema\.Config\(\s*["'`][A-Z][A-Z0-9_]+["'`]/g
]

/** Where `text` reads an environment variable by name: `process.env` or a `Config` of an UPPER_CASE name. */
const environmentReads = (text: string): Array<string> =>
  rules.flatMap((rule) => [...text.matchAll(rule)].map((m) => m[0]))

describe("library packages name no environment variable", () => {
  it("no source, testing or test-kit file of a package reads process.env or a Config of an UPPER_CASE name", () => {
    const files = readdirSync(packagesDir).flatMap((name) =>
      libraryFolders.map((folder) => join(packagesDir, name, folder)).filter(existsSync).flatMap(sources)
    )
    expect(files.length).toBeGreaterThan(50)
    const offending = files.flatMap((file) =>
      environmentReads(readFileSync(file, "utf8")).map((read) => `${relative(packagesDir, file)}: ${read}`)
    )
    expect(offending).toEqual([])
  })

  it("the rule catches every form of reading one", () => {
    const sample = [
      `const a = process.env["PORT"]`,
      `const b = Config.string("DATABASE_URL")`,
      `const c = Config.option(Config.redacted('CURSOR_SECRET'))`,
      `const d = Config.literal("FULL", "NORMAL")("SQLITE_SYNCHRONOUS")`,
      `const e = Config.nested(Config.integer(), "MAX_BODY_BYTES")`,
      `const f = Config.integer().pipe(Config.nested("BODY_TIMEOUT_MILLIS"))`,
      `const g = process [ 'env' ].HOME`,
      `const h = Config.array(Config.string(), "PRODUCTION_HOSTS")`,
      `const i = Config.hashSet(Config.string().pipe(Config.withDefault("x")), "UAT_HOSTS")`,
      `const j = Config.nested(Config.string().pipe(Config.withDefault("x")), "PORT")`,
      `const k = Schema.Config("HOST", Schema.String)`,
      `const ok = Config.string("url").pipe(Config.withDefault("DEFAULT"), Config.orElse(() => Config.succeed("X_Y")))`
    ].join("\n")
    expect(environmentReads(sample).sort()).toEqual([
      "process.env",
      `Config.string("DATABASE_URL"`,
      `Config.redacted('CURSOR_SECRET'`,
      `Config.literal("FULL", "NORMAL")("SQLITE_SYNCHRONOUS"`,
      `Config.nested("BODY_TIMEOUT_MILLIS"`,
      `Config.nested(Config.integer(), "MAX_BODY_BYTES"`,
      "process [ 'env' ]",
      `Config.array(Config.string(), "PRODUCTION_HOSTS"`,
      `Config.hashSet(Config.string().pipe(Config.withDefault("x")), "UAT_HOSTS"`,
      `Config.nested(Config.string().pipe(Config.withDefault("x")), "PORT"`,
      `Schema.Config("HOST"`
    ].sort())
  })
})
