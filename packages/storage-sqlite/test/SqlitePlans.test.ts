/**
 * Every statement the upstream feed issues on SQLite walks an index that takes its filters, in seq
 * order (SEARCH, never SCAN of a table), and needs no temporary B-tree (no sort), for every
 * combination of the filters the API offers and every form of request: first page, page after a
 * cursor, first page with `since`, the array form with and without `since`. The statements are the
 * ones the adapter really sends (captured at the driver), planned by SQLite on the migrated
 * database with `EXPLAIN QUERY PLAN`.
 */
import { expect, layer } from "@effect/vitest"
import { Upstream } from "@tradeflow/core"
import { commitMessages } from "@tradeflow/core/test-kit"
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"
import { captured } from "./Captured.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-plans-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const filename = join(root, "plans.sqlite")

const filterCombinations: ReadonlyArray<Omit<Upstream.UpstreamFilters, "organisation_id">> = [undefined, "TF-1"]
  .flatMap((tradeflow) =>
    [undefined, "MSCU1234565"].flatMap((container) =>
      [undefined, ["CONTAINER_MILESTONE"], ["CONTAINER_MILESTONE", "BASIC_STATUS"]].flatMap((types) =>
        [false, true].map((latest) => ({
          ...(tradeflow === undefined ? {} : { tradeflow }),
          ...(container === undefined ? {} : { container }),
          ...(types === undefined ? {} : { types }),
          latest
        }))
      )
    )
  )

/**
 * The columns the walked index must take as equalities for `filters`: every filter on messages;
 * on the heads (`latest`) the tradeflow when there is one (the stored caps bound its heads), else
 * the container and the type.
 */
const indexed = (filters: Omit<Upstream.UpstreamFilters, "organisation_id">): ReadonlyArray<string> => {
  const given = [
    ...(filters.tradeflow === undefined ? [] : ["tradeflow_reference"]),
    ...(filters.container === undefined ? [] : ["container_reference"]),
    ...(filters.types === undefined ? [] : ["type"])
  ]
  return filters.latest === true && filters.tradeflow !== undefined ? ["tradeflow_reference"] : given
}

/**
 * What is wrong with a plan of a statement issued for `filters`: a temporary B-tree, a SCAN of a
 * table, a correlated subquery, or a walk (a SEARCH other than a lookup by seq) that is not on the
 * heads when `latest` (and only then), not in seq order, or not on an index taking {@link indexed}.
 */
const problems = (plan: ReadonlyArray<string>, filters: Omit<Upstream.UpstreamFilters, "organisation_id">) =>
  plan.filter((line) => {
    if (/TEMP B-TREE|CORRELATED|^SCAN (m|h|messages|message_heads)\b/.test(line)) return true
    const walk = /^SEARCH (m|h) USING (?:COVERING )?INDEX \S+ \((.*)\)$/.exec(line)
    if (walk === null || /^organisation_id=\? AND seq=\?$/.test(walk[2]!)) return false
    const taken = walk[2]!.split(" AND ")
    return walk[1] !== (filters.latest === true ? "h" : "m") || taken.at(-1) !== "seq>?" ||
      !indexed(filters).every((column) => taken.includes(`${column}=?`))
  })

layer(Layer.provideMerge(Upstream.layer(), SqliteStorage.layer({ filename })), { excludeTestServices: true })(
  "SQLite upstream plans",
  (it) => {
    it.effect("each statement of every filter combination and request form walks the index of its filters and sorts nothing", () =>
      Effect.gen(function*() {
        const organisation_id = "org-plans"
        yield* commitMessages(
          organisation_id,
          ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"].flatMap((type, t) =>
            [1, 2, 3].map((n) => ({
              hash: `h-${t}-${n}`,
              type,
              tradeflow_reference: `TF-${n}`,
              container_reference: type === "CONTAINER_MILESTONE" ? "MSCU1234565" : null,
              generated_at: Date.now() - n * 1000,
              body: JSON.stringify({ t, n })
            }))
          )
        )
        const upstream = yield* Upstream.Upstream
        const db = new Database(filename, { readonly: true })
        const wrong: Array<string> = []
        let planned = 0
        try {
          for (const filters of filterCombinations) {
            const query = { organisation_id, ...filters }
            const { next_cursor } = yield* upstream.page({ ...query, per_page: 1 })
            const statements = yield* captured(Effect.all([
              upstream.page({ ...query, per_page: 2 }),
              upstream.page({ ...query, per_page: 2, cursor: next_cursor }),
              upstream.page({ ...query, per_page: 2, since: Date.now() - 2500 }),
              upstream.pageBodies({ ...query, per_page: 2 }),
              upstream.pageBodies({ ...query, per_page: 2, cursor: next_cursor }),
              upstream.list(query),
              upstream.list({ ...query, since: Date.now() - 1500 })
            ]))
            for (const { args, source } of statements.filter((s) => /\b(messages|message_heads)\b/.test(s.source))) {
              planned++
              const plan = (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...args) as Array<{ detail: string }>).map((
                r
              ) => r.detail)
              if (problems(plan, filters).length > 0) {
                wrong.push(`${JSON.stringify(filters)}: ${source}\n  ${plan.join("\n  ")}`)
              }
            }
          }
        } finally {
          db.close()
        }
        expect(planned).toBeGreaterThanOrEqual(filterCombinations.length * 5 * 2)
        expect(wrong).toEqual([])
      }))
  }
)
