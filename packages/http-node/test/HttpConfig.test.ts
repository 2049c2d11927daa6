import { assert, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { HttpConfig } from "../src/index.js"

const read = (env: Record<string, string>) =>
  HttpConfig.HttpConfig.pipe(
    Effect.provide(HttpConfig.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))
  )

it.effect("layerConfig reads the environment variables of DECISIONS.md §1", () =>
  Effect.gen(function*() {
    const settings = yield* read({
      PRODUCTION_HOSTS: "api.example.com, 10.0.0.1",
      UAT_HOSTS: "uat.example.com",
      CONSOLE_TOKEN: "s3cret",
      TRUST_PROXY: "true",
      WEBHOOK_ALLOW_PRIVATE: "true"
    })
    assert.deepStrictEqual(settings.productionHosts, ["api.example.com", "10.0.0.1"])
    assert.deepStrictEqual(settings.uatHosts, ["uat.example.com"])
    assert.strictEqual(Redacted.value(settings.consoleToken), "s3cret")
    assert.isTrue(settings.trustProxy)
    assert.strictEqual(settings.maxBodyBytes, 5 * 1024 * 1024)
    assert.isTrue(settings.webhookAllowPrivate)
  }))

it.effect("defaults: localhost hosts, uat.localhost, a random console token", () =>
  Effect.gen(function*() {
    const a = yield* read({})
    const b = yield* read({})
    assert.deepStrictEqual(a.productionHosts, ["localhost", "127.0.0.1"])
    assert.deepStrictEqual(a.uatHosts, ["uat.localhost"])
    assert.isFalse(a.trustProxy)
    assert.isFalse(a.webhookAllowPrivate)
    assert.isAtLeast(Redacted.value(a.consoleToken).length, 32)
    assert.notStrictEqual(Redacted.value(a.consoleToken), Redacted.value(b.consoleToken))
  }))
