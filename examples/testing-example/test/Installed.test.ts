import { afterAll, assert, describe, it } from "@effect/vitest"
import { readFileSync, realpathSync, rmSync } from "node:fs"
import { join } from "node:path"
import { copiesOf, installProject, packAll, pinned, root, run } from "../../Tarballs.js"

const example = join(root, "examples", "testing-example")
const created: Array<string> = []

afterAll(() => {
  for (const directory of created) rmSync(directory, { recursive: true, force: true })
})

describe("the testing example, installed from the packed @tradeflow/core outside the workspace", () => {
  it(
    "type-checks against the published declarations and its property tests pass under the project's own vitest",
    async () => {
      const { specifiers: tarballs } = await packAll()
      created.push(join(tarballs["@tradeflow/core"]!.slice("file:".length), ".."))
      const manifest = JSON.parse(readFileSync(join(example, "package.json"), "utf8"))
      const project = await installProject(example, [
        "src/LatestMilestones.ts",
        "test/LatestMilestones.test.ts",
        "tsconfig.json"
      ], {
        name: "testing-example-outside",
        private: true,
        type: "module",
        dependencies: { "@tradeflow/core": tarballs["@tradeflow/core"], effect: manifest.dependencies.effect },
        devDependencies: {
          "@effect/vitest": pinned("@effect/vitest"),
          "@types/node": pinned("@types/node"),
          typescript: pinned("typescript"),
          vitest: pinned("vitest")
        },
        allowScripts: { esbuild: true }
      })
      created.push(project)

      assert.strictEqual(
        realpathSync(join(project, "node_modules", "@tradeflow", "core")),
        join(realpathSync(project), "node_modules", "@tradeflow", "core"),
        "@tradeflow/core is an installed copy, not a link into the workspace"
      )
      assert.deepStrictEqual(await copiesOf(project, "effect"), [join(realpathSync(project), "node_modules", "effect")])

      await run(process.execPath, [join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project)
      const imported = await run(process.execPath, [
        "--input-type=module",
        "-e",
        "const testing = await import('@tradeflow/core/testing'); const core = await import('@tradeflow/core'); console.log(typeof testing.apiMessage, typeof core.Ingest.Ingest)"
      ], project)
      assert.strictEqual(imported.trim(), "function function")

      const reportFile = join(project, "report.json")
      await run(process.execPath, [
        join("node_modules", "vitest", "vitest.mjs"),
        "run",
        "--reporter=json",
        `--outputFile=${reportFile}`
      ], project)
      const report = JSON.parse(readFileSync(reportFile, "utf8"))
      assert.strictEqual(report.numFailedTests, 0)
      assert.isAtLeast(report.numPassedTests, 2)
      assert.strictEqual(report.numTotalTestSuites > 0, true)
    },
    600_000
  )
})
