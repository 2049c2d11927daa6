/**
 * A fake AIS feed: a TCP server on loopback that sends NMEA sentences to every client connected,
 * as a receiver or a provider's raw feed would. It plays journeys (positions along the great
 * circle between two points at a given speed, released on a clock, with static data now and
 * then), sends single reports or raw lines, and can misbehave on demand: fall silent, send
 * garbage, spoil checksums, send impossible fixes, or go down and come back on the same port.
 *
 * @module
 */
import { Positions } from "@tradeflow/core"
import { Clock, Duration, Effect, type Scope } from "effect"
import * as net from "node:net"
import * as AisEncoder from "./AisEncoder.js"

/** What the feed does to what it sends; all off by default. */
export interface Switches {
  /** Send nothing at all (connections stay open). */
  readonly silent: boolean
  /** Send a garbage line before each sentence. */
  readonly garbage: boolean
  /** Send every sentence with a wrong checksum. */
  readonly badChecksums: boolean
  /** Send positions as impossible fixes: "not available" (91, 181) and out of range, in turn. */
  readonly impossibleFixes: boolean
}

/** A voyage to play. */
export interface Journey {
  readonly mmsi: string
  readonly from: Positions.LatLng
  readonly to: Positions.LatLng
  readonly speedKnots: number
  /** When the vessel leaves `from` (epoch ms). */
  readonly departure: number
  /** The time between two positions (default 10 s). */
  readonly interval?: Duration.DurationInput | undefined
  /** Class B: positions as type 18, static data as type 24 A and B; Class A (default): 1 and 5. */
  readonly classB?: boolean | undefined
  readonly imo?: string | undefined
  readonly name?: string | undefined
  readonly callSign?: string | undefined
  /** The time between two sendings of the static data, the first at the start (default 6 min). */
  readonly staticInterval?: Duration.DurationInput | undefined
}

/** One position of a journey, at instant `at` (epoch ms). */
export interface TrackPoint extends Positions.LatLng {
  readonly at: number
  readonly sog: number
  readonly cog: number
}

const metresPerNauticalMile = 1852

const bearing = (from: Positions.LatLng, to: Positions.LatLng): number => {
  const rad = Math.PI / 180
  const y = Math.sin((to.lng - from.lng) * rad) * Math.cos(to.lat * rad)
  const x = Math.cos(from.lat * rad) * Math.sin(to.lat * rad) -
    Math.sin(from.lat * rad) * Math.cos(to.lat * rad) * Math.cos((to.lng - from.lng) * rad)
  return ((Math.atan2(y, x) / rad) + 360) % 360
}

/** When a journey reaches `to` (epoch ms, rounded to the millisecond). */
export const arrivalOf = (journey: Journey): number =>
  Math.round(
    journey.departure +
      Positions.distanceMetres(journey.from, journey.to) / (journey.speedKnots * metresPerNauticalMile) * 3_600_000
  )

/** Where a journey is at `at` (epoch ms), clamped to its ends. */
export const pointAt = (journey: Journey, at: number): TrackPoint => {
  const arrival = arrivalOf(journey)
  const fraction = arrival === journey.departure
    ? 1
    : Math.min(Math.max((at - journey.departure) / (arrival - journey.departure), 0), 1)
  const here = Positions.interpolate(journey.from, journey.to, fraction)
  return { ...here, at, sog: fraction < 1 ? journey.speedKnots : 0, cog: bearing(here, journey.to) }
}

/** The positions a journey sends: one every `interval` from its departure, the last on arrival. */
export const track = (journey: Journey): Array<TrackPoint> => {
  const step = Duration.toMillis(journey.interval ?? Duration.seconds(10))
  const arrival = arrivalOf(journey)
  const points: Array<TrackPoint> = []
  for (let at = journey.departure; at < arrival; at += step) points.push(pointAt(journey, at))
  points.push(pointAt(journey, arrival))
  return points
}

/** A running fake feed. */
export interface AisFakeFeed {
  readonly host: string
  readonly port: number
  /** `host:port`, as `AisNmeaTcp.parseAddress` reads it. */
  readonly address: string
  /** Changes some switches. */
  readonly set: (switches: Partial<Switches>) => Effect.Effect<void>
  /** Sends lines as they are (nothing when silent). */
  readonly sendLines: (lines: ReadonlyArray<string>) => Effect.Effect<void>
  /** Sends a position report, as the switches say. */
  readonly sendPosition: (report: AisEncoder.PositionReport) => Effect.Effect<void>
  /** Sends type 5 static data, in two sentences. */
  readonly sendStaticVoyage: (data: AisEncoder.StaticVoyage) => Effect.Effect<void>
  /** Sends type 24 static data, part A or B. */
  readonly sendStaticB: (data: AisEncoder.StaticB) => Effect.Effect<void>
  /**
   * Plays a journey in the background until it arrives or the scope closes: each position of
   * {@link track} when the feed's clock reaches its instant (those already past are skipped),
   * with the time stamp of that instant, and static data at the start and every
   * `staticInterval`.
   */
  readonly play: (journey: Journey) => Effect.Effect<void, never, Scope.Scope>
  /** How many connections were accepted so far. */
  readonly connections: Effect.Effect<number>
  /** Waits until `count` connections were accepted in all (waits on the network, not on a clock). */
  readonly awaitConnections: (count: number) => Effect.Effect<void>
  /** Stops listening and drops every connection: the feed is down. */
  readonly stop: Effect.Effect<void>
  /** Listens again, on the same port. */
  readonly start: Effect.Effect<void>
}

const garbageLines = [
  "garbage",
  "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47",
  "!AIVDM,1,1,,A,15RTgt0PAso;90TK",
  "!AIVDM,2,2,7,B,88888888880,2*2C",
  "\\s:broken tag block!AIVDM,1,1,,A,,0*26",
  "\u0000\u0001\u00ff\u00fe!*",
  "!AIVDM,1,1,,A,{{{{{{{{{{,0*00",
  "x".repeat(3000)
]

/** Options of {@link make}. */
export interface Options {
  /** Start listening at once (default true); otherwise a port is reserved and `start` listens on it. */
  readonly listening?: boolean | undefined
  /** The clock that releases journeys' positions (default: the `Clock` of the effect). */
  readonly clock?: Clock.Clock | undefined
}

const boundPort = (server: net.Server) => (server.address() as net.AddressInfo).port

const listen = (server: net.Server, port: number) =>
  Effect.async<number>((resume) => {
    if (server.listening) return resume(Effect.succeed(boundPort(server)))
    const failed = (error: Error) => resume(Effect.die(error))
    server.once("error", failed)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", failed)
      resume(Effect.succeed(boundPort(server)))
    })
  })

const close = (server: net.Server, clients: Set<net.Socket>) =>
  Effect.async<void>((resume) => {
    const listening = server.listening
    if (listening) server.close(() => resume(Effect.void))
    for (const socket of clients) socket.destroy()
    clients.clear()
    if (!listening) resume(Effect.void)
  })

/** Starts a fake feed on `127.0.0.1` and a free port; it stops when the scope closes. */
export const make = (options?: Options): Effect.Effect<AisFakeFeed, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clients = new Set<net.Socket>()
    const waiters: Array<{ readonly count: number; readonly wake: () => void }> = []
    let accepted = 0
    let switches: Switches = { silent: false, garbage: false, badChecksums: false, impossibleFixes: false }
    let garbageIndex = 0
    let impossibleIndex = 0
    let sequence = 0

    const server = net.createServer((socket) => {
      socket.on("error", () => {})
      if (!server.listening) return socket.destroy()
      clients.add(socket)
      socket.on("close", () => clients.delete(socket))
      accepted++
      for (const waiter of waiters.filter((w) => w.count <= accepted)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.wake()
      }
    })
    const stop = close(server, clients)

    const port = yield* Effect.acquireRelease(listen(server, 0), () => stop)
    if (options?.listening === false) yield* stop

    const write = (lines: ReadonlyArray<string>) =>
      Effect.sync(() => {
        if (switches.silent || lines.length === 0) return
        const text = lines.map((line) => `${line}\r\n`).join("")
        for (const socket of clients) socket.write(text)
      })

    const spoil = (line: string) => {
      const star = line.lastIndexOf("*")
      const sum = line.slice(star + 1)
      return `${line.slice(0, star + 1)}${sum === "00" ? "01" : "00"}`
    }

    const sendSentences = (lines: ReadonlyArray<string>) =>
      write(lines.flatMap((line) => {
        const sentence = switches.badChecksums ? spoil(line) : line
        return switches.garbage ? [garbageLines[garbageIndex++ % garbageLines.length] as string, sentence] : [sentence]
      }))

    const nextSequence = () => String(sequence++ % 10)

    const sendPosition = (report: AisEncoder.PositionReport) =>
      Effect.suspend(() => {
        const impossible = [{ lat: 91, lng: 181 }, { lat: 95.5, lng: 10 }, { lat: 10, lng: -190.25 }]
        const fix = switches.impossibleFixes ? impossible[impossibleIndex++ % impossible.length] : undefined
        const message = AisEncoder.position(fix === undefined ? report : { ...report, ...fix })
        return sendSentences(AisEncoder.sentences(message, { sequenceId: nextSequence() }))
      })

    const sendStaticVoyage = (data: AisEncoder.StaticVoyage) =>
      Effect.suspend(() =>
        sendSentences(AisEncoder.sentences(AisEncoder.staticVoyage(data), { sequenceId: nextSequence() }))
      )

    const sendStaticB = (data: AisEncoder.StaticB) =>
      Effect.suspend(() => sendSentences(AisEncoder.sentences(AisEncoder.staticB(data))))

    const sendStatic = (journey: Journey) =>
      journey.classB === true
        ? Effect.zipRight(
          sendStaticB({ part: "A", mmsi: journey.mmsi, name: journey.name ?? "" }),
          sendStaticB({ part: "B", mmsi: journey.mmsi, callSign: journey.callSign ?? "" })
        )
        : sendStaticVoyage({ mmsi: journey.mmsi, imo: journey.imo, name: journey.name, callSign: journey.callSign })

    const voyage = (journey: Journey) =>
      Effect.gen(function*() {
        const staticEvery = Duration.toMillis(journey.staticInterval ?? Duration.minutes(6))
        let staticDue = yield* Clock.currentTimeMillis
        for (const point of track(journey)) {
          const now = yield* Clock.currentTimeMillis
          if (point.at < now) continue
          yield* Effect.sleep(Duration.millis(point.at - now))
          if (point.at >= staticDue) {
            yield* sendStatic(journey)
            staticDue = point.at + staticEvery
          }
          yield* sendPosition({
            type: journey.classB === true ? 18 : 1,
            mmsi: journey.mmsi,
            lat: point.lat,
            lng: point.lng,
            sog: point.sog,
            cog: point.cog,
            second: new Date(point.at).getUTCSeconds()
          })
        }
      })

    const play = (journey: Journey) => {
      const clocked = options?.clock === undefined ? voyage(journey) : Effect.withClock(voyage(journey), options.clock)
      return Effect.asVoid(Effect.forkScoped(clocked))
    }

    const awaitConnections = (count: number) =>
      Effect.async<void>((resume) => {
        if (accepted >= count) return resume(Effect.void)
        waiters.push({ count, wake: () => resume(Effect.void) })
      })

    return {
      host: "127.0.0.1",
      port,
      address: `127.0.0.1:${port}`,
      set: (changes) => Effect.sync(() => void (switches = { ...switches, ...changes })),
      sendLines: write,
      sendPosition,
      sendStaticVoyage,
      sendStaticB,
      play,
      connections: Effect.sync(() => accepted),
      awaitConnections,
      stop,
      start: Effect.asVoid(listen(server, port))
    }
  })
