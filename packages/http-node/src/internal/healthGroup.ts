import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { Api, ApiV3 } from "../Api.js"

/** The health check of `api`. */
export const healthGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "health",
    (handlers) => handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
  )
