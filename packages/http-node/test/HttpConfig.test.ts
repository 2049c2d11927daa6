import { assert, it } from "@effect/vitest"
import { Cause, Config, ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import { HttpConfig } from "../src/index.js"

const token = "s3cret-s3cret-s3cret-s3cret-s3cret"

it.effect("layerConfig takes each option as a Config (omitted ones default), or all of them as one", () =>
  Effect.gen(function*() {
    const settings = yield* HttpConfig.HttpConfig.pipe(
      Effect.provide(HttpConfig.layerConfig({
        consoleToken: Config.redacted("token"),
        productionHosts: Config.string("hosts").pipe(Config.map(HttpConfig.parseHosts)),
        rateLimits: {
          production: {
            apiKey: { quota: Config.integer("rate"), windowSeconds: Config.succeed(7) },
            widgetKey: Config.succeed(null)
          },
          uat: Config.succeed(HttpConfig.defaultRateLimits.uat)
        }
      })),
      Effect.provide(
        Layer.setConfigProvider(ConfigProvider.fromJson({ token, hosts: "api.example.com, 10.0.0.1", rate: 3 }))
      )
    )
    assert.strictEqual(Redacted.value(settings.consoleToken), token)
    assert.deepStrictEqual(settings.productionHosts, ["api.example.com", "10.0.0.1"])
    assert.deepStrictEqual(settings.rateLimits, {
      production: { apiKey: { quota: 3, windowSeconds: 7 }, widgetKey: null },
      uat: { apiKey: { quota: 1200, windowSeconds: 60 }, widgetKey: { quota: 120, windowSeconds: 60 } }
    })
    assert.deepStrictEqual(settings.uatHosts, ["uat.localhost"])
    assert.strictEqual(settings.maxBodyBytes, 5 * 1024 * 1024)
    const whole = yield* HttpConfig.HttpConfig.pipe(
      Effect.provide(HttpConfig.layerConfig(Config.succeed({ consoleToken: token, trustProxy: true })))
    )
    assert.isTrue(whole.trustProxy)
  }))

it.effect("a console token shorter than 32 characters is a configuration error of layerConfig and a defect of layer", () =>
  Effect.gen(function*() {
    const configured = yield* Effect.exit(
      HttpConfig.HttpConfig.pipe(
        Effect.provide(HttpConfig.layerConfig({ consoleToken: Config.succeed("x".repeat(31)) }))
      )
    )
    assert.isTrue(Exit.isFailure(configured) && Cause.isFailType(configured.cause), String(configured))
    assert.include(String(Exit.isFailure(configured) ? Cause.squash(configured.cause) : ""), "at least 32 characters")
    const direct = yield* Effect.exit(
      HttpConfig.HttpConfig.pipe(Effect.provide(HttpConfig.layer({ consoleToken: "short" })))
    )
    assert.isTrue(Exit.isFailure(direct) && Cause.isDie(direct.cause))
  }))
