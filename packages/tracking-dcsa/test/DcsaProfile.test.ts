import { assert, describe, it } from "@effect/vitest"
import { TrackingSource } from "@tradeflow/core"
import { Effect, Either, ParseResult, Redacted, Schema } from "effect"
import * as DcsaProfile from "../src/DcsaProfile.js"

const decode = (input: unknown) => Schema.decodeUnknownEither(DcsaProfile.DcsaProfile)(input)

const problems = (input: unknown): ReadonlyArray<string> => {
  const result = decode(input)
  if (Either.isRight(result)) return assert.fail("expected the profile to be refused")
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((e) => `${e.path.join(".")}: ${e.message}`)
}

const minimal = { id: "carrier", version: "2.2", base_url: "https://api.carrier.example/tnt/" }

describe("DcsaProfile", () => {
  it.effect("a minimal profile: every default", () =>
    Effect.gen(function*() {
      const profile = yield* DcsaProfile.decode(minimal)
      assert.deepStrictEqual(profile, {
        id: "carrier",
        version: "2.2",
        base_url: "https://api.carrier.example/tnt",
        carriers: [],
        container_prefixes: [],
        auth: { type: "none" },
        references: [...TrackingSource.queryKinds] as never,
        classifier_aliases: {},
        pagination: "auto",
        page_size: 100,
        max_pages: 20,
        push: "none",
        overlap_millis: 300_000,
        request_timeout_millis: 30_000
      })
    }))

  it("codes are normalised; secrets are Redacted values, never printed", () => {
    const profile = Either.getOrThrow(decode({
      ...minimal,
      carriers: [" maeu "],
      container_prefixes: ["msku"],
      auth: { type: "oauth2", token_url: "https://id.carrier.example/token", client_id: "me", client_secret: "s3cret" }
    }))
    assert.deepStrictEqual([profile.carriers, profile.container_prefixes], [["MAEU"], ["MSKU"]])
    if (profile.auth.type !== "oauth2") return assert.fail("oauth2")
    assert.strictEqual(Redacted.value(profile.auth.client_secret), "s3cret")
    assert.strictEqual(profile.auth.client_authentication, "basic")
    assert.notInclude(`${String(profile.auth.client_secret)} ${JSON.stringify(profile)}`, "s3cret")
    const key = Either.getOrThrow(decode({ ...minimal, auth: { type: "api-key", header: "Consumer-Key", value: "k" } }))
    assert.notInclude(JSON.stringify(key), "\"k\"")
  })

  it("refused: push of the other version, URLs, codes, aliases, query kinds, sizes", () => {
    assert.deepStrictEqual(problems({ ...minimal, version: "3.0", push: "subscription" }), [
      ": push subscription is DCSA 2.2's: use version 2.2, or push consumer for 3.0"
    ])
    assert.deepStrictEqual(problems({ ...minimal, push: "consumer" }), [
      ": push consumer is DCSA 3.0's: use version 3.0, or push subscription for 2.2"
    ])
    assert.deepStrictEqual(problems({ ...minimal, version: "3.0", push: "consumer" }), [
      "consumer_token: push consumer needs the token the carrier's pushes carry"
    ])
    assert.isTrue(Either.isRight(decode({ ...minimal, version: "3.0", push: "consumer", consumer_token: "t0k3n" })))
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ base_url: "ftp://carrier.example" }, "base_url: must be an absolute http(s) URL without query or fragment"],
      [
        { base_url: "https://carrier.example/?x=1" },
        "base_url: must be an absolute http(s) URL without query or fragment"
      ],
      [{ carriers: ["MAERSK"] }, "carriers.0: must be a SCAC code (2 to 4 letters)"],
      [
        { container_prefixes: ["MSK"] },
        "container_prefixes.0: must be a container owner code (three letters and U, J or Z)"
      ],
      [{ classifier_aliases: { PLAN: "PLANNED" } }, "classifier_aliases.PLAN: "],
      [{ references: ["container"] }, "references.0: "],
      [{ references: [] }, "references: "],
      [{ page_size: 0 }, "page_size: "],
      [{ version: "2.1" }, "version: "],
      [{ auth: { type: "api-key", header: "Bad Header", value: "k" } }, "auth"]
    ]
    for (const [change, expected] of cases) {
      const found = problems({ ...minimal, ...change })
      assert.isTrue(found.some((p) => p.startsWith(expected)), `${JSON.stringify(change)}: ${JSON.stringify(found)}`)
    }
  })
})
