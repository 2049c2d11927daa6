/**
 * `TRACKING_SOURCES_FILE`: the carriers the standalone server tracks with, a JSON file
 * `{ "sources": [ { … }, … ] }` of DCSA profiles (`DcsaProfile` of `@tradeflow/tracking-dcsa`),
 * where secrets are not written but named: `auth` is `{ "type": "none" }`,
 * `{ "type": "api-key", "header", "value_env" }` or
 * `{ "type": "oauth2", "token_url", "client_id", "client_secret_env" }`, and `consumer_token_env`
 * names the token a `push: "consumer"` carrier sends; the server reads each secret from the
 * environment variable the file names. Each source needs `id`, `version`,
 * `base_url` and at least one of `carriers` / `container_prefixes`; everything else has the
 * defaults `docs/tracking.md` lists. Any mistake stops the start with a message naming the file,
 * the source and the field; a secret is never part of a message.
 *
 * @module
 */
import { DcsaProfile } from "@tradeflow/tracking-dcsa"
import { Config, ConfigError, Effect, ParseResult, Redacted, Schema } from "effect"
import { readFile } from "node:fs/promises"

const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: () => "must be an environment variable's name" })
)

/** `auth` as the file writes it: secrets named by environment variable. */
const FileAuth = Schema.Union(
  Schema.Struct({ type: Schema.Literal("none") }),
  Schema.Struct({ type: Schema.Literal("api-key"), header: Schema.String, value_env: EnvName }),
  Schema.Struct({
    type: Schema.Literal("oauth2"),
    token_url: Schema.String,
    client_id: Schema.String,
    client_secret_env: EnvName,
    scope: Schema.optional(Schema.String),
    client_authentication: Schema.optional(Schema.Literal("basic", "body"))
  })
)

const FileSource = Schema.Struct({ auth: Schema.optional(FileAuth), consumer_token_env: Schema.optional(EnvName) }, {
  key: Schema.String,
  value: Schema.Unknown
}).pipe(Schema.filter((source) =>
  (Array.isArray(source["carriers"]) && source["carriers"].length > 0) ||
    (Array.isArray(source["container_prefixes"]) && source["container_prefixes"].length > 0)
    ? undefined
    : { path: ["carriers"], message: "a source needs carriers or container_prefixes (at least one entry)" }
))

/** The file: `{ "sources": [...] }`. */
const SourcesFile = Schema.Struct({ sources: Schema.Array(FileSource) })

/**
 * The issues of a decoding, one per field, without the values sent (a message of Schema's may quote
 * the value it got, and a profile's holds its secret by then).
 */
const issues = (error: ParseResult.ParseError, prefix: ReadonlyArray<PropertyKey>): string =>
  [
    ...new Set(
      ParseResult.ArrayFormatter.formatErrorSync(error)
        .map((issue) =>
          `${[...prefix, ...issue.path].map(String).join(".")}: ${issue.message.replace(/,? actual [\s\S]*$/, "")}`
        )
    )
  ].join("; ")

/**
 * The profiles of a sources file's text, the secrets read with `secret` (an environment
 * variable's value, redacted), or why it cannot be used.
 */
export const parse = (
  text: string,
  secret: (name: string) => Effect.Effect<Redacted.Redacted<string>, string>
): Effect.Effect<ReadonlyArray<DcsaProfile.DcsaProfile>, string> =>
  Effect.gen(function*() {
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => "not JSON" })
    const file = yield* Schema.decodeUnknown(SourcesFile, { errors: "all" })(json).pipe(
      Effect.mapError((error) => issues(error, []))
    )
    const ids = new Set<string>()
    const profiles: Array<DcsaProfile.DcsaProfile> = []
    for (const [i, source] of file.sources.entries()) {
      const at = `sources.${i}`
      const auth = source.auth
      const withSecrets = auth === undefined || auth.type === "none"
        ? source
        : auth.type === "api-key"
        ? {
          ...source,
          auth: { type: auth.type, header: auth.header, value: Redacted.value(yield* secret(auth.value_env)) }
        }
        : {
          ...source,
          auth: {
            type: auth.type,
            token_url: auth.token_url,
            client_id: auth.client_id,
            client_secret: Redacted.value(yield* secret(auth.client_secret_env)),
            ...(auth.scope === undefined ? {} : { scope: auth.scope }),
            ...(auth.client_authentication === undefined ? {} : { client_authentication: auth.client_authentication })
          }
        }
      const { consumer_token_env, ...rest } = withSecrets
      const withToken = consumer_token_env === undefined
        ? rest
        : { ...rest, consumer_token: Redacted.value(yield* secret(consumer_token_env)) }
      const profile = yield* DcsaProfile.decode(withToken).pipe(Effect.mapError((error) => issues(error, [at])))
      if (ids.has(profile.id)) return yield* Effect.fail(`${at}.id: ${JSON.stringify(profile.id)} is used twice`)
      ids.add(profile.id)
      profiles.push(profile)
    }
    return profiles
  })

/**
 * The profiles of the file `TRACKING_SOURCES_FILE` names (none when it is unset or empty), its
 * secrets read from the environment variables it names; a file that cannot be read or used is a
 * configuration error naming it.
 */
export const profilesConfig: Effect.Effect<ReadonlyArray<DcsaProfile.DcsaProfile>, ConfigError.ConfigError> = Effect
  .gen(function*() {
    const path = yield* Config.string("TRACKING_SOURCES_FILE").pipe(Config.withDefault(""))
    if (path.trim() === "") return []
    const fail = (message: string) =>
      Effect.fail(ConfigError.InvalidData(["TRACKING_SOURCES_FILE"], `${path}: ${message}`))
    const text = yield* Effect.tryPromise(() => readFile(path, "utf8")).pipe(
      Effect.catchAll((error) =>
        fail(`cannot be read (${error.cause instanceof Error ? error.cause.message : "error"})`)
      )
    )
    const secret = (name: string) =>
      Config.redacted(name).pipe(
        Effect.mapError(() => `the environment variable ${name} that the file names is not set`),
        Effect.flatMap((value) =>
          Redacted.value(value).trim() === ""
            ? Effect.fail(`the environment variable ${name} that the file names is empty`)
            : Effect.succeed(value)
        )
      )
    return yield* parse(text, secret).pipe(Effect.catchAll(fail))
  })

/** The configured sources in one line, for the start-up log (no secret in it). */
export const describe = (profiles: ReadonlyArray<DcsaProfile.DcsaProfile>): string =>
  profiles.length === 0
    ? "tracking: no source configured (TRACKING_SOURCES_FILE), production tradeflows are not tracked"
    : `tracking: ${profiles.map((p) => `${p.id} (DCSA ${p.version}, ${p.base_url})`).join(", ")}`
