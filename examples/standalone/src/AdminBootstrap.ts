/**
 * The first operator of the standalone server: `ADMIN_EMAIL` and `ADMIN_PASSWORD` at start create
 * the operator account when no user exists yet (docs/console.md). The password is never logged.
 */
import { Users } from "@tradeflow/core"
import { Config, ConfigError, Effect, Option, Redacted } from "effect"

/**
 * Creates the operator of `ADMIN_EMAIL` / `ADMIN_PASSWORD` when both are set and no user exists;
 * logs what it did. One set without the other, or a value the account rules refuse, is a
 * configuration error (the server does not start).
 */
export const bootstrap = Effect.gen(function*() {
  const email = yield* Config.option(Config.string("ADMIN_EMAIL"))
  const password = yield* Config.option(Config.redacted("ADMIN_PASSWORD"))
  if (Option.isNone(email) && Option.isNone(password)) return
  if (Option.isNone(email) || Option.isNone(password)) {
    return yield* Effect.fail(ConfigError.MissingData(
      [Option.isNone(email) ? "ADMIN_EMAIL" : "ADMIN_PASSWORD"],
      "ADMIN_EMAIL and ADMIN_PASSWORD create the first operator together: set both, or neither"
    ))
  }
  const users = yield* Users.Users
  const created = yield* users.bootstrap(email.value, Redacted.value(password.value)).pipe(
    Effect.catchTag("InvalidUserRequest", (error) =>
      Effect.fail(ConfigError.InvalidData(
        [error.field === "email" ? "ADMIN_EMAIL" : "ADMIN_PASSWORD"],
        error.detail
      )))
  )
  yield* Option.isSome(created)
    ? Effect.logInfo(`created the operator account ${created.value.email} (ADMIN_EMAIL)`)
    : Effect.logInfo("users exist already: ADMIN_EMAIL and ADMIN_PASSWORD were not used")
})
