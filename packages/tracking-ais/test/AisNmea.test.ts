import { assert, describe, it } from "@effect/vitest"
import type { VesselPositionSource } from "@tradeflow/core"
import { Chunk, Effect, Exit, FastCheck as fc, Stream, TestClock } from "effect"
import { AisDecoder, AisNmea, AisSentence } from "../src/index.js"
import { AisEncoder } from "../test-kit/index.js"

const received = Date.parse("2026-03-01T10:00:50.250Z")

/** AIS resolution: a position is sent in 1/10000 minute, half a unit either way after rounding. */
const resolution = 0.5 / 600_000 + 1e-12

const sixBitText = (maxLength: number) =>
  fc.array(fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-/'&"), { maxLength })
    .map((chars) => chars.join(""))

const mmsi = fc.integer({ min: 100_000_000, max: 999_999_999 }).map(String)

const imo = fc.integer({ min: 100_000, max: 999_999 }).map((six) => {
  const digits = String(six)
  let sum = 0
  for (let i = 0; i < 6; i++) sum += Number(digits[i]) * (7 - i)
  return `${digits}${sum % 10}`
})

const positionReport = fc.record({
  type: fc.constantFrom(1 as const, 2 as const, 3 as const, 18 as const, 19 as const),
  mmsi,
  lat: fc.double({ min: -90, max: 90, noNaN: true }),
  lng: fc.double({ min: -180, max: 180, noNaN: true }),
  sog: fc.option(fc.double({ min: 0, max: 102.1, noNaN: true }), { nil: undefined }),
  cog: fc.option(fc.double({ min: 0, max: 359.94, noNaN: true }), { nil: undefined }),
  second: fc.option(fc.integer({ min: 0, max: 63 }), { nil: undefined }),
  name: sixBitText(20)
})

const sequenceId = fc.integer({ min: 0, max: 9 }).map(String)

const staticReport = fc.oneof(
  fc.record({ kind: fc.constant("5" as const), mmsi, imo, name: sixBitText(20), callSign: sixBitText(7), sequenceId }),
  fc.record({ kind: fc.constant("24A" as const), mmsi, name: sixBitText(20) }),
  fc.record({ kind: fc.constant("24B" as const), mmsi, callSign: sixBitText(7) })
)

const read = (lines: ReadonlyArray<string>, at = received) => AisNmea.lineReader().read(lines, at)

const trimmed = (text: string) => text.trim() === "" ? undefined : text.trim()

/** A well-formed report, whatever the input was. */
const assertWellFormed = (report: VesselPositionSource.VesselReport, receivedAt: number) => {
  assert.match(report.mmsi, /^[0-9]{9}$/)
  if (report._tag === "Position") {
    assert.isTrue(Math.abs(report.lat) <= 90 && Math.abs(report.lng) <= 180, JSON.stringify(report))
    assert.isTrue(report.sog === undefined || (report.sog >= 0 && report.sog <= 102.1), JSON.stringify(report))
    assert.isTrue(report.cog === undefined || (report.cog >= 0 && report.cog < 360), JSON.stringify(report))
    assert.isTrue(report.observed_at <= receivedAt && report.observed_at > receivedAt - 60_000)
  } else {
    assert.isTrue(report.imo === undefined || AisDecoder.isImoNumber(Number(report.imo)), JSON.stringify(report))
    for (const text of [report.name, report.call_sign]) {
      assert.isTrue(text === undefined || (text !== "" && text === text.trim()), JSON.stringify(report))
    }
    assert.strictEqual(report.observed_at, receivedAt)
  }
}

describe("AisNmea.lineSplitter", () => {
  it("splits on CRLF, LF and CR, keeping an unfinished line for the next chunk", () => {
    const splitter = AisNmea.lineSplitter()
    assert.deepStrictEqual(splitter.push("one\r\ntwo\nthr"), ["one", "two"])
    assert.deepStrictEqual(splitter.push("ee\r"), ["three"])
    assert.deepStrictEqual(splitter.push("\nfour\r\n\r\n"), ["four"])
    assert.deepStrictEqual(splitter.push("five"), [])
    assert.deepStrictEqual(splitter.flush(), ["five"])
    assert.deepStrictEqual(splitter.flush(), [])
  })

  it("drops a line longer than the limit, whether it comes in one chunk or many, and keeps the next", () => {
    const splitter = AisNmea.lineSplitter(10)
    assert.deepStrictEqual(splitter.push(`${"x".repeat(11)}\nshort\n`), ["short"])
    assert.deepStrictEqual(splitter.push("y".repeat(8)), [])
    assert.deepStrictEqual(splitter.push("y".repeat(8)), [])
    assert.deepStrictEqual(splitter.push("y".repeat(8)), [])
    assert.deepStrictEqual(splitter.push("yy\nnext\n"), ["next"])
  })

  it.prop("any chunking of a feed gives the reports of the whole text", [
    fc.array(positionReport, { minLength: 1, maxLength: 8 }),
    fc.array(fc.integer({ min: 0, max: 2_000 }), { maxLength: 12 })
  ], ([reports, cuts]) => {
    const lines = reports.flatMap((r) => AisEncoder.sentences(AisEncoder.position(r)))
    const text = lines.map((line) => `${line}\r\n`).join("")
    const positions = [0, ...cuts.map((c) => c % (text.length + 1)).sort((a, b) => a - b), text.length]
    const splitter = AisNmea.lineSplitter()
    const chunked = positions.slice(1).flatMap((end, i) => splitter.push(text.slice(positions[i], end)))
    assert.deepStrictEqual(chunked, lines)
    assert.deepStrictEqual(read(chunked), read(lines))
  })
})

describe("AisNmea: encode, then decode", () => {
  it.prop("positions of every type come back within AIS resolution", [positionReport], ([report]) => {
    const reports = read(AisEncoder.sentences(AisEncoder.position(report)))
    const position = reports[0]
    assert.isDefined(position)
    assert.strictEqual(position!._tag, "Position")
    if (position!._tag !== "Position") return
    assert.strictEqual(position.mmsi, report.mmsi)
    assert.approximately(position.lat, report.lat, resolution)
    assert.approximately(position.lng, report.lng, resolution)
    if (report.sog === undefined) assert.isUndefined(position.sog)
    else assert.approximately(position.sog!, report.sog, 0.05 + 1e-9)
    if (report.cog === undefined) assert.isUndefined(position.cog)
    else assert.approximately(position.cog!, report.cog, 0.05 + 1e-9)
    assert.strictEqual(position.observed_at, AisDecoder.observedAt(received, report.second ?? 60))
    const name = trimmed(report.name)
    assert.deepStrictEqual(
      reports.slice(1),
      report.type === 19 && name !== undefined
        ? [{ _tag: "Static", mmsi: report.mmsi, name, observed_at: received }]
        : []
    )
  })

  it.prop("static data of types 5 and 24 comes back, type 5 in two sentences", [staticReport], ([report]) => {
    const sentences = report.kind === "5"
      ? AisEncoder.sentences(AisEncoder.staticVoyage(report), { sequenceId: report.sequenceId })
      : AisEncoder.sentences(
        AisEncoder.staticB(report.kind === "24A" ? { ...report, part: "A" } : { ...report, part: "B" })
      )
    assert.strictEqual(sentences.length, report.kind === "5" ? 2 : 1)
    const fields = {
      ...(report.kind === "5" ? { imo: report.imo } : {}),
      ...("name" in report && trimmed(report.name) !== undefined ? { name: trimmed(report.name) } : {}),
      ...("callSign" in report && trimmed(report.callSign) !== undefined ? { call_sign: trimmed(report.callSign) } : {})
    }
    assert.deepStrictEqual(
      read(sentences),
      Object.keys(fields).length === 0 ? [] : [{ _tag: "Static", mmsi: report.mmsi, ...fields, observed_at: received }]
    )
  })
})

/** A valid sentence changed here and there; its checksum made right again half of the time. */
const mutatedSentence = fc.record({
  report: positionReport,
  statics: staticReport,
  useStatic: fc.boolean(),
  edits: fc.array(
    fc.record({ at: fc.nat(), remove: fc.integer({ min: 0, max: 5 }), insert: fc.string({ maxLength: 4 }) }),
    { minLength: 1, maxLength: 4 }
  ),
  fixChecksum: fc.boolean()
}).map(({ edits, fixChecksum, report, statics, useStatic }) => {
  const lines = useStatic && statics.kind === "5"
    ? AisEncoder.sentences(AisEncoder.staticVoyage(statics))
    : AisEncoder.sentences(AisEncoder.position(report))
  return lines.map((line) => {
    let body = line.slice(1, line.lastIndexOf("*"))
    for (const edit of edits) {
      const at = edit.at % (body.length + 1)
      body = body.slice(0, at) + edit.insert + body.slice(at + edit.remove)
    }
    return `!${body}*${fixChecksum ? AisSentence.checksum(body) : line.slice(-2)}`
  })
})

/** Well-formed sentences around random payloads: they reach the decoder. */
const randomPayloadSentence = fc.record({
  payload: fc.array(fc.constantFrom(..."0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVW`abcdefghijklmnopqrstuvw"), {
    minLength: 1,
    maxLength: 90
  }),
  type: fc.constantFrom("1", "2", "3", "5", "B", "C", "H", "4", "8"),
  total: fc.integer({ min: 1, max: 3 }),
  index: fc.integer({ min: 1, max: 3 }),
  fillBits: fc.integer({ min: 0, max: 5 })
}).map(({ fillBits, index, payload, total, type }) =>
  AisSentence.format({
    address: "AIVDM",
    total,
    index: Math.min(index, total),
    sequenceId: total === 1 ? "" : "3",
    channel: "B",
    payload: index === 1 ? type + payload.join("") : payload.join(""),
    fillBits
  })
)

const anyLine = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc.string({ unit: "binary", maxLength: 120 }),
  mutatedSentence.map((lines) => lines.join("\n")),
  randomPayloadSentence
)

describe("AisNmea: malformed input", () => {
  it.prop("no line, however malformed, throws; what comes out is well formed", [
    fc.array(anyLine, { maxLength: 40 }),
    fc.integer({ min: 0, max: 4_102_444_800_000 })
  ], ([lines, at]) => {
    const splitter = AisNmea.lineSplitter()
    const split = [...splitter.push(lines.join("\r\n")), ...splitter.flush()]
    for (const report of AisNmea.lineReader().read(split, at)) assertWellFormed(report, at)
  }, { fastCheck: { numRuns: 500 } })

  it.effect.prop("the reports stream of any text ends without failing", [
    fc.array(anyLine, { maxLength: 40 }),
    fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 5 })
  ], ([lines, sizes]) =>
    Effect.gen(function*() {
      yield* TestClock.setTime(received)
      const text = lines.join("\n")
      const chunks: Array<string> = []
      for (let i = 0, k = 0; i < text.length; k++) {
        const size = sizes[k % sizes.length]!
        chunks.push(text.slice(i, i + size))
        i += size
      }
      const exit = yield* Stream.fromIterable(chunks).pipe(
        AisNmea.splitLines(),
        AisNmea.reports(),
        Stream.runCollect,
        Effect.exit
      )
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        for (const report of Chunk.toReadonlyArray(exit.value)) assertWellFormed(report, received)
      }
    }), { fastCheck: { numRuns: 100 } })

  it.effect("the reports stream dates each chunk of lines by the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(received)
      const line = AisEncoder.sentences(AisEncoder.position({ type: 1, mmsi: 244123456, lat: 51.9, lng: 4.1 }))[0]!
      const reports = yield* Stream.make(`${line}\n`).pipe(AisNmea.splitLines(), AisNmea.reports(), Stream.runCollect)
      assert.deepStrictEqual(Chunk.toReadonlyArray(reports).map((r) => r.observed_at), [received])
    }))
})
