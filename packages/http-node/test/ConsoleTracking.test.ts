import { assert, layer } from "@effect/vitest"
import { ApiMessage, TrackingAdmin, type TrackingSource, Worker } from "@tradeflow/core"
import { Effect, Ref, Schema } from "effect"
import { consoleAuth, makeAppLayer, newKey, send } from "./Fixture.js"

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)
const container = "MSKU1234565"

const fetched = Effect.runSync(Ref.make<ReadonlyArray<TrackingSource.FetchRequest>>([]))

/** A carrier in memory: it knows one loaded-on-vessel event of every container it is asked about. */
const carrier: TrackingSource.TrackingSource = {
  id: "maersk",
  carriers: ["MAEU"],
  container_prefixes: ["MSKU"],
  queries: ["equipment"],
  fetch: (request) =>
    Effect.as(Ref.update(fetched, (all) => [...all, request]), {
      status: "found" as const,
      events: [{
        source: "maersk",
        event_id: `load-${request.query.equipment}`,
        updated_at: Date.UTC(2026, 10, 20),
        retracted: false,
        event_type: "EQUIPMENT" as const,
        event_code: "LOAD",
        classifier: "ACT" as const,
        status_code: "AE",
        message: "Loaded on vessel",
        container_reference: request.query.equipment ?? null,
        location: "NLRTM",
        event_date: Date.UTC(2026, 10, 19),
        bookings: [],
        bills_of_lading: [],
        raw: null
      }],
      malformed: [],
      high_water: Date.UTC(2026, 10, 20)
    })
}

const path = (organisationId: string, reference: string, what: "tracking" | "refresh") =>
  `/console/organisations/${encodeURIComponent(organisationId)}/tradeflows/${encodeURIComponent(reference)}/${what}`

const decodeStatus = Schema.decodeUnknownSync(TrackingAdmin.TrackingStatus, { onExcessProperty: "error" })

layer(makeAppLayer({}, {}, [carrier]), { excludeTestServices: true })("console tracking", (it) => {
  it.effect("GET …/tracking lists the targets; POST …/refresh asks the source now, at most once a minute", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const posted = yield* send("POST", "/downstream/tradeflows", {
        auth: k.key,
        json: { tradeflow_reference: "TR-1", container_reference: container, carrier_scac: "MAEU" }
      })
      assert.strictEqual(posted.status, 202, posted.text)
      yield* drain
      const before = yield* send("GET", path(k.organisationId, "TR-1", "tracking"), { auth: consoleAuth })
      assert.strictEqual(before.status, 200, before.text)
      const status = decodeStatus(before.body)
      assert.strictEqual(status.source, "maersk")
      assert.strictEqual(status.source_paused, null)
      assert.deepStrictEqual(status.targets.map((t) => [t.kind, t.container_reference]), [["equipment", container]])

      const asked = (yield* Ref.get(fetched)).length
      const refreshed = yield* send("POST", path(k.organisationId, "TR-1", "refresh"), { auth: consoleAuth })
      assert.strictEqual(refreshed.status, 202, refreshed.text)
      assert.strictEqual(decodeStatus(refreshed.body).source, "maersk")
      for (let i = 0; i < 100 && (yield* Ref.get(fetched)).length === asked; i++) yield* Effect.sleep("20 millis")
      assert.isAbove((yield* Ref.get(fetched)).length, asked)
      let after = decodeStatus(
        (yield* send("GET", path(k.organisationId, "TR-1", "tracking"), { auth: consoleAuth })).body
      )
      for (let i = 0; i < 100 && after.targets[0]?.last_check === null; i++) {
        yield* drain
        after = decodeStatus(
          (yield* send("GET", path(k.organisationId, "TR-1", "tracking"), { auth: consoleAuth })).body
        )
      }
      assert.strictEqual(after.targets[0]?.state, "before_departure")
      assert.isNotNull(after.targets[0]?.last_check)

      const again = yield* send("POST", path(k.organisationId, "TR-1", "refresh"), { auth: consoleAuth })
      assert.strictEqual(again.status, 429, again.text)
      assert.match(again.headers["content-type"] ?? "", /^application\/problem\+json/)
      assert.match(again.headers["retry-after"] ?? "", /^[1-9][0-9]?$/)

      const download = yield* send("GET", `/console/organisations/${k.organisationId}/tradeflows/TR-1/download`, {
        auth: consoleAuth
      })
      const doc = Schema.decodeUnknownSync(ApiMessage.TradeflowDocument, { onExcessProperty: "error" })(download.body)
      assert.strictEqual(doc.metadata.tracking?.source, "maersk")
      assert.deepStrictEqual(doc.events.map((e) => e.status_code), ["AE"])
    }))

  it.effect("an untracked tradeflow shows no source and cannot be refreshed; unknown ones are 404", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const posted = yield* send("POST", "/downstream/tradeflows", {
        auth: k.key,
        json: { tradeflow_reference: "TR-2", container_reference: "CSQU3054383" }
      })
      assert.deepStrictEqual(
        (posted.body as { tradeflows: Array<{ warnings: Array<string> }> }).tradeflows[0]?.warnings,
        [
          "not tracked: no tracking source serves container owner code CSQU"
        ]
      )
      yield* drain
      const status = yield* send("GET", path(k.organisationId, "TR-2", "tracking"), { auth: consoleAuth })
      assert.deepStrictEqual(status.body, { source: null, source_paused: null, targets: [] })
      const refresh = yield* send("POST", path(k.organisationId, "TR-2", "refresh"), { auth: consoleAuth })
      assert.strictEqual(refresh.status, 409, refresh.text)
      for (
        const [organisation, reference, detail] of [
          [k.organisationId, "NOPE", "no tradeflow with reference \"NOPE\""],
          ["org_unknown", "TR-2", "no organisation with id \"org_unknown\""]
        ] as const
      ) {
        for (const what of ["tracking", "refresh"] as const) {
          const r = yield* send(what === "tracking" ? "GET" : "POST", path(organisation, reference, what), {
            auth: consoleAuth
          })
          assert.strictEqual(r.status, 404, r.text)
          assert.strictEqual((r.body as { detail: string }).detail, detail)
        }
      }
      const anonymous = yield* send("GET", path(k.organisationId, "TR-2", "tracking"))
      assert.strictEqual(anonymous.status, 401)
    }))
})
