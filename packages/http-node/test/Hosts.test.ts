import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc, Option } from "effect"
import { make } from "../src/HttpConfig.js"
import { hostEnvironment, normaliseHost, requestHost } from "../src/internal/hosts.js"
import { allowedMethods, pathPattern, routeOf } from "../src/internal/routes.js"

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/)
const hostname = fc.array(label, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."))
const randomCase = (s: string, flips: ReadonlyArray<boolean>) =>
  [...s].map((c, i) => (flips[i % Math.max(flips.length, 1)] ? c.toUpperCase() : c)).join("")

describe("hosts", () => {
  it.prop("a listed host is its environment with any port and any case", [
    hostname,
    fc.array(fc.boolean(), { minLength: 1 }),
    fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })
  ], ([host, flips, port]) => {
    const settings = make({ consoleToken: "t", productionHosts: [host], uatHosts: [`uat.${host}`] })
    const header = randomCase(host, flips) + (port === undefined ? "" : `:${port}`)
    assert.deepStrictEqual(hostEnvironment(settings, header), Option.some("production"))
    assert.deepStrictEqual(hostEnvironment(settings, `UAT.${header}`), Option.some("uat"))
    assert.deepStrictEqual(hostEnvironment(settings, `x${host}`), Option.none())
  })

  it.prop("IPv6 literals: brackets and port removed", [fc.ipV6(), fc.integer({ min: 1, max: 65535 })], ([ip, port]) => {
    assert.strictEqual(normaliseHost(`[${ip.toUpperCase()}]:${port}`), ip.toLowerCase())
    assert.strictEqual(normaliseHost(`[${ip}]`), ip.toLowerCase())
  })

  it("X-Forwarded-Host only when the proxy is trusted", () => {
    const headers = { host: "internal", "x-forwarded-host": "api.example.com, proxy.internal" }
    assert.strictEqual(requestHost(make({ consoleToken: "t" }), headers), "internal")
    assert.strictEqual(requestHost(make({ consoleToken: "t", trustProxy: true }), headers), "api.example.com")
    assert.deepStrictEqual(hostEnvironment(make({ consoleToken: "t" }), undefined), Option.none())
  })
})

describe("routes", () => {
  it.prop("a :param segment matches exactly one non-empty segment", [
    label,
    fc.string({ minLength: 1 }).filter((s) => !s.includes("/"))
  ], ([prefix, value]) => {
    const pattern = pathPattern(`/${prefix}/:id/x`)
    assert.isTrue(pattern.test(`/${prefix}/${value}/x`))
    assert.isFalse(pattern.test(`/${prefix}//x`))
    assert.isFalse(pattern.test(`/${prefix}/${value}/${value}/x`))
  })

  const routes = [
    ["POST", "/downstream"],
    ["DELETE", "/downstream/tradeflows/:reference"],
    ["GET", "/upstream"]
  ].map(([method, path]) => ({ method: method!, path: path!, pattern: pathPattern(path!) }))

  it("allowed methods of a path", () => {
    assert.deepStrictEqual(allowedMethods(routes, "/downstream"), ["POST"])
    assert.deepStrictEqual(allowedMethods(routes, "/downstream/tradeflows/*"), ["DELETE"])
    assert.deepStrictEqual(allowedMethods(routes, "/nope"), [])
  })

  it("the route of a request names its parameters, not their values", () => {
    assert.strictEqual(routeOf(routes, "DELETE", "/downstream/tradeflows/PO-1"), "/downstream/tradeflows/:reference")
    assert.strictEqual(routeOf(routes, "GET", "/upstream/"), "/upstream")
    assert.isUndefined(routeOf(routes, "GET", "/downstream"))
  })
})
