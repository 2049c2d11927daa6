import { Either, type ParseResult, Schema } from "effect"
import type { Issue } from "../DownstreamError.js"
import type { TrackingEvent } from "../TrackingEvent.js"
import type { MalformedEvent, PushedEvents, TargetQuery } from "../TrackingSource.js"
import { normaliseContainerNumber, parseIsoDateTime } from "../TradeflowRecord.js"
import { collectIssues, jsonPointer, maxDepth, nulMessage } from "../Validation.js"

/** How a value is named in a message: `null`, `an array`, `an object`, `a number`. */
export const describe = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : `a ${typeof value}`

/** Whether a value is a JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/

/** Whether a text is an RFC 3339 date-time (`format: date-time` of the OpenAPI documents): a full date, a time and an offset. */
export const isRfc3339 = (text: string): boolean => {
  const m = rfc3339.exec(text)
  if (m === null) return false
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((g) =>
    g === undefined ? 0 : Number(g)
  )
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate()
  return month! >= 1 && month! <= 12 && day! >= 1 && day! <= days && hour! <= 23 && minute! <= 59 &&
    second! <= 60 && offsetHours! <= 23 && offsetMinutes! <= 59
}

/** An RFC 3339 date-time with an offset, kept as sent. */
export const DateTime = Schema.String.pipe(Schema.filter(isRfc3339, {
  message: () => "must be an RFC 3339 date-time with an offset, for example 2021-01-09T14:12:56+01:00",
  arbitrary: () => (fc) =>
    fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }).map((ms) => new Date(ms).toISOString())
}))

/** A string of at most `max` characters (`maxLength` of the OpenAPI documents). */
export const text = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters long` }))

/** How far a date may lie beyond what it is checked against before the event is implausible: a day of clock skew. */
export const skewMillis = 86_400_000

/** The problems of one event: the first ones found, and how many there are in all. */
export interface EventIssues {
  readonly issues: ReadonlyArray<Issue>
  readonly total: number
}

/** One problem. */
export const oneIssue = (path: string, message: string): EventIssues => ({ issues: [{ path, message }], total: 1 })

/** The problems a schema found in the event at `index`, each at its pointer into the list (`/3/eventDateTime`). */
export const schemaIssues = (
  error: ParseResult.ParseError,
  index: number,
  input: unknown,
  room = 100
): EventIssues => collectIssues(error, { prefix: `/${index}`, input, rootLabel: "event", room })

/** The problem of an element that is not an object. */
export const notAnObject = (raw: unknown, index: number): EventIssues =>
  oneIssue(`/${index}`, `must be a JSON object, got ${describe(raw)}`)

/** The problem of an element whose type is not one of `known` (at `path`). */
export const unknownType = (field: string, value: unknown, known: ReadonlyArray<string>, path: string): EventIssues =>
  oneIssue(
    path,
    `${field} must be one of ${known.map((k) => JSON.stringify(k)).join(", ")}, got ${
      typeof value === "string" ? JSON.stringify(value) : value === undefined ? "nothing" : describe(value)
    }`
  )

/** The problem of a date-time in the future (beyond {@link skewMillis} after `now`), if it is. */
export const futureIssue = (
  path: string,
  field: string,
  value: string,
  now: number | undefined
): ReadonlyArray<Issue> =>
  now !== undefined && parseIsoDateTime(value) > now + skewMillis
    ? [{ path, message: `${field} ${value} lies in the future` }]
    : []

/** The problem of an event whose `eventID` an earlier event of the same list (at `first`) has. */
export const repeatedId = (id: string, first: number): string =>
  `eventID ${id} repeats event ${first}'s, but an eventID names one event`

const malformedMessage = (found: EventIssues): string => {
  const listed = found.issues.map((i) => `${i.path}: ${i.message}`).join("; ")
  const more = found.total - found.issues.length
  return more > 0 ? `${listed}; and ${more} more problems` : listed
}

const readableId = (raw: unknown): string | null =>
  isObject(raw) && typeof raw["eventID"] === "string" && raw["eventID"].trim() !== "" ? raw["eventID"] : null

/** Where the fields a query is checked against lie in an event of a version. */
export interface QueryPaths {
  readonly container: string
  readonly references: string
}

const mismatch = (
  wanted: string | undefined,
  named: ReadonlyArray<string>,
  what: string,
  path: string,
  normalise: (s: string) => string = (s) => s.trim()
): ReadonlyArray<Issue> =>
  wanted === undefined || named.length === 0 || named.some((n) => normalise(n) === normalise(wanted))
    ? []
    : [{ path, message: `names ${what} ${named.join(", ")}, not the ${what} asked for (${wanted})` }]

/** The problems of an event that contradicts the query it answers: another container, other bookings or bills. */
const queryIssues = (
  event: TrackingEvent,
  index: number,
  query: TargetQuery | undefined,
  paths: QueryPaths
): ReadonlyArray<Issue> =>
  query === undefined ? [] : [
    ...mismatch(
      query.equipment,
      event.container_reference === null ? [] : [event.container_reference],
      "container",
      `/${index}${paths.container}`,
      normaliseContainerNumber
    ),
    ...mismatch(query.booking, event.bookings, "booking", `/${index}${paths.references}`),
    ...mismatch(query.bill_of_lading, event.bills_of_lading, "bill of lading", `/${index}${paths.references}`)
  ]

/**
 * The problem of an event no storage could keep as it is, or that could not be written out again:
 * nesting at or past `Validation.maxDepth` (JSON.stringify would overflow the stack on a deep
 * enough one), or U+0000 in a string or key (PostgreSQL refuses it). The first one found.
 */
const unstorable = (raw: unknown, index: number): EventIssues | undefined => {
  const path: Array<PropertyKey> = [index]
  const go = (value: unknown): EventIssues | undefined => {
    if (typeof value === "string") return value.includes("\u0000") ? oneIssue(jsonPointer(path), nulMessage) : undefined
    if (value === null || typeof value !== "object") return undefined
    if (path.length > maxDepth) {
      return oneIssue(jsonPointer(path), `is nested too deeply (more than ${maxDepth} levels of arrays and objects)`)
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i)
        const found = go(value[i])
        path.pop()
        if (found !== undefined) return found
      }
      return undefined
    }
    for (const key of Object.keys(value)) {
      path.push(key)
      const found = key.includes("\u0000")
        ? oneIssue(jsonPointer(path), nulMessage)
        : go((value as Record<string, unknown>)[key])
      path.pop()
      if (found !== undefined) return found
    }
    return undefined
  }
  return go(raw)
}

/** How a list of events of one version is read. */
export interface ListDecoder {
  /** An element read as a tracking event, null for one that is not tracked (IoT, reefer), or its problems. */
  readonly element: (raw: unknown, index: number) => Either.Either<TrackingEvent | null, EventIssues>
  /** What makes two events of one answer the same one (the second is then malformed). */
  readonly identity: (event: TrackingEvent) => string
  /** The problem of an event repeating the one at `first`. */
  readonly repeated: (event: TrackingEvent, index: number, first: number) => Issue
  readonly paths: QueryPaths
}

/**
 * Reads a list of events: each element alone, so that one malformed event fails alone (with its
 * index, its eventID when readable, and its problems at their pointers), the others kept.
 */
export const decodeList = (
  elements: ReadonlyArray<unknown>,
  decoder: ListDecoder,
  query: TargetQuery | undefined
): PushedEvents => {
  const events: Array<TrackingEvent> = []
  const malformed: Array<MalformedEvent> = []
  const seen = new Map<string, number>()
  elements.forEach((raw, index) => {
    const fail = (found: EventIssues) =>
      malformed.push({ index, event_id: readableId(raw), message: malformedMessage(found) })
    const unfit = unstorable(raw, index)
    if (unfit !== undefined) return fail(unfit)
    const decoded = decoder.element(raw, index)
    if (Either.isLeft(decoded)) return fail(decoded.left)
    const event = decoded.right
    if (event === null) return
    const first = seen.get(decoder.identity(event))
    const issues = [
      ...(first === undefined ? [] : [decoder.repeated(event, index, first)]),
      ...(event.retracted ? [] : queryIssues(event, index, query, decoder.paths))
    ]
    if (issues.length > 0) return fail({ issues, total: issues.length })
    seen.set(decoder.identity(event), index)
    events.push(event)
  })
  return { events, malformed }
}
