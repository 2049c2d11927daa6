import { assert, describe, it } from "@effect/vitest"
import type { VesselPositionSource } from "@tradeflow/core"
import { FastCheck as fc } from "effect"
import { AisDecoder, AisNmea } from "../src/index.js"
import { AisEncoder } from "../test-kit/index.js"

/**
 * Sentences of the gpsd AIVDM/AIVDO protocol documentation and its sample.aivdm, with the values
 * gpsd publishes for them.
 */
const gpsd = {
  type1: "!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A",
  type2: "!AIVDM,1,1,,B,25Cjtd0Oj;Jp7ilG7=UkKBoB0<06,0*60",
  type3: "!AIVDM,1,1,,A,38Id705000rRVJhE7cl9n;160000,0*40",
  type5: [
    "!AIVDM,2,1,1,A,55?MbV02;H;s<HtKR20EHE:0@T4@Dn2222222216L961O5Gf0NSQEp6ClRp8,0*1C",
    "!AIVDM,2,2,1,A,88888888880,2*25"
  ],
  type18: "!AIVDM,1,1,,A,B52K>;h00Fc>jpUlNV@ikwpUoP06,0*4C",
  type19: "!AIVDM,1,1,,B,C5N3SRgPEnJGEBT>NhWAwwo862PaLELTBJ:V00000000S0D:R220,0*0B",
  type24A: "!AIVDM,1,1,,A,H42O55i18tMET00000000000000,2*6D",
  type24B: "!AIVDM,1,1,,A,H42O55lti4hhhilD3nink000?050,0*40",
  type4NotAvailable: "!AIVDM,1,1,,A,402Fha0000Htt<tSF0l4Q@000d20,0*65"
}

/** 2026-03-01T10:00:50.250Z: the second of the minute is 50. */
const received = Date.parse("2026-03-01T10:00:50.250Z")

const read = (lines: ReadonlyArray<string>, at = received) => AisNmea.lineReader().read(lines, at)

const onlyPosition = (
  reports: ReadonlyArray<VesselPositionSource.VesselReport>
): VesselPositionSource.VesselPosition => {
  assert.strictEqual(reports.length, 1)
  const report = reports[0]!
  assert.strictEqual(report._tag, "Position")
  return report as VesselPositionSource.VesselPosition
}

/** gpsd's values: degrees to six decimals, speed and course to one, the UTC second. */
interface Published {
  readonly mmsi: string
  readonly lat: number
  readonly lng: number
  readonly sog: number
  readonly cog: number
  readonly second: number
}

const assertPublished = (position: VesselPositionSource.VesselPosition, published: Published) => {
  assert.strictEqual(position.mmsi, published.mmsi)
  assert.approximately(position.lat, published.lat, 1e-6)
  assert.approximately(position.lng, published.lng, 1e-6)
  assert.approximately(position.sog!, published.sog, 1e-9)
  assert.approximately(position.cog!, published.cog, 1e-9)
  assert.strictEqual(position.observed_at, Date.parse(`2026-03-01T10:00:${published.second}Z`))
}

describe("AisDecoder: the gpsd sentences", () => {
  it("types 1, 2 and 3: position, speed, course, and the time moved back to the report's second", () => {
    assertPublished(onlyPosition(read([gpsd.type1])), {
      mmsi: "371798000",
      lat: 48.381633,
      lng: -123.395383,
      sog: 12.3,
      cog: 224,
      second: 33
    })
    assertPublished(onlyPosition(read([gpsd.type2])), {
      mmsi: "356302000",
      lat: 40.392358,
      lng: -71.626143,
      sog: 13.9,
      cog: 87.7,
      second: 41
    })
    assertPublished(onlyPosition(read([gpsd.type3])), {
      mmsi: "563808000",
      lat: 36.91,
      lng: -76.327533,
      sog: 0,
      cog: 252,
      second: 35
    })
  })

  it("type 5 in two sentences: IMO number, name and call sign, dated when received", () => {
    assert.deepStrictEqual(read(gpsd.type5), [{
      _tag: "Static",
      mmsi: "351759000",
      imo: "9134270",
      name: "EVER DIADEM",
      call_sign: "3FOF8",
      observed_at: received
    }])
  })

  it("type 5: either part alone gives nothing", () => {
    assert.deepStrictEqual(read([gpsd.type5[0]!]), [])
    assert.deepStrictEqual(read([gpsd.type5[1]!]), [])
  })

  it("type 18 (Class B): a position, with its second 49", () => {
    assertPublished(onlyPosition(read([gpsd.type18])), {
      mmsi: "338087471",
      lat: 40.68454,
      lng: -74.072132,
      sog: 0.1,
      cog: 79.6,
      second: 49
    })
  })

  it("type 19 (extended Class B): a position and the name", () => {
    const reports = read([gpsd.type19])
    assert.strictEqual(reports.length, 2)
    assertPublished(onlyPosition(reports.slice(0, 1)), {
      mmsi: "367059850",
      lat: 29.543695,
      lng: -88.810392,
      sog: 8.7,
      cog: 335.9,
      second: 46
    })
    assert.deepStrictEqual(reports[1], {
      _tag: "Static",
      mmsi: "367059850",
      name: "CAPT.J.RIMES",
      observed_at: received
    })
  })

  it("type 24: part A gives the name, part B the call sign", () => {
    assert.deepStrictEqual(read([gpsd.type24A, gpsd.type24B]), [
      { _tag: "Static", mmsi: "271041815", name: "PROGUY", observed_at: received },
      { _tag: "Static", mmsi: "271041815", call_sign: "TC6163", observed_at: received }
    ])
  })

  it("other types give nothing (type 4, a base station)", () => {
    assert.deepStrictEqual(read([gpsd.type4NotAvailable]), [])
  })

  it("!AIVDO (own vessel) reads as !AIVDM", () => {
    const own = AisEncoder.sentences(AisEncoder.position({ type: 1, mmsi: 244123456, lat: 51.9, lng: 4.1 }), {
      address: "AIVDO"
    })
    assert.strictEqual(onlyPosition(read(own)).mmsi, "244123456")
  })
})

describe("AisDecoder: impossible fixes and missing values", () => {
  const fix = (lat: number, lng: number, type: 1 | 18 | 19 = 1) =>
    read(AisEncoder.sentences(AisEncoder.position({ type, mmsi: 244123456, lat, lng, sog: 10, cog: 90 })))

  it("latitude 91 / longitude 181 (not available) are dropped", () => {
    assert.deepStrictEqual(fix(91, 181), [])
    assert.deepStrictEqual(fix(91, 4), [])
    assert.deepStrictEqual(fix(51, 181), [])
    assert.deepStrictEqual(fix(91, 181, 18), [])
  })

  it("positions out of range are dropped; the edges are kept", () => {
    assert.deepStrictEqual(fix(90.5, 4), [])
    assert.deepStrictEqual(fix(-95, 4), [])
    assert.deepStrictEqual(fix(10, 180.5), [])
    assert.deepStrictEqual(fix(10, -200), [])
    assert.strictEqual(fix(90, 180).length, 1)
    assert.strictEqual(fix(-90, -180).length, 1)
  })

  it("type 19 without a position still gives its name", () => {
    const reports = read(
      AisEncoder.sentences(AisEncoder.position({ type: 19, mmsi: 244123456, lat: 91, lng: 181, name: "NO FIX" }))
    )
    assert.deepStrictEqual(reports, [{ _tag: "Static", mmsi: "244123456", name: "NO FIX", observed_at: received }])
  })

  it("speed 102.3 and course 360 (not available) are left out; a report without a time stamp is dated when received", () => {
    const p = onlyPosition(
      read(AisEncoder.sentences(AisEncoder.position({ type: 1, mmsi: 244123456, lat: 1, lng: 2 })))
    )
    assert.deepStrictEqual(p, { _tag: "Position", mmsi: "244123456", lat: 1, lng: 2, observed_at: received })
  })

  it("an IMO number whose check digit is wrong, and empty text fields, are left out", () => {
    const reports = read(
      AisEncoder.sentences(AisEncoder.staticVoyage({ mmsi: 244123456, imo: 9134271, name: "  ", callSign: "PD1234" }))
    )
    assert.deepStrictEqual(reports, [{ _tag: "Static", mmsi: "244123456", call_sign: "PD1234", observed_at: received }])
  })

  it("text keeps every six-bit character, quotes included", () => {
    const reports = read(AisEncoder.sentences(AisEncoder.staticVoyage({
      mmsi: 244123456,
      name: "O'HARA \"2\" & SON-1/A",
      callSign: "'\"?!"
    })))
    assert.deepStrictEqual(reports, [{
      _tag: "Static",
      mmsi: "244123456",
      name: "O'HARA \"2\" & SON-1/A",
      call_sign: "'\"?!",
      observed_at: received
    }])
  })

  it("an MMSI of more than nine digits gives nothing (found by the malformed-input property)", () => {
    assert.deepStrictEqual(read(["!AIVDM,1,1,,A,1>qd0000P?w000000000>4?wp0000,0*26"]), [])
    assert.deepStrictEqual(
      read(AisEncoder.sentences(AisEncoder.position({ type: 1, mmsi: 1_000_000_000, lat: 1, lng: 2 }))),
      []
    )
  })

  it("static data with nothing in it gives nothing", () => {
    assert.deepStrictEqual(read(AisEncoder.sentences(AisEncoder.staticVoyage({ mmsi: 244123456 }))), [])
  })

  it("a message cut before the fields read gives nothing, even with a valid checksum", () => {
    const full = AisEncoder.position({ type: 1, mmsi: 244123456, lat: 51.9, lng: 4.1 })
    for (const length of [1, 6, 16, 20, 23]) {
      const cut = { payload: full.payload.slice(0, length), fillBits: 0 }
      assert.deepStrictEqual(read(AisEncoder.sentences(cut)), [], `${length} characters`)
    }
    const voyage = AisEncoder.staticVoyage({ mmsi: 244123456, imo: 9134270, name: "SHORT" })
    assert.deepStrictEqual(read(AisEncoder.sentences({ payload: voyage.payload.slice(0, 50), fillBits: 0 })), [])
  })
})

describe("AisDecoder.observedAt", () => {
  const at = (iso: string) => Date.parse(iso)

  it("moves the receive time back to the report's second, across a minute if need be", () => {
    assert.strictEqual(AisDecoder.observedAt(at("2026-03-01T10:00:50.250Z"), 48), at("2026-03-01T10:00:48Z"))
    assert.strictEqual(AisDecoder.observedAt(at("2026-03-01T10:00:50.250Z"), 50), at("2026-03-01T10:00:50Z"))
    assert.strictEqual(AisDecoder.observedAt(at("2026-03-01T10:00:05Z"), 58), at("2026-03-01T09:59:58Z"))
    assert.strictEqual(AisDecoder.observedAt(at("2026-03-01T10:00:00Z"), 0), at("2026-03-01T10:00:00Z"))
  })

  it("keeps the receive time when the report has no second (60 to 63)", () => {
    for (const second of [60, 61, 62, 63]) {
      assert.strictEqual(AisDecoder.observedAt(received, second), received)
    }
  })

  it.prop("is the latest whole second at or before the receive time with that second of the minute", [
    fc.integer({ min: 0, max: 4_102_444_800_000 }),
    fc.integer({ min: 0, max: 59 })
  ], ([receivedAt, second]) => {
    const observed = AisDecoder.observedAt(receivedAt, second)
    assert.isAtMost(observed, receivedAt)
    assert.isBelow(receivedAt - observed, 60_000)
    assert.strictEqual(observed % 1000, 0)
    assert.strictEqual(new Date(observed).getUTCSeconds(), second)
  })
})

describe("AisDecoder.isImoNumber", () => {
  it("checks seven digits and the check digit", () => {
    assert.isTrue(AisDecoder.isImoNumber(9134270))
    assert.isTrue(AisDecoder.isImoNumber(9383663))
    assert.isFalse(AisDecoder.isImoNumber(9134271))
    assert.isFalse(AisDecoder.isImoNumber(0))
    assert.isFalse(AisDecoder.isImoNumber(913427))
    assert.isFalse(AisDecoder.isImoNumber(19134270))
  })
})
