/**
 * Processing of queued jobs (placeholder signature; the processing work replaces the body).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Job } from "./Job.js"
import type { Locations } from "./Locations.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import type { Commit, TradeflowStore } from "./TradeflowStore.js"

/** Computes everything a job changes; the caller commits it with `TradeflowStore.commit`. */
export const processJob = (_job: Job): Effect.Effect<Commit, StorageError, TradeflowStore | Locations | TrackingConfig> =>
  Effect.dieMessage("pending")
