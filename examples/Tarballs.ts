/**
 * Test support for the pack-and-install tests of the examples: builds every package under
 * `packages/` (`tsc -b`), packs it with `npm pack` as a registry would receive it, and installs
 * tarballs with npm into a fresh directory outside the workspace, as a user's project would.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The repository's root. */
export const root = join(import.meta.dirname, "..")

/** The environment of a child process, without what npm, vitest or a loader set for this one. */
export const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|INIT_CWD$|TEST$)/i.test(name)
    )
  ),
  ...extra
})

/** Runs a command to completion in `cwd` with {@link cleanEnv}; answers its stdout, fails with its output. */
export const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<string>((resolve, reject) =>
    execFile(
      command,
      args,
      { cwd, env: cleanEnv(env), encoding: "utf8", maxBuffer: 64 << 20 },
      (error, stdout, stderr) =>
        error === null
          ? resolve(stdout)
          : reject(new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr || error.message}`))
    )
  )

const lockDirectory = join(root, "node_modules", ".cache", "tradeflow-pack.lock")

const withLock = async <A>(body: () => Promise<A>): Promise<A> => {
  mkdirSync(join(lockDirectory, ".."), { recursive: true })
  for (;;) {
    try {
      mkdirSync(lockDirectory)
      break
    } catch {
      const age = Date.now() - (statSync(lockDirectory, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 300_000) rmSync(lockDirectory, { recursive: true, force: true })
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
  try {
    return await body()
  } finally {
    rmSync(lockDirectory, { recursive: true, force: true })
  }
}

/** The workspace's pinned version of a dependency (the root `devDependencies`). */
export const pinned = (name: string): string => {
  const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies[name]
  if (typeof version !== "string") throw new Error(`${name} is not a devDependency of the workspace`)
  return version
}

/** What {@link packAll} made: `file:` specifiers of the tarballs and the paths each one holds, by package name. */
export interface Packed {
  readonly specifiers: Readonly<Record<string, string>>
  readonly files: Readonly<Record<string, ReadonlyArray<string>>>
}

/**
 * Builds every package from scratch (so that no output of a removed module is packed) and packs
 * it into a new temporary directory. Concurrent callers (test files) take turns, so no build
 * overlaps another.
 */
export const packAll = (): Promise<Packed> =>
  withLock(async () => {
    for (const name of readdirSync(join(root, "packages"))) {
      for (const output of ["dist", ".tsbuildinfo"]) {
        rmSync(join(root, "packages", name, output), { recursive: true, force: true })
      }
    }
    await run(
      process.execPath,
      [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", "tsconfig.build.json"],
      root
    )
    const into = mkdtempSync(join(tmpdir(), "tradeflow-tarballs-"))
    const specifiers: Record<string, string> = {}
    const files: Record<string, ReadonlyArray<string>> = {}
    for (const name of readdirSync(join(root, "packages"))) {
      const [packed] = JSON.parse(
        await run("npm", ["pack", "--json", "--pack-destination", into], join(root, "packages", name))
      ) as Array<
        { readonly name: string; readonly filename: string; readonly files: ReadonlyArray<{ readonly path: string }> }
      >
      specifiers[packed!.name] = `file:${join(into, packed!.filename)}`
      files[packed!.name] = packed!.files.map((file) => file.path)
    }
    return { specifiers, files }
  })

/**
 * A fresh project in a new temporary directory outside the workspace: `files` copied from the
 * workspace (relative to `from`), `packageJson` written, and `npm install` run from the local cache
 * where it can. Native modules build as they would for a user.
 */
export const installProject = async (
  from: string,
  files: ReadonlyArray<string>,
  packageJson: Record<string, unknown>
): Promise<string> => {
  const directory = mkdtempSync(join(tmpdir(), "tradeflow-host-"))
  for (const file of files) {
    const target = join(directory, file)
    mkdirSync(join(target, ".."), { recursive: true })
    writeFileSync(target, readFileSync(join(from, file)))
  }
  writeFileSync(join(directory, "package.json"), JSON.stringify(packageJson, null, 2))
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], directory)
  return directory
}

/** Every directory holding a copy of `name` in an installed project (`npm ls --all --parseable`). */
export const copiesOf = async (directory: string, name: string): Promise<ReadonlyArray<string>> => {
  const listed = await run("npm", ["ls", name, "--all", "--parseable"], directory)
  return [...new Set(listed.split("\n").filter((line) => line.endsWith(`/node_modules/${name}`)))]
}
