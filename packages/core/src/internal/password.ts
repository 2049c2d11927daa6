import { scryptAsync } from "@noble/hashes/scrypt.js"
import { utf8ToBytes } from "@noble/hashes/utils.js"
import { Effect, Encoding } from "effect"
import { constantTimeEqual } from "./crypto.js"

/** scrypt's cost: `N = 2^log2N`, block size `r`, parallelism `p`. */
export interface ScryptCost {
  readonly log2N: number
  readonly r: number
  readonly p: number
}

/**
 * OWASP's Password Storage Cheat Sheet lists scrypt at N=2^17, r=8, p=1 and equivalents of equal
 * cost; N=2^14, r=8, p=5 is one of them, with 16 MiB of memory per hash instead of 128 MiB.
 */
export const owaspCost: ScryptCost = { log2N: 14, r: 8, p: 5 }

const keyLength = 32

type NodeScrypt = (
  password: string,
  salt: Uint8Array,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
  callback: (error: Error | null, key: Uint8Array) => void
) => void

/** Node's `crypto.scrypt` where the runtime has it (on the thread pool), reached without importing it. */
const nativeScrypt = ((globalThis as {
  readonly process?: { readonly getBuiltinModule?: (id: string) => unknown }
}).process?.getBuiltinModule?.("node:crypto") as { readonly scrypt?: NodeScrypt } | undefined)?.scrypt

const memoryOf = (cost: ScryptCost) => 128 * cost.r * (2 ** cost.log2N) * (cost.p + 1) + 1024 * 1024

/** scrypt of the password: natively where the runtime can, else with `@noble/hashes`; both give the same key. */
const derive = (password: string, salt: Uint8Array, cost: ScryptCost): Effect.Effect<Uint8Array> =>
  nativeScrypt === undefined
    ? Effect.promise(() =>
      scryptAsync(utf8ToBytes(password), salt, {
        N: 2 ** cost.log2N,
        r: cost.r,
        p: cost.p,
        dkLen: keyLength,
        maxmem: memoryOf(cost)
      })
    )
    : Effect.async<Uint8Array>((resume) => {
      nativeScrypt(
        password,
        salt,
        keyLength,
        { N: 2 ** cost.log2N, r: cost.r, p: cost.p, maxmem: memoryOf(cost) },
        (error, key) => resume(error === null ? Effect.succeed(key) : Effect.die(error))
      )
    })

/** A self-describing hash: `scrypt$<log2N>$<r>$<p>$<salt>$<key>`, salt and key base64url. */
export const hash = (password: string, cost: ScryptCost): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = globalThis.crypto.getRandomValues(new Uint8Array(16))
    return Effect.map(
      derive(password, salt, cost),
      (key) =>
        `scrypt$${cost.log2N}$${cost.r}$${cost.p}$${Encoding.encodeBase64Url(salt)}$${Encoding.encodeBase64Url(key)}`
    )
  })

/** The costs a stored hash may name (a tampered one cannot make a check take gigabytes or minutes). */
const bounds = { log2N: [1, 17], r: [1, 8], p: [1, 8] } as const

/**
 * Whether `password` is the one `stored` was made from (compared in constant time), at the
 * stored hash's own cost; false for a hash that cannot be read or whose cost is out of bounds.
 */
export const verify = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const [scheme, log2N, r, p, salt, key] = stored.split("$")
    const cost = { log2N: Number(log2N), r: Number(r), p: Number(p) }
    const saltBytes = Encoding.decodeBase64Url(salt ?? "")
    if (
      scheme !== "scrypt" || key === undefined || saltBytes._tag === "Left" ||
      (Object.keys(bounds) as Array<keyof typeof bounds>).some((k) =>
        !Number.isInteger(cost[k]) || cost[k] < bounds[k][0] || cost[k] > bounds[k][1]
      )
    ) return Effect.succeed(false)
    return Effect.map(derive(password, saltBytes.right, cost), (derived) =>
      constantTimeEqual(Encoding.encodeBase64Url(derived), key))
  })

/** Whether `stored` was made at a cost other than `cost` (so it is rehashed at the next sign-in). */
export const outdated = (stored: string, cost: ScryptCost): boolean =>
  !stored.startsWith(`scrypt$${cost.log2N}$${cost.r}$${cost.p}$`)
