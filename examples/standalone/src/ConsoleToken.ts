/**
 * The console token of the standalone server: `CONSOLE_TOKEN`, or else a generated one kept in
 * `CONSOLE_TOKEN_FILE` (DECISIONS.md §1).
 */
import { HttpConfig } from "@tradeflow/http-node"
import { Config, ConfigError, Effect, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

const randomToken = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(24))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * The generated console token kept in `file`: read when the file exists, else created there with
 * mode 0600 (its directory too). A file others may read is narrowed to 0600 first.
 */
const tokenFile = (file: string) =>
  Effect.gen(function*() {
    const path = Path.resolve(file)
    const existing = yield* Effect.try(() => {
      const stat = Fs.statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) return undefined
      if ((stat.mode & 0o077) !== 0) Fs.chmodSync(path, 0o600)
      return Fs.readFileSync(path, "utf8").trim()
    })
    if (existing !== undefined && existing !== "") return { path, token: existing, created: false }
    const token = randomToken()
    yield* Effect.try(() => {
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      Fs.writeFileSync(path, token + "\n", { mode: 0o600 })
      Fs.chmodSync(path, 0o600)
    })
    return { path, token, created: true }
  }).pipe(
    Effect.mapError((error) =>
      ConfigError.InvalidData(
        ["CONSOLE_TOKEN_FILE"],
        `cannot keep the console token in ${file}: ${String(error.error)}`
      )
    )
  )

const given = Config.redacted().pipe(
  Config.validate({
    message: `the console token must be at least ${HttpConfig.minConsoleTokenLength} characters long`,
    validation: (t) => Redacted.value(t).length === 0 || Redacted.value(t).length >= HttpConfig.minConsoleTokenLength
  }),
  Config.nested("CONSOLE_TOKEN"),
  Config.option,
  Config.map(Option.filter((t) => Redacted.value(t).length > 0))
)

/**
 * `CONSOLE_TOKEN` (at least 32 characters, else a configuration error), or without it the token
 * kept in `CONSOLE_TOKEN_FILE` (default `./data/console-token`), generated there with mode 0600 on
 * first start; the log names the file, never the token, which only an interactive terminal
 * (stderr) is shown.
 */
export const load: Effect.Effect<Redacted.Redacted<string>, ConfigError.ConfigError> = Effect.gen(function*() {
  const configured = yield* given
  if (Option.isSome(configured)) return configured.value
  const file = yield* Config.string("CONSOLE_TOKEN_FILE").pipe(Config.withDefault("./data/console-token"))
  const { created, path, token } = yield* tokenFile(file)
  yield* Effect.logWarning(
    `CONSOLE_TOKEN is not set; the console token is in ${path} (readable by its owner only${
      created ? ", created now" : ""
    })`
  )
  yield* Effect.sync(() => {
    if (process.stderr.isTTY) process.stderr.write(`console token: ${token}\n`)
  })
  return Redacted.make(token)
})
