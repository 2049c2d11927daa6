import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck as fc } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as CsvScheme from "../src/CsvScheme.js"
import * as Locations from "../src/Locations.js"
import type { SchemeError } from "../src/Schemes.js"
import { UnLocode } from "../src/TradeflowRecord.js"
import { validateRequest } from "../src/Validation.js"

const fixture = readFileSync(join(import.meta.dirname, "fixtures", "schemes", "tradeflows.csv"))

/** Decodes in one go: the event loop "turns" without leaving the fiber, so that runSync can run it. */
const run = (body: string | Uint8Array, contentType = "text/csv") =>
  Effect.runSync(Effect.either(CsvScheme.decode({ contentType, body, query: {} }, { turn: Effect.void })))

const records = (body: string | Uint8Array, contentType?: string) => {
  const result = run(body, contentType)
  if (Either.isLeft(result)) return assert.fail(`expected records, got ${JSON.stringify(result.left.errors)}`)
  return result.right
}

const failure = (body: string | Uint8Array, contentType?: string): SchemeError => {
  const result = run(body, contentType)
  if (Either.isRight(result)) return assert.fail(`expected a SchemeError, got ${JSON.stringify(result.right)}`)
  return result.left
}

const issues = (body: string) => failure(body).errors.map((e) => [e.path, e.message] as const)

describe("CsvScheme.parse (RFC 4180)", () => {
  it("quotes, doubled quotes, separators and line breaks inside quotes, CRLF, LF and CR", () => {
    assert.deepStrictEqual(
      CsvScheme.parse("a,\"b,c\",\"d \"\"e\"\"\"\r\n\"x\r\ny\",,z\nlast\rrow"),
      Either.right([["a", "b,c", "d \"e\""], ["x\r\ny", "", "z"], ["last"], ["row"]])
    )
  })

  it("a last line break does not start a row; an empty line is a row of one empty cell", () => {
    assert.deepStrictEqual(CsvScheme.parse("a,b\n\nc,d\n"), Either.right([["a", "b"], [""], ["c", "d"]]))
    assert.deepStrictEqual(CsvScheme.parse("a,\n"), Either.right([["a", ""]]))
    assert.deepStrictEqual(CsvScheme.parse(""), Either.right([[""]]))
  })

  it("reports the row and cell of broken quoting", () => {
    const left = (text: string) =>
      Either.match(CsvScheme.parse(text), { onLeft: (l) => l, onRight: () => assert.fail("expected a parse failure") })
    assert.deepStrictEqual(left("a,b\nc,\"d\ne"), { row: 2, cell: 1, message: "a quoted cell is never closed" })
    assert.deepStrictEqual([left("a\n\"b\"c").row, left("a\n\"b\"c").cell], [2, 0])
    assert.match(left("a\n\"b\"c").message, /text after the closing quote/)
    assert.deepStrictEqual([left("x\r\na,b\"c").row, left("x\r\na,b\"c").cell], [2, 1])
    assert.match(left("a,b\"c").message, /a quote inside a cell/)
  })
})

describe("CsvScheme.decode", () => {
  it("decodes the fixture: BOM, CRLF, quotes, lists, booleans, nested columns, skipped empty rows", () => {
    assert.deepStrictEqual(records(fixture), [
      {
        tradeflow_reference: "PO-1001",
        container_reference: ["CSQU3054383", "MSKU9070323"],
        booking_reference: ["BK-1"],
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA",
        estimated_time_of_departure: "2024-03-07T11:30:00+01:00",
        explicit_departure_confirmation: true,
        vessel: "EVER GIVEN",
        customer_reference: "Smith, John",
        references: { house_bill_of_lading: "HB-1" },
        mock_tracking: { scenario: "ocean_basic" }
      },
      {
        tradeflow_reference: "PO-1002",
        container_reference: ["TGHU8512390", "MSKU9070323"],
        port_of_loading: "DEHAM",
        port_of_discharge: "SGSIN",
        explicit_departure_confirmation: false,
        vessel: "MSC \"OSCAR\"",
        customer_reference: "Multi\r\nline note"
      },
      { tradeflow_reference: "PO-1003", booking_reference: ["BK-3"] }
    ])
  })

  it("the decoded records pass the downstream validation", () => {
    const result = Effect.runSync(Effect.either(
      validateRequest(records(fixture), { environment: "uat", form: "any" }).pipe(
        Effect.provide(Locations.layerBuiltin)
      )
    ))
    assert.isTrue(Either.isRight(result))
  })

  it("takes a string body with a BOM, header names in any case with spaces, and application/csv", () => {
    assert.deepStrictEqual(
      records(
        "\uFEFF Tradeflow_Reference , ACTIVE,configuration.enroll_insurance,Booking_Reference\nR1,1,No,B\n",
        "application/csv; charset=UTF-8"
      ),
      [{
        tradeflow_reference: "R1",
        active: true,
        configuration: { enroll_insurance: false },
        booking_reference: ["B"]
      }]
    )
  })

  it("lists split on ; and |, items trimmed, empty items dropped; cells of spaces are empty", () => {
    assert.deepStrictEqual(
      records("tradeflow_reference,bill_of_lading_reference,vessel,booking_reference\nR1, B1 | B2 ;;B3 ,   , ; |\n"),
      [{ tradeflow_reference: "R1", bill_of_lading_reference: ["B1", "B2", "B3"] }]
    )
  })

  it("keeps cells as sent (no trimming of text cells)", () => {
    assert.deepStrictEqual(
      records("tradeflow_reference,booking_reference,vessel\n R 1 ,B,\" Ever, Given \"\n"),
      [{ tradeflow_reference: " R 1 ", booking_reference: ["B"], vessel: " Ever, Given " }]
    )
  })

  it("rows are counted as a spreadsheet shows them (header row 1, empty rows counted, line breaks in cells not)", () => {
    assert.deepStrictEqual(
      issues("\ntradeflow_reference,booking_reference,customer_reference\nR1,B,\"two\nlines\"\n,,\nR2,B,x\nR3,,\n"),
      [[
        "/rows/6/container_reference",
        "row 6: at least one of container_reference, bill_of_lading_reference, booking_reference is required"
      ]]
    )
  })
})

describe("CsvScheme.decode: errors name the row and the column", () => {
  it("unknown and repeated columns, at the header row", () => {
    assert.deepStrictEqual(
      issues("tradeflow_reference,colour,booking_reference,Booking_Reference\nR,x,B,B\n").map(([p]) => p),
      [
        "/rows/1/colour",
        "/rows/1/booking_reference"
      ]
    )
    const [, unknown] = issues("tradeflow_reference,colour\nR,x\n")[0]!
    assert.match(unknown, /^row 1: unknown column "colour"; known columns: tradeflow_reference, /)
    assert.match(issues("tradeflow_reference,events.message\nR,x\n")[0]![1], /events cannot be sent as csv/)
    assert.match(
      issues("tradeflow_reference,booking_reference,booking_reference\nR,B,B\n")[0]![1],
      /appears twice \(cells 2 and 3\)/
    )
  })

  it("a semicolon- or tab-separated header is explained", () => {
    assert.deepStrictEqual(issues("tradeflow_reference;booking_reference\nR;B\n"), [[
      "/rows/1",
      "row 1: the header has a single column \"tradeflow_reference;booking_reference\"; cells are separated by commas"
    ]])
  })

  it("cell problems: booleans, extra cells, cells under an unnamed column", () => {
    assert.deepStrictEqual(issues("tradeflow_reference,booking_reference,active\nR,B,constructor\n"), [
      ["/rows/2/active", "row 2: active must be true or false, got \"constructor\""]
    ])
    assert.deepStrictEqual(issues("tradeflow_reference,booking_reference,active,\nR,B,maybe,\nR2,B,true,x,y\n"), [
      ["/rows/2/active", "row 2: active must be true or false, got \"maybe\""],
      ["/rows/3", "row 3: cell 4 has a value but its column has no name"],
      ["/rows/3", "row 3: 5 cells, but the header names 4 columns"]
    ])
  })

  it("record rules, checked per row", () => {
    assert.deepStrictEqual(
      issues(
        "tradeflow_reference,container_reference,port_of_loading,references.delivery_event_date\n" +
          "R1,CSQU3054383,NL,\n,CSQU3054383,,\nR3,,,tomorrow\n"
      ),
      [
        ["/rows/2/port_of_loading", "row 2: port_of_loading must be a 5-character UN/LOCODE (for example NLRTM)"],
        ["/rows/3/tradeflow_reference", "row 3: tradeflow_reference is required"],
        [
          "/rows/4/references.delivery_event_date",
          "row 4: references.delivery_event_date must be an ISO 8601 date-time, for example 2026-11-22T10:00:00+01:00"
        ],
        [
          "/rows/4/container_reference",
          "row 4: at least one of container_reference, bill_of_lading_reference, booking_reference is required"
        ]
      ]
    )
  })

  it("a container number of only hyphens is reported at its cell (found by the round-trip property)", () => {
    assert.deepStrictEqual(issues("tradeflow_reference,container_reference\nR,CSQU3054383;-\n"), [
      ["/rows/2/container_reference", "row 2: container_reference[1].reference must not be empty"]
    ])
  })

  it("broken quoting is malformed (400) at its row", () => {
    const error = failure("tradeflow_reference,booking_reference\nR,\"B\nR2,B\n")
    assert.strictEqual(error.reason, "malformed")
    assert.deepStrictEqual(error.errors, [{ path: "/rows/2", message: "row 2, cell 2: a quoted cell is never closed" }])
  })

  it("empty uploads and uploads without data rows", () => {
    assert.deepStrictEqual(failure("\r\n ,\n").errors.map((e) => e.path), [""])
    assert.match(failure("tradeflow_reference,booking_reference\n\n").errors[0]!.message, /no data rows/)
  })

  it("a list cell holds at most its record limit; a longer one is the row's problem, and the row is not decoded", () => {
    const cell = (n: number) => Array.from({ length: n }, (_, i) => `B${i}`).join(";")
    assert.strictEqual(records(`tradeflow_reference,booking_reference\nPO-1,${cell(100)}\n`).length, 1)
    const csv = `tradeflow_reference,booking_reference,container_reference,port_of_loading\nPO-1,${cell(101)},${
      "x;".repeat(2_000_000)
    },NL\n`
    assert.deepStrictEqual(issues(csv), [
      ["/rows/2/booking_reference", "row 2: booking_reference must hold at most 100 entries per record, got 101"],
      [
        "/rows/2/container_reference",
        "row 2: container_reference must hold at most 1,000 entries per record, got 2,000,000"
      ]
    ])
  })

  it("at most 10,000 data rows (too_large, HTTP 413); empty rows do not count", () => {
    const row = "R,B\n"
    assert.strictEqual(
      records("tradeflow_reference,booking_reference\n" + row.repeat(CsvScheme.maxRows) + ",\n").length,
      10_000
    )
    const error = failure("tradeflow_reference,booking_reference\n" + row.repeat(CsvScheme.maxRows + 1))
    assert.strictEqual(error.reason, "too_large")
    assert.deepStrictEqual(error.errors, [{
      path: "",
      message: "the upload has 10001 data rows; at most 10000 are accepted per request"
    }])
  })

  it("lists at most 100 problems and counts the rest", () => {
    const error = failure("tradeflow_reference,active\n" + "R,maybe\n".repeat(150))
    assert.strictEqual(error.errors.length, 101)
    assert.deepStrictEqual(error.errors[100], { path: "", message: "and 50 more problems not listed" })
  })

  it("media type and encoding", () => {
    assert.strictEqual(failure("a", "application/json").reason, "unsupported_media_type")
    assert.strictEqual(failure("a", "").reason, "unsupported_media_type")
    assert.strictEqual(failure("a", "text/csv; charset=iso-8859-1").reason, "unsupported_media_type")
    const error = failure(new Uint8Array([0x74, 0xff, 0x0a]))
    assert.deepStrictEqual([error.reason, error.errors], ["malformed", [{
      path: "",
      message: "the upload is not UTF-8 text"
    }]])
  })
})

const listColumns = ["container_reference", "bill_of_lading_reference", "booking_reference"] as const
const textColumns = [
  "tradeflow_reference",
  "vessel",
  "customer_name",
  "customer_reference",
  "carrier_name",
  "carrier_scac",
  "lead_contact",
  "incoterms"
] as const
const dateColumns = [
  "estimated_time_of_departure",
  "estimated_time_of_arrival",
  "actual_time_of_departure",
  "actual_time_of_arrival"
] as const
const booleanColumns = ["explicit_departure_confirmation", "explicit_arrival_confirmation", "active"] as const

/** Text with the characters csv has to quote, and some that it does not. */
const text = fc.string({
  unit: fc.oneof(fc.constantFrom(",", "\"", "\n", "\r\n", "\r", ";", "|", " ", "é", "😀"), fc.char()),
  minLength: 1,
  maxLength: 12
}).filter((s) => s.trim() !== "")
const item = text.map((s) => s.replace(/[;|]/g, "").trim()).filter((s) => /[^\s-]/.test(s))
const date = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).chain((ms) =>
  fc.constantFrom(
    new Date(ms).toISOString(),
    new Date(ms).toISOString().slice(0, 19) + "+02:00",
    new Date(ms).toISOString().slice(0, 10)
  )
)
const optionalObject = <T extends Record<string, unknown>>(arb: fc.Arbitrary<T>) =>
  arb.map((o) => (Object.keys(o).length === 0 ? undefined : o))

/** Raw records of the csv-representable fields (lists as arrays, at least one reference). */
const fields: Record<string, fc.Arbitrary<unknown>> = {
  ...Object.fromEntries(textColumns.map((c) => [c, text])),
  ...Object.fromEntries(listColumns.map((c) => [c, fc.array(item, { minLength: 1, maxLength: 3 })])),
  ...Object.fromEntries(dateColumns.map((c) => [c, date])),
  ...Object.fromEntries(booleanColumns.map((c) => [c, fc.boolean()])),
  port_of_loading: Arbitrary.make(UnLocode),
  port_of_discharge: Arbitrary.make(UnLocode),
  configuration: fc.record({ enroll_insurance: fc.boolean() }),
  references: optionalObject(
    fc.record({ house_bill_of_lading: text, delivery_location: text, delivery_event_date: date }, { requiredKeys: [] })
  ),
  mock_tracking: fc.record({ scenario: text }),
  tradeflow_reference: text.filter((t) => t.trim() !== "*")
}
const csvRecord: fc.Arbitrary<Record<string, unknown>> = fc.record(fields, { requiredKeys: ["tradeflow_reference"] })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)))
  .filter((r) => listColumns.some((c) => r[c] !== undefined))

interface Style {
  readonly newline: "\r\n" | "\n"
  readonly quoteAll: boolean
  readonly separator: string
  readonly trailingNewline: boolean
  readonly bom: boolean
  readonly bytes: boolean
}
const style: fc.Arbitrary<Style> = fc.record({
  newline: fc.constantFrom("\r\n" as const, "\n" as const),
  quoteAll: fc.boolean(),
  separator: fc.constantFrom(";", "|", " ; ", "| "),
  trailingNewline: fc.boolean(),
  bom: fc.boolean(),
  bytes: fc.boolean()
})

const cellOf = (record: Record<string, unknown>, column: string, s: Style): string => {
  const [head = "", tail] = column.split(".")
  const value = tail === undefined ? record[head] : (record[head] as Record<string, unknown> | undefined)?.[tail]
  return value === undefined ? "" : Array.isArray(value) ? value.join(s.separator) : String(value)
}

/** Writes records as RFC 4180 text with the columns they use. */
const toCsv = (
  rows: ReadonlyArray<Record<string, unknown>>,
  s: Style,
  overrides: Record<string, string> = {}
): string => {
  const used = Array.from(CsvScheme.columns.keys()).filter((c) =>
    Object.keys(overrides).some((k) => k.endsWith(`:${c}`)) || rows.some((r) => cellOf(r, c, s) !== "")
  )
  const quote = (cell: string) => (s.quoteAll || /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, "\"\"")}"` : cell)
  const lines = [used, ...rows.map((r, i) => used.map((c) => overrides[`${i}:${c}`] ?? cellOf(r, c, s)))]
  return (s.bom ? "\uFEFF" : "") + lines.map((cells) => cells.map(quote).join(",")).join(s.newline) +
    (s.trailingNewline ? s.newline : "")
}

describe("CsvScheme.decode: properties", () => {
  it.prop("records → csv → records", [fc.array(csvRecord, { minLength: 1, maxLength: 6 }), style], ([rows, s]) => {
    const csv = toCsv(rows, s)
    assert.deepStrictEqual(records(s.bytes ? new TextEncoder().encode(csv) : csv), rows)
  }, { fastCheck: { numRuns: 300 } })

  const breakage = fc.constantFrom<readonly [string, string]>(
    ["port_of_loading", "NL"],
    ["active", "maybe"],
    ["estimated_time_of_arrival", "next week"],
    ["references.delivery_event_date", "2024-13-45"],
    ["tradeflow_reference", ""]
  )
  it.prop(
    "a broken cell is reported at its row and column",
    [fc.array(csvRecord, { minLength: 1, maxLength: 6 }), style, fc.nat(), breakage],
    ([rows, s, n, [column, value]]) => {
      const k = n % rows.length
      const errors = failure(toCsv(rows, s, { [`${k}:${column}`]: value })).errors
      assert.deepStrictEqual(errors.map((e) => e.path), [`/rows/${k + 2}/${column}`])
      assert.isTrue(errors.every((e) => e.message.startsWith(`row ${k + 2}: ${column} `)), JSON.stringify(errors))
    },
    { fastCheck: { numRuns: 200 } }
  )
})
