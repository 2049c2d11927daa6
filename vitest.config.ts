import { defineConfig } from "vitest/config"

/** Workspace packages resolve to their TypeScript sources through the `@tradeflow/source` export condition. */
const conditions = ["@tradeflow/source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
