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
        sql`json_to_recordset(${JSON.stringify(rows)}::json) AS k(${
          sql.literal(columns.map(([name, type]) => `${name} ${type}`).join(", "))
        })`
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
        } FROM json_each(${JSON.stringify(rows)}) AS j) AS k`
    })
  })
