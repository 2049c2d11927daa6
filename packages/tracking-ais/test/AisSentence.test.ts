import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { AisSentence } from "../src/index.js"

const type1 = "!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A"
const type5Part1 = "!AIVDM,2,1,1,A,55?MbV02;H;s<HtKR20EHE:0@T4@Dn2222222216L961O5Gf0NSQEp6ClRp8,0*1C"

describe("AisSentence", () => {
  it("splits the fields of a sentence", () => {
    assert.deepStrictEqual(
      AisSentence.parse(type5Part1),
      Option.some({
        address: "AIVDM",
        total: 2,
        index: 1,
        sequenceId: "1",
        channel: "A",
        payload: "55?MbV02;H;s<HtKR20EHE:0@T4@Dn2222222216L961O5Gf0NSQEp6ClRp8",
        fillBits: 0
      })
    )
  })

  it("writes back what it reads", () => {
    for (
      const line of [
        type1,
        type5Part1,
        "!AIVDM,2,2,1,A,88888888880,2*25",
        "!AIVDO,1,1,,,H42O55i18tMET00000000000000,2*2E"
      ]
    ) {
      assert.strictEqual(AisSentence.format(Option.getOrThrow(AisSentence.parse(line))), line)
    }
  })

  it("checksums the text between ! and *", () => {
    assert.strictEqual(AisSentence.checksum("AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0"), "4A")
    assert.strictEqual(AisSentence.checksum(""), "00")
  })

  it("skips tag blocks and surrounding white space, and takes a lower-case checksum", () => {
    const expected = AisSentence.parse(type1)
    assert.isTrue(Option.isSome(expected))
    assert.deepStrictEqual(AisSentence.parse(`\\s:rORBCOMM000,c:1700000000*4B\\${type1}`), expected)
    assert.deepStrictEqual(AisSentence.parse(`\\g:1-2-73874*A\\\\s:r003669945,c:1241544035*4A\\${type1}`), expected)
    assert.deepStrictEqual(AisSentence.parse(`  ${type1}\r`), expected)
    assert.deepStrictEqual(AisSentence.parse(type1.replace("*4A", "*4a")), expected)
  })

  it("refuses a wrong checksum, a missing one, and anything that is not an AIS sentence", () => {
    for (
      const line of [
        type1.replace("*4A", "*4B"),
        type1.replace("15RT", "15RU"),
        type1.slice(0, -3),
        type1.slice(1),
        "",
        "garbage",
        "\\s:unterminated tag block!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A",
        "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47"
      ]
    ) {
      assert.isTrue(Option.isNone(AisSentence.parse(line)), JSON.stringify(line))
    }
  })

  it("refuses malformed fields even when the checksum matches", () => {
    const bodies = [
      "AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ",
      "AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0,extra",
      "AIVDX,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0",
      "AIVDM,0,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0",
      "AIVDM,1,2,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0",
      "AIVDM,2,1,12,A,15RTgt0PAso;90TKcjM8h6g208CQ,0",
      "AIVDM,1,1,,C,15RTgt0PAso;90TKcjM8h6g208CQ,0",
      "AIVDM,1,1,,A,,0",
      "AIVDM,1,1,,A,15RTgt0PAso;90TK{jM8h6g208CQ,0",
      "AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,6"
    ]
    for (const body of bodies) {
      assert.isTrue(Option.isNone(AisSentence.parse(`!${body}*${AisSentence.checksum(body)}`)), body)
    }
  })
})
