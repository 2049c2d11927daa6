import { assert, describe, layer } from "@effect/vitest"
import { Iso6346 } from "@tradeflow/core"
import { Effect } from "effect"
import { makeAppLayer, newKey, type Received, send } from "./Fixture.js"

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text.slice(0, 2_000))
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  return r.body as { detail: string; errors?: ReadonlyArray<{ path: string; message: string }> }
}

const accepted = (r: Received) => {
  assert.strictEqual(r.status, 202, r.text.slice(0, 2_000))
  return r.body as { tradeflows: ReadonlyArray<{ tradeflow_reference: string; warnings: ReadonlyArray<string> }> }
}

const container = (i: number) => {
  const owner = `${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26) % 26)}CU`
  const serial = String(i).padStart(6, "0")
  return `${owner}${serial}${Iso6346.checkDigit(owner + serial)}`
}

const record = { tradeflow_reference: "PO-1", booking_reference: "BK-1" }

const dcsaEvent = (documentReferences: ReadonlyArray<unknown>) => ({
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-05T09:40:00+01:00",
  equipmentEventTypeCode: "LOAD",
  equipmentReference: "CSQU3054383",
  documentReferences
})

layer(makeAppLayer(), { excludeTestServices: true })("bounded ingest", (it) => {
  it.effect("one record with 32,000 events of 1 (a 64 KB body): 422 naming the field, one issue", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const r = yield* send("POST", "/downstream", {
        auth: k.key,
        json: [{ ...record, events: Array.from({ length: 32_000 }, () => 1) }]
      })
      const body = problem(r, 422)
      assert.deepStrictEqual(body.errors, [{
        path: "/0/events",
        message: "events must hold at most 1,000 entries per record, got 32,000"
      }])
      assert.isBelow(r.text.length, 1_024)
    }))

  it.effect("a problem lists at most 100 issues and counts the rest", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const body = Array.from({ length: 300 }, () => ({ ...record, events: Array.from({ length: 1_000 }, () => 1) }))
      const r = yield* send("POST", "/downstream", { auth: k.key, json: body })
      const errors = problem(r, 422).errors ?? []
      assert.strictEqual(errors.length, 101)
      assert.deepStrictEqual(errors[100], { path: "", message: "and 299,900 more problems not listed" })
      assert.isBelow(r.text.length, 16_384)
    }))

  describe("per record", () => {
    const lists: ReadonlyArray<readonly [key: string, max: number, entry: (i: number) => unknown]> = [
      ["events", 1_000, (i) => ({ message: `event ${i}` })],
      ["partners", 100, (i) => ({ name: `partner ${i}` })],
      ["container_reference", 1_000, container],
      ["booking_reference", 100, (i) => `BK-${i}`],
      ["bill_of_lading_reference", 100, (i) => `BL-${i}`]
    ]
    for (const [key, max, entry] of lists) {
      it.effect(`${key}: ${max} accepted, ${max + 1} is 422 naming the field`, () =>
        Effect.gen(function*() {
          const k = yield* newKey("production")
          const list = (n: number) => Array.from({ length: n }, (_, i) => entry(i))
          accepted(
            yield* send("POST", "/downstream", {
              auth: k.key,
              json: [{ ...record, tradeflow_reference: `AT-${key}`, [key]: list(max) }]
            })
          )
          const over = problem(
            yield* send("POST", "/downstream/tradeflows", { auth: k.key, json: { ...record, [key]: list(max + 1) } }),
            422
          )
          assert.deepStrictEqual(over.errors, [{
            path: `/${key}`,
            message: `${key} must hold at most ${max.toLocaleString("en")} entries per record, got ${
              (max + 1).toLocaleString("en")
            }`
          }])
        }))
    }
  })

  it.effect("per tradeflow and request: records with one reference hold at most 1,000 containers and 1,000 events together", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const containers = (from: number, n: number) => Array.from({ length: n }, (_, i) => container(from + i))
      const events = (n: number) => Array.from({ length: n }, (_, i) => ({ message: `e${i}` }))
      const half = { ...record, container_reference: containers(0, 500), events: events(500) }
      accepted(
        yield* send("POST", "/downstream", {
          auth: k.key,
          json: [half, { ...half, container_reference: containers(500, 500) }]
        })
      )
      const over = problem(
        yield* send("POST", "/downstream", {
          auth: k.key,
          json: [half, { ...record, tradeflow_reference: "PO-2" }, {
            ...half,
            container_reference: containers(500, 501)
          }]
        }),
        422
      )
      assert.deepStrictEqual(over.errors?.map((e) => e.path), ["/2/container_reference"])
      assert.match(over.errors![0]!.message, /"PO-1".*more than 1,000 distinct containers/)
      const events501 = problem(
        yield* send("POST", "/downstream", { auth: k.key, json: [half, { ...record, events: events(501) }] }),
        422
      )
      assert.deepStrictEqual(events501.errors?.map((e) => e.path), ["/1/events"])
    }))

  it.effect("a tradeflow reference * is 422 naming the field, as JSON, csv and dcsa-tnt", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const json = problem(
        yield* send("POST", "/downstream", { auth: k.key, json: [record, { ...record, tradeflow_reference: "*" }] }),
        422
      )
      assert.deepStrictEqual(json.errors?.map((e) => e.path), ["/1/tradeflow_reference"])
      const csv = problem(
        yield* send("POST", "/downstream/scheme/csv", {
          auth: k.key,
          text: "tradeflow_reference,booking_reference\n*,BK",
          contentType: "text/csv"
        }),
        422
      )
      assert.deepStrictEqual(csv.errors?.map((e) => e.path), ["/rows/2/tradeflow_reference"])
      const dcsa = problem(
        yield* send("POST", "/downstream/scheme/dcsa-tnt?reference=*", { auth: k.key, json: [dcsaEvent([])] }),
        422
      )
      assert.deepStrictEqual(dcsa.errors?.map((e) => e.path), ["/0/tradeflow_reference"])
    }))

  it.effect("202 warnings: at most 100 listed, the rest counted", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const unchecked = Array.from({ length: 400 }, (_, i) => `ABCU${String(i).padStart(7, "0")}`).filter((c) =>
        !Iso6346.isValid(c)
      )
      const r = accepted(
        yield* send("POST", "/downstream", {
          auth: k.key,
          json: [{ ...record, container_reference: unchecked.slice(0, 250) }]
        })
      )
      const warnings = r.tradeflows[0]!.warnings
      assert.strictEqual(warnings.length, 101)
      assert.strictEqual(warnings[100], "and 150 more warnings not listed")
    }))

  it.effect("dcsa-tnt: 32,000 document references of 1 in an event are 422 naming the field; invalid UTF-8 is 400", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const r = yield* send("POST", "/downstream/scheme/dcsa-tnt", {
        auth: k.key,
        json: [dcsaEvent(Array.from({ length: 32_000 }, () => 1))]
      })
      assert.deepStrictEqual(problem(r, 422).errors, [{
        path: "/0/documentReferences",
        message: "event 0: documentReferences must hold at most 100 entries per event, got 32,000"
      }])
      const bkg = { documentReferenceType: "BKG", documentReferenceValue: "BK-1" }
      const text = new TextEncoder().encode(JSON.stringify([dcsaEvent([bkg])]))
      accepted(yield* send("POST", "/downstream/scheme/dcsa-tnt", { auth: k.key, bytes: text }))
      const at = text.lastIndexOf("B".charCodeAt(0))
      const broken = new Uint8Array([...text.slice(0, at), 0xc3, 0x28, ...text.slice(at)])
      const bad = problem(yield* send("POST", "/downstream/scheme/dcsa-tnt", { auth: k.key, bytes: broken }), 400)
      assert.deepStrictEqual(bad.errors, [{ path: "", message: "the body is not UTF-8 text" }])
    }))

  it.effect("an Idempotency-Key over 255 characters is 400 naming the header, downstream and through a scheme", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      accepted(
        yield* send("POST", "/downstream", {
          auth: k.key,
          json: [record],
          headers: { "idempotency-key": "k".repeat(255) }
        })
      )
      for (const url of ["/downstream", "/downstream/tradeflows"]) {
        const r = problem(
          yield* send("POST", url, { auth: k.key, json: [record], headers: { "idempotency-key": "k".repeat(256) } }),
          400
        )
        assert.deepStrictEqual(r.errors, [{
          path: "Idempotency-Key",
          message: "must be at most 255 characters, got 256"
        }])
      }
      const csv = yield* send("POST", "/downstream/scheme/csv", {
        auth: k.key,
        text: "tradeflow_reference,booking_reference\nPO-1,BK",
        contentType: "text/csv",
        headers: { "idempotency-key": "k".repeat(1_000) }
      })
      assert.deepStrictEqual(problem(csv, 400).errors?.map((e) => e.path), ["Idempotency-Key"])
    }))
})
