import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Webhook } from "standardwebhooks"
import { Signing } from "../src/index.js"

const nowSeconds = () => Math.floor(Date.now() / 1000)
const secretArb = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) =>
  `whsec_${Buffer.from(b).toString("base64")}`
)
const idArb = fc.string({ minLength: 1, maxLength: 80 })
const bodyArb = fc.oneof(fc.string({ maxLength: 300 }), fc.fullUnicodeString({ maxLength: 300 }), fc.json())
const skewArb = fc.integer({ min: -240, max: 240 })

describe("Signing", () => {
  it("generateSecret: whsec_ + base64 of 32 random bytes, never twice the same", () => {
    const a = Signing.generateSecret()
    const b = Signing.generateSecret()
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.strictEqual(Buffer.from(a.slice(6), "base64").length, 32)
    assert.notStrictEqual(a, b)
    assert.isTrue(Signing.isValidSecret(a))
  })

  it("sign: the known Standard Webhooks test vector", () => {
    const signature = Signing.sign({
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: "{\"test\": 2432232314}"
    })
    assert.strictEqual(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("invalid secrets are refused", () => {
    for (const secret of ["", "whsec_", "whsec_!!!", "whsec_a"]) assert.isFalse(Signing.isValidSecret(secret), secret)
    assert.throws(() => Signing.sign({ secret: "whsec_", id: "x", timestamp: 1, body: "" }))
  })

  it.prop(
    "the standardwebhooks package accepts our deliveries",
    [secretArb, idArb, bodyArb, skewArb],
    ([secret, id, body, skew]) => {
      const headers = Signing.headers({ secrets: [secret], id, timestamp: nowSeconds() + skew, body })
      assert.isUndefined(new Webhook(secret).verify(body, { ...headers }, { jsonParse: false }))
      assert.isTrue(Signing.verify({ secrets: [secret], headers, body, now: nowSeconds() }))
    }
  )

  it.prop(
    "rotation: with two secrets either one verifies",
    [secretArb, secretArb, idArb, bodyArb],
    ([current, previous, id, body]) => {
      const headers = Signing.headers({ secrets: [current, previous], id, timestamp: nowSeconds(), body })
      assert.strictEqual(headers["webhook-signature"].split(" ").length, 2)
      for (const secret of [current, previous]) {
        new Webhook(secret).verify(body, { ...headers }, { jsonParse: false })
        assert.isTrue(Signing.verify({ secrets: [secret], headers, body, now: nowSeconds() }))
      }
    }
  )

  it.prop("a tampered body, id or timestamp or another secret is rejected", [
    secretArb,
    secretArb,
    idArb,
    bodyArb,
    fc.string({ minLength: 1, maxLength: 5 })
  ], ([secret, other, id, body, extra]) => {
    const now = nowSeconds()
    const headers = Signing.headers({ secrets: [secret], id, timestamp: now, body })
    const tampered = body + extra
    assert.throws(() => new Webhook(secret).verify(tampered, { ...headers }, { jsonParse: false }))
    assert.isFalse(Signing.verify({ secrets: [secret], headers, body: tampered, now }))
    assert.isFalse(Signing.verify({ secrets: [secret], headers: { ...headers, "webhook-id": id + extra }, body, now }))
    assert.isFalse(
      Signing.verify({ secrets: [secret], headers: { ...headers, "webhook-timestamp": String(now + 1) }, body, now })
    )
    if (Buffer.from(other.slice(6), "base64").compare(Buffer.from(secret.slice(6), "base64")) !== 0) {
      assert.throws(() => new Webhook(other).verify(body, { ...headers }, { jsonParse: false }))
      assert.isFalse(Signing.verify({ secrets: [other], headers, body, now }))
    }
  })

  it("bytes and the same string sign alike; stale timestamps fail verify", () => {
    const secret = Signing.generateSecret()
    const body = "{\"a\":\"é✓😀\"}"
    assert.strictEqual(
      Signing.sign({ secret, id: "h1", timestamp: 10, body }),
      Signing.sign({ secret, id: "h1", timestamp: 10, body: new TextEncoder().encode(body) })
    )
    const headers = Signing.headers({ secrets: [secret], id: "h1", timestamp: 1000, body })
    assert.isTrue(Signing.verify({ secrets: [secret], headers, body, now: 1200 }))
    assert.isFalse(Signing.verify({ secrets: [secret], headers, body, now: 1301 }))
  })
})
