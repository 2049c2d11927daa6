/**
 * Service: the downstream operations. Accepted work is committed to the {@link JobQueue} before
 * the call returns; the {@link Worker} processes it afterwards.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type {
  ConfirmationRequired,
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  TooManyRecords,
  TradeflowNotFound,
  ValidationError
} from "./DownstreamError.js"
import type { Environment } from "./Environment.js"
import type { StorageError } from "./StorageError.js"

/** The 202 answer of a downstream post. */
export interface Accepted {
  readonly status: "queued"
  readonly tradeflows: ReadonlyArray<{ readonly tradeflow_reference: string; readonly warnings: ReadonlyArray<string> }>
}

/** A downstream post. */
export interface Submission {
  readonly organisation_id: string
  readonly environment: Environment
  /** The parsed JSON body. */
  readonly body: unknown
  /** `array`: `POST /downstream` (an array is required); `any`: an object or an array. */
  readonly form: "array" | "any"
  readonly idempotency_key?: string
}

/** A downstream delete: one reference, or every tradeflow (`reference: null`). */
export interface Removal {
  readonly organisation_id: string
  readonly environment: Environment
  readonly reference: string | null
  readonly hard: boolean
  readonly confirm?: string
}

/** @since 0.1.0 */
export class Ingest extends Context.Tag("@tradeflow/core/Ingest")<Ingest, {
  readonly submit: (submission: Submission) => Effect.Effect<
    Accepted,
    ValidationError | TooManyRecords | IdempotencyKeyReused | IdempotencyKeyInFlight | StorageError
  >
  /** Runs after every job queued before it, and answers what it changed. */
  readonly remove: (removal: Removal) => Effect.Effect<
    { readonly status: "deactivated" | "deleted"; readonly count: number },
    ConfirmationRequired | TradeflowNotFound | StorageError
  >
}>() {}
