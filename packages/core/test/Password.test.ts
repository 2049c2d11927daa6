import { assert, describe, it } from "@effect/vitest"
import { scrypt } from "@noble/hashes/scrypt.js"
import { utf8ToBytes } from "@noble/hashes/utils.js"
import { Effect, Either, Encoding, FastCheck as fc } from "effect"
import * as Password from "../src/internal/password.js"

const cheap = { log2N: 4, r: 8, p: 1 }

describe("password hashing", () => {
  it.effect.prop(
    "a hash verifies its own password only, and is the scrypt of @noble/hashes (the portable path) too",
    [fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 })],
    ([password, other]) =>
      Effect.gen(function*() {
        const stored = yield* Password.hash(password, cheap)
        assert.match(stored, /^scrypt\$4\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/)
        assert.isTrue(yield* Password.verify(password, stored))
        assert.strictEqual(yield* Password.verify(other, stored), other === password)
        const [, , , , salt, key] = stored.split("$")
        const portable = scrypt(utf8ToBytes(password), Either.getOrThrow(Encoding.decodeBase64Url(salt!)), {
          N: 16,
          r: 8,
          p: 1,
          dkLen: 32
        })
        assert.strictEqual(Encoding.encodeBase64Url(portable), key)
      }),
    { fastCheck: { numRuns: 20 } }
  )

  it.effect("a stored hash naming an unreadable or too costly scrypt is refused without hashing", () =>
    Effect.gen(function*() {
      const stored = yield* Password.hash("secret", cheap)
      const [, , , , salt, key] = stored.split("$")
      for (const cost of ["18$8$1", "4$9$1", "4$8$9", "0$8$1", "x$8$1"]) {
        assert.isFalse(yield* Password.verify("secret", `scrypt$${cost}$${salt}$${key}`), cost)
      }
      assert.isFalse(yield* Password.verify("secret", "bcrypt$whatever"))
      assert.isTrue(Password.outdated(stored, Password.owaspCost))
      assert.isFalse(Password.outdated(stored, cheap))
    }))
})
