import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { decodeUtf8 } from "../src/internal/body.js"

const fatal = new TextDecoder("utf-8", { fatal: true })

const reference = (bytes: Uint8Array): string | undefined => {
  try {
    return fatal.decode(bytes)
  } catch {
    return undefined
  }
}

const encoded = fc.string({ unit: "grapheme" }).map((s) => new TextEncoder().encode(s))

/** Valid UTF-8 with a few bytes overwritten or cut: overlongs, surrogates, truncated sequences. */
const damaged = fc.tuple(
  fc.oneof(encoded, fc.constant(new Uint8Array([0xef, 0xbb, 0xbf, 0x5b, 0x5d]))),
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xe0, 0xed, 0xef, 0xf4, 0xf5, 0xff)), {
    maxLength: 3
  }),
  fc.nat()
).map(([bytes, edits, cut]) => {
  const out = Uint8Array.from(bytes)
  for (const [at, byte] of edits) if (out.length > 0) out[at % out.length] = byte
  return out.subarray(0, out.length === 0 ? 0 : out.length - (cut % Math.min(4, out.length)))
})

describe("decodeUtf8", () => {
  it.prop("answers what a fatal TextDecoder answers", [
    fc.oneof(encoded, damaged, fc.uint8Array({ maxLength: 12 }))
  ], ([bytes]) => {
    assert.strictEqual(decodeUtf8(bytes), reference(bytes))
  }, { fastCheck: { numRuns: 5000 } })

  it("drops a leading byte order mark and keeps a later one, in a slice of a larger buffer", () => {
    const whole = new Uint8Array([0x20, 0xef, 0xbb, 0xbf, 0x31, 0xef, 0xbb, 0xbf])
    assert.strictEqual(decodeUtf8(whole.subarray(1)), "1\ufeff")
    assert.strictEqual(decodeUtf8(whole.subarray(1)), reference(whole.subarray(1)))
    assert.strictEqual(decodeUtf8(new Uint8Array([0xed, 0xa0, 0x80])), undefined)
  })
})
