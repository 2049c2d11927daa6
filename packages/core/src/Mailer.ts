/**
 * Port: sending an e-mail (invitations), with an in-memory adapter that keeps what it was given.
 *
 * @module
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"

/** An e-mail: one recipient, a subject and a plain-text body. */
export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** The mail could not be handed to the mail server; `detail` says why (never a credential). */
export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  detail: Schema.String
}) {}

/**
 * Sends e-mail. Optional: a host provides it (for example `SmtpMailer.layer` of
 * `@tradeflow/http-node`) to have invitations e-mailed; without it the inviter passes the link on.
 */
export class Mailer extends Context.Tag("@tradeflow/core/Mailer")<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<void, MailFailed>
}>() {}

/** A {@link Mailer} in memory: what it sent, oldest first. */
export const makeMemory = Effect.map(Ref.make<ReadonlyArray<Mail>>([]), (sent) => ({
  mailer: Mailer.of({ send: (mail) => Ref.update(sent, (all) => [...all, mail]) }),
  sent: Ref.get(sent)
}))

/** {@link makeMemory}'s mailer as a layer. */
export const layerMemory: Layer.Layer<Mailer> = Layer.effect(Mailer, Effect.map(makeMemory, (m) => m.mailer))
