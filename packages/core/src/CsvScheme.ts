/**
 * The built-in `csv` integration scheme: a `text/csv` upload (RFC 4180, UTF-8) of tradeflow
 * records, one per row. The first row that is not empty names the columns with SERVICE.md's
 * field names (nested fields by dotted names, `references.house_bill_of_lading`); every later
 * row becomes one raw record, its empty cells left out.
 *
 * - List columns (`container_reference`, `booking_reference`, `bill_of_lading_reference`) split
 *   on `;` or `|`; their items are trimmed and always come out as an array.
 * - Boolean columns take `true`/`false`, `yes`/`no` or `1`/`0` (any case).
 * - Other cells are kept exactly as sent; a cell of only spaces counts as empty.
 * - Rows whose cells are all empty are skipped; at most {@link maxRows} other rows.
 *
 * Rows are numbered as a spreadsheet shows them: the header is row 1 (when the file starts with
 * it), a line break inside a quoted cell does not start a new row. Problems are reported at
 * `/rows/{row}/{column}` with messages starting `row {row}: `, and every row is checked against
 * the record rules here already, so the errors of a csv upload always name its rows and columns.
 *
 * Decoding lets the event loop turn every 2 ms of work, between rows and inside a long row.
 * That is why the RFC 4180 parser is our own: `csv-parse` cannot pause inside its synchronous
 * parse, its incremental one is a Node stream, and it counts physical lines, not rows.
 *
 * @module
 */
import { Effect, Either, Schema } from "effect"
import { complete, drive, type Steps, timeSlice } from "./internal/eventLoop.js"
import { IssueList } from "./internal/issueList.js"
import { type DecodeOptions, type Payload, type Scheme, SchemeError, schemeError } from "./Scheme.js"
import { maxEntries, tooManyEntries, TradeflowRecordInput } from "./TradeflowRecord.js"
import { atLeastOneReferenceMessage, issuesFromParseError, jsonPointer } from "./Validation.js"

/** At most this many data rows per upload (more: a `too_large` {@link SchemeError}, HTTP 413). */
export const maxRows = 10_000

/** How a column's cells are read. */
export type ColumnKind = "string" | "boolean" | "list"

/** The columns a csv upload may name, with how their cells are read. */
export const columns: ReadonlyMap<string, ColumnKind> = new Map<string, ColumnKind>([
  ["tradeflow_reference", "string"],
  ["container_reference", "list"],
  ["bill_of_lading_reference", "list"],
  ["booking_reference", "list"],
  ["port_of_loading", "string"],
  ["port_of_discharge", "string"],
  ["estimated_time_of_departure", "string"],
  ["explicit_departure_confirmation", "boolean"],
  ["estimated_time_of_arrival", "string"],
  ["explicit_arrival_confirmation", "boolean"],
  ["actual_time_of_departure", "string"],
  ["actual_time_of_arrival", "string"],
  ["vessel", "string"],
  ["customer_name", "string"],
  ["customer_reference", "string"],
  ["carrier_name", "string"],
  ["carrier_scac", "string"],
  ["lead_contact", "string"],
  ["incoterms", "string"],
  ["active", "boolean"],
  ["configuration.enroll_insurance", "boolean"],
  ["references.house_bill_of_lading", "string"],
  ["references.delivery_location", "string"],
  ["references.delivery_event_date", "string"],
  ["mock_tracking.scenario", "string"]
])

/** The separators of list cells. */
export const listSeparator = /[;|]/

const mediaTypes = ["text/csv", "application/csv"]

const fail = (reason: SchemeError["reason"], path: string, message: string) =>
  Effect.fail(schemeError(reason, [{ path, message }]))

const at = (row: number, column?: string): string =>
  jsonPointer(column === undefined ? ["rows", row] : ["rows", row, column])

/**
 * A parse failure: the row it happened in and the 0-based cell.
 *
 * @inline
 */
interface ParseFailure {
  readonly row: number
  readonly cell: number
  readonly message: string
}

const isBlank = (cell: string): boolean => cell.trim() === ""

/** How many cells (or doubled quotes) the parser reads between two pauses. */
const pauseEvery = 256

/**
 * RFC 4180 parsing as {@link Steps}: each row is handed to `onRow` with its 1-based number and
 * whether all its cells are empty or spaces, and the parser pauses every {@link pauseEvery} cells
 * and doubled quotes; answers the failure that stopped it, if any.
 */
function* rowSteps(
  text: string,
  onRow: (cells: Array<string>, row: number, blank: boolean) => void
): Steps<ParseFailure | undefined> {
  let row: Array<string> = []
  let rowNumber = 1
  let blank = true
  let units = 0
  const n = text.length
  let i = 0
  for (;;) {
    let value: string
    if (text.charCodeAt(i) === 34) {
      let j = i + 1
      value = ""
      for (;;) {
        const q = text.indexOf("\"", j)
        if (q === -1) return { row: rowNumber, cell: row.length, message: "a quoted cell is never closed" }
        value += text.slice(j, q)
        if (text.charCodeAt(q + 1) === 34) {
          value += "\""
          j = q + 2
          if (++units % pauseEvery === 0) yield
        } else {
          i = q + 1
          break
        }
      }
      const c = text.charCodeAt(i)
      if (i < n && c !== 44 && c !== 10 && c !== 13) {
        return {
          row: rowNumber,
          cell: row.length,
          message: "text after the closing quote of a quoted cell (a quote inside a quoted cell is written twice: \"\")"
        }
      }
    } else {
      let j = i
      for (; j < n; j++) {
        const c = text.charCodeAt(j)
        if (c === 44 || c === 10 || c === 13) break
        if (c === 34) {
          return {
            row: rowNumber,
            cell: row.length,
            message:
              "a quote inside a cell that does not start with one (quote the whole cell and write the quote twice)"
          }
        }
      }
      value = text.slice(i, j)
      i = j
    }
    row.push(value)
    blank &&= isBlank(value)
    if (++units % pauseEvery === 0) yield
    if (i >= n) break
    if (text.charCodeAt(i) === 44) {
      i++
      continue
    }
    i += text.charCodeAt(i) === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1
    onRow(row, rowNumber++, blank)
    row = []
    blank = true
    if (i >= n) return undefined
  }
  onRow(row, rowNumber, blank)
  return undefined
}

/**
 * Splits RFC 4180 text into rows of cells: `,` separates cells, CRLF, LF or CR ends a row, a
 * quoted cell may hold separators, line breaks and doubled quotes. A last line break does not
 * start another row.
 */
export const parse = (text: string): Either.Either<Array<Array<string>>, ParseFailure> => {
  const rows: Array<Array<string>> = []
  const failure = complete(rowSteps(text, (cells) => rows.push(cells)))
  return failure === undefined ? Either.right(rows) : Either.left(failure)
}

const readText = (payload: Payload): Effect.Effect<string, SchemeError> => {
  const [type = "", ...params] = payload.contentType.split(";").map((p) => p.trim().toLowerCase())
  if (!mediaTypes.includes(type)) {
    return fail(
      "unsupported_media_type",
      "",
      `a csv upload is sent with Content-Type: text/csv, got ${JSON.stringify(payload.contentType)}`
    )
  }
  const charset = params.find((p) => p.startsWith("charset="))?.slice(8).replace(/"/g, "")
  if (charset !== undefined && !["utf-8", "utf8", "us-ascii"].includes(charset)) {
    return fail("unsupported_media_type", "", `a csv upload is UTF-8 text, got charset ${charset}`)
  }
  if (typeof payload.body === "string") return Effect.succeed(payload.body.replace(/^\uFEFF/, ""))
  const body = payload.body
  return Effect.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(body),
    catch: () => schemeError("malformed", [{ path: "", message: "the upload is not UTF-8 text" }])
  })
}

const decodeRecord = Schema.decodeUnknownEither(TradeflowRecordInput, { errors: "all" })

const referenceColumns = ["container_reference", "bill_of_lading_reference", "booking_reference"] as const

const unescapePointer = (pointer: string): Array<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))

/** The column an issue of a decoded row is about: the longest column name its path starts with. */
const columnOf = (pointer: string): string | undefined => {
  const tokens = unescapePointer(pointer)
  const two = tokens.slice(0, 2).join(".")
  return columns.has(two) ? two : columns.has(tokens[0] ?? "") ? tokens[0] : undefined
}

const knownColumns = `; known columns: ${Array.from(columns.keys()).join(", ")}`

const hint = (name: string): string =>
  /^(events|partners)\b/.test(name)
    ? `; ${name.split(".")[0]} cannot be sent as csv (send them with POST /downstream/tradeflows)`
    : knownColumns

const setPath = (record: Record<string, unknown>, name: string, value: unknown): void => {
  const [head = "", tail] = name.split(".")
  if (tail === undefined) record[head] = value
  else record[head] = { ...(record[head] as Record<string, unknown> | undefined), [tail]: value }
}

const booleans: Readonly<Record<string, boolean>> = {
  true: true,
  yes: true,
  "1": true,
  false: false,
  no: false,
  "0": false
}

type Decoded = Either.Either<ReadonlyArray<Record<string, unknown>>, SchemeError>

const failed = (reason: SchemeError["reason"], path: string, message: string): Decoded =>
  Either.left(schemeError(reason, [{ path, message }]))

/** The problems of one row's cells, in cell order; the record they make. */
function* cellSteps(row: number, cells: Array<string>, names: ReadonlyArray<string>, issues: IssueList): Steps<{
  readonly record: Record<string, unknown>
  readonly ok: boolean
}> {
  const record: Record<string, unknown> = {}
  const before = issues.total
  const named = Math.min(cells.length, names.length)
  for (let k = 0; k < named; k++) {
    if (k % pauseEvery === pauseEvery - 1) yield
    const cell = cells[k]!
    if (isBlank(cell)) continue
    const name = names[k]!
    if (name === "") {
      issues.add({ path: at(row), message: `row ${row}: cell ${k + 1} has a value but its column has no name` })
    } else if (columns.get(name) === "boolean") {
      const key = cell.trim().toLowerCase()
      const value = Object.hasOwn(booleans, key) ? booleans[key] : undefined
      if (value === undefined) {
        issues.add({
          path: at(row, name),
          message: `row ${row}: ${name} must be true or false, got ${JSON.stringify(cell)}`
        })
      } else setPath(record, name, value)
    } else if (columns.get(name) === "list") {
      const items = cell.split(listSeparator).map((s) => s.trim()).filter((s) => s !== "")
      const max = maxEntries[name as keyof typeof maxEntries]
      if (items.length > max) {
        issues.add({
          path: at(row, name),
          message: `row ${row}: ${name} ${tooManyEntries(max, items.length, "record")}`
        })
      } else if (items.length > 0) setPath(record, name, items)
    } else setPath(record, name, cell)
  }
  for (let k = named; k < cells.length; k++) {
    if (k % pauseEvery === pauseEvery - 1) yield
    if (!isBlank(cells[k]!)) {
      issues.add({
        path: at(row),
        message: `row ${row}: ${cells.length} cells, but the header names ${names.length} columns`
      })
      break
    }
  }
  return { record, ok: issues.total === before }
}

function* decodeSteps(text: string): Steps<Decoded> {
  let header: { readonly cells: Array<string>; readonly row: number } | undefined
  const data: Array<readonly [row: number, cells: Array<string>]> = []
  let dataRows = 0
  const failure = yield* rowSteps(text, (cells, row, blank) => {
    if (blank) return
    if (header === undefined) header = { cells, row }
    else if (++dataRows <= maxRows) data.push([row, cells])
  })
  if (failure !== undefined) {
    const { cell, message, row } = failure
    return failed("malformed", at(row), `row ${row}, cell ${cell + 1}: ${message}`)
  }
  if (header === undefined) {
    return failed("invalid", "", "the upload is empty: its first row names the columns, each later row is a record")
  }
  const headerRow = header.row
  const names: Array<string> = []
  for (const cell of header.cells) {
    names.push(cell.trim().toLowerCase())
    if (names.length % pauseEvery === 0) yield
  }
  if (names.length === 1 && /[;\t]/.test(names[0] ?? "")) {
    return failed(
      "invalid",
      at(headerRow),
      `row ${headerRow}: the header has a single column ${
        JSON.stringify(header.cells[0])
      }; cells are separated by commas`
    )
  }
  const headerIssues = new IssueList()
  const seen = new Map<string, number>()
  for (const [k, name] of names.entries()) {
    if (k % pauseEvery === pauseEvery - 1) yield
    if (name === "") continue
    const first = seen.get(name)
    if (!columns.has(name)) {
      headerIssues.add({
        path: at(headerRow, name),
        message: `row ${headerRow}: unknown column ${JSON.stringify(name)}${hint(name)}`
      })
    } else if (first !== undefined) {
      headerIssues.add({
        path: at(headerRow, name),
        message: `row ${headerRow}: column ${name} appears twice (cells ${first + 1} and ${k + 1})`
      })
    } else seen.set(name, k)
  }
  if (headerIssues.total > 0) return Either.left(new SchemeError({ reason: "invalid", errors: headerIssues.issues() }))

  if (dataRows === 0) return failed("invalid", "", "the upload has a header but no data rows")
  if (dataRows > maxRows) {
    return failed("too_large", "", `the upload has ${dataRows} data rows; at most ${maxRows} are accepted per request`)
  }

  const issues = new IssueList()
  const records: Array<Record<string, unknown>> = []
  for (const [row, cells] of data) {
    const { ok, record } = yield* cellSteps(row, cells, names, issues)
    if (ok) {
      const decoded = decodeRecord(record)
      if (Either.isLeft(decoded)) {
        const found = issuesFromParseError(decoded.left, "", record, "record")
        const noReference = referenceColumns.every((c) => record[c] === undefined)
        if (noReference && !found.some((i) => i.message === atLeastOneReferenceMessage)) {
          found.push({ path: "/container_reference", message: atLeastOneReferenceMessage })
        }
        const rowIssues = found.map((issue) => ({
          path: at(row, columnOf(issue.path)),
          message: `row ${row}: ${issue.message}`
        }))
        issues.addAll(new Map(rowIssues.map((i) => [JSON.stringify(i), i])).values())
      }
    }
    records.push(record)
    yield
  }
  return issues.total > 0
    ? Either.left(new SchemeError({ reason: "invalid", errors: issues.issues() }))
    : Either.right(records)
}

/**
 * Decodes a csv upload into raw tradeflow records (see the module documentation), letting the
 * event loop turn once a time slice is used up (see {@link DecodeOptions}).
 */
export const decode = (
  payload: Payload,
  options: DecodeOptions = {}
): Effect.Effect<ReadonlyArray<Record<string, unknown>>, SchemeError> =>
  Effect.flatMap(
    readText(payload),
    (text) => Effect.flatten(drive(decodeSteps(text), timeSlice(options.sliceMillis, options.turn)))
  )

/** The `csv` scheme. */
export const scheme: Scheme = { decode: (payload) => Effect.withSpan(decode(payload), "CsvScheme.decode") }
