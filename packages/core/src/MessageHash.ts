/**
 * Deterministic message hashes (DECISIONS.md §5): the hex SHA-256 of the canonical JSON of a
 * message without its volatile parts, so the same fact rendered twice has the same hash.
 *
 * @module
 */
import type { Effect } from "effect"
import { sha256Hex as digest, sha256HexSync } from "./internal/crypto.js"

/** JSON with object keys sorted at every depth (arrays keep their order, `undefined` members are left out). */
export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeys(v)
    }
    return out
  }
  return value
}

const withoutKeys = (value: unknown, keys: ReadonlySet<string>): unknown => {
  if (Array.isArray(value)) return value.map((v) => withoutKeys(v, keys))
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) if (!keys.has(k)) out[k] = withoutKeys(v, keys)
    return out
  }
  return value
}

const volatile = new Set(["predicted_at"])

/**
 * The hashed content of a message: everything but `hash`, `message_generated_event_date`,
 * `payload.shipment` and every `predicted_at` (at any depth).
 */
export const hashedContent = (message: { readonly payload: unknown }): unknown => {
  const { hash: _hash, message_generated_event_date: _generated, payload, ...rest } = message as
    & Record<string, unknown>
    & { readonly payload: unknown }
  const { shipment: _shipment, ...payloadRest } = (payload ?? {}) as Record<string, unknown>
  return withoutKeys({ ...rest, payload: payloadRest }, volatile)
}

/** Hex SHA-256 of a UTF-8 text. */
export const sha256Hex: (text: string) => Effect.Effect<string> = digest

/** The hash of a message (see {@link hashedContent}). */
export const hashMessage = (message: { readonly payload: unknown }): Effect.Effect<string> =>
  sha256Hex(canonicalJson(hashedContent(message)))

/** {@link hashMessage}, computed at once (for loops over many messages). */
export const hashMessageSync = (message: { readonly payload: unknown }): string =>
  sha256HexSync(canonicalJson(hashedContent(message)))
