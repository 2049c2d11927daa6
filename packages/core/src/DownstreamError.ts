/**
 * Errors of the downstream operations that reach the client. HTTP statuses are mapped in
 * http-node.
 *
 * @module
 */
import { Schema } from "effect"

/** One problem of a rejected request: a JSON Pointer into the body and what is wrong there. */
export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type Issue = typeof Issue.Type

/** At most this many issues are listed in one problem; the rest are counted in a last entry. */
export const maxIssues = 100

/**
 * The issues of a problem: the first {@link maxIssues} of `issues`, then, when there are `total`
 * (by default `issues.length`) and so more than listed, `{ path: "", message: "and N more problems
 * not listed" }`.
 */
export const listIssues = (issues: ReadonlyArray<Issue>, total = issues.length): ReadonlyArray<Issue> => {
  const listed = issues.length <= maxIssues ? issues : issues.slice(0, maxIssues)
  return total <= listed.length
    ? listed
    : [...listed, { path: "", message: `and ${(total - listed.length).toLocaleString("en")} more problems not listed` }]
}

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
