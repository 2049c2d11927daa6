import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Random } from "effect"
import * as Iso6346 from "../src/Iso6346.js"

const generated = (seed: number) => Effect.runSync(Iso6346.generate.pipe(Effect.withRandom(Random.make(seed))))

const withDigit = (containerNumber: string, position: number, digit: number) =>
  containerNumber.slice(0, position) + String(digit) + containerNumber.slice(position + 1)

describe("Iso6346", () => {
  it("accepts known real container numbers and rejects their typos", () => {
    assert.isTrue(Iso6346.isValid("CSQU3054383"))
    assert.strictEqual(Iso6346.checkDigit("CSQU305438"), 3)
    assert.isFalse(Iso6346.isValid("CSQU3054384"))
    assert.isFalse(Iso6346.isValid("CSQU3054883"))
    assert.isFalse(Iso6346.isValid("CSQX3054383"))
    assert.isFalse(Iso6346.isValid("CSQU305438"))
    assert.isFalse(Iso6346.isValid("csqu3054383"))
    assert.strictEqual(Iso6346.checkDigit("CSQ3054383"), undefined)
  })

  it.prop("generate() always yields a valid number of category U", [fc.integer()], ([seed]) => {
    const n = generated(seed)
    assert.match(n, /^[A-Z]{3}U\d{7}$/)
    assert.isTrue(Iso6346.isValid(n))
  })

  it.prop(
    "changing the check digit always invalidates",
    [fc.integer(), fc.integer({ min: 1, max: 9 })],
    ([seed, delta]) => {
      const n = generated(seed)
      assert.isFalse(Iso6346.isValid(withDigit(n, 10, (Number(n[10]) + delta) % 10)))
    }
  )

  // A serial digit changes the weighted sum by a non-multiple of 11, so sum % 11 always changes.
  // Only the 10 -> 0 wrap of `(sum % 11) % 10` can then collide: a remainder of 10 and a remainder
  // of 0 both give check digit 0. So a single-digit change of the serial stays valid only when
  // the check digit is 0.
  it.prop(
    "changing one serial digit invalidates, except for the 10 -> 0 wrap (check digit 0)",
    [fc.integer(), fc.integer({ min: 4, max: 9 }), fc.integer({ min: 1, max: 9 })],
    ([seed, position, delta]) => {
      const n = generated(seed)
      const mutated = withDigit(n, position, (Number(n[position]) + delta) % 10)
      if (Iso6346.isValid(mutated)) {
        assert.strictEqual(n[10], "0")
        assert.strictEqual(Iso6346.checkDigit(mutated.slice(0, 10)), 0)
      }
    }
  )

  it("the 10 -> 0 wrap exists and is the only collision", () => {
    let collisions = 0
    for (let serial = 0; serial < 5_000; serial++) {
      const first10 = `CSQU${String(serial).padStart(6, "0")}`
      const n = `${first10}${Iso6346.checkDigit(first10)}`
      for (let position = 4; position < 10; position++) {
        for (let d = 0; d < 10; d++) {
          if (String(d) === n[position]) continue
          const mutated = withDigit(n, position, d)
          if (Iso6346.isValid(mutated)) {
            collisions++
            assert.strictEqual(n[10], "0")
          }
        }
      }
    }
    assert.isAbove(collisions, 0)
  })
})
