import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { builtinPorts } from "../src/internal/builtinPorts.js"
import * as Locations from "../src/Locations.js"

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz })
    return true
  } catch {
    return false
  }
}

describe("Locations (built-in directory)", () => {
  it("holds at least the 100 largest container ports, with well-formed entries", () => {
    assert.isAtLeast(builtinPorts.length, 100)
    assert.strictEqual(new Set(builtinPorts.map((p) => p.unlocode)).size, builtinPorts.length)
    for (const port of builtinPorts) {
      assert.match(port.unlocode, /^[A-Z]{2}[A-Z2-9]{3}$/, port.unlocode)
      assert.strictEqual(port.unlocode.slice(0, 2), port.country.iso_a2, port.unlocode)
      assert.isTrue(isTimeZone(port.timezone), `${port.unlocode} ${port.timezone}`)
      assert.isTrue(port.coordinates.lat >= -90 && port.coordinates.lat <= 90, port.unlocode)
      assert.isTrue(port.coordinates.lng >= -180 && port.coordinates.lng <= 180, port.unlocode)
      assert.isAbove(port.name.length, 0)
      assert.isAbove(port.country.name.length, 0)
    }
  })

  it("rejects an invalid time zone name (the check can fail)", () => {
    assert.isFalse(isTimeZone("Europe/Atlantis"))
  })

  it.effect("knows the spot values integrators see", () =>
    Effect.gen(function*() {
      const locations = yield* Locations.Locations
      const get = (code: string) => Effect.map(locations.lookup(code), Option.getOrThrow)
      const rotterdam = yield* get("NLRTM")
      assert.deepStrictEqual(
        [rotterdam.name, rotterdam.country, rotterdam.timezone],
        ["Rotterdam", { name: "Netherlands", iso_a2: "NL" }, "Europe/Amsterdam"]
      )
      assert.closeTo(rotterdam.coordinates.lat, 51.92, 0.1)
      assert.closeTo(rotterdam.coordinates.lng, 4.48, 0.2)
      const spot: ReadonlyArray<readonly [string, string, string, string, number, number]> = [
        ["CNSHA", "Shanghai", "CN", "Asia/Shanghai", 31.2, 121.5],
        ["SGSIN", "Singapore", "SG", "Asia/Singapore", 1.26, 103.8],
        ["USLAX", "Los Angeles", "US", "America/Los_Angeles", 33.7, -118.3],
        ["USNYC", "New York", "US", "America/New_York", 40.7, -74.0],
        ["DEHAM", "Hamburg", "DE", "Europe/Berlin", 53.5, 9.9],
        ["BEANR", "Antwerp", "BE", "Europe/Brussels", 51.2, 4.4],
        ["KRPUS", "Busan", "KR", "Asia/Seoul", 35.1, 129.0],
        ["AEJEA", "Jebel Ali", "AE", "Asia/Dubai", 25.0, 55.1],
        ["HKHKG", "Hong Kong", "HK", "Asia/Hong_Kong", 22.3, 114.1],
        ["BRSSZ", "Santos", "BR", "America/Sao_Paulo", -24.0, -46.3],
        ["AUMEL", "Melbourne", "AU", "Australia/Melbourne", -37.8, 144.9]
      ]
      for (const [code, name, iso, tz, lat, lng] of spot) {
        const port = yield* get(code)
        assert.deepStrictEqual([port.unlocode, port.name, port.country.iso_a2, port.timezone], [code, name, iso, tz])
        assert.closeTo(port.coordinates.lat, lat, 0.5, code)
        assert.closeTo(port.coordinates.lng, lng, 0.5, code)
      }
      assert.isTrue(Option.isNone(yield* locations.lookup("XXABC")))
      assert.strictEqual((yield* locations.all).length, builtinPorts.length)
    }).pipe(Effect.provide(Locations.layerBuiltin)))

  it.effect("layerFromList serves exactly the given list", () =>
    Effect.gen(function*() {
      const locations = yield* Locations.Locations
      assert.isTrue(Option.isSome(yield* locations.lookup("SGSIN")))
      assert.isTrue(Option.isNone(yield* locations.lookup("NLRTM")))
    }).pipe(Effect.provide(Locations.layerFromList(builtinPorts.filter((p) => p.unlocode === "SGSIN")))))
})
