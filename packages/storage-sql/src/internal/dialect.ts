import type { SqlClient, Statement } from "@effect/sql"

/** What differs between the dialects in the shared statements, chosen once per client. */
export interface Dialect {
  readonly pg: boolean
  /** A boolean as the dialect binds it (SQLite has no boolean: 1 or 0). */
  readonly bool: (value: boolean) => boolean | number
  /** The column that keeps insertion order among rows of one instant (`position` identity, or `rowid`). */
  readonly insertionOrder: Statement.Fragment
  /** `column` read as a JavaScript number (`bigint` columns come back from PostgreSQL as strings). */
  readonly number: (column: string) => Statement.Fragment
  /** The row lock of a read inside a transaction (SQLite has a single writer, and no row locks). */
  readonly forUpdate: Statement.Fragment
  /** The largest list one statement binds, by kind (SQLite's parameters are fewer and cheaper). */
  readonly chunk: number
  /**
   * `rows` as a table `k` of these columns (name and PostgreSQL type), bound as one JSON parameter
   * (`json_to_recordset`, `json_each`): one statement writes a whole batch from it.
   */
  readonly recordset: (
    rows: ReadonlyArray<object>,
    columns: ReadonlyArray<readonly [name: string, type: string]>
  ) => Statement.Fragment
  /**
   * The rows of `table` of the organisation whose `column` is one of `values`, as a condition on
   * `table` itself. On PostgreSQL the rows are found value by value, each a probe of an index that
   * starts with `(organisation_id, column)` (a lateral subquery, which its planner cannot turn into a
   * join), then read by `ctid`: without statistics (a table filled since the last ANALYZE: the first
   * minute of a new database, or of a fast-growing organisation) its planner takes an organisation for
   * 0.5 % of the table, so it searches the index on the organisation alone and filters the list over
   * every row of the organisation. On SQLite, `organisation_id = ? AND column IN (...)`.
   */
  readonly ofOrganisation: (
    table: string,
    organisationId: string,
    column: string,
    values: ReadonlyArray<string>
  ) => Statement.Fragment
  /**
   * What follows `INSERT INTO table` to write `rows`, a fragment per statement: on PostgreSQL one
   * statement for all of them, read from a {@link Dialect.recordset} of these columns (one parameter,
   * so neither the statement nor its binding grows with the rows); on SQLite multi-row `VALUES` of at
   * most `slice` rows each (its parameters are cheap, and a statement binds few of them).
   */
  readonly insertRows: (
    rows: ReadonlyArray<object>,
    columns: ReadonlyArray<readonly [name: string, type: string]>,
    slice: number
  ) => ReadonlyArray<Statement.Fragment>
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

const wellFormed = (_key: string, value: unknown): unknown =>
  typeof value === "string" ? value.replace(loneSurrogate, "\uFFFD") : value

/**
 * `value` as the text of a `json` parameter of PostgreSQL, which refuses the escape of a lone
 * surrogate (`\ud800`) that `JSON.stringify` writes for one: a lone surrogate becomes U+FFFD, as
 * it does in a text parameter (the driver sends UTF-8). The text is scanned for such an escape
 * first, so the usual value is stringified once.
 */
const pgJson = (value: unknown): string => {
  const text = JSON.stringify(value)
  return /\\u[dD][89a-fA-F]/.test(text) ? JSON.stringify(value, wellFormed) : text
}

/** The {@link Dialect} of `sql`. */
export const dialectOf = (sql: SqlClient.SqlClient): Dialect =>
  sql.onDialectOrElse({
    pg: (): Dialect => ({
      pg: true,
      bool: (value) => value,
      insertionOrder: sql.literal("position"),
      number: (column) => sql.literal(`${column}::float8`),
      forUpdate: sql.literal("FOR UPDATE"),
      chunk: 1000,
      recordset: (rows, columns) =>
        sql`json_to_recordset(${pgJson(rows)}::json) AS k(${
          sql.literal(columns.map(([name, type]) => `${name} ${type}`).join(", "))
        })`,
      ofOrganisation: (table, organisationId, column, values) =>
        sql`ctid = ANY(ARRAY(SELECT t.ctid FROM json_array_elements_text(${pgJson(values)}::json) AS v(value)
          CROSS JOIN LATERAL (SELECT ctid FROM ${sql(table)}
            WHERE organisation_id = ${organisationId} AND ${sql(column)} = v.value OFFSET 0) AS t))`,
      insertRows: (rows, columns) => {
        if (rows.length === 0) return []
        const names = sql.literal(columns.map(([name]) => name).join(", "))
        return [
          sql`(${names}) SELECT ${names} FROM json_to_recordset(${pgJson(rows)}::json) AS k(${
            sql.literal(columns.map(([name, type]) => `${name} ${type}`).join(", "))
          })`
        ]
      }
    }),
    orElse: (): Dialect => ({
      pg: false,
      bool: (value) => value ? 1 : 0,
      insertionOrder: sql.literal("rowid"),
      number: (column) => sql.literal(column),
      forUpdate: sql.literal(""),
      chunk: 500,
      recordset: (rows, columns) =>
        sql`(SELECT ${
          sql.literal(columns.map(([name]) => `j.value ->> '${name}' AS ${name}`).join(", "))
        } FROM json_each(${JSON.stringify(rows)}) AS j) AS k`,
      ofOrganisation: (_table, organisationId, column, values) =>
        sql`organisation_id = ${organisationId} AND ${sql.in(column, values)}`,
      insertRows: (rows, _columns, slice) => {
        const statements: Array<Statement.Fragment> = []
        for (let i = 0; i < rows.length; i += slice) {
          statements.push(sql`${sql.insert(rows.slice(i, i + slice) as ReadonlyArray<Record<string, unknown>>)}`)
        }
        return statements
      }
    })
  })
