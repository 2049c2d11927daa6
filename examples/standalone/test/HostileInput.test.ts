import { describe, expect, it } from "@effect/vitest"
import { JobQueue, type Storage } from "@tradeflow/core"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Exit, FastCheck as fc, type Layer, Option, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeTestSchema } from "../../../packages/storage-pg/test/TestDatabase.js"
import { consoleToken, kill, type Server, start } from "./Process.js"

/** The body limit of the server under test: small enough to be fast, large enough for 100,000 levels of nesting. */
const maxBodyBytes = 1024 * 1024
const depth = 100_000
const runs = 500
const concurrency = 8

/** One hostile request: sent with node:http (raw bytes in path, headers and body), or as raw bytes over a socket. */
interface Hostile {
  readonly kind: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: Buffer
  /** Sent with `Transfer-Encoding: chunked` in pieces instead of with a `Content-Length`. */
  readonly chunked?: boolean
  /** The body is over the limit: the server may answer 413 and close before it has all been sent. */
  readonly oversized?: boolean
  /** Bytes written to a plain socket instead. */
  readonly raw?: Buffer
}

interface Outcome {
  readonly status: number | null
  readonly contentType?: string
  readonly error?: string
}

interface Keys {
  readonly production: string
  readonly uat: string
  readonly revoked: string
  readonly widget: string
  readonly organisationId: string
  readonly cursor: string
}

const send = (port: number, h: Hostile): Promise<Outcome> =>
  new Promise((resolve) => {
    const req = request({
      host: "127.0.0.1",
      port,
      method: h.method,
      path: h.path,
      headers: h.headers,
      setHost: false,
      agent: false
    })
    const done = (outcome: Outcome) => {
      clearTimeout(timer)
      resolve(outcome)
    }
    const timer = setTimeout(() => req.destroy(new Error("no answer within 20 s")), 20_000)
    req.on("response", (res) => {
      res.resume()
      const finish = () =>
        done({ status: res.statusCode ?? null, contentType: String(res.headers["content-type"] ?? "") })
      res.on("end", finish)
      res.on("error", finish)
    })
    req.on("error", (e) => done({ status: null, error: e.message }))
    if (h.body !== undefined && h.chunked) {
      for (let i = 0; i < h.body.length; i += 16_384) req.write(h.body.subarray(i, i + 16_384))
    } else if (h.body !== undefined) {
      req.write(h.body)
    }
    req.end()
  })

const sendRaw = (port: number, bytes: Buffer): Promise<Outcome> =>
  new Promise((resolve) => {
    let answer = ""
    const socket = connect(port, "127.0.0.1")
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)
      resolve({ status: status ? Number(status[1]) : null })
    }
    const timer = setTimeout(done, 5_000)
    socket.on("connect", () => socket.end(bytes))
    socket.on("data", (d) => {
      answer += d.toString("latin1")
      if (/^HTTP\/1\.[01] \d{3}/.test(answer)) done()
    })
    socket.on("close", done)
    socket.on("error", done)
  })

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become EF BF BD, as `Buffer.from` writes them). */
const pct = (s: string): string =>
  [...Buffer.from(s, "utf8")].map((b) =>
    /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`
  ).join("")

const hostileStrings = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "A\u0000B",
    "\ud800",
    "\udfff\ud800",
    "\u202eLTR-OVERRIDE\u202d",
    "\u200f\u061c",
    "📦🚢😀",
    "PO-😀-\u{10ffff}",
    "",
    " ",
    "\t\n",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "*",
    "../../etc/passwd",
    "%00",
    "%ff",
    "'; DROP TABLE tradeflows; --",
    "\ufeff",
    "\u2028\u2029",
    "A".repeat(10_000),
    "ｃｏｎｔａｉｎｅｒ"
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 })
)

const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileStrings },
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, true, 0, -1, 1e308, 2 ** 53 + 1, [], {}, [[]], { __proto__: null })
)

const locode = fc.oneof(
  fc.constantFrom("CNSHA", "NLRTM", "XXXXX", "ab", "cnsha", "\u0000\u0000\u0000\u0000\u0000", "📦📦📦"),
  junkValue
)
const date = fc.oneof(
  fc.constantFrom(
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "2026-13-45T99:99:99Z",
    "+275760-09-13T00:00:00Z",
    "-271821-04-20T00:00:00Z",
    "2026-01-01T00:00:00+99:00",
    "0000-00-00",
    "2026-02-30",
    "1e10",
    "now"
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  junkValue
)
const references = fc.oneof(
  hostileStrings,
  fc.array(hostileStrings, { maxLength: 4 }),
  fc.array(
    fc.record({ reference: hostileStrings, custom_properties: fc.oneof(fc.object({ maxDepth: 2 }), junkValue) }),
    { maxLength: 3 }
  ),
  junkValue
)

/** Records with every field possibly mistyped or hostile. */
const record = fc.record({
  tradeflow_reference: fc.oneof({ weight: 3, arbitrary: hostileStrings }, junkValue),
  container_reference: references,
  booking_reference: references,
  bill_of_lading_reference: references,
  port_of_loading: locode,
  port_of_discharge: locode,
  estimated_time_of_departure: date,
  actual_time_of_arrival: date,
  active: fc.oneof(fc.boolean(), junkValue),
  carrier_scac: junkValue,
  customer_name: junkValue,
  partners: fc.oneof(
    fc.array(fc.record({ name: junkValue, role: junkValue, reference: junkValue }, { requiredKeys: [] }), {
      maxLength: 3
    }),
    junkValue
  ),
  mock_tracking: fc.oneof(
    fc.record({
      scenario: fc.constantFrom("ocean_basic", "nope", "__proto__", "constructor", "toString", "hasOwnProperty")
    }),
    junkValue
  ),
  configuration: fc.oneof(fc.record({ enroll_insurance: junkValue }), fc.object({ maxDepth: 2 }), junkValue)
}, { requiredKeys: [] })

/** A valid record with one field replaced by a hostile value, so that hostile content reaches the worker and the database. */
const nearlyValid = fc.tuple(
  fc.nat(50),
  fc.constantFrom(
    "tradeflow_reference",
    "container_reference",
    "booking_reference",
    "bill_of_lading_reference",
    "customer_name",
    "carrier_scac",
    "vessel",
    "port_of_loading",
    "incoterms",
    "configuration",
    "partners"
  ),
  fc.oneof({ weight: 3, arbitrary: hostileStrings }, junkValue)
).map(([n, field, value]) => ({
  tradeflow_reference: `NEAR-${n}`,
  booking_reference: `BK-${n}`,
  container_reference: ["MSCU1234565"],
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  mock_tracking: { scenario: "ocean_basic" },
  [field]: field === "partners"
    ? [{ name: value, role: value, reference: value }]
    : field === "configuration"
    ? { [JSON.stringify(value) ?? "x"]: value }
    : value
}))

/** `__proto__`, `constructor` and `prototype` as own keys of the parsed JSON (only JSON text makes `__proto__` an own key). */
const pollution = fc.constantFrom(
  `[{"tradeflow_reference":"PROTO-1","__proto__":{"tradeflow_reference":"POLLUTED","polluted":true,"environment":"production"}}]`,
  `{"__proto__":{"tradeflow_reference":"POLLUTED","status":"queued"}}`,
  `[{"tradeflow_reference":"PROTO-2","constructor":{"prototype":{"polluted":true,"tradeflow_reference":"POLLUTED"}}}]`,
  `[{"tradeflow_reference":"PROTO-3","booking_reference":"B","configuration":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}}]`,
  `[{"tradeflow_reference":"PROTO-4","container_reference":[{"reference":"MSCU1234565","custom_properties":{"__proto__":{"polluted":true}}}]}]`,
  `[{"tradeflow_reference":"PROTO-5","booking_reference":"B","mock_tracking":{"scenario":"__proto__","__proto__":{"scenario":"ocean_basic"}}}]`,
  `[{"tradeflow_reference":"PROTO-6","booking_reference":"B","partners":[{"name":"__proto__"},{"name":"constructor","role":"prototype"}],"customer_name":"__proto__"}]`,
  `{"__proto__":[],"tradeflow_reference":"PROTO-7","booking_reference":"B","prototype":{"polluted":true}}`,
  `{"name":"__proto__","__proto__":{"name":"x"},"environment":"production","url":"https://example.com","types":["__proto__"]}`
).map((s) => Buffer.from(s))

const nested = (open: string, close: string, inner = "1") => open.repeat(depth) + inner + close.repeat(depth)
const deep = fc.constantFrom(
  () => nested("[", "]", ""),
  () => nested(`{"a":`, "}"),
  () => nested(`{"__proto__":`, "}"),
  () => `[{"tradeflow_reference":"DEEP-1","booking_reference":"B","configuration":{"x":${nested("[", "]", "")}}}]`,
  () =>
    `[{"tradeflow_reference":"DEEP-2","container_reference":[{"reference":"MSCU1234565","custom_properties":{"x":${
      nested(`{"a":`, "}")
    }}}]}]`,
  () =>
    `[{"tradeflow_reference":"DEEP-3","booking_reference":"B","mock_tracking":${
      nested(`{"scenario":`, "}", `"ocean_basic"`)
    }}]`,
  () => `[{"tradeflow_reference":${nested("[", "]", `"DEEP-4"`)}}]`,
  () => `{"name":${nested("[", "]", `"x"`)}}`
).map((f) => Buffer.from(f()))

/** Lone surrogates as CESU bytes, invalid UTF-8, raw NUL and control bytes, and valid but awkward characters, inside JSON strings. */
const rawUnicode = fc.tuple(
  fc.constantFrom(
    [0xed, 0xa0, 0x80],
    [0xed, 0xbf, 0xbf],
    [0xff],
    [0xfe, 0xff],
    [0xc0, 0xaf],
    [0xf4, 0x90, 0x80, 0x80],
    [0x80],
    [0x00],
    [0x1b, 0x5b, 0x33, 0x31, 0x6d],
    [0xe2, 0x80, 0xae],
    [0xf0, 0x9f, 0x93, 0xa6],
    [0xef, 0xbb, 0xbf]
  ),
  fc.constantFrom("tradeflow_reference", "container_reference", "booking_reference", "customer_name", "port_of_loading")
).map(([bytes, field]) =>
  Buffer.concat([Buffer.from(`[{"tradeflow_reference":"RAW","${field}":"X`), Buffer.from(bytes), Buffer.from(`Y"}]`)])
)

const malformed = fc.oneof(
  fc.constantFrom(
    "{",
    "[",
    "[1,]",
    `{"a":1,}`,
    "NaN",
    "'x'",
    `{"a":undefined}`,
    `[{"tradeflow_reference":"A"}`,
    "\ufeff[]",
    `""`,
    "   ",
    "null",
    "true",
    "1e999999",
    "-",
    "[" + "1,".repeat(50_000) + "]",
    `{"a":"\\x41"}`,
    `["\\ud800"]`,
    `{"a" 1}`,
    "[{}]".repeat(3),
    "\u0000",
    "<xml/>",
    "a=1&b=2"
  ),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.jsonValue().map((v) => JSON.stringify(v) ?? "").chain((s) => fc.nat(s.length).map((n) => s.slice(0, n)))
).map((s) => Buffer.from(s))

const oversized = fc.tuple(fc.integer({ min: maxBodyBytes + 1, max: 3 * maxBodyBytes }), fc.boolean()).map(
  ([size, array]) => {
    const head = array ? `[{"tradeflow_reference":"BIG","booking_reference":"` : `{"x":"`
    const tail = array ? `"}]` : `"}`
    return Buffer.from(head + "A".repeat(Math.max(0, size - head.length - tail.length)) + tail)
  }
)

const bodies: fc.Arbitrary<{ body: Buffer; oversized: boolean }> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.oneof(fc.array(record, { maxLength: 4 }), record).map((r) => Buffer.from(JSON.stringify(r)))
  },
  {
    weight: 6,
    arbitrary: fc.array(nearlyValid, { minLength: 1, maxLength: 3 }).map((r) => Buffer.from(JSON.stringify(r)))
  },
  { weight: 2, arbitrary: malformed },
  { weight: 2, arbitrary: rawUnicode },
  { weight: 2, arbitrary: pollution },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
  { weight: 1, arbitrary: fc.constant(Buffer.from("[" + Array(10_001).fill("{}").join(",") + "]")) }
).map((body) => ({ body, oversized: body.length > maxBodyBytes })).chain((b) =>
  fc.oneof({ weight: 12, arbitrary: fc.constant(b) }, {
    weight: 1,
    arbitrary: oversized.map((body) => ({ body, oversized: true }))
  })
)

const contentTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constant<string | undefined>("application/json") },
  fc.constantFrom<string | undefined>(
    undefined,
    "text/plain",
    "application/json; charset=latin1",
    "APPLICATION/JSON",
    "application/vnd.evil+json",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "text/csv",
    "application/json, text/html",
    "",
    "*/*",
    "application/json\u00ff",
    "application/problem+json; charset=utf-16"
  )
)

const apiPrefix = fc.constantFrom("", "/v3")

/** Which environment's host and key: production and UAT keys on their hosts, the wrong host, no key, junk, a revoked key. */
const auth = (keys: Keys) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant({ host: "localhost", authorization: keys.production }) },
    { weight: 4, arbitrary: fc.constant({ host: "127.0.0.1", authorization: keys.uat }) },
    fc.constantFrom<{ host?: string; authorization?: string }>(
      { host: "localhost", authorization: `Bearer ${keys.production}` },
      { host: "127.0.0.1", authorization: keys.production },
      { host: "localhost" },
      { host: "127.0.0.1", authorization: "" },
      { host: "localhost", authorization: keys.revoked },
      { host: "localhost", authorization: `Bearer ${consoleToken}` },
      { host: "localhost", authorization: "Bearer \u00ff\u00fe\u0080" },
      { host: "evil.example", authorization: keys.production },
      {},
      { host: "", authorization: keys.uat },
      { host: "localhost:99999999", authorization: keys.production },
      { host: "LOCALHOST.", authorization: keys.production },
      { host: "127.0.0.1\u00ff", authorization: keys.uat }
    ),
    fc.record({
      host: fc.constantFrom("localhost", "127.0.0.1"),
      authorization: fc.string({ maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, ""))
    })
  ).map((a) => {
    const headers: Record<string, string> = {}
    if (a.host !== undefined) headers["host"] = a.host
    if (a.authorization !== undefined) headers["authorization"] = a.authorization
    return headers
  })

const withBody = (
  headers: Record<string, string>,
  contentType: string | undefined,
  body: Buffer,
  chunked: boolean
) => ({
  ...headers,
  ...(contentType === undefined ? {} : { "content-type": contentType }),
  ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) })
})

const downstream = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    prefix: apiPrefix,
    path: fc.constantFrom("/downstream", "/downstream/tradeflows", "/downstream/tradeflows/"),
    headers: auth(keys),
    contentType: contentTypes,
    body: bodies,
    chunked: fc.boolean(),
    idempotency: fc.option(fc.constantFrom("k", "", "k".repeat(5_000), "\u00ff\u00fe", "__proto__"), { nil: undefined })
  }).map((r) => ({
    kind: "downstream",
    method: "POST",
    path: r.prefix + r.path,
    headers: {
      ...withBody(r.headers, r.contentType, r.body.body, r.chunked),
      ...(r.idempotency === undefined ? {} : { "idempotency-key": r.idempotency })
    },
    body: r.body.body,
    chunked: r.chunked,
    oversized: r.body.oversized
  }))

const csvCell = fc.oneof(
  hostileStrings,
  fc.constantFrom(`"`, `""`, `"a""b`, `"unterminated`, ";", "|", ",", "\r", "\n", "yes", "maybe")
)
const csvHeader = fc.oneof(
  fc.constant("tradeflow_reference,booking_reference,port_of_loading,active,mock_tracking.scenario"),
  fc.constantFrom(
    "__proto__,constructor.prototype.polluted,prototype",
    "references.__proto__.x,configuration.constructor",
    "tradeflow_reference,tradeflow_reference",
    "",
    ",,,,",
    `"tradeflow_reference`,
    "\ufefftradeflow_reference,booking_reference"
  ),
  fc.array(hostileStrings.map((s) => s.replace(/[\r\n,]/g, "")), { minLength: 1, maxLength: 6 }).map((a) => a.join(","))
)
const csv = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(
      csvHeader,
      fc.array(fc.array(csvCell, { maxLength: 6 }), { maxLength: 6 }),
      fc.constantFrom("\n", "\r\n", "\r")
    )
      .map(([header, rows, eol]) => Buffer.from([header, ...rows.map((r) => r.join(","))].join(eol)))
  },
  fc.constant(
    Buffer.from(
      "tradeflow_reference,booking_reference\n" + Array.from({ length: 10_001 }, (_, i) => `R${i},B`).join("\n")
    )
  ),
  fc.constant(Buffer.from("tradeflow_reference," + "x,".repeat(100_000) + "\nA,B")),
  rawUnicode,
  malformed
)

const scheme = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    prefix: apiPrefix,
    name: fc.oneof(
      { weight: 4, arbitrary: fc.constant("csv") },
      fc.constantFrom("dcsa-tnt", "nope", "__proto__", "constructor", "toString", "%ff", "%00", "..")
    ),
    headers: auth(keys),
    contentType: fc.oneof({ weight: 4, arbitrary: fc.constant<string | undefined>("text/csv") }, contentTypes),
    body: fc.oneof(csv.map((body) => ({ body, oversized: false })), bodies),
    query: fc.constantFrom("", "?delimiter=%00", "?__proto__[x]=1", "?header=false&header=true", "?%zz=%")
  }).map((r) => ({
    kind: "scheme",
    method: "POST",
    path: `${r.prefix}/downstream/scheme/${r.name}${r.query}`,
    headers: withBody(r.headers, r.contentType, r.body.body, false),
    body: r.body.body,
    oversized: r.body.oversized
  }))

const queryValue = (keys: Keys) =>
  fc.oneof(
    fc.constantFrom(
      "1",
      "0",
      "501",
      "500",
      "-1",
      "1.5",
      "1e2",
      "0x10",
      " 1",
      "01",
      "true",
      "false",
      "maybe",
      "TRUE",
      "shipment",
      "2026-01-01T00:00:00Z",
      "2026-99-99",
      "CONTAINER_MILESTONE",
      "CONTAINER_MILESTONE,SHIPMENT_CHANGE",
      "BASIC_STATUS,,",
      "__proto__",
      keys.cursor,
      keys.cursor.slice(0, -2),
      keys.cursor + "A",
      keys.cursor.split("").reverse().join(""),
      "x".repeat(8_000)
    ).map(pct),
    hostileStrings.map(pct),
    fc.constantFrom(
      "%",
      "%z",
      "%zz",
      "%ff",
      "%00",
      "%ed%a0%80",
      "%c0%af",
      "%e2%80%ae",
      "%f0%9f%93%a6",
      "+",
      "&&",
      "==",
      "%25",
      "%2525",
      "\u00ff"
    )
  )

const upstream = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    prefix: apiPrefix,
    headers: auth(keys),
    params: fc.array(
      fc.tuple(
        fc.constantFrom(
          "per_page",
          "cursor",
          "since",
          "type",
          "latest",
          "excludes",
          "tradeflow",
          "container",
          "junk",
          "__proto__",
          "constructor",
          "",
          "per_page[]",
          "%70er_page",
          "PER_PAGE"
        ),
        queryValue(keys)
      ),
      { maxLength: 6 }
    ),
    trailer: fc.constantFrom("", "&", "#frag", "?", "&=")
  }).map((r) => ({
    kind: "upstream",
    method: "GET",
    path: `${r.prefix}/upstream?${r.params.map(([k, v]) => `${k}=${v}`).join("&")}${r.trailer}`,
    headers: r.headers
  }))

const widget = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    prefix: apiPrefix,
    host: fc.oneof({ weight: 4, arbitrary: fc.constant("localhost") }, fc.constantFrom("127.0.0.1", "evil.example")),
    authorization: fc.oneof(
      { weight: 4, arbitrary: fc.constant(`Basic ${Buffer.from(keys.widget).toString("base64")}`) },
      fc.constantFrom(
        `Basic ${Buffer.from(keys.widget).toString("base64")}`,
        `Basic ${Buffer.from(`${keys.widget}:`).toString("base64")}`,
        `Basic ${keys.widget}`,
        "Basic !!!",
        "Basic ",
        "Basic Og==",
        keys.production,
        `Bearer ${keys.widget}`,
        ""
      )
    ),
    query: fc.oneof(
      { weight: 8, arbitrary: queryValue(keys).map((q) => `?query=${q}`) },
      fc.constantFrom("", "?query=", "?query=BIG&query=SMALL")
    )
  }).map((r) => ({
    kind: "widget",
    method: "GET",
    path: `/api/v2/widget-search${r.query}`,
    headers: { host: r.host, authorization: r.authorization }
  }))

const consoleRequest = (keys: Keys): fc.Arbitrary<Hostile> => {
  const id = fc.oneof(
    fc.constant(keys.organisationId),
    fc.constantFrom("0", "-1", "99999999999999999999", "__proto__", "%00", "%ff", "%2e%2e", "1e3"),
    hostileStrings.map(pct)
  )
  const path = fc.oneof(
    fc.constant("/console/organisations"),
    id.map((i) => `/console/organisations/${i}/api-keys`),
    id.map((i) => `/console/organisations/${i}/widget-keys`),
    id.map((i) => `/console/organisations/${i}/automations`),
    id.map((i) => `/console/api-keys/${i === keys.organisationId ? "nope" : i}`),
    id.map((i) => `/console/automations/${i}/enable`),
    id.map((i) => `/console/automations/${i}/test`),
    id.map((i) => `/console/automations/${i}/deliveries?limit=${i}`),
    id.map((i) => `/console/deliveries/${i}/retry`),
    fc.tuple(id, queryValue(keys)).map(([i, r]) => `/console/organisations/${i}/tradeflows/${r}/download`),
    fc.constantFrom(
      "/console",
      "/console/",
      "/console/organisations/",
      "/console//organisations",
      "/console/%2e%2e/health"
    )
  )
  const body = fc.oneof(
    fc.record({
      name: junkValue,
      environment: fc.oneof(fc.constantFrom("production", "uat", "PRODUCTION", "__proto__"), junkValue),
      url: fc.oneof(
        fc.constantFrom(
          "https://example.com/hook",
          "http://127.0.0.1:1/",
          "https://[::1]/",
          "javascript:alert(1)",
          "https://0x7f000001/",
          "file:///etc/passwd"
        ),
        junkValue
      ),
      format: junkValue,
      types: fc.oneof(fc.array(fc.constantFrom("BASIC_STATUS", "CONTAINER_MILESTONE", "__proto__")), junkValue),
      enabled: junkValue
    }, { requiredKeys: [] }).map((o) => ({ body: Buffer.from(JSON.stringify(o)), oversized: false })),
    bodies
  )
  return fc.record({
    method: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("GET", "POST") },
      fc.constantFrom("DELETE", "PUT", "PATCH")
    ),
    path,
    token: fc.constantFrom(
      `Bearer ${consoleToken}`,
      `bearer  ${consoleToken} `,
      consoleToken,
      "Bearer wrong",
      "",
      `Bearer ${consoleToken}x`,
      "Bearer \u00ff"
    ),
    contentType: contentTypes,
    body
  }).map((r) => ({
    kind: "console",
    method: r.method,
    path: r.path,
    headers: { host: "localhost", authorization: r.token, ...withBody({}, r.contentType, r.body.body, false) },
    body: r.body.body,
    oversized: r.body.oversized
  }))
}

const removal = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    prefix: apiPrefix,
    headers: auth(keys),
    reference: fc.oneof(hostileStrings.map(pct), fc.constantFrom("%2a", "*", "%ff", "%00", "__proto__", "a%2fb")),
    query: fc.constantFrom(
      "",
      "?hard=true",
      "?hard=maybe",
      "?confirm=production",
      "?confirm=%00",
      "?hard=true&hard=false",
      "?confirm[]=x"
    )
  }).map((r) => ({
    kind: "delete",
    method: "DELETE",
    path: `${r.prefix}/downstream/tradeflows/${r.reference}${r.query}`,
    headers: r.headers
  }))

const anyRoute = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.record({
    method: fc.oneof(
      fc.constantFrom(
        "GET",
        "POST",
        "PUT",
        "PATCH",
        "DELETE",
        "HEAD",
        "OPTIONS",
        "TRACE",
        "PROPFIND",
        "FOO",
        "M-SEARCH"
      ),
      fc.stringMatching(/^[A-Z]{1,8}$/)
    ),
    path: fc.oneof(
      fc.constantFrom(
        "/",
        "//",
        "/health",
        "/v3/health",
        "/health?x=%zz",
        "/openapi.json",
        "/docs",
        "/v3/v3/upstream",
        "/upstream/",
        "/downstream/tradeflows/",
        "/downstream/scheme/",
        "/api/v2/widget-search/",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f",
        "/downstream%00",
        "/%ff%fe",
        "/\u00ff\u00e9",
        "*",
        "/" + "a".repeat(20_000),
        "/?" + "a=1&".repeat(5_000),
        "/v3",
        "/v4/upstream"
      ),
      fc.array(hostileStrings.map(pct), { maxLength: 4 }).map((s) => "/" + s.join("/"))
    ),
    headers: auth(keys),
    extra: fc.constantFrom<Record<string, string>>(
      {},
      { "x-forwarded-host": "evil.example" },
      { "content-length": "abc" },
      { "content-length": "-1" },
      { expect: "100-continue" },
      { "content-encoding": "gzip" },
      { accept: "application/xml" },
      { "x-http-method-override": "DELETE" },
      { connection: "upgrade", upgrade: "websocket" }
    )
  }).map((r) => ({ kind: "route", method: r.method, path: r.path, headers: { ...r.headers, ...r.extra } }))

const rawRequests = fc.constantFrom(
  "GARBAGE\r\n\r\n",
  "GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  "POST /downstream HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n[]",
  "POST /downstream HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n[]\r\n0\r\n\r\n",
  "POST /downstream HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"tradeflow",
  "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "a".repeat(100_000) + "\r\n\r\n",
  "GET /health HTTP/1.1\r\nHost: localhost\r\nBad\u0000Header: 1\r\n\r\n",
  "GET /health HTTP/9.9\r\n\r\n",
  "GET /health\r\n\r\n",
  "GET /up stream HTTP/1.1\r\nHost: localhost\r\n\r\n",
  "GET /\u0000 HTTP/1.1\r\nHost: localhost\r\n\r\n",
  "GET / HTTP/1.1\r\nHost: localhost\r\n Folded: header\r\n\r\n",
  "GET / HTTP/1.1\nHost: localhost\n\n",
  "POST /downstream HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999999999999\r\n\r\n",
  ""
).map((s): Hostile => ({ kind: "raw", method: "", path: "", headers: {}, raw: Buffer.from(s, "latin1") }))

const hostile = (keys: Keys): fc.Arbitrary<Hostile> =>
  fc.oneof(
    { weight: 6, arbitrary: downstream(keys) },
    { weight: 2, arbitrary: scheme(keys) },
    { weight: 3, arbitrary: upstream(keys) },
    { weight: 1, arbitrary: widget(keys) },
    { weight: 2, arbitrary: consoleRequest(keys) },
    { weight: 1, arbitrary: removal(keys) },
    { weight: 2, arbitrary: anyRoute(keys) },
    { weight: 1, arbitrary: rawRequests }
  )

const describeRequest = (h: Hostile): string => {
  const show = (b: Buffer) => JSON.stringify(b.subarray(0, 160).toString("latin1"))
  return h.raw !== undefined
    ? `raw ${show(h.raw)}`
    : `${h.kind}: ${h.method} ${h.path.slice(0, 160)} ${JSON.stringify(h.headers).slice(0, 300)} body ${
      h.body ? `${h.body.length} B ${show(h.body)}` : "none"
    }`
}

/** A JSON request to the server as node:http sends it, with an explicit Host. */
const json = (
  server: Server,
  method: string,
  path: string,
  host: string,
  authorization: string | undefined,
  body?: unknown
) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const req = request(`${server.base}${path}`, {
      method,
      setHost: false,
      headers: {
        host,
        ...(authorization === undefined ? {} : { authorization }),
        ...(data === undefined ? {} : { "content-type": "application/json", "content-length": String(data.length) })
      }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let parsed: unknown = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed })
      })
    })
    req.on("error", reject)
    req.end(data)
  })

const console_ = { authorization: `Bearer ${consoleToken}` }

const setup = async (server: Server): Promise<Keys> => {
  const organisation = await json(server, "POST", "/console/organisations", "localhost", console_.authorization, {
    name: "Hostile Freight"
  })
  const key = (environment: string) =>
    json(
      server,
      "POST",
      `/console/organisations/${organisation.body.id}/api-keys`,
      "localhost",
      console_.authorization,
      { environment }
    )
  const production = await key("production")
  const uat = await key("uat")
  const revoked = await key("production")
  expect(
    (await json(server, "DELETE", `/console/api-keys/${revoked.body.id}`, "localhost", console_.authorization)).status
  ).toBe(204)
  const widget = await json(
    server,
    "POST",
    `/console/organisations/${organisation.body.id}/widget-keys`,
    "localhost",
    console_.authorization
  )
  expect([organisation.status, production.status, uat.status, widget.status]).toEqual([201, 201, 201, 201])
  const page = await json(server, "GET", "/upstream?per_page=1", "localhost", production.body.key)
  expect(page.status).toBe(200)
  return {
    production: production.body.key,
    uat: uat.body.key,
    revoked: revoked.body.key,
    widget: widget.body.key,
    organisationId: organisation.body.id,
    cursor: page.body.next_cursor
  }
}

/** The jobs of the database: how many are still pending, and the errors of those that ended failed. */
const jobs = (storage: Layer.Layer<Storage.Storage, unknown>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    const pending = (yield* queue.pending(100_000)).length
    const failed: Array<string> = []
    for (let id = 1, missing = 0; missing < 100; id++) {
      const outcome = yield* queue.outcome(id)
      missing = Option.isNone(outcome) ? missing + 1 : 0
      if (Option.isSome(outcome) && outcome.value._tag === "Failed") failed.push(`job ${id}: ${outcome.value.error}`)
    }
    return { pending, failed }
  }).pipe(Effect.provide(storage), Effect.scoped, Effect.runPromise)

/** Posts one valid record and waits until its BASIC_STATUS appears upstream. */
const postAndRead = async (server: Server, host: string, key: string, reference: string) => {
  const accepted = await json(server, "POST", "/v3/downstream/tradeflows", host, key, [{
    tradeflow_reference: reference,
    booking_reference: "BK-1",
    port_of_loading: "CNSHA",
    port_of_discharge: "NLRTM"
  }])
  expect(accepted.status).toBe(202)
  expect(accepted.body).toEqual({ status: "queued", tradeflows: [{ tradeflow_reference: reference, warnings: [] }] })
  for (let i = 0; i < 200; i++) {
    const messages = await json(server, "GET", `/upstream?tradeflow=${encodeURIComponent(reference)}`, host, key)
    expect(messages.status).toBe(200)
    const mine = messages.body as Array<{ type: string; tradeflow_reference?: string }>
    if (mine.length > 0) return mine
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no upstream message for ${reference}`)
}

/** Sends the hostile requests to a running server, then checks it still serves valid work. */
const scenario = async (server: Server, storage: Layer.Layer<Storage.Storage, unknown>) => {
  const port = Number(new URL(server.base).port)
  const keys = await setup(server)
  await postAndRead(server, "localhost", keys.production, "BEFORE-1")
  const seed = Date.now()
  const requests = fc.sample(hostile(keys), { numRuns: runs, seed })
  const findings: Array<string> = []
  for (let batch = 0; batch < requests.length; batch += 50) {
    const queue = requests.slice(batch, batch + 50)
    await Promise.all(Array.from({ length: concurrency }, async () => {
      for (let h = queue.shift(); h !== undefined; h = queue.shift()) {
        const outcome = h.raw !== undefined ? await sendRaw(port, h.raw) : await send(port, h)
        if (outcome.status !== null && outcome.status >= 500) {
          findings.push(`${outcome.status} for ${describeRequest(h)}`)
        } else if (outcome.status === null && h.raw === undefined && !h.oversized) {
          findings.push(`no answer (${outcome.error}) for ${describeRequest(h)}`)
        } else if (
          h.raw === undefined && h.method !== "HEAD" && outcome.status !== null && outcome.status >= 400 &&
          !/^application\/problem\+json/.test(outcome.contentType ?? "") &&
          !(outcome.contentType === "" && (outcome.status === 400 || outcome.status === 431))
        ) {
          findings.push(`${outcome.status} without problem JSON (${outcome.contentType}) for ${describeRequest(h)}`)
        }
      }
    }))
    expect(server.child.exitCode, `server exited (seed ${seed})`).toBeNull()
    const health = await json(server, "GET", "/health", "localhost", undefined)
    expect(health, `health after ${batch + 50} requests (seed ${seed})`).toEqual({
      status: 200,
      body: { status: "ok" }
    })
  }
  expect(findings, `seed ${seed}`).toEqual([])

  expect(server.child.exitCode).toBeNull()
  const production = await postAndRead(server, "localhost", keys.production, "AFTER-PRODUCTION")
  expect(production.map((m) => m.type)).toContain("BASIC_STATUS")
  const uat = await postAndRead(server, "127.0.0.1", keys.uat, "AFTER-UAT-😀")
  expect(uat.map((m) => m.type)).toContain("BASIC_STATUS")
  expect((await json(server, "POST", "/downstream/tradeflows", "localhost", keys.production, {})).status).toBe(422)
  expect(
    (await json(server, "POST", "/downstream", "localhost", keys.production, { tradeflow_reference: "OBJECT" })).status
  ).toBe(422)
  expect((await json(server, "GET", "/upstream", "localhost", undefined)).status).toBe(401)
  expect((await json(server, "GET", "/upstream", "127.0.0.1", keys.production)).status).toBe(403)
  expect((await json(server, "GET", "/upstream?per_page=0", "localhost", keys.production)).status).toBe(400)
  const organisations = await json(server, "GET", "/console/organisations", "localhost", console_.authorization)
  expect(organisations.status).toBe(200)
  expect(
    organisations.body.every((o: Record<string, unknown>) =>
      Object.keys(o).sort().join() === "environment,id,live_organisation_id,name"
    )
  ).toBe(true)
  expect(await jobs(storage), "every accepted request was processed").toEqual({ pending: 0, failed: [] })
  const polluted = await json(server, "GET", "/upstream?tradeflow=POLLUTED", "localhost", keys.production)
  expect(polluted).toEqual({ status: 200, body: [] })
}

describe("hostile input over HTTP", () => {
  it(
    "SQLite: 500 generated hostile requests: no 5xx, no crash, health stays green, valid requests still work",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "tradeflow-hostile-"))
      const file = join(dir, "tracking.sqlite")
      const server = await start(file, { MAX_BODY_BYTES: String(maxBodyBytes), CONSOLE_AUTH_FAILURES: "1000000" })
      try {
        await scenario(server, SqliteStorage.layer({ filename: file }))
      } finally {
        await kill(server)
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000
  )

  it("PostgreSQL: the same, where U+0000 and encodings reach a stricter database", async () => {
    const scope = Effect.runSync(Scope.make())
    let server: Server | undefined
    try {
      const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
      server = await start("", {
        DATABASE_URL: test.url,
        MAX_BODY_BYTES: String(maxBodyBytes),
        PG_MAX_CONNECTIONS: "4",
        CONSOLE_AUTH_FAILURES: "1000000"
      })
      await scenario(server, PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 }))
    } finally {
      if (server !== undefined) await kill(server)
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)
})
