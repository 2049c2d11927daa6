import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import * as TrackingSourcesFile from "../src/TrackingSourcesFile.js"

const env: Record<string, string> = {
  MAERSK_KEY: "s3cret-key-value",
  HLAG_SECRET: "client-s3cret",
  HLAG_PUSH_TOKEN: "push-s3cret"
}

const secret = (name: string) =>
  env[name] === undefined
    ? Effect.fail(`the environment variable ${name} that the file names is not set`)
    : Effect.succeed(Redacted.make(env[name]!))

const parse = (file: unknown) =>
  Effect.either(TrackingSourcesFile.parse(typeof file === "string" ? file : JSON.stringify(file), secret))

describe("TRACKING_SOURCES_FILE", () => {
  it.effect("the documented minimum takes the defaults; secrets come from the variables the file names", () =>
    Effect.gen(function*() {
      const parsed = yield* parse({
        sources: [
          { id: "maersk", version: "2.2", base_url: "https://api.example/track/", carriers: ["maeu"] },
          {
            id: "hapag",
            version: "3.0",
            base_url: "http://127.0.0.1:9000",
            container_prefixes: ["HLXU"],
            auth: {
              type: "oauth2",
              token_url: "http://127.0.0.1:9000/oauth/token",
              client_id: "us",
              client_secret_env: "HLAG_SECRET"
            },
            rate: { per_minute: 60 },
            push: "consumer",
            consumer_token_env: "HLAG_PUSH_TOKEN"
          },
          {
            id: "keyed",
            version: "2.2",
            base_url: "https://keyed.example",
            carriers: ["CMDU"],
            auth: { type: "api-key", header: "Consumer-Key", value_env: "MAERSK_KEY" }
          }
        ]
      })
      assert.isTrue(Either.isRight(parsed), Either.isLeft(parsed) ? parsed.left : "")
      const [maersk, hapag, keyed] = Either.getOrThrow(parsed)
      assert.deepStrictEqual(
        [maersk?.base_url, maersk?.carriers, maersk?.container_prefixes, maersk?.auth, maersk?.push, maersk?.rate],
        ["https://api.example/track", ["MAEU"], [], { type: "none" }, "none", undefined]
      )
      assert.deepStrictEqual(maersk?.references, [
        "equipment",
        "booking+equipment",
        "bill_of_lading+equipment",
        "booking",
        "bill_of_lading"
      ])
      assert.strictEqual(hapag?.auth.type === "oauth2" && Redacted.value(hapag.auth.client_secret), "client-s3cret")
      assert.strictEqual(hapag?.consumer_token && Redacted.value(hapag.consumer_token), "push-s3cret")
      assert.strictEqual(keyed?.auth.type === "api-key" && Redacted.value(keyed.auth.value), "s3cret-key-value")
    }))

  it.effect("mistakes name the source and the field, and never a secret", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
        ["{not json", /not JSON/],
        [{}, /^sources: is missing/],
        [{ sources: [{ id: "a", version: "2.2", base_url: "https://a.example" }] }, /carriers or container_prefixes/],
        [
          { sources: [{ id: "a", version: "2.1", base_url: "https://a.example", carriers: ["MAEU"] }] },
          /^sources\.0\.version/
        ],
        [
          { sources: [{ id: "a", version: "2.2", base_url: "ftp://a.example", carriers: ["MAEU"] }] },
          /^sources\.0\.base_url/
        ],
        [
          { sources: [{ id: "a", version: "2.2", base_url: "https://a.example", carriers: ["MAERSK1"] }] },
          /^sources\.0\.carriers\.0/
        ],
        [
          {
            sources: [{
              id: "a",
              version: "2.2",
              base_url: "https://a.example",
              carriers: ["MAEU"],
              auth: { type: "api-key", header: "X-Key", value_env: "UNSET_VARIABLE" }
            }]
          },
          /UNSET_VARIABLE that the file names is not set/
        ],
        [
          {
            sources: [
              { id: "a", version: "2.2", base_url: "https://a.example", carriers: ["MAEU"] },
              { id: "a", version: "3.0", base_url: "https://b.example", carriers: ["CMDU"] }
            ]
          },
          /^sources\.1\.id: "a" is used twice/
        ],
        [
          {
            sources: [{
              id: "a",
              version: "2.2",
              base_url: "https://a.example",
              carriers: ["MAEU"],
              auth: { type: "api-key", header: "bad header", value_env: "MAERSK_KEY" }
            }]
          },
          /^sources\.0\.auth/
        ],
        [{
          sources: [{
            id: "a",
            version: "3.0",
            base_url: "https://a.example",
            carriers: ["MAEU"],
            push: "subscription"
          }]
        }, /2\.2/],
        [
          {
            sources: [{ id: "a", version: "3.0", base_url: "https://a.example", carriers: ["MAEU"], push: "consumer" }]
          },
          /^sources\.0\.consumer_token: push consumer needs the token/
        ]
      ]
      for (const [file, message] of cases) {
        const parsed = yield* parse(file)
        assert.isTrue(Either.isLeft(parsed), JSON.stringify(file))
        const text = Either.isLeft(parsed) ? parsed.left : ""
        assert.match(text, message)
        assert.notInclude(text, "s3cret")
      }
    }))
})
