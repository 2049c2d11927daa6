import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Effect } from "effect"

/**
 * Hex SHA-256 of the UTF-8 text, computed synchronously: a WebCrypto digest is a round trip to the
 * thread pool (about 60 µs per call, awaited in turn for every message of a job), ours about 10 µs.
 */
export const sha256Hex = (text: string): Effect.Effect<string> =>
  Effect.sync(() => bytesToHex(sha256(utf8ToBytes(text))))

/** `bytes` cryptographically random bytes, base64url-encoded without padding. */
export const randomToken = (bytes: number): string => {
  const buf = globalThis.crypto.getRandomValues(new Uint8Array(bytes))
  let s = ""
  for (const b of buf) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

/** A random identifier with a prefix, e.g. `org_3f9c…`. */
export const randomId = (prefix: string): string =>
  `${prefix}_${bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(12)))}`

/** Compares two strings in time that depends only on their lengths. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}
