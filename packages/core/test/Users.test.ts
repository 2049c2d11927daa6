import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Layer, Option, TestClock } from "effect"
import * as Accounts from "../src/Accounts.js"
import * as Permission from "../src/Permission.js"
import * as Storage from "../src/Storage.js"
import type { Role } from "../src/User.js"
import * as Users from "../src/Users.js"

const cheap = { log2N: 4, r: 8, p: 1 }
const TestLayer = Layer.mergeAll(Users.layer({ passwordCost: cheap }), Accounts.layer).pipe(
  Layer.provideMerge(Storage.layerMemory)
)
const client = { userAgent: "test", address: "127.0.0.1" }
const password = "correct horse battery"
const minute = 60_000
const setupOrgName = "Acme Freight"

/** An operator, a live organisation with its companion, and the operator as actor. */
const setup = Effect.gen(function*() {
  const users = yield* Users.Users
  const accounts = yield* Accounts.Accounts
  const operator = Option.getOrThrow(yield* users.bootstrap("Ops@Example.com", password))
  const org = yield* accounts.createOrganisation(setupOrgName)
  return { users, accounts, operator, org, ops: Users.asActor(operator) }
})

/** Invites `email` as `role` and accepts: the new member's session. */
const join = (ops: Users.Actor, organisationId: string, email: string, role: Role, uat = false) =>
  Effect.gen(function*() {
    const users = yield* Users.Users
    const { token } = yield* users.invite(ops, organisationId, { email, role, uat })
    return yield* users.accept(token, password, client)
  })

describe("Users", () => {
  it.effect.prop(
    "an operator's organisations: live ones oldest first, each followed at once by its (UAT) companion",
    [fc.array(fc.tuple(fc.boolean(), fc.nat(3)), { minLength: 1, maxLength: 8 })],
    ([plan]) =>
      Effect.gen(function*() {
        const { accounts, ops, users } = yield* setup
        const lives = [setupOrgName]
        for (const [withCompanion, wait] of plan) {
          yield* TestClock.adjust(wait * minute)
          const org = yield* accounts.createOrganisation(`org ${lives.length}`)
          lives.push(org.name)
          if (withCompanion) yield* accounts.createApiKey(org.id, "uat")
        }
        const names = (yield* users.accessOf(ops)).map((a) => a.organisation.name)
        assert.deepStrictEqual(names.filter((n) => !n.endsWith(" (UAT)")), lives)
        names.forEach((n, i) => {
          if (n.endsWith(" (UAT)")) assert.strictEqual(`${names[i - 1]} (UAT)`, n)
        })
      }).pipe(Effect.provide(TestLayer)),
    { fastCheck: { numRuns: 20 } }
  )

  it.effect("the first operator is created once, only when no user exists", () =>
    Effect.gen(function*() {
      const users = yield* Users.Users
      const refused = yield* users.bootstrap("ops@example.com", "short").pipe(Effect.flip)
      assert.deepStrictEqual([refused._tag, refused._tag === "InvalidUserRequest" && refused.field], [
        "InvalidUserRequest",
        "password"
      ])
      const first = yield* users.bootstrap("ops@example.com", password)
      assert.isTrue(Option.isSome(first) && first.value.operator)
      assert.isTrue(Option.isNone(yield* users.bootstrap("other@example.com", password)))
      assert.notInclude(Option.getOrThrow(first).password_hash, password)
      assert.match(Option.getOrThrow(first).password_hash, /^scrypt\$4\$8\$1\$/)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("sign-in ignores the e-mail's case; a wrong password and an unknown e-mail fail alike", () =>
    Effect.gen(function*() {
      const { users } = yield* setup
      const signedIn = yield* users.signIn("  ops@EXAMPLE.com ", password, client)
      assert.strictEqual((yield* users.session(signedIn.token)).user.email, "Ops@Example.com")
      const wrong = yield* users.signIn("ops@example.com", `${password}!`, client).pipe(Effect.flip)
      const unknown = yield* users.signIn("nobody@example.com", password, client).pipe(Effect.flip)
      assert.deepStrictEqual(wrong, unknown)
      assert.strictEqual(wrong._tag, "SignInFailed")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a session ends after 30 minutes idle, and 12 hours after sign-in however used", () =>
    Effect.gen(function*() {
      const { users } = yield* setup
      const idle = yield* users.signIn("ops@example.com", password, client)
      yield* TestClock.adjust(29 * minute)
      yield* users.session(idle.token)
      yield* TestClock.adjust(29 * minute)
      yield* users.session(idle.token)
      yield* TestClock.adjust(31 * minute)
      assert.strictEqual((yield* users.session(idle.token).pipe(Effect.flip))._tag, "NotSignedIn")

      const busy = yield* users.signIn("ops@example.com", password, client)
      for (let i = 0; i < 12 * 3 - 1; i++) {
        yield* TestClock.adjust(20 * minute)
        yield* users.session(busy.token)
      }
      yield* TestClock.adjust(20 * minute)
      assert.strictEqual((yield* users.session(busy.token).pipe(Effect.flip))._tag, "NotSignedIn")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("each sign-in is a new token; signing out ends that session alone, everywhere ends the others", () =>
    Effect.gen(function*() {
      const { operator, users } = yield* setup
      const a = yield* users.signIn("ops@example.com", password, client)
      const b = yield* users.signIn("ops@example.com", password, client)
      const c = yield* users.signIn("ops@example.com", password, client)
      assert.strictEqual(new Set([a.token, b.token, c.token]).size, 3)
      yield* users.signOut(a.token)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(users.session(a.token))))
      yield* users.session(b.token)
      yield* users.signOutEverywhere(operator, c.session.id)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(users.session(b.token))))
      yield* users.session(c.token)
      assert.deepStrictEqual((yield* users.sessionsOf(operator)).map((s) => s.id), [c.session.id])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("changing the password checks the current one and ends every other session", () =>
    Effect.gen(function*() {
      const { operator, users } = yield* setup
      const here = yield* users.signIn("ops@example.com", password, client)
      const there = yield* users.signIn("ops@example.com", password, client)
      const wrong = yield* users.changePassword(operator, "not it at all", "a brand new password", here.session.id)
        .pipe(Effect.flip)
      assert.strictEqual(wrong._tag === "InvalidUserRequest" && wrong.field, "current_password")
      yield* users.changePassword(operator, password, "a brand new password", here.session.id)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(users.session(there.token))))
      yield* users.session(here.token)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(users.signIn("ops@example.com", password, client))))
      yield* users.signIn("ops@example.com", "a brand new password", client)
      assert.deepStrictEqual(
        (yield* users.accountAudit(Users.asActor(operator))).map((e) => [e.actor, e.action]),
        [["Ops@Example.com", "password.changed"], ["Ops@Example.com", "operator.created"]]
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an invitation is single-use and expires after 7 days", () =>
    Effect.gen(function*() {
      const { ops, org, users } = yield* setup
      const first = yield* users.invite(ops, org.id, { email: "ana@example.com", role: "member", uat: false })
      const offer = yield* users.offer(first.token)
      assert.deepStrictEqual([offer.email, offer.role, offer.existing, offer.organisation.id], [
        "ana@example.com",
        "member",
        false,
        org.id
      ])
      const weak = yield* users.accept(first.token, "short", client).pipe(Effect.flip)
      assert.strictEqual(weak._tag, "InvalidUserRequest")
      const ana = yield* users.accept(first.token, password, client)
      assert.strictEqual(ana.user.email, "ana@example.com")
      assert.strictEqual(
        (yield* users.accept(first.token, password, client).pipe(Effect.flip))._tag,
        "InvitationUnusable"
      )
      assert.strictEqual((yield* users.offer(first.token).pipe(Effect.flip))._tag, "InvitationUnusable")

      const late = yield* users.invite(ops, org.id, { email: "ben@example.com", role: "viewer", uat: false })
      yield* TestClock.adjust(7 * 24 * 60 * minute)
      assert.strictEqual(
        (yield* users.accept(late.token, password, client).pipe(Effect.flip))._tag,
        "InvitationUnusable"
      )
      assert.strictEqual((yield* users.offer("no such token").pipe(Effect.flip))._tag, "InvitationUnusable")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an invitation for an existing account never checks a password: its holder, signed in, accepts it", () =>
    Effect.gen(function*() {
      const { accounts, ops, org, users } = yield* setup
      const ana = yield* join(ops, org.id, "ana@example.com", "viewer")
      const ben = yield* join(ops, org.id, "ben@example.com", "viewer")
      const other = yield* accounts.createOrganisation("Other Co")
      const second = yield* users.invite(ops, other.id, { email: "ANA@example.com", role: "admin", uat: false })
      assert.isTrue((yield* users.offer(second.token)).existing)
      for (const guess of [password, "a wrong password!!"]) {
        const refused = yield* users.accept(second.token, guess, client).pipe(Effect.flip)
        assert.deepStrictEqual([refused._tag, refused._tag === "InvalidUserRequest" && refused.field], [
          "InvalidUserRequest",
          "email"
        ])
      }
      const wrongPerson = yield* users.acceptAs(second.token, ben.user).pipe(Effect.flip)
      assert.strictEqual(wrongPerson._tag, "InvalidUserRequest")
      yield* users.acceptAs(second.token, ana.user)
      assert.strictEqual((yield* users.acceptAs(second.token, ana.user).pipe(Effect.flip))._tag, "InvitationUnusable")
      const access = yield* users.accessOf(Users.asActor(ana.user))
      assert.deepStrictEqual(access.map((a) => [a.organisation.name, a.role]), [
        ["Acme Freight", "viewer"],
        ["Other Co", "admin"]
      ])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("accepting an invitation keeps a membership held already: an owner invited as viewer stays owner", () =>
    Effect.gen(function*() {
      const { ops, org, users } = yield* setup
      const owner = yield* join(ops, org.id, "owner@example.com", "owner")
      const admin = Users.asActor((yield* join(ops, org.id, "admin@example.com", "admin")).user)
      const demotion = yield* users.invite(admin, org.id, { email: "owner@example.com", role: "viewer", uat: true })
      yield* users.acceptAs(demotion.token, owner.user)
      assert.deepStrictEqual(
        (yield* users.accessOf(Users.asActor(owner.user))).map((a) => [a.organisation.name, a.role]),
        [["Acme Freight", "owner"], ["Acme Freight (UAT)", "viewer"]]
      )
      const withdraw = yield* users.invite(ops, org.id, { email: "x@example.com", role: "owner", uat: false })
      assert.strictEqual(
        (yield* users.withdrawInvitation(admin, org.id, withdraw.invitation.id).pipe(Effect.flip))._tag,
        "NotPermitted"
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("access to the (UAT) companion is granted and withdrawn per user", () =>
    Effect.gen(function*() {
      const { ops, org, users } = yield* setup
      const ana = yield* join(ops, org.id, "ana@example.com", "member", true)
      const ben = yield* join(ops, org.id, "ben@example.com", "member")
      const names = (user: Users.SignedIn) =>
        Effect.map(users.accessOf(Users.asActor(user.user)), (access) => access.map((a) => a.organisation.name))
      assert.deepStrictEqual(yield* names(ana), ["Acme Freight", "Acme Freight (UAT)"])
      assert.deepStrictEqual(yield* names(ben), ["Acme Freight"])
      yield* users.setUatAccess(ops, org.id, ben.user.id, true)
      yield* users.setUatAccess(ops, org.id, ana.user.id, false)
      assert.deepStrictEqual(yield* names(ana), ["Acme Freight"])
      assert.deepStrictEqual(yield* names(ben), ["Acme Freight", "Acme Freight (UAT)"])
      assert.deepStrictEqual(
        (yield* users.members(ops, org.id)).map((m) => [m.email, m.uat]),
        [["ana@example.com", false], ["ben@example.com", true]]
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("each role may do exactly what the matrix says, in its organisation and nowhere else", () =>
    Effect.gen(function*() {
      const { accounts, ops, org, users } = yield* setup
      const other = yield* accounts.createOrganisation("Other Co")
      const expected: Record<Role, ReadonlyArray<Permission.Action>> = {
        viewer: ["read"],
        member: ["read", "operate"],
        admin: ["read", "operate", "configure", "manage_members"],
        owner: ["read", "operate", "configure", "manage_members", "manage_owners"]
      }
      for (const role of ["viewer", "member", "admin", "owner"] as const) {
        const member = Users.asActor((yield* join(ops, org.id, `${role}@example.com`, role)).user)
        for (const action of Permission.actions) {
          const here = yield* Effect.exit(users.authorize(member, org.id, action))
          assert.strictEqual(Exit.isSuccess(here), expected[role].includes(action), `${role} ${action}`)
          const there = yield* users.authorize(member, other.id, action).pipe(Effect.flip)
          assert.deepStrictEqual([there._tag, there._tag === "NotPermitted" && there.role], ["NotPermitted", null])
        }
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an admin manages members below owner; an organisation keeps one owner", () =>
    Effect.gen(function*() {
      const { ops, org, users } = yield* setup
      const owner = yield* join(ops, org.id, "owner@example.com", "owner")
      const admin = Users.asActor((yield* join(ops, org.id, "admin@example.com", "admin")).user)
      const viewer = yield* join(ops, org.id, "viewer@example.com", "viewer")
      yield* users.changeRole(admin, org.id, viewer.user.id, "member")
      const promote = yield* users.changeRole(admin, org.id, viewer.user.id, "owner").pipe(Effect.flip)
      assert.strictEqual(promote._tag, "NotPermitted")
      const demote = yield* users.deactivate(admin, org.id, owner.user.id).pipe(Effect.flip)
      assert.strictEqual(demote._tag, "NotPermitted")
      const inviteOwner = yield* users.invite(admin, org.id, { email: "x@example.com", role: "owner", uat: false })
        .pipe(Effect.flip)
      assert.strictEqual(inviteOwner._tag, "NotPermitted")
      const last = yield* users.changeRole(Users.asActor(owner.user), org.id, owner.user.id, "admin").pipe(Effect.flip)
      assert.strictEqual(last._tag === "InvalidUserRequest" && last.field, "role")
      yield* users.deactivate(admin, org.id, viewer.user.id)
      assert.deepStrictEqual((yield* users.members(ops, org.id)).map((m) => m.email), [
        "owner@example.com",
        "admin@example.com"
      ])
      assert.deepStrictEqual(
        (yield* users.audit(ops, org.id)).map((e) => [e.actor, e.action]).slice(0, 2),
        [["admin@example.com", "member.deactivated"], ["admin@example.com", "member.role_changed"]]
      )
      const viewerAudit = yield* users.audit(Users.asActor(viewer.user), org.id).pipe(Effect.flip)
      assert.strictEqual(viewerAudit._tag, "NotPermitted")
      assert.strictEqual((yield* users.accountAudit(Users.asActor(owner.user)).pipe(Effect.flip))._tag, "NotPermitted")
    }).pipe(Effect.provide(TestLayer)))
})
