import { assert, describe, it } from "@effect/vitest"
import { VesselPositionSource } from "@tradeflow/core"
import {
  Cause,
  Chunk,
  Clock,
  Config,
  ConfigProvider,
  Duration,
  Effect,
  Either,
  Exit,
  FastCheck as fc,
  Layer,
  Logger,
  Option,
  Queue,
  Random,
  Schedule,
  Stream,
  TestClock
} from "effect"
import { AisNmeaTcp } from "../src/index.js"
import { AisFakeFeed } from "../test-kit/index.js"

type Report = VesselPositionSource.VesselReport

const resolution = 0.5 / 600_000 + 1e-12

/** Waits on the wall clock, not on the TestClock, so that the network can move. */
const realPause = (millis: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Runs a feed's stream in the background; its reports arrive in the queue. */
const consume = (reports: Stream.Stream<Report, VesselPositionSource.VesselFeedError>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Report>()
    yield* Effect.forkScoped(Stream.runForEach(reports, (report) => Queue.offer(queue, report)))
    return queue
  })

/** The next report, failing the test when none comes within 5 s of wall-clock time. */
const next = (queue: Queue.Queue<Report>) =>
  Effect.raceFirst(Queue.take(queue), Effect.zipRight(realPause(5_000), Effect.dieMessage("no report came")))

/** Moves the TestClock by `step` at a time until `done` holds, letting the network work in between. */
const advanceUntil = (done: Effect.Effect<boolean>, step: Duration.DurationInput) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      if (yield* done) return
      yield* TestClock.adjust(step)
      yield* realPause(5)
    }
    return yield* Effect.dieMessage("the condition was never reached")
  })

const feedAndReports = (options?: Partial<AisNmeaTcp.Options>, feedOptions?: AisFakeFeed.Options) =>
  Effect.gen(function*() {
    const feed = yield* AisFakeFeed.make(feedOptions)
    const reports = yield* consume(AisNmeaTcp.make({ host: feed.host, port: feed.port, ...options }))
    return { feed, reports }
  })

const assertAt = (report: Report | undefined, point: AisFakeFeed.TrackPoint, mmsi: string) => {
  assert.isDefined(report)
  assert.strictEqual(report!._tag, "Position")
  if (report!._tag !== "Position") return
  assert.strictEqual(report.mmsi, mmsi)
  assert.approximately(report.lat, point.lat, resolution)
  assert.approximately(report.lng, point.lng, resolution)
  assert.approximately(report.sog!, point.sog, 0.05 + 1e-9)
  assert.approximately(report.cog!, point.cog, 0.05 + 1e-9)
  assert.strictEqual(report.observed_at, Math.floor(point.at / 1000) * 1000)
}

const rotterdam = { lat: 51.95, lng: 4.05 }
const offshore = { lat: 51.99, lng: 3.9 }
const departure = Date.parse("2026-03-01T10:00:00Z")

describe("AisNmeaTcp over loopback TCP with the fake feed", () => {
  it.scoped("plays a Class A journey: type 5 in two sentences, then positions along the track, dated by their second", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(departure - 1_000)
      const { feed, reports } = yield* feedAndReports({ silenceTimeout: "10 minutes" })
      yield* feed.awaitConnections(1)
      const journey: AisFakeFeed.Journey = {
        mmsi: "244123456",
        imo: "9134270",
        name: "TRADEFLOW EXPRESS",
        callSign: "PD1234",
        from: rotterdam,
        to: offshore,
        speedKnots: 14,
        departure,
        interval: "2 minutes",
        staticInterval: "6 minutes"
      }
      const track = AisFakeFeed.track(journey)
      assert.isAtLeast(track.length, 8)
      yield* feed.play(journey)
      let staticDue = departure
      let now = departure - 1_000
      for (const point of track) {
        yield* TestClock.adjust(Duration.millis(point.at - now))
        now = point.at
        if (point.at >= staticDue) {
          assert.deepStrictEqual(yield* next(reports), {
            _tag: "Static",
            mmsi: "244123456",
            imo: "9134270",
            name: "TRADEFLOW EXPRESS",
            call_sign: "PD1234",
            observed_at: point.at
          })
          staticDue = point.at + 6 * 60_000
        }
        assertAt(yield* next(reports), point, "244123456")
      }
      assert.strictEqual(yield* feed.connections, 1)
    }))

  it.scoped("plays a Class B journey: type 24 parts A and B, then type 18 positions", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(departure)
      const { feed, reports } = yield* feedAndReports()
      yield* feed.awaitConnections(1)
      const journey: AisFakeFeed.Journey = {
        mmsi: "244987654",
        name: "SAILING YACHT",
        callSign: "PB9876",
        from: rotterdam,
        to: { lat: 51.951, lng: 4.051 },
        speedKnots: 6,
        departure,
        classB: true
      }
      yield* feed.play(journey)
      assert.deepStrictEqual(yield* next(reports), {
        _tag: "Static",
        mmsi: "244987654",
        name: "SAILING YACHT",
        observed_at: departure
      })
      assert.deepStrictEqual(yield* next(reports), {
        _tag: "Static",
        mmsi: "244987654",
        call_sign: "PB9876",
        observed_at: departure
      })
      const [first, second] = AisFakeFeed.track(journey)
      assertAt(yield* next(reports), first!, "244987654")
      yield* TestClock.adjust(Duration.millis(second!.at - departure))
      assertAt(yield* next(reports), second!, "244987654")
    }))

  it.scoped("skips garbage, bad checksums and impossible fixes, and keeps its connection", () =>
    Effect.gen(function*() {
      const { feed, reports } = yield* feedAndReports()
      yield* feed.awaitConnections(1)
      const position = (lat: number) => ({ type: 1 as const, mmsi: 244123456, lat, lng: 4.1, sog: 10, cog: 45 })
      const latitudeOf = (report: Report) => report._tag === "Position" ? report.lat : Number.NaN

      yield* feed.set({ garbage: true })
      yield* feed.sendPosition(position(51.1))
      yield* feed.sendStaticVoyage({ mmsi: 244123456, imo: 9134270, name: "THROUGH GARBAGE" })
      assert.approximately(latitudeOf(yield* next(reports)), 51.1, resolution)
      assert.strictEqual((yield* next(reports))._tag, "Static")

      yield* feed.set({ garbage: false, badChecksums: true })
      yield* feed.sendPosition(position(51.2))
      yield* feed.sendStaticVoyage({ mmsi: 244123456, imo: 9134270, name: "BAD CHECKSUM" })
      yield* feed.set({ badChecksums: false, impossibleFixes: true })
      for (let i = 0; i < 3; i++) yield* feed.sendPosition(position(51.3))
      yield* feed.set({ impossibleFixes: false })
      yield* feed.sendLines(fc.sample(fc.string({ unit: "binary", maxLength: 200 }), { seed: 15, numRuns: 300 }))
      yield* feed.sendPosition(position(51.4))

      assert.approximately(latitudeOf(yield* next(reports)), 51.4, resolution)
      assert.strictEqual(yield* feed.connections, 1)
    }))

  it.scoped("a silent connection is dropped after silenceTimeout and made again; reports continue", () =>
    Effect.gen(function*() {
      const { feed, reports } = yield* feedAndReports({ silenceTimeout: "60 seconds" })
      yield* feed.awaitConnections(1)
      yield* feed.sendPosition({ type: 1, mmsi: 244123456, lat: 51.5, lng: 4.1 })
      yield* next(reports)
      yield* feed.set({ silent: true })
      const silentSince = yield* Clock.currentTimeMillis
      yield* advanceUntil(Effect.map(feed.connections, (n) => n >= 2), "1 second")
      const reconnectedAfter = (yield* Clock.currentTimeMillis) - silentSince
      assert.isAtLeast(reconnectedAfter, 60_000)
      assert.isAtMost(reconnectedAfter, 62_000)
      yield* feed.set({ silent: false })
      yield* feed.sendPosition({ type: 18, mmsi: 244987654, lat: 51.6, lng: 4.2 })
      const after = yield* next(reports)
      assert.strictEqual(after.mmsi, "244987654")
      assert.strictEqual(yield* feed.connections, 2)
    }))

  it.scoped("a feed down at start is tried again with a growing, capped backoff until it comes up; the backoff starts over after", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const delays = () =>
        logs.flatMap((line) => Option.toArray(Option.fromNullable(/reconnecting in (\d+) ms/.exec(line)))).map((m) =>
          Number(m[1])
        )
      yield* Effect.gen(function*() {
        const { feed, reports } = yield* feedAndReports(
          { reconnect: { initialDelay: "1 second", maxDelay: "8 seconds" } },
          { listening: false }
        )
        yield* advanceUntil(Effect.sync(() => delays().length >= 6), "250 millis")
        const [d1, d2, d3, d4, d5, d6] = delays() as [number, number, number, number, number, number]
        assert.isTrue(d1 >= 500 && d1 <= 1_000, `${d1}`)
        assert.isTrue(d2 >= 1_000 && d2 <= 2_000, `${d2}`)
        assert.isTrue(d3 >= 2_000 && d3 <= 4_000, `${d3}`)
        assert.isTrue(d4 >= 4_000 && d4 <= 8_000, `${d4}`)
        assert.isTrue(d5 >= 4_000 && d5 <= 8_000 && d6 >= 4_000 && d6 <= 8_000, `${d5} ${d6}`)
        assert.isTrue(logs.every((line) => line.includes(`AIS feed ${feed.address}: connect ECONNREFUSED`)), logs[0])
        assert.strictEqual(yield* feed.connections, 0)

        yield* feed.start
        yield* advanceUntil(Effect.map(feed.connections, (n) => n >= 1), "250 millis")
        yield* feed.sendPosition({ type: 1, mmsi: 244123456, lat: 51.7, lng: 4.1 })
        assert.strictEqual((yield* next(reports)).mmsi, "244123456")

        yield* feed.stop
        yield* advanceUntil(Effect.sync(() => delays().length >= 7), "250 millis")
        const d7 = delays()[6]!
        assert.isTrue(d7 >= 500 && d7 <= 1_000, `${d7}`)
        assert.include(logs[6]!, "the connection was closed")
      }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message)))))
      )
    }))
})

describe("AisNmeaTcp configuration", () => {
  it("parseAddress reads host:port, IPv4, host names and bracketed IPv6", () => {
    assert.deepStrictEqual(
      AisNmeaTcp.parseAddress("ais.example.org:5631"),
      Either.right({ host: "ais.example.org", port: 5631 })
    )
    assert.deepStrictEqual(
      AisNmeaTcp.parseAddress(" 127.0.0.1:10110\n"),
      Either.right({ host: "127.0.0.1", port: 10110 })
    )
    assert.deepStrictEqual(AisNmeaTcp.parseAddress("localhost:65535"), Either.right({ host: "localhost", port: 65535 }))
    assert.deepStrictEqual(AisNmeaTcp.parseAddress("[::1]:1"), Either.right({ host: "::1", port: 1 }))
  })

  it("parseAddress refuses malformed addresses, saying why", () => {
    const refused: ReadonlyArray<readonly [string, string]> = [
      ["", "it is empty"],
      ["ais.example.org", "it has no port"],
      ["ais.example.org:", "the port \"\" is not a number from 1 to 65535"],
      [":5631", "it has no host"],
      ["ais.example.org:0", "is not a number from 1 to 65535"],
      ["ais.example.org:65536", "is not a number from 1 to 65535"],
      ["ais.example.org:56a", "is not a number from 1 to 65535"],
      ["tcp://ais.example.org:5631", "it has a scheme"],
      ["::1:5631", "an IPv6 address goes in brackets"],
      ["[example]:5631", "is not a host name or an IP address"],
      ["999.1.1.1:5631", "is not a host name or an IP address"],
      ["bad_host:5631", "is not a host name or an IP address"],
      ["two words:5631", "is not a host name or an IP address"]
    ]
    for (const [text, why] of refused) {
      const result = AisNmeaTcp.parseAddress(text)
      assert.isTrue(Either.isLeft(result), text)
      if (Either.isLeft(result)) {
        assert.include(result.left.message, why)
        assert.include(result.left.message, "expected host:port")
      }
    }
  })

  it.effect("layerConfig refuses a malformed AIS_NMEA_TCP as a ConfigError that names it", () =>
    Effect.gen(function*() {
      for (
        const provider of [
          ConfigProvider.fromMap(new Map([["AIS_NMEA_TCP", "localhost"]])),
          ConfigProvider.fromMap(new Map())
        ]
      ) {
        const exit = yield* Layer.build(AisNmeaTcp.layerConfig(Config.string("AIS_NMEA_TCP"))).pipe(
          Effect.scoped,
          Effect.withConfigProvider(provider),
          Effect.exit
        )
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.include(String(exit.cause), "AIS_NMEA_TCP")
      }
    }))

  it.scoped("layerConfig provides the VesselPositionSource of the address it reads", () =>
    Effect.gen(function*() {
      const feed = yield* AisFakeFeed.make()
      const layer = AisNmeaTcp.layerConfig(Config.string("AIS_NMEA_TCP")).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["AIS_NMEA_TCP", feed.address]]))))
      )
      const source = yield* Effect.provide(VesselPositionSource.VesselPositionSource, layer)
      const reports = yield* consume(source.reports)
      yield* feed.awaitConnections(1)
      yield* feed.sendPosition({ type: 1, mmsi: 244123456, lat: 51.8, lng: 4.1 })
      assert.strictEqual((yield* next(reports)).mmsi, "244123456")
    }))

  it.effect("the stream fails with VesselFeedError on options it can never use, and only then", () =>
    Effect.gen(function*() {
      const unusable: ReadonlyArray<AisNmeaTcp.Options> = [
        { host: "", port: 5631 },
        { host: "ais example", port: 5631 },
        { host: "ais.example.org", port: 0 },
        { host: "ais.example.org", port: 70_000 },
        { host: "ais.example.org", port: 56.5 },
        { host: "ais.example.org", port: 5631, silenceTimeout: 0 },
        { host: "ais.example.org", port: 5631, silenceTimeout: Duration.infinity },
        { host: "ais.example.org", port: 5631, partTimeout: -1 },
        { host: "ais.example.org", port: 5631, reconnect: { initialDelay: 0 } },
        { host: "ais.example.org", port: 5631, reconnect: { factor: 0.5 } }
      ]
      for (const options of unusable) {
        const exit = yield* Effect.exit(Stream.runDrain(AisNmeaTcp.make(options)))
        assert.isTrue(Exit.isFailure(exit), JSON.stringify(options))
        if (Exit.isFailure(exit)) {
          const error = Chunk.toReadonlyArray(Cause.failures(exit.cause))[0]
          assert.instanceOf(error, VesselPositionSource.VesselFeedError)
        }
      }
    }))
})

describe("AisNmeaTcp.reconnectSchedule", () => {
  it.prop("waits between half and all of min(initial × factor^n, max), never more than max", [
    fc.integer({ min: 1, max: 5_000 }),
    fc.integer({ min: 1, max: 120_000 }),
    fc.double({ min: 1, max: 4, noNaN: true }),
    fc.integer()
  ], ([initial, max, factor, seed]) => {
    const delays = Effect.runSync(Effect.withRandom(
      Schedule.run(
        AisNmeaTcp.reconnectSchedule({ initialDelay: initial, maxDelay: max, factor }),
        0,
        Array.from({ length: 20 }, () => undefined)
      ),
      Random.make(seed)
    ))
    assert.strictEqual(Chunk.size(delays), 20)
    Chunk.toReadonlyArray(delays).forEach((delay, n) => {
      const base = Math.min(initial * factor ** n, max)
      const ms = Duration.toMillis(delay)
      assert.isTrue(ms >= base / 2 - 1e-6 && ms <= base + 1e-6, `${n}: ${ms} of ${base}`)
    })
  })
})
