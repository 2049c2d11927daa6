import { Effect } from "effect"
import * as CsvScheme from "./packages/core/src/CsvScheme.js"
import * as DcsaTntScheme from "./packages/core/src/DcsaTntScheme.js"
const csv = "tradeflow_reference,container_reference\nPO-1," + Array.from({ length: 2_500_000 }, () => "a").join(";") + "\n"
let t = performance.now()
const r = Effect.runSync(Effect.either(CsvScheme.decode({ contentType: "text/csv", body: csv, query: {} })))
console.log("csv", csv.length, performance.now() - t, JSON.stringify(r).slice(0, 300))
const ev = (i: number) => ({ eventType: "EQUIPMENT", eventClassifierCode: "ACT", eventDateTime: "2024-01-01", equipmentEventTypeCode: "LOAD", documentReferences: Array.from({ length: 100 }, () => 1) })
const dcsa = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ev(i)))
t = performance.now()
const d = Effect.runSync(Effect.either(DcsaTntScheme.decode({ contentType: "application/json", body: dcsa, query: {} })))
console.log("dcsa", dcsa.length, performance.now() - t, JSON.stringify(d).length)
