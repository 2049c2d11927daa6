/**
 * `npm start`: the standalone server. SIGTERM or SIGINT shuts it down gracefully within
 * `SHUTDOWN_GRACE_MILLIS` (see `layerConfig`) and it exits 0; a second signal ends it at once.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { layerConfig } from "./Server.js"

Layer.launch(layerConfig).pipe(NodeRuntime.runMain)
