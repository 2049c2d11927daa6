import { RateLimitStore } from "@tradeflow/core"
import { rateLimitContract } from "@tradeflow/core/test-kit"
import { Context, Effect, Layer } from "effect"
import * as PgStorage from "../src/PgStorage.js"
import { layerTest, TestDatabase } from "./TestDatabase.js"

rateLimitContract("postgres", layerTest, {
  another: Effect.flatMap(TestDatabase, (test) =>
    Effect.map(
      Layer.build(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 4 })),
      (context) => Context.get(context, RateLimitStore.RateLimitStore)
    ))
})
