import { HttpApiBuilder } from "@effect/platform"
import { Readiness } from "@tradeflow/core"
import { Effect } from "effect"
import type { Api, ApiV3 } from "../Api.js"
import * as Problem from "../Problem.js"

/** The health check and the readiness of `api`. */
export const healthGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "health",
    (handlers) =>
      handlers
        .handle("health", () => Effect.succeed({ status: "ok" as const }))
        .handle("ready", () =>
          Effect.flatMap(Readiness.Readiness, (readiness) => readiness.report).pipe(
            Effect.flatMap((report) =>
              report.ready
                ? Effect.succeed({ status: "ready" as const, running: report.running })
                : Effect.fail(Problem.make(
                  503,
                  `not ready: ${report.missing.map((m) => `${m.component} ${m.reason}`).join("; ")}`,
                  report.missing.map((m) => ({ path: m.component, message: m.reason }))
                ))
            )
          ))
  )
