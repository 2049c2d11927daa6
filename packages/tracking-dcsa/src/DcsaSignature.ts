/**
 * The `Notification-Signature` of DCSA 2.2 subscription callbacks: `sha256=<hex>`, the HMAC-SHA256
 * of the raw request body under the subscription's shared secret. The body's bytes are signed as
 * received; no header and not the URL.
 *
 * @module
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** The signature header's value for a body: `sha256=` and the lower-case hex HMAC-SHA256. */
export const sign = (secret: Uint8Array, body: Uint8Array): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

const header = /^\s*sha256=([0-9a-fA-F]{64})\s*$/

/**
 * Whether a signature header's value is the body's under the secret. The digests are compared in
 * constant time (`timingSafeEqual` on two 32-byte buffers); a header of another form is false.
 */
export const verify = (secret: Uint8Array, body: Uint8Array, signature: string | undefined): boolean => {
  const match = signature === undefined ? null : header.exec(signature)
  if (match === null) return false
  const given = Buffer.from(match[1]!, "hex")
  const expected = createHmac("sha256", secret).update(body).digest()
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A fresh shared secret of 32 random bytes. */
export const secret = (): Uint8Array => new Uint8Array(randomBytes(32))
