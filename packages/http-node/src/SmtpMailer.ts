/**
 * The `Mailer` port over SMTP, with nodemailer: invitations e-mailed when a host configures it.
 *
 * @module
 */
import { Mailer } from "@tradeflow/core"
import { Config, type ConfigError, Effect, Layer, Redacted } from "effect"
import { createTransport } from "nodemailer"

/** Options of {@link layer}. */
export interface Options {
  /**
   * The SMTP server as a URL: `smtp://user:password@host:587` (STARTTLS, see `requireTls`) or
   * `smtps://…:465` (TLS from the start). It may carry credentials: keep it redacted.
   */
  readonly url: Redacted.Redacted<string> | string
  /** The sender, e.g. `Tradeflow <no-reply@tracking.example>`. */
  readonly from: string
  /** How long one message may take to hand over (default 15 seconds). */
  readonly timeoutMillis?: number
  /**
   * On `smtp://`, refuse to send unless the server upgrades the connection with STARTTLS (default:
   * true, but false for a loopback host such as a local relay).
   */
  readonly requireTls?: boolean
}

/**
 * A `Mailer` that hands each message to the SMTP server of `options.url`. A failure is a
 * `MailFailed` naming the server's answer or the network error, never the URL's credentials.
 */
export const layer = (options: Options): Layer.Layer<Mailer.Mailer> =>
  Layer.scoped(
    Mailer.Mailer,
    Effect.gen(function*() {
      const url = new URL(Redacted.value(Redacted.isRedacted(options.url) ? options.url : Redacted.make(options.url)))
      const timeout = options.timeoutMillis ?? 15_000
      const secrets = [url.username, url.password, decodeURIComponent(url.username), decodeURIComponent(url.password)]
        .filter((secret) => secret !== "")
      const redact = (text: string) => secrets.reduce((out, secret) => out.replaceAll(secret, "***"), text)
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          createTransport({
            host: url.hostname,
            port: url.port === "" ? (url.protocol === "smtps:" ? 465 : 587) : Number(url.port),
            secure: url.protocol === "smtps:",
            requireTLS: url.protocol === "smtp:" &&
              (options.requireTls ?? !/^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(url.hostname)),
            ...(url.username === ""
              ? {}
              : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
            connectionTimeout: timeout,
            greetingTimeout: timeout,
            socketTimeout: timeout
          })
        ),
        (t) => Effect.sync(() => t.close())
      )
      return Mailer.Mailer.of({
        send: (mail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text }),
            catch: (error) =>
              new Mailer.MailFailed({
                detail: error instanceof Error ? redact(error.message) : "the mail server failed"
              })
          }).pipe(Effect.asVoid, Effect.withSpan("Mailer.send"))
      })
    })
  )

/** {@link layer} with its options read from `config`. */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<Mailer.Mailer, ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
