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
 * @since 0.1.0
 */
import { Effect, Either, Schema } from "effect"
import type { Issue } from "./DownstreamError.js"
import { type Payload, type Scheme, schemeError, type SchemeError } from "./Scheme.js"
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

/** A parse failure: the row it happened in and the 0-based cell. */
interface ParseFailure {
  readonly row: number
  readonly cell: number
  readonly message: string
}

/**
 * Splits RFC 4180 text into rows of cells: `,` separates cells, CRLF, LF or CR ends a row, a
 * quoted cell may hold separators, line breaks and doubled quotes. A last line break does not
 * start another row.
 */
export const parse = (text: string): Either.Either<Array<Array<string>>, ParseFailure> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  const n = text.length
  let i = 0
  for (;;) {
    let value: string
    if (text.charCodeAt(i) === 34) {
      let j = i + 1
      value = ""
      for (;;) {
        const q = text.indexOf("\"", j)
        if (q === -1) {
          return Either.left({ row: rows.length + 1, cell: row.length, message: "a quoted cell is never closed" })
        }
        value += text.slice(j, q)
        if (text.charCodeAt(q + 1) === 34) {
          value += "\""
          j = q + 2
        } else {
          i = q + 1
          break
        }
      }
      const c = text.charCodeAt(i)
      if (i < n && c !== 44 && c !== 10 && c !== 13) {
        return Either.left({
          row: rows.length + 1,
          cell: row.length,
          message: "text after the closing quote of a quoted cell (a quote inside a quoted cell is written twice: \"\")"
        })
      }
    } else {
      let j = i
      for (; j < n; j++) {
        const c = text.charCodeAt(j)
        if (c === 44 || c === 10 || c === 13) break
        if (c === 34) {
          return Either.left({
            row: rows.length + 1,
            cell: row.length,
            message:
              "a quote inside a cell that does not start with one (quote the whole cell and write the quote twice)"
          })
        }
      }
      value = text.slice(i, j)
      i = j
    }
    row.push(value)
    if (i >= n) break
    if (text.charCodeAt(i) === 44) {
      i++
      continue
    }
    i += text.charCodeAt(i) === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1
    rows.push(row)
    row = []
    if (i >= n) return Either.right(rows)
  }
  rows.push(row)
  return Either.right(rows)
}

const isBlank = (cell: string): boolean => cell.trim() === ""

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

const hint = (name: string): string =>
  /^(events|partners)\b/.test(name)
    ? `; ${name.split(".")[0]} cannot be sent as csv (send them with POST /downstream/tradeflows)`
    : `; known columns: ${Array.from(columns.keys()).join(", ")}`

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

/** Decodes a csv upload into raw tradeflow records (see the module documentation). */
export const decode = (payload: Payload): Effect.Effect<ReadonlyArray<Record<string, unknown>>, SchemeError> =>
  Effect.flatMap(readText(payload), (text) => {
    const parsed = parse(text)
    if (Either.isLeft(parsed)) {
      const { cell, message, row } = parsed.left
      return fail("malformed", at(row), `row ${row}, cell ${cell + 1}: ${message}`)
    }
    const rows = parsed.right
    const headerIndex = rows.findIndex((cells) => !cells.every(isBlank))
    const header = rows[headerIndex]
    if (header === undefined) {
      return fail("invalid", "", "the upload is empty: its first row names the columns, each later row is a record")
    }
    const headerRow = headerIndex + 1
    const names = header.map((cell) => cell.trim().toLowerCase())
    if (names.length === 1 && /[;\t]/.test(names[0] ?? "")) {
      return fail(
        "invalid",
        at(headerRow),
        `row ${headerRow}: the header has a single column ${JSON.stringify(header[0])}; cells are separated by commas`
      )
    }
    const headerIssues: Array<Issue> = []
    names.forEach((name, k) => {
      if (name === "") return
      if (!columns.has(name)) {
        headerIssues.push({
          path: at(headerRow, name),
          message: `row ${headerRow}: unknown column ${JSON.stringify(name)}${hint(name)}`
        })
      } else if (names.indexOf(name) !== k) {
        headerIssues.push({
          path: at(headerRow, name),
          message: `row ${headerRow}: column ${name} appears twice (cells ${names.indexOf(name) + 1} and ${k + 1})`
        })
      }
    })
    if (headerIssues.length > 0) return Effect.fail(schemeError("invalid", headerIssues))

    const data: Array<readonly [row: number, cells: Array<string>]> = []
    for (let r = headerIndex + 1; r < rows.length; r++) {
      const cells = rows[r] ?? []
      if (!cells.every(isBlank)) data.push([r + 1, cells])
    }
    if (data.length === 0) return fail("invalid", "", "the upload has a header but no data rows")
    if (data.length > maxRows) {
      const message = `the upload has ${data.length} data rows; at most ${maxRows} are accepted per request`
      return fail("too_large", "", message)
    }

    const issues: Array<Issue> = []
    const records: Array<Record<string, unknown>> = []
    for (const [row, cells] of data) {
      const record: Record<string, unknown> = {}
      const rowIssues: Array<Issue> = []
      cells.forEach((cell, k) => {
        if (isBlank(cell)) return
        const name = names[k]
        if (name === undefined) {
          const message = `row ${row}: ${cells.length} cells, but the header names ${names.length} columns`
          rowIssues.push({ path: at(row), message })
        } else if (name === "") {
          rowIssues.push({ path: at(row), message: `row ${row}: cell ${k + 1} has a value but its column has no name` })
        } else if (columns.get(name) === "boolean") {
          const key = cell.trim().toLowerCase()
          const value = Object.hasOwn(booleans, key) ? booleans[key] : undefined
          if (value === undefined) {
            const message = `row ${row}: ${name} must be true or false, got ${JSON.stringify(cell)}`
            rowIssues.push({ path: at(row, name), message })
          } else setPath(record, name, value)
        } else if (columns.get(name) === "list") {
          const items = cell.split(listSeparator).map((s) => s.trim()).filter((s) => s !== "")
          const max = maxEntries[name as keyof typeof maxEntries]
          if (items.length > max) {
            const message = `row ${row}: ${name} ${tooManyEntries(max, items.length, "record")}`
            rowIssues.push({ path: at(row, name), message })
          } else if (items.length > 0) setPath(record, name, items)
        } else setPath(record, name, cell)
      })
      if (rowIssues.length === 0) {
        const decoded = decodeRecord(record)
        if (Either.isLeft(decoded)) {
          const found = issuesFromParseError(decoded.left, "", record, "record")
          const noReference = referenceColumns.every((c) => record[c] === undefined)
          if (noReference && !found.some((i) => i.message === atLeastOneReferenceMessage)) {
            found.push({ path: "/container_reference", message: atLeastOneReferenceMessage })
          }
          for (const issue of found) {
            rowIssues.push({ path: at(row, columnOf(issue.path)), message: `row ${row}: ${issue.message}` })
          }
        }
      }
      issues.push(...new Map(rowIssues.map((i) => [JSON.stringify(i), i])).values())
      records.push(record)
    }
    return issues.length > 0 ? Effect.fail(schemeError("invalid", issues)) : Effect.succeed(records)
  })

/** The `csv` scheme. */
export const scheme: Scheme = { decode: (payload) => Effect.withSpan(decode(payload), "CsvScheme.decode") }
