import { assert, describe, it } from "@effect/vitest"
import { Positions, type VesselPositionSource } from "@tradeflow/core"
import { Clock, Effect, FastCheck as fc, Queue, Stream } from "effect"
import { AisNmeaTcp } from "../src/index.js"
import { AisFakeFeed } from "../test-kit/index.js"

const point = fc.record({
  lat: fc.double({ min: -70, max: 70, noNaN: true }),
  lng: fc.double({ min: -179, max: 179, noNaN: true })
})

describe("AisFakeFeed.track", () => {
  it.prop("runs from `from` to `to` along the great circle, one interval apart at the journey's speed", [
    point,
    point,
    fc.integer({ min: 1, max: 30 }),
    fc.integer({ min: 60, max: 3_600 })
  ], ([from, to, speedKnots, intervalSeconds]) => {
    fc.pre(Positions.distanceMetres(from, to) > 1_000 && Positions.distanceMetres(from, to) < 500_000)
    const journey: AisFakeFeed.Journey = {
      mmsi: "244123456",
      from,
      to,
      speedKnots,
      departure: 0,
      interval: intervalSeconds * 1_000
    }
    const track = AisFakeFeed.track(journey)
    assert.isBelow(Positions.distanceMetres(track[0]!, from), 1e-3)
    assert.isBelow(Positions.distanceMetres(track[track.length - 1]!, to), 1e-3)
    assert.strictEqual(track[track.length - 1]!.at, AisFakeFeed.arrivalOf(journey))
    const step = speedKnots * 1852 * intervalSeconds / 3_600
    const arrivalRounding = 0.5 / (AisFakeFeed.arrivalOf(journey) - journey.departure)
    for (let i = 1; i < track.length - 1; i++) {
      assert.approximately(Positions.distanceMetres(track[i - 1]!, track[i]!), step, step * arrivalRounding + 1e-3)
      assert.isBelow(Math.abs(Positions.crossTrackAngle(from, to, track[i]!)) * Positions.earthRadiusMetres, 1e-3)
    }
  }, {
    fastCheck: {
      examples: [[{ lat: 0, lng: 0.008993203637245381 }, { lat: 0, lng: 0 }, 18, 60]]
    }
  })
})

describe("AisFakeFeed.make", () => {
  it.scoped("releases a journey's positions on the clock it is given, here the wall clock under a TestClock", () =>
    Effect.gen(function*() {
      const wallClock = Clock.make()
      const feed = yield* AisFakeFeed.make({ clock: wallClock })
      const reports = yield* Queue.unbounded<VesselPositionSource.VesselReport>()
      yield* Effect.forkScoped(
        Stream.runForEach(AisNmeaTcp.make({ host: feed.host, port: feed.port }), (r) => Queue.offer(reports, r))
      )
      yield* feed.awaitConnections(1)
      const departure = yield* wallClock.currentTimeMillis
      const journey: AisFakeFeed.Journey = {
        mmsi: "244123456",
        from: { lat: 51.95, lng: 4.05 },
        to: { lat: 51.95002, lng: 4.05 },
        speedKnots: 20,
        departure: departure + 50,
        interval: "100 millis",
        staticInterval: "1 hour",
        name: "WALL CLOCK"
      }
      yield* feed.play(journey)
      const expected = AisFakeFeed.track(journey).length
      assert.isAtLeast(expected, 3)
      const received = yield* Effect.forEach(Array.from({ length: expected + 1 }), () => Queue.take(reports))
      assert.deepStrictEqual(received.map((r) => r._tag), [
        "Static",
        ...Array.from({ length: expected }, () => "Position")
      ])
    }))
})
