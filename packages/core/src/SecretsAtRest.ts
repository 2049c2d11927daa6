/**
 * Secrets at rest: the webhook signing secrets, the stored cursor secret and the secrets of
 * tracking sources' subscriptions encrypted with AES-256-GCM under a configured key, as a decorator
 * over the {@link AutomationStore}, {@link Settings} and {@link TrackingStore} ports (so every
 * storage adapter gets it).
 *
 * A stored secret reads `enc:v1:<iv>:<ciphertext+tag>` (base64url without padding, a random
 * 12-byte IV, the 16-byte tag after the ciphertext). The additional data binds it to its place
 * (`automation:<id>`, `setting:<name>` or `subscription:<source>:<id>`), so a secret copied to
 * another row does not decrypt.
 * The encryption is WebCrypto's (`globalThis.crypto.subtle`), which every JavaScript runtime
 * core runs on provides.
 *
 * Without a key secrets are stored in plaintext, as they always were.
 *
 * @module
 */
import { type Config, type ConfigError, Data, Effect, Either, Encoding, Layer, Option, Redacted } from "effect"
import type { Automation } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import { settingName as cursorSetting } from "./Cursor.js"
import { OrganisationStore } from "./OrganisationStore.js"
import { Settings } from "./Settings.js"
import { StorageError } from "./StorageError.js"
import { type StoredSubscription, TrackingStore } from "./TrackingStore.js"

/** The key cannot be used, or does not open what the database holds; the message says which. */
export class SecretsKeyError extends Data.TaggedError("SecretsKeyError")<{ readonly message: string }> {}

/** How an encrypted secret starts. */
export const prefix = "enc:v1:"

/** The settings that hold secrets (encrypted like the automations' signing secrets). */
export const secretSettings: ReadonlyArray<string> = [cursorSetting]

/**
 * The setting holding a known text encrypted with the key: written by the first start with a
 * key; a start with another key, or without one, stops at it.
 */
export const checkSetting = "secrets_key_check"

const checkText = "tradeflow secrets key check"

/** Whether a stored secret is encrypted (as opposed to plaintext, stored without a key). */
export const isEncrypted = (stored: string): boolean => stored.startsWith(prefix)

/**
 * A key as configured: 32 bytes as 64 hexadecimal digits, or base64 / base64url (with or without
 * padding).
 */
export const parseKey = (text: string): Either.Either<Uint8Array, string> => {
  const trimmed = text.trim()
  const decoded: Option.Option<Uint8Array> = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Either.getRight(Encoding.decodeHex(trimmed))
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
    ? Either.getRight(Encoding.decodeBase64Url(trimmed.replace(/=$/, "").replace(/\+/g, "-").replace(/\//g, "_")))
    : Option.none()
  return Option.isSome(decoded) && decoded.value.length === 32
    ? Either.right(decoded.value)
    : Either.left("must be 32 bytes given as 64 hexadecimal digits or as base64 (44 characters)")
}

/** Encrypts and decrypts secrets with one key; `place` is the additional data (where the secret lives). */
export interface Cipher {
  readonly encrypt: (plaintext: string, place: string) => Effect.Effect<string>
  /** Fails when `stored` is not encrypted with this key for this place (or is not `enc:v1:` at all). */
  readonly decrypt: (stored: string, place: string) => Effect.Effect<string, SecretsKeyError>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const undecryptable = (place: string) =>
  new SecretsKeyError({ message: `the stored secret of ${place} does not decrypt with the configured key` })

/** How many decrypted secrets a {@link Cipher} remembers (all are forgotten when it is full). */
const maxOpened = 10_000

/**
 * A {@link Cipher} over a 32-byte key. A stored secret it has decrypted once for a place is
 * remembered, so reading the same automations again (every ingest request and every job asks for
 * an organisation's enabled automations) costs no AES work; any other text or place is decrypted.
 */
export const makeCipher = (key: Uint8Array): Effect.Effect<Cipher> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.importKey("raw", key, "AES-GCM", false, ["encrypt", "decrypt"])),
    (cryptoKey) => {
      const opened = new Map<string, string>()
      return {
        encrypt: (plaintext, place) =>
          Effect.promise(async () => {
            const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
            const sealed = await globalThis.crypto.subtle.encrypt(
              { name: "AES-GCM", iv, additionalData: encoder.encode(place) },
              cryptoKey,
              encoder.encode(plaintext)
            )
            return `${prefix}${Encoding.encodeBase64Url(iv)}:${Encoding.encodeBase64Url(new Uint8Array(sealed))}`
          }),
        decrypt: (stored, place) => {
          const remembered = opened.get(`${place}\u0000${stored}`)
          if (remembered !== undefined) return Effect.succeed(remembered)
          const [iv, sealed] = stored.startsWith(prefix) ? stored.slice(prefix.length).split(":") : []
          const bytes = Either.all([Encoding.decodeBase64Url(iv ?? "!"), Encoding.decodeBase64Url(sealed ?? "!")])
          if (Either.isLeft(bytes) || bytes.right[0].length !== 12) return Effect.fail(undecryptable(place))
          return Effect.tryPromise({
            try: () =>
              globalThis.crypto.subtle.decrypt(
                { name: "AES-GCM", iv: bytes.right[0], additionalData: encoder.encode(place) },
                cryptoKey,
                bytes.right[1]
              ),
            catch: () => undecryptable(place)
          }).pipe(Effect.map((plain) => {
            const plaintext = decoder.decode(plain)
            if (opened.size >= maxOpened) opened.clear()
            opened.set(`${place}\u0000${stored}`, plaintext)
            return plaintext
          }))
        }
      }
    }
  )

const automationPlace = (a: Automation) => `automation:${a.id}`
const settingPlace = (name: string) => `setting:${name}`

const mapSecrets = <E>(
  a: Automation,
  f: (secret: string) => Effect.Effect<string, E>
): Effect.Effect<Automation, E> => {
  const one = (s: Automation["secrets"][number]) => Effect.map(f(s.secret), (secret) => ({ ...s, secret }))
  const [head, ...tail] = a.secrets
  return Effect.map(Effect.all([one(head), Effect.forEach(tail, one)]), ([h, t]) => ({ ...a, secrets: [h, ...t] }))
}

/** The automation with its secrets encrypted (those already encrypted kept as they are). */
const sealed = (cipher: Cipher, a: Automation) =>
  mapSecrets(a, (s) => isEncrypted(s) ? Effect.succeed(s) : cipher.encrypt(s, automationPlace(a)))

/** The automation with its secrets decrypted (a plaintext one kept as it is). */
const opened = (cipher: Cipher, a: Automation, operation: string) =>
  mapSecrets(a, (s) => isEncrypted(s) ? cipher.decrypt(s, automationPlace(a)) : Effect.succeed(s)).pipe(
    Effect.mapError((cause) => new StorageError({ operation, cause }))
  )

const subscriptionPlace = (s: StoredSubscription) => `subscription:${s.source}:${s.subscription_id}`

/** The subscription with its secret decrypted (a plaintext one kept as it is). */
const openSubscription = (cipher: Cipher, s: StoredSubscription, operation: string) =>
  isEncrypted(s.secret)
    ? Effect.map(
      Effect.mapError(
        cipher.decrypt(s.secret, subscriptionPlace(s)),
        (cause) => new StorageError({ operation, cause })
      ),
      (secret) => ({ ...s, secret })
    )
    : Effect.succeed(s)

/** The {@link TrackingStore} with the subscriptions' secrets encrypted at rest. */
const sealedTracking = (cipher: Cipher, tracking: TrackingStore["Type"]): TrackingStore["Type"] => ({
  ...tracking,
  putSubscription: (s) =>
    Effect.flatMap(
      isEncrypted(s.secret) ? Effect.succeed(s.secret) : cipher.encrypt(s.secret, subscriptionPlace(s)),
      (secret) => tracking.putSubscription({ ...s, secret })
    ),
  subscription: (source, id) =>
    Effect.flatMap(tracking.subscription(source, id), (found) =>
      Option.isSome(found)
        ? Effect.map(openSubscription(cipher, found.value, "TrackingStore.subscription"), Option.some)
        : Effect.succeed(Option.none())),
  subscriptionsOf: (organisationId, reference) =>
    Effect.flatMap(
      tracking.subscriptionsOf(organisationId, reference),
      (all) => Effect.forEach(all, (s) => openSubscription(cipher, s, "TrackingStore.subscriptionsOf"))
    ),
  staleSubscriptions: (limit) =>
    Effect.flatMap(
      tracking.staleSubscriptions(limit),
      (all) => Effect.forEach(all, (s) => openSubscription(cipher, s, "TrackingStore.staleSubscriptions"))
    )
})

const openSetting = (cipher: Cipher, name: string, stored: string, operation: string) =>
  isEncrypted(stored) && secretSettings.includes(name)
    ? Effect.mapError(cipher.decrypt(stored, settingPlace(name)), (cause) => new StorageError({ operation, cause }))
    : Effect.succeed(stored)

const sealSetting = (cipher: Cipher, name: string, value: string) =>
  secretSettings.includes(name) && !isEncrypted(value)
    ? cipher.encrypt(value, settingPlace(name))
    : Effect.succeed(value)

/**
 * Checks the key against the database, encrypts every plaintext secret stored (the automations
 * of every organisation, the secret settings), and answers the decorated ports.
 */
const withKey = (key: Uint8Array) =>
  Effect.gen(function*() {
    const cipher = yield* makeCipher(key)
    const settings = yield* Settings
    const automations = yield* AutomationStore
    const tracking = yield* TrackingStore
    const check = yield* settings.getOrCreate(
      checkSetting,
      yield* cipher.encrypt(checkText, settingPlace(checkSetting))
    )
    const checked = yield* Effect.either(cipher.decrypt(check, settingPlace(checkSetting)))
    if (Either.isLeft(checked) || checked.right !== checkText) {
      return yield* new SecretsKeyError({
        message: "the key is not the one the stored secrets were encrypted with; start with that key"
      })
    }
    for (const name of secretSettings) {
      const stored = yield* settings.get(name)
      if (Option.isSome(stored) && !isEncrypted(stored.value)) {
        yield* settings.set(name, yield* cipher.encrypt(stored.value, settingPlace(name)))
      }
    }
    for (const organisation of yield* (yield* OrganisationStore).list) {
      for (const a of yield* automations.list(organisation.id)) {
        if (a.secrets.some((s) => !isEncrypted(s.secret))) yield* automations.put(yield* sealed(cipher, a))
      }
    }
    return Layer.mergeAll(
      Layer.succeed(TrackingStore, sealedTracking(cipher, tracking)),
      Layer.succeed(
        AutomationStore,
        AutomationStore.of({
          put: (a) => Effect.flatMap(sealed(cipher, a), automations.put),
          get: (id) =>
            Effect.flatMap(automations.get(id), (found) =>
              Option.isSome(found)
                ? Effect.map(opened(cipher, found.value, "AutomationStore.get"), Option.some)
                : Effect.succeed(Option.none())),
          list: (organisationId) =>
            Effect.flatMap(automations.list(organisationId), (all) =>
              Effect.forEach(all, (a) => opened(cipher, a, "AutomationStore.list"))),
          enabled: (organisationId) =>
            Effect.flatMap(automations.enabled(organisationId), (all) =>
              Effect.forEach(all, (a) =>
                opened(cipher, a, "AutomationStore.enabled"))),
          remove: automations.remove
        })
      ),
      Layer.succeed(
        Settings,
        Settings.of({
          getOrCreate: (name, initial) =>
            Effect.flatMap(
              Effect.flatMap(sealSetting(cipher, name, initial), (value) =>
                settings.getOrCreate(name, value)),
              (stored) =>
                openSetting(cipher, name, stored, "Settings.getOrCreate")
            ),
          get: (name) =>
            Effect.flatMap(settings.get(name), (stored) =>
              Option.isSome(stored)
                ? Effect.map(openSetting(cipher, name, stored.value, "Settings.get"), Option.some)
                : Effect.succeed(Option.none())),
          set: (name, value) =>
            Effect.flatMap(sealSetting(cipher, name, value), (sealedValue) => settings.set(name, sealedValue))
        })
      )
    )
  })

/** Without a key: stops when the database holds encrypted secrets, otherwise leaves the ports as they are. */
const withoutKey = Effect.gen(function*() {
  if (Option.isSome(yield* (yield* Settings).get(checkSetting))) {
    return yield* new SecretsKeyError({
      message: "no key is configured, but the stored secrets are encrypted; configure the key they were encrypted with"
    })
  }
  return Layer.effectContext(Effect.context<AutomationStore | Settings | TrackingStore>())
})

/**
 * The {@link AutomationStore}, {@link Settings} and {@link TrackingStore} ports over the stored
 * ones, with secrets (webhook signing secrets, the cursor secret, tracking subscriptions' secrets)
 * encrypted at rest when `key` is given (32 bytes, see {@link parseKey}). Building it checks the
 * key (another key than the one the stored secrets were encrypted with stops it, and so does no
 * key when they are encrypted) and encrypts the secrets still stored in plaintext. Without a key
 * the ports are passed on unchanged.
 */
export const layer = (
  key: Option.Option<Uint8Array>
): Layer.Layer<
  AutomationStore | Settings | TrackingStore,
  SecretsKeyError | StorageError,
  AutomationStore | Settings | OrganisationStore | TrackingStore
> => Layer.unwrapEffect(Option.isSome(key) ? withKey(key.value) : withoutKey)

/**
 * {@link layer} with the key read from `config`: none, or empty, is no encryption; a key that is
 * not 32 bytes in hex or base64 stops it.
 */
export const layerConfig = (
  config: Config.Config<Option.Option<Redacted.Redacted>>
): Layer.Layer<
  AutomationStore | Settings | TrackingStore,
  SecretsKeyError | StorageError | ConfigError.ConfigError,
  AutomationStore | Settings | OrganisationStore | TrackingStore
> =>
  Layer.unwrapEffect(Effect.flatMap(config, (configured) => {
    const text = Option.getOrElse(Option.map(configured, Redacted.value), () => "")
    if (text.trim() === "") return Effect.succeed(layer(Option.none()))
    return Either.match(parseKey(text), {
      onLeft: (message) => Effect.fail(new SecretsKeyError({ message: `the key ${message}` })),
      onRight: (key) => Effect.succeed(layer(Option.some(key)))
    })
  }))
