import { keyRevocationContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { PgStorage } from "../src/index.js"
import { makeTestSchema } from "./TestDatabase.js"

keyRevocationContract(
  "postgres",
  Effect.map(makeTestSchema(), (test) => {
    const open = () => PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 })
    return [open(), open()] as const
  })
)
