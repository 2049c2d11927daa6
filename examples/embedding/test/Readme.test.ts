/**
 * The README's "Use it as a library" section quotes this example: every TypeScript block there is
 * a `// #region` of `src/` as it stands, every region is quoted, and the install line names exactly
 * the example's dependencies.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const example = join(import.meta.dirname, "..")
const readme = readFileSync(join(example, "..", "..", "README.md"), "utf8")

const section = (() => {
  const start = readme.indexOf("## Use it as a library\n")
  assert.isAtLeast(start, 0, "README.md has no \"## Use it as a library\" section")
  const end = readme.indexOf("\n## ", start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
})()

const blocks = (language: string) =>
  [...section.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)\\n```", "g"))].map((m) => m[1]!)

const regions = readdirSync(join(example, "src")).flatMap((file) =>
  [...readFileSync(join(example, "src", file), "utf8").matchAll(/\/\/ #region ([\w-]+)\n([\s\S]*?)\n\/\/ #endregion/g)]
    .map((m) => ({ name: `${file}#${m[1]}`, code: m[2]! }))
)

describe("README: Use it as a library", () => {
  it("quotes every TypeScript block from a region of examples/embedding/src, literally", () => {
    const ts = blocks("ts")
    assert.isAbove(ts.length, 0)
    for (const block of ts) {
      assert.isTrue(
        regions.some((region) => region.code === block),
        `this README block is not a region of examples/embedding/src:\n${block}`
      )
    }
  })

  it("quotes every region of examples/embedding/src", () => {
    const ts = blocks("ts")
    for (const region of regions) assert.include(ts, region.code, `README.md does not quote ${region.name}`)
  })

  it("installs exactly the example's dependencies", () => {
    const [install] = blocks("sh")
    const names = install!.replace(/^npm install /, "").split(/\s+/).sort()
    const pkg = JSON.parse(readFileSync(join(example, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
    }
    assert.deepStrictEqual(names, Object.keys(pkg.dependencies).sort())
  })
})
