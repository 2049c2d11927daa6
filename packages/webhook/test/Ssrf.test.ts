import { assert, describe, it } from "@effect/vitest"
import { WebhookDestination } from "@tradeflow/core"
import { Effect, Either, FastCheck as fc } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Ssrf } from "../src/index.js"

const refusedForms: ReadonlyArray<readonly [string, Ssrf.Reason]> = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["2130706433", "loopback"],
  ["0x7f000001", "loopback"],
  ["0X7F000001", "loopback"],
  ["0177.0.0.1", "loopback"],
  ["0x7f.0.0.1", "loopback"],
  ["127.1", "loopback"],
  ["127.0.1", "loopback"],
  ["127.0.0.1.", "loopback"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["10.0.0.1", "private"],
  ["10.1", "private"],
  ["167772161", "private"],
  ["0xa000001", "private"],
  ["012.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["0xc0.0xa8.1.1", "private"],
  ["fec0::1", "private"],
  ["169.254.169.254", "link-local"],
  ["0xa9fea9fe", "link-local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf::1", "link-local"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["0.0.0.0", "unspecified"],
  ["0", "unspecified"],
  ["0x", "unspecified"],
  ["::", "unspecified"],
  ["255.255.255.255", "broadcast"],
  ["4294967295", "broadcast"],
  ["::ffff:127.0.0.1", "ipv4-mapped"],
  ["::ffff:7f00:1", "ipv4-mapped"],
  ["[::ffff:7f00:1]", "ipv4-mapped"],
  ["::ffff:10.0.0.1", "ipv4-mapped"],
  ["0:0:0:0:0:ffff:7f00:0001", "ipv4-mapped"],
  ["::127.0.0.1", "ipv4-compatible"],
  ["::7f00:1", "ipv4-compatible"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["64:ff9b::127.0.0.1", "nat64"],
  ["64:ff9b::a00:1", "nat64"],
  ["64:ff9b:1::1", "nat64"],
  ["2002:7f00:1::", "6to4"],
  ["2002:c0a8:101::1", "6to4"],
  ["192.0.2.1", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["2001:db8::1", "documentation"],
  ["240.0.0.1", "reserved"],
  ["0.1.2.3", "reserved"],
  ["198.18.0.1", "reserved"],
  ["2001::1", "reserved"],
  ["100::1", "reserved"],
  ["256.0.0.1", "invalid"],
  ["1.2.3.4.5", "invalid"],
  ["08.0.0.1", "invalid"],
  ["0x1g", "invalid"],
  ["1:2:3", "invalid"],
  ["example.com", "invalid"]
]

const publicForms = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "134744072",
  "0x8080808",
  "8.8.2056",
  "100.63.255.255",
  "100.128.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "169.253.0.1",
  "223.255.255.255",
  "2606:4700:4700::1111",
  "[2a00:1450:4001:82a::200e]",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1"
]

const publicFirstOctet = fc.oneof(
  fc.integer({ min: 1, max: 9 }),
  fc.integer({ min: 11, max: 99 }),
  fc.integer({ min: 101, max: 126 }),
  fc.integer({ min: 128, max: 168 }),
  fc.integer({ min: 170, max: 171 }),
  fc.integer({ min: 173, max: 191 }),
  fc.integer({ min: 193, max: 197 }),
  fc.integer({ min: 199, max: 202 }),
  fc.integer({ min: 204, max: 223 })
)
const publicV4 = fc.tuple(publicFirstOctet, fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c, d]) => ({
  dotted: `${a}.${b}.${c}.${d}`,
  n: ((a << 24) | (b << 16) | (c << 8) | d) >>> 0
}))
const publicV6 = fc.tuple(
  fc.integer({ min: 0x2400, max: 0x2fff }),
  fc.array(fc.nat(0xffff), { minLength: 7, maxLength: 7 })
)
  .map(([first, rest]) => [first, ...rest].map((g) => g.toString(16)).join(":"))

const forms = (n: number): Array<string> => {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
  const hex = (x: number) => x.toString(16)
  return [
    `${a}.${b}.${c}.${d}`,
    String(n),
    `0x${hex(n)}`,
    `0${a.toString(8)}.0${b.toString(8)}.0${c.toString(8)}.0${d.toString(8)}`,
    `${a}.${(b << 16) | (c << 8) | d}`,
    `${a}.${b}.${(c << 8) | d}`,
    `::ffff:${a}.${b}.${c}.${d}`,
    `::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}`,
    `[::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}]`
  ]
}

describe("Ssrf.classify", () => {
  it("refuses every non-public form, with the reason", () => {
    for (const [address, reason] of refusedForms) assert.strictEqual(Ssrf.classify(address), reason, address)
  })

  it("accepts public addresses", () => {
    for (const address of publicForms) assert.strictEqual(Ssrf.classify(address), "public", address)
  })

  it.prop("every address in 10/8 is refused in dotted, decimal, hex, octal, short and mapped-IPv6 forms", [
    fc.nat(0xffffff)
  ], ([low]) => {
    const n = (10 * 2 ** 24 + low) >>> 0
    for (const form of forms(n)) assert.notStrictEqual(Ssrf.classify(form), "public", form)
    for (const form of forms(n).slice(0, 6)) assert.strictEqual(Ssrf.classify(form), "private", form)
  })

  it.prop("every address in 127/8, 169.254/16 and 100.64/10 is refused in every form", [
    fc.nat(0xffffff),
    fc.nat(0xffff),
    fc.nat(0x3fffff)
  ], ([a, b, c]) => {
    for (const n of [127 * 2 ** 24 + a, 0xa9fe0000 + b, 0x64400000 + c]) {
      for (const form of forms(n >>> 0)) assert.notStrictEqual(Ssrf.classify(form), "public", form)
    }
  })

  it.prop(
    "random public IPv4 addresses are accepted (dotted, decimal, hex) and mapped forms refused",
    [publicV4],
    ([{ dotted, n }]) => {
      for (const form of forms(n).slice(0, 6)) assert.strictEqual(Ssrf.classify(form), "public", form)
      assert.strictEqual(Ssrf.classify(dotted), "public")
      assert.strictEqual(Ssrf.classify(`::ffff:${dotted}`), "ipv4-mapped")
    }
  )

  it.prop("random global unicast IPv6 addresses are accepted", [publicV6], ([address]) => {
    assert.strictEqual(Ssrf.classify(address), "public", address)
  })

  it.prop("parseHost reads IPv4 hosts exactly as the WHATWG URL parser does", [
    fc.oneof(
      fc.nat(0xffffffff).chain((n) => fc.constantFrom(...forms(n).slice(0, 6))),
      fc.array(
        fc.oneof(
          fc.nat(300).map(String),
          fc.nat(0xffff).map((x) => `0x${x.toString(16)}`),
          fc.nat(0o777).map((x) => `0${x.toString(8)}`)
        ),
        { minLength: 1, maxLength: 5 }
      ).map((p) => p.join("."))
    )
  ], ([host]) => {
    let expected: string | undefined
    try {
      expected = new URL(`http://${host}/`).hostname
    } catch {
      expected = undefined
    }
    const parsed = Ssrf.parseHost(host)
    if (expected === undefined) assert.strictEqual(parsed._tag, "Invalid", host)
    else assert.deepStrictEqual(parsed, { _tag: "IPv4", address: expected }, host)
  })

  it("parseHost: names, IPv6 normalisation", () => {
    assert.deepStrictEqual(Ssrf.parseHost("Example.COM."), { _tag: "Name", name: "example.com" })
    assert.deepStrictEqual(Ssrf.parseHost("[::FFFF:127.0.0.1]"), { _tag: "IPv6", address: "::ffff:7f00:1" })
    assert.deepStrictEqual(Ssrf.parseHost("2001:0db8:0:0:1:0:0:1"), { _tag: "IPv6", address: "2001:db8::1:0:0:1" })
    assert.deepStrictEqual(Ssrf.parseHost("1.2.3.example"), { _tag: "Name", name: "1.2.3.example" })
    assert.deepStrictEqual(Ssrf.parseHost("1.2.3.0x1g"), { _tag: "Name", name: "1.2.3.0x1g" })
    assert.strictEqual(Ssrf.parseHost("1.2.3.0x1ffffff")._tag, "Invalid")
    assert.strictEqual(Ssrf.parseHost("[1::2::3]")._tag, "Invalid")
  })
})

describe("Ssrf.checkUrl", () => {
  const strict = { allowPrivate: false, allowHttp: false }
  const reason = (url: string, options = strict) =>
    Either.match(Ssrf.checkUrl(url, options), { onLeft: (e) => e.reason, onRight: () => "ok" })

  it("refuses bad schemes, http, credentials and every literal non-public host form", () => {
    assert.strictEqual(reason("ftp://example.com/x"), "scheme")
    assert.strictEqual(reason("file:///etc/passwd"), "scheme")
    assert.strictEqual(reason("not a url"), "invalid-url")
    assert.strictEqual(reason("http://example.com/hook"), "http-not-allowed")
    assert.strictEqual(reason("https://user:pw@example.com/hook"), "credentials")
    assert.strictEqual(reason("https://user@example.com/hook"), "credentials")
    assert.strictEqual(reason("https://localhost/hook"), "loopback")
    assert.strictEqual(reason("https://api.localhost./hook"), "loopback")
    for (
      const host of [
        "127.0.0.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "10.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "169.254.169.254",
        "[fd00::1]",
        "[64:ff9b::a00:1]",
        "100.64.0.1",
        "0.0.0.0",
        "[::]"
      ]
    ) {
      assert.notStrictEqual(reason(`https://${host}:8443/hook`), "ok", host)
    }
  })

  it("accepts public https destinations, and private or http ones only when allowed", () => {
    assert.strictEqual(reason("https://example.com/hook?x=1"), "ok")
    assert.strictEqual(reason("https://8.8.8.8/hook"), "ok")
    assert.strictEqual(reason("https://[2606:4700:4700::1111]/hook"), "ok")
    assert.strictEqual(reason("http://127.0.0.1:9000/hook", { allowPrivate: true, allowHttp: true }), "ok")
    assert.strictEqual(
      reason("http://127.0.0.1:9000/hook", { allowPrivate: true, allowHttp: false }),
      "http-not-allowed"
    )
    assert.strictEqual(reason("https://user:pw@127.0.0.1/hook", { allowPrivate: true, allowHttp: true }), "credentials")
  })

  it("allows only ports 80, 443 and those above 1023, even to private destinations when those are allowed", () => {
    const loose = { allowPrivate: true, allowHttp: true }
    for (const port of [1, 22, 25, 110, 445, 636, 1023]) {
      assert.strictEqual(reason(`https://example.com:${port}/hook`), "port", String(port))
      assert.strictEqual(reason(`http://127.0.0.1:${port}/hook`, loose), "port", String(port))
    }
    for (
      const url of [
        "https://example.com:443/hook",
        "https://example.com:80/hook",
        "https://example.com:1024/hook",
        "https://example.com:65535/hook",
        "https://example.com/hook"
      ]
    ) {
      assert.strictEqual(reason(url), "ok", url)
    }
    assert.strictEqual(reason("http://127.0.0.1:80/hook", loose), "ok")
    assert.strictEqual(reason("http://127.0.0.1/hook", loose), "ok")
  })

  it("allows plain http to the hosts of the allowlist only, and still refuses non-public addresses there", () => {
    const listed = { ...strict, httpHosts: ["hooks.example.com", "127.0.0.1"] }
    assert.strictEqual(reason("http://hooks.example.com/in", listed), "ok")
    assert.strictEqual(reason("http://HOOKS.example.com:8080/in", listed), "ok")
    assert.strictEqual(reason("http://other.example.com/in", listed), "http-not-allowed")
    assert.strictEqual(reason("http://127.0.0.1/in", listed), "loopback")
  })
})

describe("Ssrf.safeLookup", () => {
  const run = (lookup: ReturnType<typeof Ssrf.safeLookup>, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family: number | undefined }>((resolve) =>
      lookup("hook.example", { all }, (err, address, family) => resolve({ err, address, family }))
    )
  const fake = (addresses: Array<string>): Ssrf.Resolver => (_host, _options, callback) =>
    callback(null, addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))

  it("fails with ERR_SSRF_BLOCKED if any resolved address is not public", async () => {
    for (
      const addresses of [["127.0.0.1"], ["8.8.8.8", "10.0.0.1"], ["2606:4700::1", "::ffff:7f00:1"], [
        "169.254.169.254"
      ]]
    ) {
      const { err } = await run(Ssrf.safeLookup({ allowPrivate: false, resolve: fake(addresses) }), false)
      assert.strictEqual(err?.code, "ERR_SSRF_BLOCKED", addresses.join())
      assert.instanceOf(err, Ssrf.SsrfBlockedError)
    }
  })

  it("passes public addresses through in both callback shapes, and private ones when allowed", async () => {
    const single = await run(
      Ssrf.safeLookup({ allowPrivate: false, resolve: fake(["8.8.8.8", "2606:4700::1"]) }),
      false
    )
    assert.deepStrictEqual(single, { err: null, address: "8.8.8.8", family: 4 })
    const all = await run(Ssrf.safeLookup({ allowPrivate: false, resolve: fake(["8.8.8.8", "2606:4700::1"]) }), true)
    assert.deepStrictEqual(all.address, [{ address: "8.8.8.8", family: 4 }, { address: "2606:4700::1", family: 6 }])
    const allowed = await run(Ssrf.safeLookup({ allowPrivate: true, resolve: fake(["10.0.0.1"]) }), false)
    assert.deepStrictEqual(allowed, { err: null, address: "10.0.0.1", family: 4 })
  })

  it("an http.Agent with safeLookup never reaches a local server, unless allowPrivate", async () => {
    let connections = 0
    let requests = 0
    const server = Http.createServer((_req, res) => {
      requests++
      res.end("ok")
    })
    server.on("connection", () => connections++)
    await new Promise<void>((resolve) => server.listen(0, resolve))
    const port = (server.address() as AddressInfo).port
    const get = (allowPrivate: boolean) =>
      new Promise<number | NodeJS.ErrnoException>((resolve) => {
        const agent = new Http.Agent({ lookup: Ssrf.safeLookup({ allowPrivate }) })
        Http.get(`http://localhost:${port}/hook`, { agent }, (res) => {
          res.resume()
          res.on("end", () => resolve(res.statusCode ?? 0))
        }).on("error", (err) => resolve(err))
      })
    try {
      const blocked = await get(false)
      assert.instanceOf(blocked, Error)
      assert.strictEqual((blocked as NodeJS.ErrnoException).code, "ERR_SSRF_BLOCKED")
      assert.strictEqual(connections, 0)
      assert.strictEqual(requests, 0)
      assert.strictEqual(await get(true), 200)
      assert.strictEqual(requests, 1)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("Ssrf.layer", () => {
  const check = (url: string, options: Ssrf.CheckOptions) =>
    Effect.flatMap(WebhookDestination.WebhookDestination, (destinations) => destinations.check(url)).pipe(
      Effect.either,
      Effect.provide(Ssrf.layer(options))
    )

  it.effect("is core's WebhookDestination: refused as checkUrl refuses, with its message", () =>
    Effect.gen(function*() {
      const strict = { allowPrivate: false, allowHttp: false }
      for (const url of ["https://127.0.0.1/hook", "http://example.com/hook", "https://u:p@example.com/", "nope"]) {
        const refused = Either.flip(Ssrf.checkUrl(url, strict))
        const checked = yield* check(url, strict)
        assert.isTrue(Either.isLeft(checked) && Either.isRight(refused), url)
        if (Either.isLeft(checked) && Either.isRight(refused)) {
          assert.deepStrictEqual(
            [checked.left._tag, checked.left.url, checked.left.message],
            ["DestinationRefused", url, refused.right.message]
          )
        }
      }
      assert.isTrue(Either.isRight(yield* check("https://example.com/hook", strict)))
      assert.isTrue(Either.isRight(yield* check("http://127.0.0.1:9000/hook", { allowPrivate: true, allowHttp: true })))
    }))

  it.effect("allows plain http to the hosts of httpHosts, in any case", () =>
    Effect.gen(function*() {
      const options = { allowPrivate: false, allowHttp: false, httpHosts: ["Hooks.Example.com"] }
      assert.isTrue(Either.isRight(yield* check("http://hooks.example.com/in", options)))
      assert.isTrue(Either.isLeft(yield* check("http://other.example.com/in", options)))
    }))
})
