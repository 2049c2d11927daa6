import { assert, describe, it } from "@effect/vitest"
import { HttpConfig } from "@tradeflow/http-node"
import { Cause, ConfigProvider, Effect, Either, Exit, Layer, Logger, Redacted } from "effect"
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { destinationConfig, httpLayerConfig } from "../src/Server.js"

const tokenFile = () => join(mkdtempSync(join(tmpdir(), "tradeflow-token-")), "secrets", "console-token")

const read = (env: Record<string, string>) =>
  HttpConfig.HttpConfig.pipe(
    Effect.provide(
      httpLayerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
    )
  )

const destinations = (env: Record<string, string>) =>
  Effect.withConfigProvider(destinationConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

const readWithToken = (env: Record<string, string>) => Effect.either(read({ CONSOLE_TOKEN: "t".repeat(32), ...env }))

it.effect("httpLayerConfig reads the environment variables of DECISIONS.md §1", () =>
  Effect.gen(function*() {
    const env = {
      PRODUCTION_HOSTS: "api.example.com, 10.0.0.1",
      UAT_HOSTS: "uat.example.com",
      CONSOLE_TOKEN: "s3cret-s3cret-s3cret-s3cret-s3cret",
      TRUST_PROXY: "true",
      WEBHOOK_ALLOW_PRIVATE: "true"
    }
    const settings = yield* read(env)
    assert.deepStrictEqual(settings.productionHosts, ["api.example.com", "10.0.0.1"])
    assert.deepStrictEqual(settings.uatHosts, ["uat.example.com"])
    assert.strictEqual(Redacted.value(settings.consoleToken), "s3cret-s3cret-s3cret-s3cret-s3cret")
    assert.isTrue(settings.trustProxy)
    assert.strictEqual(settings.maxBodyBytes, 5 * 1024 * 1024)
    assert.isTrue((yield* destinations(env)).allowPrivate)
  }))

it.effect("defaults: localhost hosts, uat.localhost, the console on every host, 10 failed authentications a minute", () =>
  Effect.gen(function*() {
    const a = yield* read({ CONSOLE_TOKEN_FILE: tokenFile() })
    assert.deepStrictEqual(a.productionHosts, ["localhost", "127.0.0.1"])
    assert.deepStrictEqual(a.uatHosts, ["uat.localhost"])
    assert.isFalse(a.trustProxy)
    assert.isFalse((yield* destinations({ CONSOLE_TOKEN_FILE: tokenFile() })).allowPrivate)
    assert.deepStrictEqual(a.consoleHosts, [])
    assert.deepStrictEqual(a.consoleFailures, { failures: 10, windowMillis: 60_000 })
    const b = yield* read({
      CONSOLE_TOKEN: "x".repeat(32),
      CONSOLE_HOSTS: "admin.example.com, ops.example.com",
      CONSOLE_AUTH_FAILURES: "3"
    })
    assert.deepStrictEqual(b.consoleHosts, ["admin.example.com", "ops.example.com"])
    assert.deepStrictEqual(b.consoleFailures, { failures: 3, windowMillis: 60_000 })
  }))

it.effect("a CONSOLE_TOKEN shorter than 32 characters stops the start", () =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(read({ CONSOLE_TOKEN: "x".repeat(31) }))
    assert.isTrue(Exit.isFailure(exit))
    assert.include(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""), "CONSOLE_TOKEN")
    assert.include(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""), "at least 32 characters")
    assert.strictEqual(
      (yield* read({ CONSOLE_TOKEN: "x".repeat(32) })).consoleToken.pipe(Redacted.value),
      "x".repeat(32)
    )
  }))

it.effect("without CONSOLE_TOKEN the token is generated into an owner-only file, kept across starts, and never logged", () =>
  Effect.gen(function*() {
    const file = tokenFile()
    const logs: Array<string> = []
    const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
    const first = yield* read({ CONSOLE_TOKEN_FILE: file }).pipe(Effect.provide(logger))
    const token = Redacted.value(first.consoleToken)
    assert.isAtLeast(token.length, 32)
    assert.strictEqual(readFileSync(file, "utf8").trim(), token)
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
    const second = yield* read({ CONSOLE_TOKEN_FILE: file }).pipe(Effect.provide(logger))
    assert.strictEqual(Redacted.value(second.consoleToken), token)
    assert.isNotEmpty(logs)
    assert.isTrue(logs.every((line) => !line.includes(token)), logs.join("\n"))
    assert.isTrue(logs.some((line) => line.includes(file)), logs.join("\n"))
    writeFileSync(file, "t".repeat(40))
    chmodSync(file, 0o644)
    const third = yield* read({ CONSOLE_TOKEN_FILE: file })
    assert.strictEqual(Redacted.value(third.consoleToken), "t".repeat(40))
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
  }))

describe("WIDGET_SUNSET", () => {
  it.effect("unset or empty: no sunset; an ISO 8601 instant is read; anything else is a configuration error", () =>
    Effect.gen(function*() {
      const unset = yield* readWithToken({})
      assert.isTrue(Either.isRight(unset) && unset.right.widgetSunset === null)
      const empty = yield* readWithToken({ WIDGET_SUNSET: " " })
      assert.isTrue(Either.isRight(empty) && empty.right.widgetSunset === null)
      const set = yield* readWithToken({ WIDGET_SUNSET: "2027-06-30T14:00:00+02:00" })
      assert.strictEqual(Either.isRight(set) && set.right.widgetSunset?.toISOString(), "2027-06-30T12:00:00.000Z")
      for (const bad of ["tomorrow", "2027-13-01T00:00:00Z", "1719748800"]) {
        const error = yield* readWithToken({ WIDGET_SUNSET: bad })
        assert.isTrue(Either.isLeft(error), bad)
        assert.include(String(Either.isLeft(error) && error.left), "WIDGET_SUNSET")
      }
    }))
})

describe("RATE_LIMIT_API_* and RATE_LIMIT_WIDGET_*", () => {
  it.effect("defaults per environment and kind; <requests>/<seconds> and off are read; anything else names the variable", () =>
    Effect.gen(function*() {
      const unset = yield* readWithToken({ WIDGET_SEARCH_RATE: "3", WIDGET_SEARCH_BURST: "5" })
      assert.deepStrictEqual(
        Either.map(unset, (s) => s.rateLimits),
        Either.right({
          production: { apiKey: { quota: 6000, windowSeconds: 60 }, widgetKey: { quota: 600, windowSeconds: 60 } },
          uat: { apiKey: { quota: 1200, windowSeconds: 60 }, widgetKey: { quota: 120, windowSeconds: 60 } }
        })
      )
      const set = yield* readWithToken({
        RATE_LIMIT_API_PRODUCTION: " 100 / 1 ",
        RATE_LIMIT_API_UAT: "OFF",
        RATE_LIMIT_WIDGET_PRODUCTION: "off",
        RATE_LIMIT_WIDGET_UAT: "5/86400"
      })
      assert.deepStrictEqual(
        Either.map(set, (s) => s.rateLimits),
        Either.right({
          production: { apiKey: { quota: 100, windowSeconds: 1 }, widgetKey: null },
          uat: { apiKey: null, widgetKey: { quota: 5, windowSeconds: 86400 } }
        })
      )
      for (
        const [name, bad] of [
          ["RATE_LIMIT_API_PRODUCTION", "6000"],
          ["RATE_LIMIT_API_UAT", "0/60"],
          ["RATE_LIMIT_WIDGET_PRODUCTION", "10/0"],
          ["RATE_LIMIT_WIDGET_UAT", "10/86401"],
          ["RATE_LIMIT_API_PRODUCTION", "-1/60"],
          ["RATE_LIMIT_API_UAT", "unlimited"]
        ] as const
      ) {
        const error = yield* readWithToken({ [name]: bad })
        assert.isTrue(Either.isLeft(error), `${name}=${bad}`)
        assert.include(String(Either.isLeft(error) && error.left), name)
      }
    }))
})
