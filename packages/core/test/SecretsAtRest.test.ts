import { assert, describe, it } from "@effect/vitest"
import { AutomationStore, Cursor, OrganisationStore, SecretsAtRest, Settings, Storage } from "@tradeflow/core"
import { makeSecretsKey, secretsContract } from "@tradeflow/core/test-kit"
import { type Context, Effect, Either, Encoding, FastCheck as fc, Layer, Option } from "effect"

const key = makeSecretsKey()

describe("SecretsAtRest.parseKey", () => {
  it("reads 32 bytes as hex or base64 (padded or not, standard or url alphabet)", () => {
    const bytes = new Uint8Array(32).map((_, i) => 250 - i)
    const standard = btoa(String.fromCharCode(...bytes))
    for (
      const text of [
        Encoding.encodeHex(bytes),
        Encoding.encodeHex(bytes).toUpperCase(),
        standard,
        standard.replace(/=$/, ""),
        Encoding.encodeBase64Url(bytes),
        ` ${standard}\n`
      ]
    ) assert.deepStrictEqual(SecretsAtRest.parseKey(text), Either.right(bytes), text)
  })

  it("refuses anything else, saying what a key is", () => {
    for (
      const text of [
        "",
        "secret",
        Encoding.encodeHex(new Uint8Array(31)),
        Encoding.encodeHex(new Uint8Array(33)),
        btoa(String.fromCharCode(...new Uint8Array(24))),
        `${"g".repeat(64)}`
      ]
    ) {
      assert.deepStrictEqual(
        SecretsAtRest.parseKey(text),
        Either.left("must be 32 bytes given as 64 hexadecimal digits or as base64 (44 characters)"),
        text
      )
    }
  })
})

describe("SecretsAtRest.makeCipher", () => {
  it.effect.prop("decrypts what it encrypted, only with the same key and place; never the same text twice", [
    fc.string()
  ], ([plaintext]) =>
    Effect.gen(function*() {
      const cipher = yield* SecretsAtRest.makeCipher(key)
      const other = yield* SecretsAtRest.makeCipher(makeSecretsKey())
      const sealed = yield* cipher.encrypt(plaintext, "automation:a")
      assert.match(sealed, /^enc:v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/)
      assert.isTrue(SecretsAtRest.isEncrypted(sealed))
      assert.notStrictEqual(yield* cipher.encrypt(plaintext, "automation:a"), sealed)
      assert.strictEqual(yield* cipher.decrypt(sealed, "automation:a"), plaintext)
      const refused = (effect: Effect.Effect<string, SecretsAtRest.SecretsKeyError>) =>
        Effect.map(Effect.flip(effect), (e) => e.message)
      const message = "the stored secret of automation:a does not decrypt with the configured key"
      assert.strictEqual(yield* refused(other.decrypt(sealed, "automation:a")), message)
      assert.strictEqual(
        yield* refused(cipher.decrypt(sealed, "automation:b")),
        "the stored secret of automation:b does not decrypt with the configured key"
      )
      const at = sealed.length - 5
      const flipped = sealed.slice(0, at) + (sealed[at] === "A" ? "B" : "A") + sealed.slice(at + 1)
      assert.strictEqual(yield* refused(cipher.decrypt(flipped, "automation:a")), message)
      assert.strictEqual(yield* refused(cipher.decrypt(plaintext, "automation:a")), message)
    }), { fastCheck: { numRuns: 20 } })

  it.effect("a secret decrypted once for a place is remembered: reading it again does no AES work", () =>
    Effect.gen(function*() {
      const cipher = yield* SecretsAtRest.makeCipher(key)
      const sealed = yield* cipher.encrypt("whsec_abc", "automation:a")
      const subtle = globalThis.crypto.subtle
      const original: typeof subtle.decrypt = subtle.decrypt.bind(subtle)
      let calls = 0
      const counting = (...args: Parameters<typeof subtle.decrypt>) => {
        calls++
        return original(...args)
      }
      const restore = Object.getOwnPropertyDescriptor(subtle, "decrypt")
      Object.defineProperty(subtle, "decrypt", { value: counting, configurable: true, writable: true })
      try {
        for (let i = 0; i < 3; i++) assert.strictEqual(yield* cipher.decrypt(sealed, "automation:a"), "whsec_abc")
        assert.strictEqual(calls, 1)
        assert.isTrue(Either.isLeft(yield* Effect.either(cipher.decrypt(sealed, "automation:b"))))
        assert.strictEqual(calls, 2)
      } finally {
        if (restore === undefined) delete (subtle as { decrypt?: unknown }).decrypt
        else Object.defineProperty(subtle, "decrypt", restore)
      }
    }))
})

let memory: Context.Context<Storage.Storage> | undefined

/** Everything the in-memory store holds for automations and the secret settings, read around the decorator. */
const memoryText = Effect.suspend(() => {
  if (memory === undefined) return Effect.die("no store")
  const raw = memory
  return Effect.gen(function*() {
    const texts: Array<string> = []
    for (const o of yield* (yield* OrganisationStore.OrganisationStore).list) {
      texts.push(JSON.stringify(yield* (yield* AutomationStore.AutomationStore).list(o.id)))
    }
    for (const name of [Cursor.settingName, SecretsAtRest.checkSetting]) {
      texts.push(Option.getOrElse(yield* (yield* Settings.Settings).get(name), () => ""))
    }
    return texts.join("\n")
  }).pipe(Effect.provide(raw))
})

secretsContract(
  "memory",
  Effect.map(Layer.build(Storage.layerMemory), (context) => {
    memory = context
    return Layer.succeedContext(context)
  }),
  memoryText
)
