/**
 * Errors of the downstream operations that reach the client. HTTP statuses are mapped in
 * http-node.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/** One problem of a rejected request: a JSON Pointer into the body and what is wrong there. */
export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
/** @since 0.1.0 */
export type Issue = typeof Issue.Type

/** The request does not satisfy the record rules; nothing of it was queued. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  errors: Schema.Array(Issue)
}) {}

/** More records than one request may carry. */
export class TooManyRecords extends Schema.TaggedError<TooManyRecords>()("TooManyRecords", {
  limit: Schema.Number,
  count: Schema.Number
}) {}

/** An `Idempotency-Key` reused with a different body. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  key: Schema.String
}) {}

/** A request with this `Idempotency-Key` is still being answered. */
export class IdempotencyKeyInFlight extends Schema.TaggedError<IdempotencyKeyInFlight>()("IdempotencyKeyInFlight", {
  key: Schema.String
}) {}

/** A production wildcard delete without `confirm=PRODUCTION`. */
export class ConfirmationRequired extends Schema.TaggedError<ConfirmationRequired>()("ConfirmationRequired", {
  parameter: Schema.String
}) {}

/** No tradeflow with this reference in the organisation. */
export class TradeflowNotFound extends Schema.TaggedError<TradeflowNotFound>()("TradeflowNotFound", {
  reference: Schema.String
}) {}
