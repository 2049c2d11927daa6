/**
 * Validation of downstream requests (DECISIONS.md §2, §3): the whole request is checked at once,
 * every problem of every record is reported with a JSON Pointer into the body, and a valid
 * request comes back grouped by tradeflow reference with its non-fatal warnings.
 *
 * @module
 */
import { Clock, Effect, Either, Option, type ParseResult, Schema } from "effect"
import { type Issue, listIssues, maxIssues, ValidationError } from "./DownstreamError.js"
import type { Environment } from "./Environment.js"
import { groupRecords } from "./Grouping.js"
import { fastRecord } from "./internal/fastRecord.js"
import { IssueList } from "./internal/issueList.js"
import { type Leaf, leavesOf } from "./internal/parseIssues.js"
import * as Iso6346 from "./Iso6346.js"
import { Locations } from "./Locations.js"
import { mockWindowMillis } from "./MockJourneyOceanBasic.js"
import { scenarioNames } from "./MockJourneys.js"
import type { StorageError } from "./StorageError.js"
import {
  maxEntries,
  parseIsoDateTime,
  type RecordGroup,
  tooManyEntries,
  type TradeflowRecord,
  TradeflowRecordInput
} from "./TradeflowRecord.js"

/**
 * A valid request: its records grouped by reference (first-appearance order), warnings per group.
 * At most {@link maxIssues} warnings are listed in all, in group order; a group whose warnings
 * were cut ends with `and N more warnings not listed`.
 */
export interface ValidatedRequest {
  readonly groups: ReadonlyArray<RecordGroup>
  readonly warnings: ReadonlyArray<ReadonlyArray<string>>
  /** The JSON Pointer of each record of each group (`""` for a single-object body). */
  readonly pointers: ReadonlyArray<ReadonlyArray<string>>
}

/** The options of {@link validateRequest}. */
export interface ValidateOptions {
  readonly environment: Environment
  /** `"array"` for `POST /downstream` (array only), `"any"` for `POST /downstream/tradeflows` (object or array). */
  readonly form: "array" | "any"
  /**
   * Run after each record is decoded and after each tradeflow's warnings (with
   * `pauseEveryMillis`, only once that much work has passed since it last ran): `Ingest` lets the
   * event loop turn there.
   */
  readonly pause?: Effect.Effect<void>
  /** Skip `pause` until this many milliseconds of work have passed since it last ran (default 0: never skip). */
  readonly pauseEveryMillis?: number
}

/** Nesting deeper than this (objects and arrays) is rejected instead of decoded. */
export const maxDepth = 32

/** The message of a record that has none of the three references. */
export const atLeastOneReferenceMessage =
  "at least one of container_reference, bill_of_lading_reference, booking_reference is required"

/**
 * A JSON Pointer (RFC 6901) for a path, appended to `prefix` (itself a pointer, `""` for the
 * document root).
 */
export const jsonPointer = (path: ReadonlyArray<PropertyKey>, prefix = ""): string =>
  prefix + path.map((key) => "/" + String(key).replace(/~/g, "~0").replace(/\//g, "~1")).join("")

/** A readable name of a path inside a value: `events[1].event_date`; `root` for the empty path. */
export const fieldLabel = (path: ReadonlyArray<PropertyKey>, root = "value"): string => {
  let label = ""
  for (const key of path) {
    if (typeof key === "number") label += `[${key}]`
    else label += label === "" ? String(key) : `.${String(key)}`
  }
  return label === "" ? root : label
}

const describeValue = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  switch (typeof value) {
    case "string":
      return "a string"
    case "number":
      return "a number"
    case "boolean":
      return "a boolean"
    case "object":
      return "an object"
    default:
      return typeof value
  }
}

const describeExpected = (message: string): string => {
  const expected = message.replace(/^Expected /, "")
  if (/^(string|nonEmptyString|Trim|Uppercase|Lowercase)\b/.test(expected)) return "a string"
  if (/^boolean\b/.test(expected)) return "a boolean"
  if (/^(number|int|Int)\b/.test(expected)) return "a number"
  if (/^(ReadonlyArray|Array|readonly \[)/.test(expected)) return "an array"
  if (/^(\{|Struct\b)/.test(expected)) return "an object"
  if (/^"/.test(expected)) return `one of ${expected.split(", actual")[0]}`
  return "a value of another type"
}

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current: unknown = root
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined
    if (!Object.prototype.hasOwnProperty.call(current, key)) return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}

const isTypeMismatch = (leaf: Leaf): boolean => leaf.tag === "Type" && leaf.message.startsWith("Expected ")

const isUndefinedNoise = (leaf: Leaf): boolean => leaf.tag === "Type" && /^Expected undefined(?:,|$)/.test(leaf.message)

const phrase = (label: string, message: string): string =>
  /^(at least one of|every|one of)\b/.test(message)
    ? message
    : /^(must|is|are|should)\b/.test(message)
    ? `${label} ${message}`
    : `${label}: ${message}`

interface Entry {
  readonly path: ReadonlyArray<PropertyKey>
  readonly types: Set<string>
  readonly messages: Set<string>
}

interface Place {
  readonly children: Map<string, Place>
  deeper: boolean
  explained: boolean
  entry: Entry | undefined
}

const place = (): Place => ({ children: new Map(), deeper: false, explained: false, entry: undefined })

/** The options of {@link collectIssues}. */
export interface CollectOptions {
  /** The JSON Pointer the paths are appended to (`""`, the default, for the document root). */
  readonly prefix?: string
  /** The decoded input, to have mismatch messages say what was sent (`got a number`). */
  readonly input?: unknown
  /** The name of the empty path in messages (`"value"` by default). */
  readonly rootLabel?: string
  /** Build at most this many issues (all by default); the others are only counted. */
  readonly room?: number
  /** Problems found outside the schema, merged with its own like any other (same path and message once). */
  readonly extra?: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
}

/**
 * {@link issuesFromParseError} with a budget: the first `room` issues built, and how many there
 * are in all. Counting the others builds no message, so a request with millions of problems costs
 * little more than their decoding.
 */
export const collectIssues = (
  error: ParseResult.ParseError,
  options: CollectOptions = {}
): { readonly issues: Array<Issue>; readonly total: number } => {
  const leaves = leavesOf(error.issue).filter((leaf) => !isUndefinedNoise(leaf))
  for (const { path, message } of options.extra ?? []) leaves.push({ path, tag: "Refinement", message })
  const root = place()
  const places = leaves.map((leaf) => {
    let at = root
    for (const segment of leaf.path) {
      at.deeper = true
      const key = String(segment)
      let next = at.children.get(key)
      if (next === undefined) {
        next = place()
        at.children.set(key, next)
      }
      at = next
    }
    if (!isTypeMismatch(leaf)) at.explained = true
    return at
  })
  const entries: Array<Entry> = []
  leaves.forEach((leaf, i) => {
    const at = places[i]!
    const mismatch = isTypeMismatch(leaf)
    if (mismatch && (at.deeper || at.explained)) return
    if (at.entry === undefined) {
      at.entry = { path: leaf.path, types: new Set(), messages: new Set() }
      entries.push(at.entry)
    }
    if (mismatch) at.entry.types.add(leaf.message)
    else at.entry.messages.add(leaf.tag === "Missing" ? "is required" : leaf.message)
  })
  const { input, prefix = "", room = Infinity, rootLabel = "value" } = options
  const issues: Array<Issue> = []
  let total = 0
  for (const entry of entries) {
    const count = (entry.types.size > 0 ? 1 : 0) + entry.messages.size
    total += count
    if (issues.length >= room) continue
    const pointer = jsonPointer(entry.path, prefix)
    const label = fieldLabel(entry.path, rootLabel)
    if (entry.types.size > 0) {
      const types = Array.from(new Set(Array.from(entry.types, describeExpected)))
      const actual = input === undefined ? "" : `, got ${describeValue(valueAt(input, entry.path))}`
      issues.push({ path: pointer, message: `${label} must be ${types.join(" or ")}${actual}` })
    }
    for (const message of entry.messages) issues.push({ path: pointer, message: phrase(label, message) })
  }
  return { issues: issues.length > room ? issues.slice(0, room) : issues, total }
}

/**
 * Turns a `ParseError` into the issues of a problem response: one clear message per problem,
 * each with a JSON Pointer (`prefix` + the path of the problem) and naming the field. The noisy
 * duplicates Schema reports (`Expected undefined, actual …` beside the real problem of an
 * optional field, the failed alternatives of a union when one alternative got further) are
 * dropped; the alternatives of a union at the same place become one message. Pass the decoded
 * `input` to have the messages say what was sent instead (`got a number`). The work is linear in
 * the size of the error: its tree is walked once, and problems are matched by path through a
 * tree of the paths.
 */
export const issuesFromParseError = (
  error: ParseResult.ParseError,
  prefix = "",
  input?: unknown,
  rootLabel = "value"
): Array<Issue> => collectIssues(error, { prefix, input, rootLabel }).issues

interface Sanitised {
  readonly value: unknown
  readonly tooDeep: ReadonlyArray<ReadonlyArray<PropertyKey>>
  readonly nul: ReadonlyArray<ReadonlyArray<PropertyKey>>
}

/** The message of a string or key holding U+0000, which no storage keeps (PostgreSQL refuses it). */
export const nulMessage = "must not contain the NUL character (U+0000)"

/**
 * Whether {@link sanitise} would change anything: true when `value` holds a `__proto__` key, nesting
 * at or past {@link maxDepth}, U+0000 in a string or key, or an object that is neither a plain
 * object nor an array (the copy would be a plain object).
 */
const needsCopy = (value: unknown, depth: number): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (value === null || typeof value !== "object") return false
  if (depth >= maxDepth) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (needsCopy(value[i], depth + 1)) return true
    return false
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return true
  for (const key of Object.keys(value)) {
    if (key === "__proto__" || key.includes("\u0000")) return true
    if (needsCopy((value as Record<string, unknown>)[key], depth + 1)) return true
  }
  return false
}

/**
 * A copy of JSON-like input without `__proto__` keys and cut at {@link maxDepth}: the paths
 * where nesting went too deep, and those of strings or keys holding U+0000, are reported. Input
 * that the copy would not change (as a parsed request body nearly always is) is answered as it is.
 */
const sanitise = (input: unknown): Sanitised => {
  if (!needsCopy(input, 0)) return { value: input, tooDeep: [], nul: [] }
  const tooDeep: Array<ReadonlyArray<PropertyKey>> = []
  const nul: Array<ReadonlyArray<PropertyKey>> = []
  const go = (value: unknown, path: Array<PropertyKey>): unknown => {
    if (typeof value === "string" && value.includes("\u0000")) nul.push([...path])
    if (value === null || typeof value !== "object") return value
    if (path.length >= maxDepth) {
      tooDeep.push([...path])
      return undefined
    }
    if (Array.isArray(value)) {
      const out: Array<unknown> = new Array(value.length)
      for (let i = 0; i < value.length; i++) {
        path.push(i)
        out[i] = go(value[i], path)
        path.pop()
      }
      return out
    }
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      if (key === "__proto__") continue
      path.push(key)
      if (key.includes("\u0000")) nul.push([...path])
      out[key] = go((value as Record<string, unknown>)[key], path)
      path.pop()
    }
    return out
  }
  return { value: go(input, []), tooDeep, nul }
}

const decodeRecord = Schema.decodeUnknownEither(TradeflowRecordInput, { errors: "all" })

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const referenceKeys = ["container_reference", "bill_of_lading_reference", "booking_reference"] as const

const limitedKeys = Object.keys(maxEntries) as ReadonlyArray<keyof typeof maxEntries>

/**
 * Validates one record (already sanitised): its decoded form (by hand for the common shape, else
 * through the schema), or else its issues (pointers under `prefix`) added to `errors`. A list longer than its {@link maxEntries} is the record's only
 * issue: nothing of the record is decoded then.
 */
const validateRecord = (raw: unknown, prefix: string, errors: IssueList): TradeflowRecord | undefined => {
  if (!isObject(raw)) {
    errors.add({ path: prefix, message: `record must be a JSON object, got ${describeValue(raw)}` })
    return undefined
  }
  const total = errors.total
  for (const key of limitedKeys) {
    const list = raw[key]
    if (Array.isArray(list) && list.length > maxEntries[key]) {
      errors.add({
        path: jsonPointer([key], prefix),
        message: `${key} ${tooManyEntries(maxEntries[key], list.length, "record")}`
      })
    }
  }
  if (errors.total > total) return undefined
  const fast = fastRecord(raw)
  if (fast !== undefined) return fast
  const decoded = decodeRecord(raw)
  if (Either.isRight(decoded)) return decoded.right
  const noReference = referenceKeys.every((key) => raw[key] === undefined)
  const { issues, total: found } = collectIssues(decoded.left, {
    prefix,
    input: raw,
    rootLabel: "record",
    room: errors.room,
    ...(noReference ? { extra: [{ path: ["container_reference"], message: atLeastOneReferenceMessage }] } : {})
  })
  errors.addAll(issues)
  errors.skip(found - issues.length)
  return undefined
}

const dateFields = [
  "estimated_time_of_departure",
  "estimated_time_of_arrival",
  "actual_time_of_departure",
  "actual_time_of_arrival"
] as const

const hasOffset = (dateTime: string): boolean => /(?:Z|z|[+-]\d{2}(?::?\d{2})?)$/.test(dateTime.trim().slice(10))

interface Located {
  readonly record: TradeflowRecord
  readonly raw: Record<string, unknown>
  readonly prefix: string
}

const containerWarning = (field: string, pointer: string, number: string): Option.Option<string> => {
  if (Iso6346.isValid(number)) return Option.none()
  const expected = number.length === 11 ? Iso6346.checkDigit(number.slice(0, 10)) : undefined
  return Option.some(
    expected === undefined
      ? `${field} at ${pointer}: "${number}" is not an ISO 6346 container number (4 letters, 7 digits); accepted as sent`
      : `${field} at ${pointer}: "${number}" fails the ISO 6346 check digit (expected ${expected}); accepted as sent`
  )
}

/** What the warnings of a request know at once: the environment, the instant, and which UN/LOCODEs are known. */
interface WarningContext {
  readonly environment: Environment
  readonly now: number
  readonly knownLocodes: ReadonlyMap<string, boolean>
}

const portFields = ["port_of_loading", "port_of_discharge"] as const

const recordWarnings = ({ prefix, raw, record }: Located, context: WarningContext): Array<string> => {
  const warnings: Array<string> = []
  const at = (...path: Array<PropertyKey>) => jsonPointer(path, prefix)

  const rawContainers = raw["container_reference"]
  const containers = record.container_reference ?? []
  for (let j = 0; j < containers.length; j++) {
    const entry = containers[j]!
    if (Iso6346.isValid(entry.reference)) continue
    const pointer = typeof rawContainers === "string"
      ? at("container_reference")
      : isObject(Array.isArray(rawContainers) ? rawContainers[j] : undefined)
      ? at("container_reference", j, "reference")
      : at("container_reference", j)
    Option.map(containerWarning("container_reference", pointer, entry.reference), (w) => warnings.push(w))
  }
  const events = record.events ?? []
  for (let k = 0; k < events.length; k++) {
    const event = events[k]!
    if (event.container_reference !== undefined && event.container_reference !== "") {
      Option.map(
        containerWarning(
          `events[${k}].container_reference`,
          at("events", k, "container_reference"),
          event.container_reference
        ),
        (w) => warnings.push(w)
      )
    }
  }

  for (const field of portFields) {
    const code = record[field]
    if (code !== undefined && context.knownLocodes.get(code) !== true) {
      warnings.push(
        `${field} at ${at(field)}: unknown UN/LOCODE ${code}; accepted, but no location details are known`
      )
    }
  }

  if (context.environment === "uat") {
    if (record.customer_name !== undefined) {
      warnings.push(`customer_name at ${at("customer_name")} is ignored in UAT`)
    }
    if (record.partners !== undefined) warnings.push(`partners at ${at("partners")} is ignored in UAT`)
    if (record.mock_tracking !== undefined && !scenarioNames.includes(record.mock_tracking.scenario)) {
      warnings.push(
        `mock_tracking.scenario at ${at("mock_tracking", "scenario")}: unknown scenario ` +
          `${JSON.stringify(record.mock_tracking.scenario)} is ignored, no mock events are generated ` +
          `(known: ${scenarioNames.join(", ")})`
      )
    }
    if (record.mock_tracking !== undefined && scenarioNames.includes(record.mock_tracking.scenario)) {
      const days = mockWindowMillis / 86_400_000
      for (const field of dateFields) {
        const value = record[field]
        if (value === undefined) continue
        const offset = parseIsoDateTime(value) - context.now
        if (Math.abs(offset) > mockWindowMillis) {
          warnings.push(
            `${field} at ${at(field)}: more than ${days} days ${offset < 0 ? "before" : "after"} now; ` +
              `the mock journey uses the date ${days} days ${offset < 0 ? "before" : "after"} now instead`
          )
        }
      }
    }
  } else if (record.mock_tracking !== undefined) {
    warnings.push(`mock_tracking at ${at("mock_tracking")} is ignored in production`)
  }

  const noOffset = (value: string | undefined) => value !== undefined && !hasOffset(value)
  const withoutOffset = (label: string, pointer: string) =>
    warnings.push(`${label} at ${pointer}: date-time without an offset, read as UTC`)
  for (const field of dateFields) {
    if (noOffset(record[field])) withoutOffset(field, at(field))
  }
  if (noOffset(record.references?.delivery_event_date)) {
    withoutOffset("references.delivery_event_date", at("references", "delivery_event_date"))
  }
  for (let k = 0; k < events.length; k++) {
    if (noOffset(events[k]!.event_date)) withoutOffset(`events[${k}].event_date`, at("events", k, "event_date"))
  }
  return warnings
}

/** At most this many distinct containers per tradeflow in one request (its records together). */
export const maxTradeflowContainers = 1_000

/** At most this many events per tradeflow in one request (its records together). */
export const maxTradeflowEvents = 1_000

const merged = (reference: string) => `records with tradeflow_reference ${JSON.stringify(reference)} in this request`

const max = (n: number) => n.toLocaleString("en")

/**
 * The issues of tradeflows whose records together name more than {@link maxTradeflowContainers}
 * distinct containers or hold more than {@link maxTradeflowEvents} events, each at the record
 * that crossed the limit.
 */
const tradeflowIssues = (located: ReadonlyArray<Located>): Array<Issue> => {
  const tally = new Map<string, { containers: Set<string>; events: number }>()
  const issues: Array<Issue> = []
  for (const { prefix, record } of located) {
    const reference = record.tradeflow_reference
    let t = tally.get(reference)
    if (t === undefined) {
      t = { containers: new Set(), events: 0 }
      tally.set(reference, t)
    }
    const before = { containers: t.containers.size, events: t.events }
    for (const entry of record.container_reference ?? []) t.containers.add(entry.reference)
    t.events += record.events?.length ?? 0
    if (before.containers <= maxTradeflowContainers && t.containers.size > maxTradeflowContainers) {
      issues.push({
        path: jsonPointer(["container_reference"], prefix),
        message:
          `the ${merged(reference)} name more than ${
            max(maxTradeflowContainers)
          } distinct containers (from this record ` +
          `on); at most ${max(maxTradeflowContainers)} are accepted per tradeflow and request`
      })
    }
    if (before.events <= maxTradeflowEvents && t.events > maxTradeflowEvents) {
      issues.push({
        path: jsonPointer(["events"], prefix),
        message: `the ${merged(reference)} hold more than ${max(maxTradeflowEvents)} events (from this record on); ` +
          `at most ${max(maxTradeflowEvents)} are accepted per tradeflow and request`
      })
    }
  }
  return issues
}

const bodyError = (message: string) => new ValidationError({ errors: [{ path: "", message }] })

/**
 * Validates a whole request body: every record is decoded with {@link TradeflowRecordInput} and
 * every problem of every record is reported at once (a {@link ValidationError} with JSON Pointers
 * into the body; at most {@link maxIssues} listed, the rest counted). A list over its
 * {@link maxEntries} is refused before its entries are decoded, and the records of one reference
 * together hold at most {@link maxTradeflowContainers} containers and {@link maxTradeflowEvents}
 * events. A valid request is grouped by `tradeflow_reference` (first-appearance order) with the
 * warnings of each group: container numbers failing ISO 6346, UN/LOCODEs the {@link Locations}
 * directory does not know, fields ignored in the environment, unknown mock scenarios and
 * date-times without an offset. Warnings never reject a record.
 */
export const validateRequest: (
  body: unknown,
  options: ValidateOptions
) => Effect.Effect<ValidatedRequest, ValidationError | StorageError, Locations> = Effect.fnUntraced(
  function*(body: unknown, options: ValidateOptions) {
    const sanitised = sanitise(body)
    const input = sanitised.value
    if (sanitised.tooDeep.length > 0) {
      return yield* new ValidationError({
        errors: listIssues(
          sanitised.tooDeep.slice(0, maxIssues).map((path) => ({
            path: jsonPointer(path),
            message: `value is nested too deeply (more than ${maxDepth} levels of arrays and objects)`
          })),
          sanitised.tooDeep.length
        )
      })
    }
    if (sanitised.nul.length > 0) {
      return yield* new ValidationError({
        errors: listIssues(
          sanitised.nul.slice(0, maxIssues).map((path) => ({ path: jsonPointer(path), message: nulMessage })),
          sanitised.nul.length
        )
      })
    }
    let entries: Array<readonly [raw: unknown, prefix: string]>
    if (Array.isArray(input)) {
      if (input.length === 0) return yield* bodyError("request body must contain at least one tradeflow record")
      entries = input.map((raw, i) => [raw, `/${i}`] as const)
    } else if (options.form === "array") {
      return yield* bodyError(
        `request body must be a JSON array of tradeflow records (an array is required even for one record), got ${
          describeValue(input)
        }`
      )
    } else if (isObject(input)) {
      entries = [[input, ""]]
    } else {
      return yield* bodyError(
        `request body must be a tradeflow record (a JSON object) or an array of them, got ${describeValue(input)}`
      )
    }

    const every = options.pauseEveryMillis ?? 0
    let pausedAt = every > 0 ? performance.now() : 0
    const due = () => {
      if (options.pause === undefined) return false
      if (every <= 0) return true
      const now = performance.now()
      if (now - pausedAt < every) return false
      pausedAt = now
      return true
    }
    const errors = new IssueList()
    const located: Array<Located> = []
    for (const [raw, prefix] of entries) {
      const record = validateRecord(raw, prefix, errors)
      if (record !== undefined) located.push({ record, raw: raw as Record<string, unknown>, prefix })
      if (due()) yield* options.pause!
    }
    if (errors.total > 0) return yield* new ValidationError({ errors: errors.issues() })
    const overLimit = tradeflowIssues(located)
    if (overLimit.length > 0) return yield* new ValidationError({ errors: listIssues(overLimit) })

    const locations = yield* Locations
    const codes = new Set<string>()
    for (const { record } of located) {
      for (const field of portFields) {
        const code = record[field]
        if (code !== undefined) codes.add(code)
      }
    }
    const knownLocodes = new Map<string, boolean>()
    for (const code of codes) knownLocodes.set(code, Option.isSome(yield* locations.lookup(code)))
    const context: WarningContext = {
      environment: options.environment,
      now: yield* Clock.currentTimeMillis,
      knownLocodes
    }

    const groups = groupRecords(located.map((l) => l.record))
    const byReference = new Map<string, Array<Located>>()
    for (const l of located) {
      const list = byReference.get(l.record.tradeflow_reference)
      if (list === undefined) byReference.set(l.record.tradeflow_reference, [l])
      else list.push(l)
    }
    const warnings: Array<ReadonlyArray<string>> = []
    let room = maxIssues
    for (const group of groups) {
      const members = byReference.get(group.tradeflow_reference) ?? []
      let groupWarnings: ReadonlyArray<string>
      if (members.length === 1) {
        const own = recordWarnings(members[0]!, context)
        groupWarnings = own.length > 1 ? Array.from(new Set(own)) : own
      } else {
        const distinct = new Set<string>()
        for (const l of members) for (const w of recordWarnings(l, context)) distinct.add(w)
        groupWarnings = Array.from(distinct)
      }
      const listed = groupWarnings.length <= room ? groupWarnings : groupWarnings.slice(0, room)
      room -= listed.length
      const more = groupWarnings.length - listed.length
      warnings.push(more === 0 ? listed : [...listed, `and ${more.toLocaleString("en")} more warnings not listed`])
      if (due()) yield* options.pause!
    }
    const pointers = groups.map((g) => (byReference.get(g.tradeflow_reference) ?? []).map((l) => l.prefix))
    return { groups, warnings, pointers }
  }
)
