/**
 * `npm start`: the standalone server. SIGTERM or SIGINT shuts it down gracefully within
 * `SHUTDOWN_GRACE_MILLIS` (see `layerConfig`) and it exits 0; a second signal ends it at once.
 * It logs as `LOG_FORMAT` and `LOG_LEVEL` say (see `Logging`) and exports traces when an OTLP
 * endpoint is configured (see `Telemetry`); the spans still batched are exported on shutdown.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Logging from "./Logging.js"
import { layerConfig } from "./Server.js"
import * as Telemetry from "./Telemetry.js"

Layer.launch(layerConfig).pipe(
  Effect.provide(Telemetry.layerConfig),
  Effect.provide(Logging.layerConfig),
  NodeRuntime.runMain
)
