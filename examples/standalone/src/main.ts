/**
 * `npm start`: the standalone server.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { layerConfig } from "./Server.js"

Layer.launch(layerConfig).pipe(NodeRuntime.runMain)
