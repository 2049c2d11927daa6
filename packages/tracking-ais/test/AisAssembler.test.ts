import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { AisAssembler, type AisSentence } from "../src/index.js"

const part = (
  index: number,
  payload: string,
  options?: { total?: number; sequenceId?: string; channel?: string; fillBits?: number; address?: string }
): AisSentence.AisSentence => ({
  address: options?.address ?? "AIVDM",
  total: options?.total ?? 2,
  index,
  sequenceId: options?.sequenceId ?? "1",
  channel: options?.channel ?? "A",
  payload,
  fillBits: options?.fillBits ?? (index === (options?.total ?? 2) ? 2 : 0)
})

const payloads = (assembler: AisAssembler.AisAssembler, sentences: ReadonlyArray<AisSentence.AisSentence>, now = 0) =>
  sentences.flatMap((s) => Option.toArray(assembler.push(s, now))).map((m) => m.payload)

describe("AisAssembler", () => {
  it("a single-part sentence is a whole message, fill bits and channel kept", () => {
    const assembler = AisAssembler.make()
    assert.deepStrictEqual(
      assembler.push(part(1, "abc", { total: 1, sequenceId: "", channel: "B", fillBits: 4 }), 0),
      Option.some({ payload: "abc", fillBits: 4, channel: "B" })
    )
    assert.strictEqual(assembler.pending(), 0)
  })

  it("joins the parts of a message in order, with the fill bits of the last", () => {
    const assembler = AisAssembler.make()
    assert.isTrue(Option.isNone(assembler.push(part(1, "first"), 0)))
    assert.strictEqual(assembler.pending(), 1)
    assert.deepStrictEqual(
      assembler.push(part(2, "second"), 0),
      Option.some({ payload: "firstsecond", fillBits: 2, channel: "A" })
    )
    assert.strictEqual(assembler.pending(), 0)
    assert.deepStrictEqual(
      payloads(assembler, [part(1, "a", { total: 3 }), part(2, "b", { total: 3 }), part(3, "c", { total: 3 })]),
      ["abc"]
    )
  })

  it("keeps messages of other ids or channels apart, and single-part sentences do not disturb them", () => {
    const assembler = AisAssembler.make()
    assert.deepStrictEqual(
      payloads(assembler, [
        part(1, "a1"),
        part(1, "b1", { sequenceId: "2" }),
        part(1, "c1", { channel: "B" }),
        part(1, "single", { total: 1, sequenceId: "" }),
        part(2, "b2", { sequenceId: "2" }),
        part(2, "a2"),
        part(2, "c2", { channel: "B" })
      ]),
      ["single", "b1b2", "a1a2", "c1c2"]
    )
  })

  it("discards a message whose parts are broken: missing, repeated, out of order, of another total or channel", () => {
    const cases: ReadonlyArray<ReadonlyArray<AisSentence.AisSentence>> = [
      [part(2, "b")],
      [part(1, "a", { total: 3 }), part(3, "c", { total: 3 })],
      [part(1, "a", { total: 3 }), part(2, "b", { total: 3 }), part(2, "b", { total: 3 }), part(3, "c", { total: 3 })],
      [part(1, "a", { total: 3 }), part(2, "b")],
      [part(1, "a"), part(2, "b", { channel: "B" })],
      [part(1, "a"), part(2, "b", { address: "AIVDO" })],
      [part(1, "a", { fillBits: 2 }), part(2, "b")]
    ]
    for (const sentences of cases) {
      const assembler = AisAssembler.make()
      assert.deepStrictEqual(payloads(assembler, sentences), [], JSON.stringify(sentences))
    }
  })

  it("a new first part starts the message again", () => {
    const assembler = AisAssembler.make()
    assert.deepStrictEqual(payloads(assembler, [part(1, "old"), part(1, "new"), part(2, "end")]), ["newend"])
  })

  it("discards a message whose parts take longer than the timeout", () => {
    const assembler = AisAssembler.make({ timeout: "2 seconds" })
    assert.isTrue(Option.isNone(assembler.push(part(1, "a"), 10_000)))
    assert.isTrue(Option.isNone(assembler.push(part(2, "b"), 12_001)))
    assert.strictEqual(assembler.pending(), 0)
    assert.isTrue(Option.isNone(assembler.push(part(1, "a"), 20_000)))
    assert.deepStrictEqual(
      assembler.push(part(2, "b"), 22_000),
      Option.some({ payload: "ab", fillBits: 2, channel: "A" })
    )
  })

  it("forgets expired messages of other ids, so nothing stays pending for long", () => {
    const assembler = AisAssembler.make()
    for (let id = 0; id < 10; id++) assembler.push(part(1, "x", { sequenceId: String(id) }), 0)
    assert.strictEqual(assembler.pending(), 10)
    assembler.push(part(1, "y", { sequenceId: "3", channel: "B" }), 5_001)
    assert.strictEqual(assembler.pending(), 1)
  })
})
