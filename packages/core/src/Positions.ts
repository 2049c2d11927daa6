/**
 * Vessel positions of mock voyages (LOCATION_UPDATE, DECISIONS.md §5): great-circle maths and the
 * position schedule, pure functions.
 *
 * The schedule of a voyage departing at D and arriving at A, with an interval I (TrackingConfig
 * `locationIntervalMinutes`): one position at each instant D + k·I for k ≥ 1 with D + k·I ≤ A. The
 * departure itself has no position; the arrival has one only when it falls on that grid. A
 * position is due once its instant has passed (instant ≤ now), so after `now` a voyage has
 * `floor((min(now, A) − D) / I)` positions (none before the first interval has elapsed). The
 * position at instant t lies on the great circle from the port of loading to the port of discharge
 * at the fraction (t − D) / (A − D) of its length. A voyage with transshipments has one leg per
 * vessel move (see {@link voyagesOf}), each leg with its own schedule.
 *
 * @module
 */
import type { Tradeflow } from "./Tradeflow.js"

/** A point in degrees: latitude in [-90, 90], longitude in [-180, 180]. */
export interface LatLng {
  readonly lat: number
  readonly lng: number
}

/** Mean earth radius in metres (IUGG). */
export const earthRadiusMetres = 6_371_008.8

/** The most positions one job renders; a voyage with more due continues on the next job. */
export const maxPositionsPerJob = 1_000

/**
 * How far before now positions are rendered at most: 7 days. Older instants of a voyage (one that
 * departed long ago, or that was not advanced for longer) are skipped, never rendered late.
 */
export const maxBackfillMillis = 7 * 24 * 3_600_000

type Vec = readonly [number, number, number]

const rad = Math.PI / 180

const toVec = (p: LatLng): Vec => {
  const phi = p.lat * rad
  const lambda = p.lng * rad
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)]
}

const fromVec = ([x, y, z]: Vec): LatLng => {
  const lng = Math.atan2(y, x) / rad
  return { lat: Math.atan2(z, Math.hypot(x, y)) / rad, lng: lng === -180 ? 180 : lng }
}

const dot = (a: Vec, b: Vec): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
const cross = (a: Vec, b: Vec): Vec => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
const norm = (a: Vec): number => Math.hypot(a[0], a[1], a[2])
const scale = (a: Vec, k: number): Vec => [a[0] * k, a[1] * k, a[2] * k]
const add = (a: Vec, b: Vec): Vec => [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
const unit = (a: Vec): Vec => scale(a, 1 / norm(a))

/** The central angle between two points, in radians (0..π). */
export const centralAngle = (a: LatLng, b: LatLng): number => {
  const u = toVec(a)
  const v = toVec(b)
  return Math.atan2(norm(cross(u, v)), dot(u, v))
}

/** The great-circle distance between two points, in metres. */
export const distanceMetres = (a: LatLng, b: LatLng): number => centralAngle(a, b) * earthRadiusMetres

/**
 * The unit normal of the great circle through `from` and `to` (right-handed, so travel from `from`
 * to `to` is a positive rotation about it). Identical points: none. Antipodal points lie on every
 * meridian-like circle; one is chosen deterministically (through the poles where possible).
 */
const normalOf = (u: Vec, v: Vec): Vec | undefined => {
  const n = cross(u, v)
  if (norm(n) > 1e-12) return unit(n)
  if (dot(u, v) > 0) return undefined
  const helper: Vec = Math.abs(u[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0]
  return unit(cross(u, helper))
}

/**
 * The point at `fraction` (0..1) of the great-circle route from `from` to `to`. Fractions 0 and 1
 * answer the endpoints exactly; longitudes stay in [-180, 180] (the antimeridian is crossed
 * without wrapping).
 */
export const interpolate = (from: LatLng, to: LatLng, fraction: number): LatLng => {
  if (fraction <= 0) return { lat: from.lat, lng: from.lng }
  if (fraction >= 1) return { lat: to.lat, lng: to.lng }
  const u = toVec(from)
  const v = toVec(to)
  const n = normalOf(u, v)
  if (n === undefined) return { lat: from.lat, lng: from.lng }
  const omega = Math.atan2(norm(cross(u, v)), dot(u, v))
  const theta = omega * fraction
  const w = cross(n, u)
  return fromVec(add(scale(u, Math.cos(theta)), scale(w, Math.sin(theta))))
}

/**
 * Cross-track distance of `p` from the great circle through `from` and `to`, in radians (signed:
 * positive left of the direction of travel).
 */
export const crossTrackAngle = (from: LatLng, to: LatLng, p: LatLng): number => {
  const n = normalOf(toVec(from), toVec(to))
  return n === undefined ? centralAngle(from, p) : Math.asin(Math.max(-1, Math.min(1, dot(toVec(p), n))))
}

/** Along-track angle of `p` from `from` in the direction of `to`, in radians (-π..π). */
export const alongTrackAngle = (from: LatLng, to: LatLng, p: LatLng): number => {
  const u = toVec(from)
  const n = normalOf(u, toVec(to))
  if (n === undefined) return 0
  const q = toVec(p)
  return Math.atan2(dot(cross(u, q), n), dot(u, q))
}

/**
 * `YYYY-MM-DD HH:MM:SS.ffffff` in UTC without offset: the LOCATION_UPDATE `event_date` (epoch
 * milliseconds, so the last three digits of the microseconds are 0).
 */
export const formatEventDate = (ms: number): string => {
  const iso = new Date(ms).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`
}

/** A voyage's times: departure D and arrival A (epoch ms), and the interval I in ms. */
export interface Timing {
  readonly departure: number
  readonly arrival: number
  readonly intervalMs: number
}

/** The instant of the k-th position (k ≥ 1). */
export const instantAt = (timing: Timing, k: number): number => timing.departure + k * timing.intervalMs

const valid = (t: Timing): boolean =>
  Number.isFinite(t.departure) && Number.isFinite(t.arrival) && Number.isFinite(t.intervalMs) && t.intervalMs > 0 &&
  t.arrival > t.departure

/** The first position instant of a voyage (D + I), or null when the voyage has none. */
export const firstInstant = (timing: Timing): number | null => {
  if (!valid(timing)) return null
  const first = instantAt(timing, 1)
  return first <= timing.arrival ? first : null
}

/** How many positions a voyage has had by `now`: floor((min(now, A) − D) / I), at least 0. */
export const countBy = (timing: Timing, now: number): number =>
  valid(timing) ? Math.max(0, Math.floor((Math.min(now, timing.arrival) - timing.departure) / timing.intervalMs)) : 0

/** The positions due, and the next instant after them. */
export interface Due {
  /** Position instants, ascending. */
  readonly instants: ReadonlyArray<number>
  /** The next position instant (possibly already past when `limit` cut the list); null when the voyage has no more. */
  readonly next: number | null
}

/**
 * The position instants of a voyage at or after `from` and at or before `now`, at most `limit`,
 * and the instant of the one after them.
 */
export const due = (timing: Timing, from: number, now: number, limit: number = maxPositionsPerJob): Due => {
  if (!valid(timing)) return { instants: [], next: null }
  const { arrival, departure, intervalMs } = timing
  let k = Math.max(1, Math.ceil((from - departure) / intervalMs))
  const until = Math.min(now, arrival)
  const instants: Array<number> = []
  while (instants.length < limit) {
    const t = instantAt(timing, k)
    if (t > until) break
    instants.push(t)
    k++
  }
  const next = instantAt(timing, k)
  return { instants, next: next <= arrival ? next : null }
}

/** The position at instant `t` of a voyage from `from` to `to` (fraction (t − D) / (A − D)). */
export const positionAt = (timing: Timing, from: LatLng, to: LatLng, t: number): LatLng =>
  interpolate(from, to, (t - timing.departure) / (timing.arrival - timing.departure))

/** A position due, with the index of the leg it belongs to. */
export interface LegInstant {
  readonly leg: number
  readonly instant: number
}

/**
 * The position instants of several legs at or after `from` and at or before `now`, each leg on
 * its own grid (see {@link due}), soonest first, at most `limit` (more only when that many share
 * one instant: a chunk never splits an instant), and the instant of the one after them (the
 * soonest not listed).
 */
export const dueAcross = (
  legs: ReadonlyArray<Timing>,
  from: number,
  now: number,
  limit: number = maxPositionsPerJob
): { readonly instants: ReadonlyArray<LegInstant>; readonly next: number | null } => {
  const perLeg = legs.map((timing) => due(timing, from, now, limit + legs.length))
  const all = perLeg
    .flatMap((d, leg) => d.instants.map((instant) => ({ leg, instant })))
    .sort((a, b) => a.instant - b.instant || a.leg - b.leg)
  let end = Math.min(limit, all.length)
  const cut = all[end]?.instant
  if (cut !== undefined && all[end - 1]?.instant === cut) {
    const first = all.findIndex((i) => i.instant === cut)
    const after = all.findIndex((i) => i.instant > cut)
    end = first > 0 ? first : after < 0 ? all.length : after
  }
  const candidates = [
    ...all.slice(end, end + 1).map((i) => i.instant),
    ...perLeg.flatMap((d) => d.next === null ? [] : [d.next])
  ]
  return { instants: all.slice(0, end), next: candidates.length === 0 ? null : Math.min(...candidates) }
}

/**
 * A leg of a mock voyage: a vessel's departure from one port and its arrival at the next.
 * `vessel` names the leg's vessel when it is not the tradeflow's own.
 */
export interface Voyage {
  readonly port_of_loading: string
  readonly port_of_discharge: string
  readonly departure: number
  readonly arrival: number
  readonly vessel?: string | undefined
}

const moveAt = (t: Tradeflow, code: "VD" | "VA", port: string) =>
  t.events.find((e) =>
    e.source === "mock" && e.container_reference === null && e.status_code === code && e.location === port
  )

/**
 * The transshipment ports of a tradeflow's mock journey, in the order the vessel reaches them:
 * the ports other than the port of loading and of discharge with a mock vessel arrival.
 */
export const transshipmentPorts = (t: Tradeflow): ReadonlyArray<string> => {
  const { port_of_discharge: pod, port_of_loading: pol } = t.details
  const arrivals = t.events.filter((e) =>
    e.source === "mock" && e.container_reference === null && e.status_code === "VA" && e.location !== null &&
    e.location !== pol && e.location !== pod
  )
  return [...new Set(arrivals.sort((a, b) => (a.event_date ?? 0) - (b.event_date ?? 0)).map((e) => e.location!))]
}

/**
 * The ports a tradeflow's shipment calls at, in order: the port of loading, the transshipment
 * ports, the port of discharge (none until both ports are known).
 */
export const portsOf = (t: Tradeflow): ReadonlyArray<string> => {
  const { port_of_discharge: pod, port_of_loading: pol } = t.details
  return pol === undefined || pod === undefined ? [] : [pol, ...transshipmentPorts(t), pod]
}

/**
 * The legs of the mock voyage of an active tradeflow: between consecutive ports of
 * {@link portsOf}, the mock vessel departure (a container-less VD) from one and the arrival (VA)
 * at the next, with the arrival after the departure. A leg missing either move is left out.
 * Production tradeflows have no mock journey, so no voyage.
 */
export const voyagesOf = (t: Tradeflow): ReadonlyArray<Voyage> => {
  if (!t.active) return []
  const ports = portsOf(t)
  const legs: Array<Voyage> = []
  for (let i = 0; i + 1 < ports.length; i++) {
    const from = ports[i]!
    const to = ports[i + 1]!
    const departure = moveAt(t, "VD", from)
    const arrival = moveAt(t, "VA", to)?.event_date ?? null
    if (departure?.event_date == null || arrival === null || !(arrival > departure.event_date)) continue
    legs.push({
      port_of_loading: from,
      port_of_discharge: to,
      departure: departure.event_date,
      arrival,
      vessel: departure.vessel
    })
  }
  return legs
}
