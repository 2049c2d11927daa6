import { assert, describe, it, layer } from "@effect/vitest"
import { Accounts, Mailer, Users } from "@tradeflow/core"
import { Context, Effect, Layer } from "effect"
import { type AddressInfo, createServer } from "node:net"
import { SMTPServer } from "smtp-server"
import { SmtpMailer } from "../src/index.js"
import { makeAppLayer, send } from "./Fixture.js"

interface Received {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly data: string
}

/** A real SMTP server on loopback (smtp-server, RFC 5321) keeping what it receives. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly received: Array<Received>; readonly server: SMTPServer }>((resume) => {
    const received: Array<Received> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => {
          received.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            data: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      }
    })
    server.listen(
      0,
      "127.0.0.1",
      () => resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server }))
    )
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

class Mailbox extends Context.Tag("test/Mailbox")<Mailbox, Effect.Effect.Success<typeof receiver>>() {}

const TestLayer = makeAppLayer().pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(
        Mailbox,
        (mailbox) =>
          SmtpMailer.layer({ url: `smtp://127.0.0.1:${mailbox.port}`, from: "Tradeflow <no-reply@tracking.example>" })
      )
    )
  ),
  Layer.provideMerge(Layer.scoped(Mailbox, receiver))
)

const password = "correct horse battery"
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

layer(TestLayer, { excludeTestServices: true })("invitations by e-mail", (it) => {
  it.effect("with a mailer, an invitation is e-mailed over SMTP with its link, which works once", () =>
    Effect.gen(function*() {
      const users = yield* Users.Users
      const org = yield* Effect.flatMap(Accounts.Accounts, (a) => a.createOrganisation("Mailed <Co>"))
      const { token } = yield* users.invite(Users.operatorToken, org.id, {
        email: "admin@example.com",
        role: "admin",
        uat: false
      })
      const admin = yield* users.accept(token, password, { userAgent: "", address: "" })
      const cookie = `tf_session=${admin.token}`
      const invited = yield* send("POST", `/app/o/${org.id}/members/invite`, {
        text: form({ email: "new.person@example.com", role: "viewer" }),
        contentType: "application/x-www-form-urlencoded",
        headers: { cookie, "sec-fetch-site": "same-origin" }
      })
      assert.strictEqual(invited.status, 303)
      const page = yield* send("GET", invited.headers["location"]!, { headers: { cookie } })
      assert.include(page.text, "An e-mail with this link was sent to them.")
      const { received } = yield* Mailbox
      assert.strictEqual(received.length, 1)
      const mail = received[0]!
      assert.deepStrictEqual([mail.from, mail.to], ["no-reply@tracking.example", ["new.person@example.com"]])
      assert.match(mail.data, /^Subject: You are invited to Mailed <Co>\r?$/m)
      const link = /http:\/\/localhost:8080\/app\/invitations\/([A-Za-z0-9_-]{20,})/.exec(
        mail.data.replace(/=\r?\n/g, "")
      )
      assert.isNotNull(link)
      assert.include(page.text, link![0])
      const accept = () =>
        send("POST", `/app/invitations/${link![1]}`, {
          text: form({ password }),
          contentType: "application/x-www-form-urlencoded",
          headers: { "sec-fetch-site": "same-origin" }
        })
      assert.strictEqual((yield* accept()).status, 303)
      assert.strictEqual((yield* accept()).status, 410)
    }))
})

describe("SmtpMailer", () => {
  it.scoped("with requireTls, a server that offers no STARTTLS gets nothing", () =>
    Effect.gen(function*() {
      const mailbox = yield* receiver
      const failed = yield* Effect.flatMap(
        Mailer.Mailer,
        (m) => m.send({ to: "x@example.com", subject: "s", text: "t" })
      )
        .pipe(
          Effect.flip,
          Effect.provide(SmtpMailer.layer({
            url: `smtp://127.0.0.1:${mailbox.port}`,
            from: "a@example.com",
            requireTls: true
          }))
        )
      assert.strictEqual(failed._tag, "MailFailed")
      assert.deepStrictEqual(mailbox.received, [])
    }))

  it.effect("a server that cannot be reached is a MailFailed that never shows the URL's password", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const s = createServer().listen(0, "127.0.0.1", () => {
            const port = (s.address() as AddressInfo).port
            s.close(() => resolve(port))
          })
        })
      )
      const failed = yield* Effect.flatMap(
        Mailer.Mailer,
        (m) => m.send({ to: "x@example.com", subject: "s", text: "t" })
      ).pipe(
        Effect.flip,
        Effect.provide(SmtpMailer.layer({
          url: `smtp://user:s3cret-pa55@127.0.0.1:${closed}`,
          from: "a@example.com",
          timeoutMillis: 2_000
        }))
      )
      assert.strictEqual(failed._tag, "MailFailed")
      assert.notInclude(failed.detail, "s3cret-pa55")
    }))
})
