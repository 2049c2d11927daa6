/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): secrets, signatures and the
 * `webhook-id` / `webhook-timestamp` / `webhook-signature` headers of a delivery.
 *
 * @module
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/**
 * Prefix of a Standard Webhooks secret.
 */
export const secretPrefix = "whsec_"

/**
 * The body of a delivery: the exact bytes sent (a string is sent as UTF-8).
 */
export type Body = string | Uint8Array

/**
 * The three signature headers of a delivery.
 */
export type Headers = {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/**
 * A fresh secret: `whsec_` followed by the base64 of 32 random bytes.
 */
export const generateSecret = (): string => secretPrefix + randomBytes(32).toString("base64")

/**
 * The HMAC key of a secret: the base64-decoded part after `whsec_` (the prefix is optional).
 * Returns `undefined` when the secret is not valid base64 or decodes to no bytes.
 */
export const secretKey = (secret: string): Uint8Array | undefined => {
  const encoded = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 === 1) return undefined
  const key = Buffer.from(encoded, "base64")
  return key.length === 0 ? undefined : new Uint8Array(key)
}

/**
 * Whether a string is a usable secret (see {@link secretKey}).
 */
export const isValidSecret = (secret: string): boolean => secretKey(secret) !== undefined

const keyOrThrow = (secret: string): Uint8Array => {
  const key = secretKey(secret)
  if (key === undefined) throw new TypeError("invalid webhook secret: expected whsec_<base64>")
  return key
}

/**
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. `timestamp` is in unix seconds. Throws a
 * `TypeError` on a secret that is not valid (secrets come from {@link generateSecret}).
 */
export const sign = (options: {
  readonly secret: string
  readonly id: string
  readonly timestamp: number
  readonly body: Body
}): string => {
  const hmac = createHmac("sha256", keyOrThrow(options.secret))
  hmac.update(`${options.id}.${Math.floor(options.timestamp)}.`, "utf8")
  hmac.update(typeof options.body === "string" ? Buffer.from(options.body, "utf8") : options.body)
  return `v1,${hmac.digest("base64")}`
}

/**
 * The headers of a delivery, signed with every given secret: the current one first, then the
 * previous ones still valid during a rotation (their signatures are space-separated).
 */
export const headers = (options: {
  readonly secrets: readonly [string, ...Array<string>]
  readonly id: string
  readonly timestamp: number
  readonly body: Body
}): Headers => ({
  "webhook-id": options.id,
  "webhook-timestamp": String(Math.floor(options.timestamp)),
  "webhook-signature": options.secrets
    .map((secret) => sign({ secret, id: options.id, timestamp: options.timestamp, body: options.body }))
    .join(" ")
})

/**
 * Verifies signed headers as a receiver would: some `v1` signature must match one of `secrets`
 * and the timestamp must be within `toleranceSeconds` (default 300) of `now` (unix seconds).
 */
export const verify = (options: {
  readonly secrets: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Body
  readonly now: number
  readonly toleranceSeconds?: number
}): boolean => {
  const lower = new Map(Object.entries(options.headers).map(([k, v]) => [k.toLowerCase(), v]))
  const id = lower.get("webhook-id")
  const timestampHeader = lower.get("webhook-timestamp")
  const signatureHeader = lower.get("webhook-signature")
  if (!id || !timestampHeader || !signatureHeader || !/^\d+$/.test(timestampHeader)) return false
  const timestamp = Number(timestampHeader)
  if (Math.abs(options.now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  const passed = signatureHeader.split(" ").flatMap((part) => {
    const [version, signature] = part.split(",")
    return version === "v1" && signature !== undefined ? [Buffer.from(signature)] : []
  })
  return options.secrets.some((secret) => {
    if (!isValidSecret(secret)) return false
    const expected = Buffer.from(sign({ secret, id, timestamp, body: options.body }).slice(3))
    return passed.some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected))
  })
}
