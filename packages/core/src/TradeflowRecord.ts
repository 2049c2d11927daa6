/**
 * The downstream input: a tradeflow record as posted to `POST /downstream` and
 * `POST /downstream/tradeflows`, in every form SERVICE.md and DECISIONS.md §3 accept.
 *
 * The decoded (Type) side is normalised: every reference field is an array, container numbers
 * are upper-cased with spaces and hyphens removed, UN/LOCODEs are upper-cased.
 *
 * @module
 */
import { Schema } from "effect"
import { isoDateTimePattern } from "./internal/isoDateTime.js"

/** A 5-character UN/LOCODE (two-letter country, three-character location), upper-cased. */
export const UnLocode = Schema.compose(Schema.Trim, Schema.Uppercase).pipe(
  Schema.compose(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}[A-Z2-9]{3}$/, {
    message: () => "must be a 5-character UN/LOCODE (for example NLRTM)"
  })))
)

/** Any JSON value, kept as sent (its JSON Schema says so instead of Effect's `/schemas/unknown`, which may appear once). */
export const JsonValue = Schema.Unknown.annotations({
  jsonSchema: { type: ["string", "number", "boolean", "null", "object", "array"] },
  description: "Any JSON value"
})

/**
 * An ISO 8601 date-time (a date alone is read as midnight UTC, a time without an offset as UTC).
 * Kept as the string that was sent.
 */
export const IsoDateTime = Schema.Trim.pipe(
  Schema.filter((s) => isoDateTimePattern.test(s) && !Number.isNaN(parseIsoDateTime(s)), {
    message: () => "must be an ISO 8601 date-time, for example 2026-11-22T10:00:00+01:00",
    arbitrary: () => (fc) =>
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }).map((ms) => new Date(ms).toISOString())
  })
)

/** Milliseconds since the epoch of a string accepted by {@link IsoDateTime} (`NaN` otherwise). */
export const parseIsoDateTime = (s: string): number => {
  const t = s.trim().replace(" ", "T").replace(",", ".")
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return Date.parse(`${t}T00:00:00Z`)
  const withSeconds = /T\d{2}:\d{2}(?:Z|z|[+-]|$)/.test(t) ? t.replace(/(T\d{2}:\d{2})/, "$1:00") : t
  const hasOffset = /(?:Z|z|[+-]\d{2}(?::?\d{2})?)$/.test(withSeconds.slice(10))
  const normalised = withSeconds.replace(/([+-]\d{2})(\d{2})$/, "$1:$2").replace(/([+-]\d{2})$/, "$1:00")
  return Date.parse(hasOffset ? normalised : `${normalised}Z`)
}

const NonEmptyString = Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "must not be empty" }))

/**
 * The most entries each list of a record may hold in a request. Validation refuses a longer list
 * before decoding any of its entries; {@link TradeflowRecordInput} holds them as `maxItems` too.
 */
export const maxEntries = {
  container_reference: 1_000,
  booking_reference: 100,
  bill_of_lading_reference: 100,
  events: 1_000,
  partners: 100
} as const

/** The message of a list with `count` entries where at most `max` are accepted per `unit`. */
export const tooManyEntries = (max: number, count: number, unit: string): string =>
  `must hold at most ${max.toLocaleString("en")} entries per ${unit}, got ${count.toLocaleString("en")}`

/** An array of at most `max` items (`maxItems` in its JSON Schema), the message of {@link tooManyEntries}. */
export const limitedArray = <A, I, R>(
  item: Schema.Schema<A, I, R>,
  max: number,
  unit: string
): Schema.filter<Schema.Array$<Schema.Schema<A, I, R>>> =>
  Schema.Array(item).pipe(Schema.maxItems(max, {
    message: (issue) => tooManyEntries(max, Array.isArray(issue.actual) ? issue.actual.length : 0, unit)
  }))

/** Normalises a container number: upper case, without spaces and hyphens. */
export const normaliseContainerNumber = (s: string): string => s.replace(/[\s-]/g, "").toUpperCase()

/** A container entry of the richer input form `[{ "reference", "custom_properties" }]`. */
export const ContainerEntry = Schema.Struct({
  reference: NonEmptyString,
  custom_properties: Schema.optional(Schema.Record({ key: Schema.String, value: JsonValue }))
})

const list = <A, I, R>(
  item: Schema.Schema<A, I, R>,
  max: number | undefined
): Schema.Schema<ReadonlyArray<A>, ReadonlyArray<I>, R> =>
  max === undefined ? Schema.Array(item) : limitedArray(item, max, "record")

const containerReferences = (max?: number) =>
  Schema.transform(
    Schema.Union(NonEmptyString, list(Schema.Union(NonEmptyString, ContainerEntry), max)),
    Schema.Array(ContainerEntry),
    {
      strict: true,
      decode: (input) =>
        (typeof input === "string" ? [input] : input).map((c) =>
          typeof c === "string"
            ? { reference: normaliseContainerNumber(c) }
            : { ...c, reference: normaliseContainerNumber(c.reference) }
        ),
      encode: (entries) => entries
    }
  )

/** `container_reference`: a string, an array of strings or an array of container entries. */
export const ContainerReferences = containerReferences()

const references = (max?: number) =>
  Schema.transform(
    Schema.Union(NonEmptyString, list(NonEmptyString, max)),
    Schema.Array(Schema.String),
    { strict: true, decode: (input) => (typeof input === "string" ? [input] : input), encode: (refs) => refs }
  )

/** `booking_reference` / `bill_of_lading_reference`: a string or an array of strings. */
export const References = references()

/** An element of `events`. `actual` defaults to false. */
export const EventInput = Schema.Struct({
  message: NonEmptyString,
  container_reference: Schema.optional(Schema.Trim.pipe(Schema.transform(Schema.String, {
    strict: true,
    decode: normaliseContainerNumber,
    encode: (s) => s
  }))),
  location_name: Schema.optional(Schema.Trim),
  event_date: Schema.optional(IsoDateTime),
  actual: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type EventInput = typeof EventInput.Type

/**
 * How fast a mock journey is released: `instant` (the default) generates it whole; `fast`,
 * `normal` and `slow` release its steps one a minute, an hour or a day.
 */
export const MockSpeed = Schema.Literal("instant", "fast", "normal", "slow").annotations({
  message: () => ({ message: "must be one of \"instant\", \"fast\", \"normal\", \"slow\"", override: true })
})
export type MockSpeed = typeof MockSpeed.Type

/** `mock_tracking` (UAT only). */
export const MockTracking = Schema.Struct({
  scenario: Schema.String,
  speed: Schema.optional(MockSpeed)
})
export type MockTracking = typeof MockTracking.Type

/** A partner of a tradeflow (DECISIONS.md §3). */
export const PartnerInput = Schema.Struct({
  name: NonEmptyString,
  role: Schema.optional(Schema.String),
  reference: Schema.optional(Schema.String)
})

/** `references`. */
export const RecordReferences = Schema.Struct({
  house_bill_of_lading: Schema.optional(Schema.String),
  delivery_location: Schema.optional(Schema.String),
  delivery_event_date: Schema.optional(IsoDateTime)
})

/** `configuration`. Keys other than `enroll_insurance` are kept as sent. */
export const RecordConfiguration = Schema.Struct(
  { enroll_insurance: Schema.optional(Schema.Boolean) },
  Schema.Record({ key: Schema.String, value: JsonValue })
)

/** The fields of a tradeflow record, without the cross-field rule. */
export const TradeflowRecordFields = Schema.Struct({
  tradeflow_reference: NonEmptyString,
  container_reference: Schema.optional(ContainerReferences),
  bill_of_lading_reference: Schema.optional(References),
  booking_reference: Schema.optional(References),
  port_of_loading: Schema.optional(UnLocode),
  port_of_discharge: Schema.optional(UnLocode),
  estimated_time_of_departure: Schema.optional(IsoDateTime),
  explicit_departure_confirmation: Schema.optional(Schema.Boolean),
  estimated_time_of_arrival: Schema.optional(IsoDateTime),
  explicit_arrival_confirmation: Schema.optional(Schema.Boolean),
  actual_time_of_departure: Schema.optional(IsoDateTime),
  actual_time_of_arrival: Schema.optional(IsoDateTime),
  vessel: Schema.optional(Schema.String),
  customer_name: Schema.optional(Schema.String),
  customer_reference: Schema.optional(Schema.String),
  carrier_name: Schema.optional(Schema.String),
  carrier_scac: Schema.optional(Schema.String),
  lead_contact: Schema.optional(Schema.String),
  incoterms: Schema.optional(Schema.String),
  configuration: Schema.optional(RecordConfiguration),
  references: Schema.optional(RecordReferences),
  events: Schema.optional(Schema.Array(EventInput)),
  partners: Schema.optional(Schema.Array(PartnerInput)),
  mock_tracking: Schema.optional(MockTracking),
  active: Schema.optional(Schema.Boolean)
})

const hasReference = (r: {
  readonly container_reference?: ReadonlyArray<unknown> | undefined
  readonly bill_of_lading_reference?: ReadonlyArray<unknown> | undefined
  readonly booking_reference?: ReadonlyArray<unknown> | undefined
}) =>
  (r.container_reference?.length ?? 0) + (r.bill_of_lading_reference?.length ?? 0) +
        (r.booking_reference?.length ?? 0) > 0 ||
  {
    path: ["container_reference"],
    message: "at least one of container_reference, bill_of_lading_reference, booking_reference is required"
  }

/**
 * A tradeflow record: `tradeflow_reference` and at least one of `container_reference`,
 * `bill_of_lading_reference`, `booking_reference`.
 */
export const TradeflowRecord = TradeflowRecordFields.pipe(Schema.filter(hasReference))
export type TradeflowRecord = typeof TradeflowRecord.Type

/**
 * A tradeflow record as a request may carry it: a {@link TradeflowRecord} whose lists hold at
 * most their {@link maxEntries} (`maxItems`) and whose reference is not `*`, which stands for
 * every tradeflow in a delete. Queued work keeps the plain {@link TradeflowRecord}, so that no
 * limit ever makes a stored job unreadable.
 */
export const TradeflowRecordInput = Schema.Struct({
  ...TradeflowRecordFields.fields,
  tradeflow_reference: NonEmptyString.pipe(Schema.filter((s) => s !== "*", {
    message: () => "must not be \"*\", which stands for every tradeflow (DELETE /downstream/tradeflows/*)"
  })),
  container_reference: Schema.optional(containerReferences(maxEntries.container_reference)),
  bill_of_lading_reference: Schema.optional(references(maxEntries.bill_of_lading_reference)),
  booking_reference: Schema.optional(references(maxEntries.booking_reference)),
  events: Schema.optional(limitedArray(EventInput, maxEntries.events, "record")),
  partners: Schema.optional(limitedArray(PartnerInput, maxEntries.partners, "record"))
}).pipe(Schema.filter(hasReference))

/** The records of one tradeflow reference, in request order. */
export const RecordGroup = Schema.Struct({
  tradeflow_reference: Schema.String,
  records: Schema.Array(TradeflowRecord)
})
export type RecordGroup = typeof RecordGroup.Type
