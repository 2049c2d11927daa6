/**
 * The error of every storage port: adapters translate their driver's errors into it.
 *
 * @module
 */
import { Data } from "effect"

/** A storage operation failed; `cause` is the driver's error. */
export class StorageError extends Data.TaggedError("StorageError")<{
  readonly operation: string
  readonly cause: unknown
}> {}
