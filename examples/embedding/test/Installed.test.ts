/**
 * The embedding host as a user gets it: every package packed with `npm pack`, the tarballs
 * installed with npm into a fresh directory outside the workspace, the host compiled there with
 * its own tsconfig and run under plain `node`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, realpathSync, rmSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { cleanEnv, copiesOf, installProject, packAll, type Packed, pinned, root, run } from "../../Tarballs.js"

const example = join(root, "examples", "embedding")
const created: Array<string> = []
let packed: Packed
let project: string

beforeAll(async () => {
  packed = await packAll()
  created.push(dirname(packed.specifiers["@tradeflow/core"]!.slice("file:".length)))
  const manifest = JSON.parse(readFileSync(join(example, "package.json"), "utf8"))
  const dependencies = Object.fromEntries(
    Object.entries({
      ...manifest.dependencies,
      "@tradeflow/storage-pg": "",
      "@tradeflow/tracking-dcsa": "",
      "@tradeflow/tracking-ais": "",
      "@effect/sql-pg": pinned("@effect/sql-pg")
    })
      .map(([name, version]) => [name, packed.specifiers[name] ?? version])
  )
  project = await installProject(example, ["src/main.ts", "src/tracking.ts", "tsconfig.json"], {
    name: "embedding-outside",
    private: true,
    type: "module",
    scripts: manifest.scripts,
    dependencies,
    devDependencies: manifest.devDependencies,
    overrides: packed.specifiers,
    allowScripts: { "better-sqlite3": true }
  })
  created.push(project)
}, 600_000)

afterAll(() => {
  for (const directory of created) rmSync(directory, { recursive: true, force: true })
})

describe("every package's tarball", () => {
  it("holds package.json, README.md, LICENSE, and for each export its JavaScript and declarations with their maps", () => {
    for (const [name, files] of Object.entries(packed.files)) {
      const manifest = JSON.parse(readFileSync(join(root, "packages", name.split("/")[1]!, "package.json"), "utf8"))
      for (const required of ["package.json", "README.md", "LICENSE"]) {
        assert.include(files, required, `${name}: ${required}`)
      }
      for (const [subpath, target] of Object.entries<Record<string, string> | string>(manifest.exports)) {
        if (typeof target === "string") continue
        for (const file of [target["types"]!, target["import"]!, `${target["types"]}.map`, `${target["import"]}.map`]) {
          assert.include(files, normalize(file), `${name} ${subpath}: ${file}`)
        }
      }
    }
  })

  it("never holds tests or fixtures, and every source map points at a source in the tarball", () => {
    for (const [name, files] of Object.entries(packed.files)) {
      assert.deepStrictEqual(
        files.filter((file) => /(^|\/)(test|fixtures?)\/|\.test\.|\.tsbuildinfo$/.test(file)),
        [],
        name
      )
      for (const map of files.filter((file) => file.endsWith(".map"))) {
        const { sources } = JSON.parse(readFileSync(join(root, "packages", name.split("/")[1]!, map), "utf8")) as {
          sources: ReadonlyArray<string>
        }
        for (const source of sources) assert.include(files, normalize(join(dirname(map), source)), `${name} ${map}`)
      }
    }
  })
})

describe("the embedding host installed from the tarballs outside the workspace", () => {
  it("has installed copies of the packages, one copy of effect, and imports every package under plain node", async () => {
    const installed = join(realpathSync(project), "node_modules")
    for (const name of Object.keys(packed.specifiers)) {
      assert.strictEqual(
        realpathSync(join(project, "node_modules", name)),
        join(installed, name),
        `${name} is not a link`
      )
    }
    assert.deepStrictEqual(await copiesOf(project, "effect"), [join(installed, "effect")])
    const needsVitest = ["@tradeflow/core/testing", "@tradeflow/core/test-kit"]
    const entries = Object.keys(packed.specifiers).flatMap((name) =>
      Object.keys(JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")).exports)
        .filter((subpath) => subpath !== "./package.json")
        .map((subpath) => join(name, subpath))
        .filter((entry) => !needsVitest.includes(entry))
    )
    assert.includeMembers(entries, ["@tradeflow/storage-sql", "@tradeflow/storage-pg/test-kit", "@tradeflow/http-node"])
    const script = `for (const entry of ${
      JSON.stringify(entries)
    }) console.log(entry, Object.keys(await import(entry)).length)`
    const output = await run(process.execPath, ["--input-type=module", "-e", script], project)
    for (const entry of entries) assert.match(output, new RegExp(`^${entry} [1-9]\\d*$`, "m"))
  })

  it(
    "compiles with its own tsconfig, runs under plain node, answers its own route and serves in /tracking/upstream the tradeflow it posted in-process",
    async () => {
      await run("npm", ["run", "build"], project)
      const dataDir = join(project, "data")
      const child = spawn(process.execPath, ["dist/main.js"], {
        cwd: project,
        env: cleanEnv({ PORT: "0", DATA_DIR: dataDir }),
        stdio: ["ignore", "pipe", "pipe"]
      })
      try {
        const base = await listening(child)
        const hello = await fetch(`${base}/hello`)
        assert.deepStrictEqual([hello.status, await hello.json()], [200, { hello: "from the host" }])
        const { apiKey } = JSON.parse(readFileSync(join(dataDir, "account.json"), "utf8")) as { apiKey: string }
        let messages: ReadonlyArray<{ readonly tradeflow_reference: string }> = []
        for (let attempt = 0; attempt < 200 && messages.length === 0; attempt++) {
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100))
          const upstream = await fetch(`${base}/tracking/upstream`, { headers: { authorization: apiKey } })
          assert.strictEqual(upstream.status, 200)
          messages = (await upstream.json()) as typeof messages
        }
        assert.isAbove(messages.length, 0)
        assert.isTrue(messages.every((message) => message.tradeflow_reference === "HOST-0001"))
      } finally {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGTERM")
        await exited
      }
    },
    120_000
  )
})

const listening = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let output = ""
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const port = /listening on http:\/\/localhost:(\d+)/.exec(output)?.[1]
      if (port !== undefined) resolve(`http://127.0.0.1:${port}`)
    }
    child.stdout!.on("data", read)
    child.stderr!.on("data", read)
    child.once("exit", (code) => reject(new Error(`the host exited with ${code}:\n${output}`)))
  })
