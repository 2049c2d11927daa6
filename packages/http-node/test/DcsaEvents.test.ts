/**
 * `GET /dcsa/v2/events`: the scenarios DCSA's conformance tool runs against a Track & Trace 2.2
 * publisher, ported (each filter with its event type, alone and combined; each date operator at
 * its boundaries; `limit=1` walked through `Next-Page`; 400 on invalid values), and what this
 * service adds (authentication as upstream, other organisations, `/v3`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import {
  badRequests,
  booking,
  carrier,
  container,
  dataset,
  type Event,
  eventsOf,
  get,
  ids,
  imo,
  scenarios,
  voyage
} from "./DcsaEventsData.js"
import { makeAppLayer, production, type Received, send, uat } from "./Fixture.js"

const everything = "limit=1000"

/** Follows Next-Page from `GET /dcsa/v2/events?<query>` to the last page; answers the events and the links followed. */
const walk = (key: string, query: string) =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const links: Array<string> = []
    let url: string | undefined = `/dcsa/v2/events?${query}`
    while (url !== undefined) {
      const r: Received = yield* send("GET", url, { auth: key })
      const page = eventsOf(r)
      assert.strictEqual(r.headers["current-page"], url)
      events.push(...page)
      url = r.headers["next-page"]
      if (url !== undefined) links.push(url)
      assert.isAtMost(links.length, 1000)
    }
    return { events, links }
  })

const problemOf = (r: Received) => {
  assert.strictEqual(r.status, 400, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  assert.strictEqual(r.headers["api-version"], "2.2.0")
  return r.body as {
    readonly status: number
    readonly detail: string
    readonly errors: ReadonlyArray<{ readonly path: string; readonly message: string; readonly reason: string }>
    readonly httpMethod: string
    readonly requestUri: string
    readonly statusCode: number
  }
}

layer(makeAppLayer({}, {}, [carrier]), { excludeTestServices: true })("GET /dcsa/v2/events", (it) => {
  it.effect("the organisation's events: each reading of each classified milestone, in order, no other organisation's", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const codes = data.all.map((e) => `${e.eventType} ${e.transportEventTypeCode ?? e.equipmentEventTypeCode}`)
      assert.strictEqual(data.all.length, 13)
      assert.sameMembers([...new Set(codes)], [
        "EQUIPMENT GTOT",
        "EQUIPMENT GTIN",
        "EQUIPMENT LOAD",
        "TRANSPORT DEPA",
        "TRANSPORT ARRI",
        "EQUIPMENT DISC"
      ])
      const positions = data.all.map((e) => `${e.eventCreatedDateTime} ${e.eventID}`)
      assert.deepStrictEqual(positions, [...positions].sort())
      assert.strictEqual(new Set(ids(data.all)).size, data.all.length)
      assert.deepStrictEqual(ids(data.all).filter((id) => data.otherIds.includes(id)), [])
      assert.strictEqual(data.otherIds.length, 8)
      const arrivals = data.all.filter((e) =>
        e.transportEventTypeCode === "ARRI" && e.transportCall?.UNLocationCode === "NLRTM"
      )
      assert.deepStrictEqual(arrivals.map((e) => e.eventClassifierCode), ["EST", "EST"])
      assert.notStrictEqual(arrivals[0]!.eventDateTime, arrivals[1]!.eventDateTime)
      const again = eventsOf(yield* get(data.key, everything))
      assert.deepStrictEqual(again, data.all)
    }))

  it.effect("an organisation without tradeflows answers [] with API-Version and Current-Page, and no Next-Page", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const r = yield* get(data.emptyKey, "eventType=TRANSPORT&limit=1")
      assert.deepStrictEqual(eventsOf(r), [])
      assert.strictEqual(r.headers["current-page"], "/dcsa/v2/events?eventType=TRANSPORT&limit=1")
      assert.isUndefined(r.headers["next-page"])
    }))

  for (const type of ["TRANSPORT", "EQUIPMENT", "SHIPMENT"] as const) {
    it.effect(`${type}: each filter of DCSA's scenarios, alone and combined, selects exactly what it names`, () =>
      Effect.gen(function*() {
        const data = yield* dataset
        const cases = scenarios(data, type)
        for (const scenario of cases) {
          const answer = eventsOf(yield* get(data.key, `${scenario.query}&${everything}`))
          assert.deepStrictEqual(ids(answer), ids(data.all.filter(scenario.selects)), scenario.query)
        }
        const found = cases.filter((s) => s.found).map((s) => s.query.replace(/^eventType=\w+&/, ""))
        if (type === "SHIPMENT") {
          assert.deepStrictEqual(found, [])
        } else {
          for (
            const filter of [
              "eventCreatedDateTime:eq=",
              "carrierBookingReference=",
              "transportDocumentReference=",
              "transportCallID=",
              `vesselIMONumber=${imo}`,
              `exportVoyageNumber=${voyage}`,
              `carrierVoyageNumber=${voyage}`,
              "UNLocationCode=NLRTM",
              "UNLocationCode=CNSHA",
              type === "TRANSPORT" ? "transportEventTypeCode=ARRI" : "equipmentEventTypeCode=LOAD",
              type === "TRANSPORT" ? "transportEventTypeCode=DEPA&" : "equipmentEventTypeCode=GTIN&"
            ]
          ) assert.isTrue(found.some((f) => f.startsWith(filter)), `${type}: no event for ${filter}`)
        }
      }))
  }

  it.effect("each date operator at its boundaries: :gte and :lte hold the instant, :gt and :lt do not, plain is :eq", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const created = (e: Event) => e.eventCreatedDateTime
      const firsts = data.all.filter((e) => created(e) === data.first)
      const seconds = data.all.filter((e) => created(e) === data.second)
      assert.isAbove(firsts.length, 0)
      assert.isAbove(seconds.length, 0)
      const cases: ReadonlyArray<readonly [string, (e: Event) => boolean]> = [
        [`eventCreatedDateTime:gte=${data.second}`, (e) => created(e) >= data.second],
        [`eventCreatedDateTime:gt=${data.second}`, (e) => created(e) > data.second],
        [`eventCreatedDateTime:lte=${data.first}`, (e) => created(e) <= data.first],
        [`eventCreatedDateTime:lt=${data.first}`, () => false],
        [`eventCreatedDateTime:lt=${data.second}`, (e) => created(e) < data.second],
        [`eventCreatedDateTime:eq=${data.second}`, (e) => created(e) === data.second],
        [`eventCreatedDateTime=${data.first}`, (e) => created(e) === data.first],
        [`eventCreatedDateTime:gt=${data.first}&eventCreatedDateTime:lt=${data.second}`, () => false],
        [
          `eventCreatedDateTime:gte=${data.first}&eventCreatedDateTime:lte=${data.second}`,
          (e) => created(e) >= data.first && created(e) <= data.second
        ]
      ]
      for (const [query, selects] of cases) {
        const answer = eventsOf(yield* get(data.key, `${query.replace(/\+/g, "%2B")}&${everything}`))
        assert.deepStrictEqual(ids(answer), ids(data.all.filter(selects)), query)
      }
      const plus = new Date(Date.parse(data.first) + 3_600_000).toISOString().replace("Z", "+01:00")
      for (const sent of [plus.replace("+", "%2B"), plus]) {
        assert.deepStrictEqual(ids(eventsOf(yield* get(data.key, `eventCreatedDateTime=${sent}`))), ids(firsts), sent)
      }
    }))

  it.effect("limit=1: Next-Page walks every page once, keeping the parameters; no duplicate, no gap", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      for (
        const query of [
          "eventType=TRANSPORT&limit=1",
          "eventType=EQUIPMENT&limit=1",
          "limit=1",
          `limit=3&carrierBookingReference=${booking}&eventType=EQUIPMENT,TRANSPORT`
        ]
      ) {
        const whole = eventsOf(yield* get(data.key, `${query.replace(/limit=\d+/, "")}&${everything}`))
        const { events, links } = yield* walk(data.key, query)
        assert.deepStrictEqual(ids(events), ids(whole), query)
        const limit = Number(/limit=(\d+)/.exec(query)![1])
        assert.strictEqual(links.length, Math.ceil(whole.length / limit) - 1, query)
        for (const link of links) {
          const [path, sent] = link.split("?")
          assert.strictEqual(path, "/dcsa/v2/events")
          const params = sent!.split("&")
          assert.deepStrictEqual(params.slice(0, -1), query.split("&"), link)
          assert.match(params.at(-1)!, /^cursor=[^&]+$/)
        }
      }
    }))

  it.effect.prop(
    "following Next-Page with any limit and filters gives the unpaged answer exactly, in order",
    [
      fc.integer({ min: 1, max: 14 }),
      fc.constantFrom("TRANSPORT" as const, "EQUIPMENT" as const, "SHIPMENT" as const),
      fc.subarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], { maxLength: 2 })
    ],
    ([limit, type, chosen]) =>
      Effect.gen(function*() {
        const data = yield* dataset
        const cases = scenarios(data, type)
        const filters = chosen.filter((i) => i < cases.length).map((i) =>
          cases[i]!.query.replace(/^eventType=\w+&/, "")
        )
        const names = filters.flatMap((f) => f.split("&").map((pair) => pair.split("=")[0]))
        const distinct = new Set(names).size === names.length ? filters : filters.slice(0, 1)
        const query = [`eventType=${type}`, ...distinct].join("&")
        const whole = eventsOf(yield* get(data.key, `${query}&${everything}`))
        const { events, links } = yield* walk(data.key, `${query}&limit=${limit}`)
        assert.deepStrictEqual(ids(events), ids(whole), query)
        assert.strictEqual(links.length, Math.max(0, Math.ceil(whole.length / limit) - 1), query)
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect("Next-Page replaces the cursor it was given, keeps every other parameter as sent; limit may change on the way", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const first = yield* get(data.key, `limit=2&eventCreatedDateTime:gte=${data.first.replace("Z", "%2B00:00")}`)
      const next = first.headers["next-page"]!
      assert.match(next, /^\/dcsa\/v2\/events\?limit=2&eventCreatedDateTime:gte=[^&]*%2B00:00&cursor=/)
      const second = yield* send("GET", next.replace("limit=2", "limit=5"), { auth: data.key })
      assert.deepStrictEqual(ids(eventsOf(second)), ids(data.all.slice(2, 7)))
      const third = second.headers["next-page"]!
      assert.strictEqual(third.split("cursor=").length, 2)
      assert.match(third, /^\/dcsa\/v2\/events\?limit=5&eventCreatedDateTime:gte=/)
      assert.deepStrictEqual(ids(eventsOf(yield* send("GET", third, { auth: data.key }))), ids(data.all.slice(7, 12)))
    }))

  it.effect("400 on each invalid value, naming the parameter, in a problem that is also DCSA's error", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      for (const [query, parameter] of badRequests) {
        const problem = problemOf(yield* get(data.key, query))
        assert.deepStrictEqual(problem.errors.map((e) => e.path), [parameter], query)
        assert.include(problem.detail, parameter)
        assert.deepStrictEqual([problem.status, problem.statusCode, problem.httpMethod], [400, 400, "GET"])
        assert.strictEqual(problem.requestUri, `/dcsa/v2/events?${query}`)
        assert.isTrue(problem.errors.every((e) => e.reason === "invalidQuery" && e.message !== ""))
      }
      const twice = yield* get(data.key, "eventType=TRANSPORT&eventType=EQUIPMENT")
      assert.strictEqual(twice.status, 400, twice.text)
      assert.deepStrictEqual((twice.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path), [
        "eventType"
      ])
      const both = problemOf(yield* get(data.key, "eventType=PARCEL&limit=0"))
      assert.deepStrictEqual(both.errors.map((e) => e.path), ["eventType", "limit"])
      const version = yield* send("GET", "/dcsa/v2/events", { auth: data.key, headers: { "api-version": "3" } })
      assert.deepStrictEqual(problemOf(version).errors.map((e) => e.path), ["API-Version"])
      for (const accepted of ["2", "2.2", "2.2.0"]) {
        const r = yield* send("GET", "/dcsa/v2/events?limit=1", {
          auth: data.key,
          headers: { "api-version": accepted }
        })
        assert.strictEqual(eventsOf(r).length, 1)
      }
    }))

  it.effect("a cursor altered, of other filters or of another organisation is 400 naming cursor", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const first = yield* get(data.key, "eventType=EQUIPMENT&limit=1")
      const cursor = decodeURIComponent(/cursor=([^&]+)/.exec(first.headers["next-page"]!)![1]!)
      const altered = cursor.slice(0, -3) + (cursor.endsWith("AAA") ? "BBB" : "AAA")
      for (
        const [key, query] of [
          [data.key, `eventType=EQUIPMENT&cursor=${encodeURIComponent(altered)}`],
          [
            data.key,
            `eventType=EQUIPMENT&cursor=${encodeURIComponent(`${cursor[0] === "1" ? "2" : "1"}${cursor.slice(1)}`)}`
          ],
          [data.key, `eventType=TRANSPORT&cursor=${encodeURIComponent(cursor)}`],
          [data.key, `eventType=EQUIPMENT&equipmentReference=${container}&cursor=${encodeURIComponent(cursor)}`],
          [data.otherKey, `eventType=EQUIPMENT&cursor=${encodeURIComponent(cursor)}`]
        ] as const
      ) {
        const answer = yield* get(key, query)
        assert.strictEqual(answer.status, 400, query)
        assert.deepStrictEqual(problemOf(answer).errors.map((e) => e.path), ["cursor"], query)
      }
      const ok = yield* get(data.key, `eventType=EQUIPMENT&limit=100&cursor=${encodeURIComponent(cursor)}`)
      assert.strictEqual(eventsOf(ok).length, data.all.filter((e) => e.eventType === "EQUIPMENT").length - 1)
    }))

  it.effect("API keys as upstream: 401 without, 403 across environments, 421 elsewhere; /v3 on the UAT host", () =>
    Effect.gen(function*() {
      const data = yield* dataset
      const none = yield* send("GET", "/dcsa/v2/events")
      assert.strictEqual(none.status, 401, none.text)
      assert.strictEqual((yield* get(data.uatKey, "")).status, 403)
      assert.strictEqual((yield* get(data.key, "", { host: uat, path: "/v3/dcsa/v2/events" })).status, 403)
      assert.strictEqual((yield* get(data.key, "", { host: "elsewhere.example" })).status, 421)
      const v3 = yield* get(data.uatKey, "limit=2", { host: uat, path: "/v3/dcsa/v2/events" })
      const page = eventsOf(v3)
      assert.strictEqual(page.length, 2)
      assert.match(v3.headers["next-page"]!, /^\/v3\/dcsa\/v2\/events\?limit=2&cursor=/)
      assert.deepStrictEqual(ids(page).filter((id) => ids(data.all).includes(id)), [])
      const production3 = eventsOf(yield* get(data.key, everything, { host: production, path: "/v3/dcsa/v2/events" }))
      assert.deepStrictEqual(production3, data.all)
    }))
})
