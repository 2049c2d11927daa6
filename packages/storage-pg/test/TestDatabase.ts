/**
 * The PostgreSQL server of this repository's tests and benchmarks: `TRADEFLOW_TEST_PG_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`, given to the test kit.
 */
import { Effect, Layer } from "effect"
import * as TestKit from "../test-kit/index.js"

export type { TestSchema } from "../test-kit/index.js"
export { openInstance, TestDatabase } from "../test-kit/index.js"

/** The URL of the test server. */
export const testDatabaseUrl: string = process.env["TRADEFLOW_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

const hint = (error: Error) => new Error(`${error.message} (set TRADEFLOW_TEST_PG_URL to a reachable server)`)

/** {@link TestKit.makeTestSchema} on the test server. */
export const makeTestSchema = (options: { readonly create?: boolean } = {}) =>
  TestKit.makeTestSchema(testDatabaseUrl, options).pipe(Effect.mapError(hint))

/** {@link TestKit.layerTest} on the test server. */
export const layerTest = TestKit.layerTest(testDatabaseUrl).pipe(
  Layer.mapError((error) => error instanceof Error && !("_tag" in error) ? hint(error) : error)
)
