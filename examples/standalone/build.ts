/**
 * `npm run build`: bundles the standalone server (`src/main.ts` with every workspace package and
 * dependency) into one ES module, `dist/server.mjs` at the repository root, which `npm start` runs
 * with plain `node`, and its source map beside it (for `--enable-source-maps` and
 * bench/profile-summary.ts). The native drivers stay outside the bundle and load from `node_modules`.
 *
 * Why: under the `tsx` loader the server idles at about 255 MB RSS, bundled at about 145 MB
 * (BENCHMARKS.md, "Memory").
 */
import { build } from "esbuild"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..")

await build({
  entryPoints: [join(import.meta.dirname, "src", "main.ts")],
  outfile: join(root, "dist", "server.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@tradeflow/source"],
  external: ["better-sqlite3", "pg-native"],
  sourcemap: "linked",
  banner: {
    js:
      "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  },
  logLevel: "warning"
})
