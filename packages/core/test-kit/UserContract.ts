/**
 * The contract of the `UserStore` port (users, memberships, sessions, invitations, the audit log):
 * one suite every adapter (memory, SQLite, PostgreSQL) must pass, beside `storageContract`.
 *
 * The suite shares one layer for all its tests, and must have its database to itself: its first
 * test asks `hasUsers` of the store while it is empty. Every test works on fresh ids and e-mails.
 * What the port answers across everything is looked at only for the test's own rows: `listUsers`
 * is filtered by id; `deleteEndedSessions` removes the ended sessions of every test, so a test only
 * counts on the sessions it made since; the audit entries without an organisation and `seq` are
 * shared by all tests, which run one at a time, so a test reads those above a marker it appended
 * first. Instants are passed explicitly: nothing here sleeps.
 *
 * @module
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import { Effect, FastCheck as fc, type Layer, Option } from "effect"
import type { AuditEntry, Invitation, Membership, Role, SessionRecord, User } from "../src/User.js"
import { UserStore } from "../src/UserStore.js"
import { freshId, type StorageContractOptions } from "./StorageContract.js"

const at = 1_700_000_000_000

/** A new user of a fresh e-mail (its `email_key` the e-mail in lower case), with defaults for the rest. */
export const makeUser = (fields: Partial<User> = {}): User => {
  const email = fields.email ?? `${freshId("User")}@Example.com`
  return {
    id: freshId("user"),
    email,
    email_key: email.toLowerCase(),
    password_hash: `scrypt$${freshId("hash")}`,
    operator: false,
    created_at: at,
    ...fields
  }
}

/** A membership of a user in an organisation, `viewer` unless given. */
export const makeMembership = (
  user_id: string,
  organisation_id: string,
  fields: Partial<Membership> = {}
): Membership => ({ user_id, organisation_id, role: "viewer", created_at: at, ...fields })

/** A session of a user with a fresh id and token hash, created and last seen at `at`, ending a day later. */
export const makeSession = (user_id: string, fields: Partial<SessionRecord> = {}): SessionRecord => ({
  id: freshId("session"),
  token_hash: freshId("sha256"),
  user_id,
  created_at: at,
  last_seen_at: at,
  expires_at: at + 86_400_000,
  user_agent: "Mozilla/5.0",
  address: "127.0.0.1",
  ...fields
})

/** An unaccepted invitation to an organisation with a fresh id and token hash, expiring a week after `at`. */
export const makeInvitation = (organisation_id: string, fields: Partial<Invitation> = {}): Invitation => ({
  id: freshId("invitation"),
  token_hash: freshId("sha256"),
  organisation_id,
  email: `${freshId("invitee")}@example.com`,
  role: "member",
  uat: false,
  invited_by: "owner@example.com",
  created_at: at,
  expires_at: at + 7 * 86_400_000,
  accepted_at: null,
  ...fields
})

/** An audit entry of an organisation (null: of an account or the operator area). */
export const makeAuditEntry = (
  organisation_id: string | null,
  fields: Partial<Omit<AuditEntry, "seq">> = {}
): Omit<AuditEntry, "seq"> => ({
  organisation_id,
  actor: "owner@example.com",
  action: "member.invited",
  target: freshId("target"),
  at,
  ...fields
})

type Acceptance = Parameters<UserStore["Type"]["acceptInvitation"]>[0]

/** What `acceptInvitation` is given, at `at + 1` with nothing to store but the acceptance unless given. */
const acceptance = (invitationId: string, fields: Partial<Acceptance> = {}): Acceptance => ({
  invitationId,
  at: at + 1,
  user: null,
  memberships: [],
  audit: [],
  ...fields
})

/** The users of these ids among `users`, in their order (the port's lists hold every test's users). */
const mine = (users: ReadonlyArray<User>, ids: ReadonlyArray<string>) => users.filter((u) => ids.includes(u.id))

/**
 * Appends a marker entry to an organisation of its own and answers its seq: every entry appended
 * after it (in this suite, whose tests run one at a time) has a higher seq.
 */
const auditMarker = Effect.gen(function*() {
  const store = yield* UserStore
  const org = freshId("marker")
  yield* store.appendAudit([makeAuditEntry(org)])
  const [marker] = yield* store.auditOf({ organisationIds: [org], limit: 1 })
  if (marker === undefined) return yield* Effect.dieMessage("the marker entry was not read back")
  return marker.seq
})

/** `text` with the letters whose `upper` flag is set in upper case and the others in lower case. */
const withCase = (text: string, upper: ReadonlyArray<boolean>) =>
  [...text].map((c, i) => upper[i % upper.length] === true ? c.toUpperCase() : c.toLowerCase()).join("")

const roleArbitrary: fc.Arbitrary<Role> = fc.constantFrom("viewer", "member", "admin", "owner")

type MembershipOp =
  | { readonly _tag: "Put"; readonly user: number; readonly org: number; readonly role: Role }
  | { readonly _tag: "Remove"; readonly user: number; readonly org: number }

const membershipOp: fc.Arbitrary<MembershipOp> = fc.oneof(
  {
    arbitrary: fc.record({
      _tag: fc.constant("Put" as const),
      user: fc.integer({ min: 0, max: 2 }),
      org: fc.integer({ min: 0, max: 2 }),
      role: roleArbitrary
    }),
    weight: 3
  },
  {
    arbitrary: fc.record({
      _tag: fc.constant("Remove" as const),
      user: fc.integer({ min: 0, max: 2 }),
      org: fc.integer({ min: 0, max: 2 })
    }),
    weight: 1
  }
)

type SessionOp =
  | { readonly _tag: "Insert"; readonly user: number; readonly lastSeen: number; readonly expires: number }
  | { readonly _tag: "Touch"; readonly session: number; readonly at: number }
  | { readonly _tag: "Delete"; readonly user: number; readonly session: number }
  | { readonly _tag: "DeleteOfUser"; readonly user: number; readonly except: number | null }
  | { readonly _tag: "DeleteEnded"; readonly idleBefore: number; readonly now: number }

/** Few instants, so that bounds (idle since exactly `idleBefore`, expiring exactly `now`) are often met. */
const instant = fc.integer({ min: 0, max: 6 })

const sessionOp: fc.Arbitrary<SessionOp> = fc.oneof(
  {
    arbitrary: fc.record({
      _tag: fc.constant("Insert" as const),
      user: fc.integer({ min: 0, max: 1 }),
      lastSeen: instant,
      expires: instant
    }),
    weight: 4
  },
  { arbitrary: fc.record({ _tag: fc.constant("Touch" as const), session: fc.nat(9), at: instant }), weight: 2 },
  {
    arbitrary: fc.record({
      _tag: fc.constant("Delete" as const),
      user: fc.integer({ min: 0, max: 1 }),
      session: fc.nat(9)
    }),
    weight: 2
  },
  {
    arbitrary: fc.record({
      _tag: fc.constant("DeleteOfUser" as const),
      user: fc.integer({ min: 0, max: 1 }),
      except: fc.option(fc.nat(9), { nil: null })
    }),
    weight: 1
  },
  { arbitrary: fc.record({ _tag: fc.constant("DeleteEnded" as const), idleBefore: instant, now: instant }), weight: 1 }
)

/**
 * Registers the `UserStore` contract tests for an adapter. `layer` is built once for the suite,
 * on a database of its own (see the module notes).
 */
export const userContract = (
  name: string,
  layer: Layer.Layer<UserStore, unknown>,
  options: Pick<StorageContractOptions, "numRuns"> = {}
): void =>
  sharedLayer(layer, { timeout: "30 seconds", excludeTestServices: true })(`user contract: ${name}`, (it) => {
    const numRuns = options.numRuns ?? 25
    const props = { fastCheck: { numRuns } }

    it.effect("hasUsers: false on an empty store, true once a user is stored", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        expect(yield* store.hasUsers).toBe(false)
        expect(yield* store.listUsers).toEqual([])
        expect(yield* store.insertUser(makeUser())).toBe(true)
        expect(yield* store.hasUsers).toBe(true)
      }))

    it.effect("users: insert, get by id, find by email_key; a duplicate email_key stores nothing", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const user = makeUser({ operator: true, created_at: at + 5 })
        expect(yield* store.insertUser(user)).toBe(true)
        expect(yield* store.getUser(user.id)).toEqual(Option.some(user))
        expect(yield* store.findUserByEmail(user.email_key)).toEqual(Option.some(user))
        // the lookup is by the key as given: the e-mail as typed is not its key
        expect(yield* store.findUserByEmail(user.email)).toEqual(Option.none())
        expect(yield* store.getUser(freshId("user"))).toEqual(Option.none())
        expect(yield* store.findUserByEmail(`${freshId("nobody")}@example.com`)).toEqual(Option.none())

        const twin = makeUser({ email: user.email.toUpperCase(), email_key: user.email_key, operator: false })
        expect(yield* store.insertUser(twin)).toBe(false)
        expect(yield* store.getUser(twin.id)).toEqual(Option.none())
        expect(yield* store.findUserByEmail(user.email_key)).toEqual(Option.some(user))
        expect(mine(yield* store.listUsers, [user.id, twin.id])).toEqual([user])
      }))

    it.effect("listUsers: every user, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [a, b, c] = [
          makeUser({ created_at: at + 30 }),
          makeUser({ created_at: at + 10 }),
          makeUser({ created_at: at + 20 })
        ]
        for (const u of [a, b, c]) expect(yield* store.insertUser(u)).toBe(true)
        const ids = [a, b, c].map((u) => u.id)
        expect(mine(yield* store.listUsers, ids)).toEqual([b, c, a])
        const all = yield* store.listUsers
        expect(all.map((u) => u.created_at)).toEqual(all.map((u) => u.created_at).sort((x, y) => x - y))
      }))

    it.effect.prop(
      "users: of any e-mails in any case, one user per email_key is stored, the first inserted",
      [
        fc.array(
          fc.record({
            name: fc.constantFrom("ada.lovelace", "grace.hopper", "alan.turing"),
            upper: fc.array(fc.boolean(), { minLength: 1, maxLength: 24 }),
            created: fc.integer({ min: 0, max: 1_000 })
          }),
          { maxLength: 10 }
        )
      ],
      ([attempts]) =>
        Effect.gen(function*() {
          const store = yield* UserStore
          const run = freshId("run").toLowerCase()
          const firsts = new Map<string, User>()
          const inserted: Array<User> = []
          for (const { created, name, upper } of attempts) {
            const email = withCase(`${name}+${run}@example.com`, upper)
            const user = makeUser({ email, email_key: email.toLowerCase(), created_at: at + created })
            inserted.push(user)
            const first = !firsts.has(user.email_key)
            if (first) firsts.set(user.email_key, user)
            expect(yield* store.insertUser(user)).toBe(first)
          }
          for (const [key, user] of firsts) expect(yield* store.findUserByEmail(key)).toEqual(Option.some(user))
          for (const user of inserted) {
            expect(yield* store.getUser(user.id)).toEqual(
              firsts.get(user.email_key) === user ? Option.some(user) : Option.none()
            )
          }
          const stored = mine(yield* store.listUsers, inserted.map((u) => u.id))
          expect(stored.length).toBe(firsts.size)
          expect(new Set(stored.map((u) => u.email_key)).size).toBe(stored.length)
          expect([...stored].sort((x, y) => x.created_at - y.created_at)).toEqual(stored)
        }),
      props
    )

    it.effect("setPassword: changes the password hash alone; an unknown user is no failure", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [user, other] = [makeUser(), makeUser()]
        yield* store.insertUser(user)
        yield* store.insertUser(other)
        yield* store.setPassword(user.id, "scrypt$changed")
        expect(yield* store.getUser(user.id)).toEqual(Option.some({ ...user, password_hash: "scrypt$changed" }))
        expect(yield* store.findUserByEmail(user.email_key)).toEqual(
          Option.some({ ...user, password_hash: "scrypt$changed" })
        )
        expect(yield* store.getUser(other.id)).toEqual(Option.some(other))
        yield* store.setPassword(freshId("user"), "scrypt$nobody")
      }))

    it.effect("memberships: put inserts, then changes the role only (created_at kept); remove answers whether there was one", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [user, org] = [freshId("user"), freshId("org")]
        const membership = makeMembership(user, org, { role: "viewer", created_at: at + 10 })
        yield* store.putMembership(membership)
        expect(yield* store.membershipsOfUser(user)).toEqual([membership])
        expect(yield* store.membersOf(org)).toEqual([membership])

        yield* store.putMembership({ ...membership, role: "admin", created_at: at + 99 })
        const changed = { ...membership, role: "admin" as const }
        expect(yield* store.membershipsOfUser(user)).toEqual([changed])
        expect(yield* store.membersOf(org)).toEqual([changed])

        expect(yield* store.removeMembership(user, freshId("org"))).toBe(false)
        expect(yield* store.removeMembership(freshId("user"), org)).toBe(false)
        expect(yield* store.removeMembership(user, org)).toBe(true)
        expect(yield* store.removeMembership(user, org)).toBe(false)
        expect(yield* store.membershipsOfUser(user)).toEqual([])
        expect(yield* store.membersOf(org)).toEqual([])

        yield* store.putMembership({ ...membership, role: "owner", created_at: at + 50 })
        expect(yield* store.membersOf(org)).toEqual([{ ...membership, role: "owner", created_at: at + 50 }])
      }))

    it.effect("memberships: of a user and of an organisation, oldest first, only their own", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [u, v] = [freshId("user"), freshId("user")]
        const [a, b, c] = [freshId("org"), freshId("org"), freshId("org")]
        const ua = makeMembership(u, a, { role: "owner", created_at: at + 30 })
        const ub = makeMembership(u, b, { role: "member", created_at: at + 10 })
        const uc = makeMembership(u, c, { created_at: at + 20 })
        const va = makeMembership(v, a, { role: "admin", created_at: at + 5 })
        for (const m of [ua, ub, uc, va]) yield* store.putMembership(m)
        expect(yield* store.membershipsOfUser(u)).toEqual([ub, uc, ua])
        expect(yield* store.membershipsOfUser(v)).toEqual([va])
        expect(yield* store.membersOf(a)).toEqual([va, ua])
        expect(yield* store.membersOf(b)).toEqual([ub])
        expect(yield* store.membershipsOfUser(freshId("user"))).toEqual([])
        expect(yield* store.membersOf(freshId("org"))).toEqual([])
        // a role change keeps the place
        yield* store.putMembership({ ...ub, role: "viewer", created_at: at + 100 })
        expect(yield* store.membershipsOfUser(u)).toEqual([{ ...ub, role: "viewer" }, uc, ua])
      }))

    it.effect.prop(
      "memberships: after any puts and removals, each user's and organisation's are the model's, oldest first",
      [fc.array(membershipOp, { maxLength: 16 })],
      ([ops]) =>
        Effect.gen(function*() {
          const store = yield* UserStore
          const users = [0, 1, 2].map(() => freshId("user"))
          const orgs = [0, 1, 2].map(() => freshId("org"))
          const model = new Map<string, Membership>()
          for (const [i, op] of ops.entries()) {
            const key = JSON.stringify([op.user, op.org])
            if (op._tag === "Remove") {
              expect(yield* store.removeMembership(users[op.user]!, orgs[op.org]!)).toBe(model.delete(key))
              continue
            }
            const put = makeMembership(users[op.user]!, orgs[op.org]!, { role: op.role, created_at: at + i })
            yield* store.putMembership(put)
            const before = model.get(key)
            model.set(key, before === undefined ? put : { ...before, role: op.role })
          }
          const oldestFirst = (ms: Array<Membership>) => ms.sort((x, y) => x.created_at - y.created_at)
          for (const user of users) {
            expect(yield* store.membershipsOfUser(user)).toEqual(
              oldestFirst([...model.values()].filter((m) => m.user_id === user))
            )
          }
          for (const org of orgs) {
            expect(yield* store.membersOf(org)).toEqual(
              oldestFirst([...model.values()].filter((m) => m.organisation_id === org))
            )
          }
        }),
      props
    )

    it.effect("sessions: insert, find by token hash, touch moves last_seen_at forward only", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const user = freshId("user")
        const session = makeSession(user, { last_seen_at: at + 100 })
        yield* store.insertSession(session)
        expect(yield* store.findSessionByHash(session.token_hash)).toEqual(Option.some(session))
        expect(yield* store.findSessionByHash(freshId("sha256"))).toEqual(Option.none())

        yield* store.touchSession(session.id, at + 200)
        expect(yield* store.findSessionByHash(session.token_hash)).toEqual(
          Option.some({ ...session, last_seen_at: at + 200 })
        )
        yield* store.touchSession(session.id, at + 150)
        expect(yield* store.findSessionByHash(session.token_hash)).toEqual(
          Option.some({ ...session, last_seen_at: at + 200 })
        )
        yield* store.touchSession(session.id, at + 200)
        expect(yield* store.findSessionByHash(session.token_hash)).toEqual(
          Option.some({ ...session, last_seen_at: at + 200 })
        )
        expect(yield* store.sessionsOfUser(user)).toEqual([{ ...session, last_seen_at: at + 200 }])
        yield* store.touchSession(freshId("session"), at + 300)
      }))

    it.effect("sessions: of a user newest first; deleteSession ends only a session of its own user", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [u, v] = [freshId("user"), freshId("user")]
        const s1 = makeSession(u, { created_at: at + 10 })
        const s2 = makeSession(u, { created_at: at + 30 })
        const s3 = makeSession(u, { created_at: at + 20 })
        const s4 = makeSession(v, { created_at: at + 40 })
        for (const s of [s1, s2, s3, s4]) yield* store.insertSession(s)
        expect(yield* store.sessionsOfUser(u)).toEqual([s2, s3, s1])
        expect(yield* store.sessionsOfUser(v)).toEqual([s4])
        expect(yield* store.sessionsOfUser(freshId("user"))).toEqual([])

        expect(yield* store.deleteSession(v, s1.id)).toBe(false)
        expect(yield* store.findSessionByHash(s1.token_hash)).toEqual(Option.some(s1))
        expect(yield* store.deleteSession(u, s1.id)).toBe(true)
        expect(yield* store.deleteSession(u, s1.id)).toBe(false)
        expect(yield* store.deleteSession(u, freshId("session"))).toBe(false)
        expect(yield* store.findSessionByHash(s1.token_hash)).toEqual(Option.none())
        expect(yield* store.sessionsOfUser(u)).toEqual([s2, s3])
        expect(yield* store.sessionsOfUser(v)).toEqual([s4])
      }))

    it.effect("sessions: deleteSessionsOfUser ends every session of the user, or all but `except`", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [u, v] = [freshId("user"), freshId("user")]
        const [a, b, c] = [10, 20, 30].map((n) => makeSession(u, { created_at: at + n }))
        const d = makeSession(v)
        for (const s of [a!, b!, c!, d]) yield* store.insertSession(s)
        yield* store.deleteSessionsOfUser(u, b!.id)
        expect(yield* store.sessionsOfUser(u)).toEqual([b])
        expect(yield* store.sessionsOfUser(v)).toEqual([d])
        // `except` a session of another user keeps nothing of this one's, and none of the other's goes
        yield* store.deleteSessionsOfUser(u, d.id)
        expect(yield* store.sessionsOfUser(u)).toEqual([])
        expect(yield* store.sessionsOfUser(v)).toEqual([d])
        const e = makeSession(u)
        yield* store.insertSession(e)
        yield* store.deleteSessionsOfUser(u, null)
        expect(yield* store.sessionsOfUser(u)).toEqual([])
        expect(yield* store.findSessionByHash(e.token_hash)).toEqual(Option.none())
        expect(yield* store.sessionsOfUser(v)).toEqual([d])
        yield* store.deleteSessionsOfUser(freshId("user"), null)
      }))

    it.effect("sessions: deleteEndedSessions removes those idle since before idleBefore or expired by now", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const user = freshId("user")
        const [idleBefore, now] = [at + 1_000, at + 5_000]
        const idle = makeSession(user, { last_seen_at: idleBefore - 1, created_at: at + 1 })
        const seenAtBound = makeSession(user, { last_seen_at: idleBefore, created_at: at + 2 })
        const expired = makeSession(user, { last_seen_at: now, expires_at: now, created_at: at + 3 })
        const expiredLongAgo = makeSession(user, { last_seen_at: now, expires_at: at, created_at: at + 4 })
        const running = makeSession(user, { last_seen_at: now, expires_at: now + 1, created_at: at + 5 })
        for (const s of [idle, seenAtBound, expired, expiredLongAgo, running]) yield* store.insertSession(s)
        yield* store.deleteEndedSessions(idleBefore, now)
        expect(yield* store.sessionsOfUser(user)).toEqual([running, seenAtBound])
        // a touch keeps a session from idling out
        yield* store.touchSession(seenAtBound.id, now)
        yield* store.deleteEndedSessions(now, now)
        expect(yield* store.sessionsOfUser(user)).toEqual([running, { ...seenAtBound, last_seen_at: now }])
      }))

    it.effect.prop(
      "sessions: after any inserts, touches and deletions, each user's sessions are the model's, newest first",
      [fc.array(sessionOp, { minLength: 4, maxLength: 20 })],
      ([ops]) =>
        Effect.gen(function*() {
          const store = yield* UserStore
          const users = [freshId("user"), freshId("user")]
          const made: Array<SessionRecord> = []
          const model = new Map<string, SessionRecord>()
          /** The `n`-th session made (modulo their count), deleted or not. */
          const pick = (n: number) => made.length === 0 ? undefined : made[n % made.length]
          for (const [i, op] of ops.entries()) {
            switch (op._tag) {
              case "Insert": {
                const s = makeSession(users[op.user]!, {
                  created_at: i,
                  last_seen_at: op.lastSeen,
                  expires_at: op.expires
                })
                made.push(s)
                model.set(s.id, s)
                yield* store.insertSession(s)
                break
              }
              case "Touch": {
                const s = pick(op.session)
                if (s === undefined) break
                const stored = model.get(s.id)
                if (stored !== undefined) {
                  model.set(s.id, { ...stored, last_seen_at: Math.max(stored.last_seen_at, op.at) })
                }
                yield* store.touchSession(s.id, op.at)
                break
              }
              case "Delete": {
                const s = pick(op.session)
                if (s === undefined) break
                const owned = model.get(s.id)?.user_id === users[op.user]
                if (owned) model.delete(s.id)
                expect(yield* store.deleteSession(users[op.user]!, s.id)).toBe(owned)
                break
              }
              case "DeleteOfUser": {
                const except = op.except === null ? null : pick(op.except)?.id ?? null
                for (const s of [...model.values()]) {
                  if (s.user_id === users[op.user] && s.id !== except) model.delete(s.id)
                }
                yield* store.deleteSessionsOfUser(users[op.user]!, except)
                break
              }
              case "DeleteEnded": {
                for (const s of [...model.values()]) {
                  if (s.last_seen_at < op.idleBefore || s.expires_at <= op.now) model.delete(s.id)
                }
                yield* store.deleteEndedSessions(op.idleBefore, op.now)
              }
            }
          }
          for (const user of users) {
            expect(yield* store.sessionsOfUser(user)).toEqual(
              [...model.values()].filter((s) => s.user_id === user).sort((x, y) => y.created_at - x.created_at)
            )
          }
          for (const s of made) {
            expect(yield* store.findSessionByHash(s.token_hash)).toEqual(Option.fromNullable(model.get(s.id)))
          }
        }),
      props
    )

    it.effect("invitations: insert, find by token hash; pending are an organisation's unaccepted ones, newest first, expired included", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [org, other] = [freshId("org"), freshId("org")]
        const expired = makeInvitation(org, { created_at: at + 10, expires_at: at + 20 })
        const fresh = makeInvitation(org, { created_at: at + 30, role: "admin", uat: true })
        const accepted = makeInvitation(org, { created_at: at + 20, accepted_at: at + 25 })
        const elsewhere = makeInvitation(other, { created_at: at + 40, role: "viewer" })
        for (const i of [expired, fresh, accepted, elsewhere]) yield* store.insertInvitation(i)
        for (const i of [expired, fresh, accepted, elsewhere]) {
          expect(yield* store.findInvitationByHash(i.token_hash)).toEqual(Option.some(i))
        }
        expect(yield* store.findInvitationByHash(freshId("sha256"))).toEqual(Option.none())
        expect(yield* store.pendingInvitations(org)).toEqual([fresh, expired])
        expect(yield* store.pendingInvitations(other)).toEqual([elsewhere])
        expect(yield* store.pendingInvitations(freshId("org"))).toEqual([])

        expect(yield* store.acceptInvitation(acceptance(fresh.id, { at: at + 35 }))).toBe("accepted")
        expect(yield* store.pendingInvitations(org)).toEqual([expired])
        expect(yield* store.findInvitationByHash(fresh.token_hash)).toEqual(
          Option.some({ ...fresh, accepted_at: at + 35 })
        )
      }))

    it.effect("invitations: deleteInvitation withdraws one of its organisation only, and only while unaccepted", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = freshId("org")
        const invitation = makeInvitation(org)
        const accepted = makeInvitation(org, { accepted_at: at })
        yield* store.insertInvitation(invitation)
        yield* store.insertInvitation(accepted)
        expect(yield* store.deleteInvitation(freshId("org"), invitation.id)).toBe(false)
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(Option.some(invitation))
        expect(yield* store.deleteInvitation(org, accepted.id)).toBe(false)
        expect(yield* store.findInvitationByHash(accepted.token_hash)).toEqual(Option.some(accepted))
        expect(yield* store.deleteInvitation(org, freshId("invitation"))).toBe(false)
        expect(yield* store.deleteInvitation(org, invitation.id)).toBe(true)
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(Option.none())
        expect(yield* store.pendingInvitations(org)).toEqual([])
        expect(yield* store.deleteInvitation(org, invitation.id)).toBe(false)
        expect(yield* store.acceptInvitation(acceptance(invitation.id))).toBe("unusable")
      }))

    it.effect("acceptInvitation: accepted once, storing the user, the memberships and the audit; a second time unusable, storing nothing", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const marker = yield* auditMarker
        const [org, companion] = [freshId("org"), freshId("org")]
        const invitation = makeInvitation(org, { uat: true })
        yield* store.insertInvitation(invitation)
        const user = makeUser({ email: invitation.email, created_at: at + 1 })
        const memberships = [
          makeMembership(user.id, org, { role: "member", created_at: at + 1 }),
          makeMembership(user.id, companion, { role: "member", created_at: at + 1 })
        ]
        const audit = [
          makeAuditEntry(org, { actor: user.email, action: "invitation.accepted", target: invitation.id, at: at + 1 }),
          makeAuditEntry(companion, { actor: user.email, action: "member.added", target: user.email, at: at + 1 })
        ]
        expect(yield* store.acceptInvitation({ invitationId: invitation.id, at: at + 1, user, memberships, audit }))
          .toBe("accepted")
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(
          Option.some({ ...invitation, accepted_at: at + 1 })
        )
        expect(yield* store.getUser(user.id)).toEqual(Option.some(user))
        expect(yield* store.findUserByEmail(user.email_key)).toEqual(Option.some(user))
        expect(yield* store.membershipsOfUser(user.id)).toEqual(memberships)
        const logged = yield* store.auditOf({ organisationIds: [org, companion], limit: 10 })
        expect(logged.map(({ seq: _, ...entry }) => entry)).toEqual([audit[1], audit[0]])
        expect(logged[1]!.seq).toBeGreaterThan(marker)
        expect(logged[0]!.seq).toBeGreaterThan(logged[1]!.seq)

        const late = makeUser({ created_at: at + 2 })
        expect(
          yield* store.acceptInvitation({
            invitationId: invitation.id,
            at: at + 2,
            user: late,
            memberships: [makeMembership(late.id, org, { created_at: at + 2 })],
            audit: [makeAuditEntry(org, { at: at + 2 })]
          })
        ).toBe("unusable")
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(
          Option.some({ ...invitation, accepted_at: at + 1 })
        )
        expect(yield* store.getUser(late.id)).toEqual(Option.none())
        expect(yield* store.membersOf(org)).toEqual([memberships[0]])
        expect(yield* store.auditOf({ organisationIds: [org, companion], limit: 10 })).toEqual(logged)
      }))

    it.effect("acceptInvitation: by a user already stored (none given), its role changed where it is a member already", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [org, other] = [freshId("org"), freshId("org")]
        const user = makeUser()
        yield* store.insertUser(user)
        const existing = makeMembership(user.id, other, { role: "viewer", created_at: at - 10 })
        yield* store.putMembership(existing)
        const invitation = makeInvitation(org, { email: user.email })
        yield* store.insertInvitation(invitation)
        const granted = [
          makeMembership(user.id, org, { role: "admin", created_at: at + 1 }),
          makeMembership(user.id, other, { role: "owner", created_at: at + 1 })
        ]
        expect(yield* store.acceptInvitation(acceptance(invitation.id, { memberships: granted }))).toBe("accepted")
        expect(yield* store.membershipsOfUser(user.id)).toEqual([{ ...existing, role: "owner" }, granted[0]])
        expect(mine(yield* store.listUsers, [user.id])).toEqual([user])
      }))

    it.effect("acceptInvitation: unusable at or after its expiry, or unknown; usable just before", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = freshId("org")
        const invitation = makeInvitation(org, { expires_at: at + 1_000 })
        yield* store.insertInvitation(invitation)
        const user = makeUser()
        const attempt = (when: number) =>
          store.acceptInvitation({
            invitationId: invitation.id,
            at: when,
            user,
            memberships: [makeMembership(user.id, org)],
            audit: [makeAuditEntry(org)]
          })
        expect(yield* attempt(at + 1_000)).toBe("unusable")
        expect(yield* attempt(at + 5_000)).toBe("unusable")
        expect(yield* store.acceptInvitation(acceptance(freshId("invitation")))).toBe("unusable")
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(Option.some(invitation))
        expect(yield* store.getUser(user.id)).toEqual(Option.none())
        expect(yield* store.membersOf(org)).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [org], limit: 10 })).toEqual([])

        expect(yield* attempt(at + 999)).toBe("accepted")
        expect(yield* store.getUser(user.id)).toEqual(Option.some(user))
      }))

    it.effect("acceptInvitation: email_taken stores nothing; the invitation stays usable", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = freshId("org")
        const holder = makeUser()
        yield* store.insertUser(holder)
        const invitation = makeInvitation(org, { email: holder.email })
        yield* store.insertInvitation(invitation)
        const clash = makeUser({ email: holder.email.toUpperCase(), email_key: holder.email_key })
        expect(
          yield* store.acceptInvitation({
            invitationId: invitation.id,
            at: at + 1,
            user: clash,
            memberships: [makeMembership(clash.id, org, { role: "admin" })],
            audit: [makeAuditEntry(org, { actor: clash.email })]
          })
        ).toBe("email_taken")
        expect(yield* store.findInvitationByHash(invitation.token_hash)).toEqual(Option.some(invitation))
        expect(yield* store.pendingInvitations(org)).toEqual([invitation])
        expect(yield* store.getUser(clash.id)).toEqual(Option.none())
        expect(yield* store.findUserByEmail(holder.email_key)).toEqual(Option.some(holder))
        expect(yield* store.membersOf(org)).toEqual([])
        expect(yield* store.membershipsOfUser(clash.id)).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [org], limit: 10 })).toEqual([])

        const membership = makeMembership(holder.id, org, { role: "member" })
        expect(yield* store.acceptInvitation(acceptance(invitation.id, { memberships: [membership] }))).toBe("accepted")
        expect(yield* store.membersOf(org)).toEqual([membership])
      }))

    it.effect("acceptInvitation: of concurrent acceptances of one invitation exactly one is accepted", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        for (let round = 0; round < 5; round++) {
          const org = freshId("org")
          const invitation = makeInvitation(org)
          yield* store.insertInvitation(invitation)
          const users = Array.from({ length: 4 }, (_, i) => makeUser({ created_at: at + i }))
          const answers = yield* Effect.all(
            users.map((user, i) =>
              store.acceptInvitation({
                invitationId: invitation.id,
                at: at + 10 + i,
                user,
                memberships: [makeMembership(user.id, org, { role: "member" })],
                audit: [makeAuditEntry(org, { actor: user.email, action: "invitation.accepted" })]
              })
            ),
            { concurrency: "unbounded" }
          )
          expect(answers.filter((a) => a === "accepted").length).toBe(1)
          expect(answers.filter((a) => a === "unusable").length).toBe(users.length - 1)
          const winner = users[answers.indexOf("accepted")]!
          expect(mine(yield* store.listUsers, users.map((u) => u.id))).toEqual([winner])
          expect((yield* store.membersOf(org)).map((m) => m.user_id)).toEqual([winner.id])
          expect((yield* store.auditOf({ organisationIds: [org], limit: 10 })).map((e) => e.actor)).toEqual([
            winner.email
          ])
          const stored = yield* store.findInvitationByHash(invitation.token_hash)
          expect(Option.map(stored, (i) => i.accepted_at)).toEqual(Option.some(at + 10 + answers.indexOf("accepted")))
        }
      }))

    it.effect("acceptInvitation: two invitations accepted concurrently with one new e-mail: one accepted, the other email_taken and still usable", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const [a, b] = [freshId("org"), freshId("org")]
        const email = `${freshId("Twice")}@example.com`
        const invitations = [makeInvitation(a, { email }), makeInvitation(b, { email })]
        for (const i of invitations) yield* store.insertInvitation(i)
        const users = invitations.map(() => makeUser({ email }))
        const answers = yield* Effect.all(
          invitations.map((invitation, i) =>
            store.acceptInvitation({
              invitationId: invitation.id,
              at: at + 1,
              user: users[i]!,
              memberships: [makeMembership(users[i]!.id, invitation.organisation_id)],
              audit: [makeAuditEntry(invitation.organisation_id)]
            })
          ),
          { concurrency: "unbounded" }
        )
        expect([...answers].sort()).toEqual(["accepted", "email_taken"])
        const won = answers.indexOf("accepted")
        const lost = 1 - won
        expect(yield* store.findUserByEmail(email.toLowerCase())).toEqual(Option.some(users[won]))
        expect(yield* store.pendingInvitations(invitations[lost]!.organisation_id)).toEqual([invitations[lost]])
        expect(yield* store.membersOf(invitations[lost]!.organisation_id)).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [invitations[lost]!.organisation_id], limit: 10 })).toEqual([])
        expect((yield* store.membersOf(invitations[won]!.organisation_id)).length).toBe(1)
      }))

    it.effect("audit: appended in order; auditOf newest first, at most limit, below before, null for the entries of no organisation", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const marker = yield* auditMarker
        const [a, b, c] = [freshId("org"), freshId("org"), freshId("org")]
        const actor = freshId("actor")
        const given = [
          makeAuditEntry(a, { actor, action: "api_key.created", at: at + 1 }),
          makeAuditEntry(null, { actor, action: "password.changed", at: at + 2 }),
          makeAuditEntry(b, { actor, action: "automation.created", at: at + 3 })
        ]
        yield* store.appendAudit(given)
        yield* store.appendAudit([])
        const more = [
          makeAuditEntry(a, { actor, action: "member.removed", at: at + 4 }),
          makeAuditEntry(c, { actor, at: at + 5 }),
          makeAuditEntry(null, { actor, action: "operator.signed_in", at: at + 6 })
        ]
        yield* store.appendAudit(more)
        const [e1, e2, e3, e4, e5, e6] = [...given, ...more]

        const ofA = yield* store.auditOf({ organisationIds: [a], limit: 10 })
        expect(ofA.map(({ seq: _, ...e }) => e)).toEqual([e4, e1])
        const [s4, s1] = ofA.map((e) => e.seq) as [number, number]
        expect(s1).toBeGreaterThan(marker)
        expect(s4).toBeGreaterThan(s1)

        const everything = yield* store.auditOf({ organisationIds: [a, b, c, null], limit: 6 })
        expect(everything.map(({ seq: _, ...e }) => e)).toEqual([e6, e5, e4, e3, e2, e1])
        const seqs = everything.map((e) => e.seq)
        expect(seqs).toEqual([...seqs].sort((x, y) => y - x))
        expect(new Set(seqs).size).toBe(6)

        expect((yield* store.auditOf({ organisationIds: [a, b], limit: 10 })).map(({ seq: _, ...e }) => e)).toEqual([
          e4,
          e3,
          e1
        ])
        expect((yield* store.auditOf({ organisationIds: [a, null], limit: 2 })).map(({ seq: _, ...e }) => e)).toEqual([
          e6,
          e4
        ])
        expect(
          (yield* store.auditOf({ organisationIds: [null], limit: 2 })).map(({ seq: _, ...e }) => e)
        ).toEqual([e6, e2])
        expect(yield* store.auditOf({ organisationIds: [a], limit: 10, before: s4 })).toEqual([ofA[1]])
        expect(yield* store.auditOf({ organisationIds: [a], limit: 10, before: s4 + 1 })).toEqual(ofA)
        expect(yield* store.auditOf({ organisationIds: [a], limit: 10, before: s1 })).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [a], limit: 10, before: undefined })).toEqual(ofA)
        expect(yield* store.auditOf({ organisationIds: [a], limit: 1 })).toEqual([ofA[0]])
        // bounds beyond every seq bound nothing
        expect(yield* store.auditOf({ organisationIds: [a], limit: Infinity, before: Infinity })).toEqual(ofA)
        expect(yield* store.auditOf({ organisationIds: [a], limit: 1e21, before: 1e21 })).toEqual(ofA)
        expect(yield* store.auditOf({ organisationIds: [a], limit: 10, before: -1e21 })).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [a], limit: 0 })).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [], limit: 10 })).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [freshId("org")], limit: 10 })).toEqual([])
        expect(yield* store.auditOf({ organisationIds: [a, a], limit: 10 })).toEqual(ofA)
      }))

    it.effect.prop(
      "audit: paging with before walks every entry of the organisations asked exactly once, newest first",
      [
        fc.array(
          fc.array(
            fc.record({ org: fc.constantFrom(0, 1, 2, null), action: fc.constantFrom("a.created", "a.removed") }),
            { maxLength: 5 }
          ),
          { maxLength: 6 }
        ),
        fc.subarray<number | null>([0, 1, 2, null], { minLength: 1 }),
        fc.integer({ min: 1, max: 5 })
      ],
      ([batches, asked, pageSize]) =>
        Effect.gen(function*() {
          const store = yield* UserStore
          const marker = yield* auditMarker
          const orgs = [freshId("org"), freshId("org"), freshId("org")]
          const orgOf = (n: number | null) => n === null ? null : orgs[n]!
          const appended: Array<Omit<AuditEntry, "seq">> = []
          for (const [i, batch] of batches.entries()) {
            const entries = batch.map((e, j) => makeAuditEntry(orgOf(e.org), { action: e.action, at: at + i * 10 + j }))
            appended.push(...entries)
            yield* store.appendAudit(entries)
          }
          const organisationIds = asked.map(orgOf)
          const walked: Array<AuditEntry> = []
          let before: number | undefined = undefined
          while (true) {
            const page: ReadonlyArray<AuditEntry> = yield* store.auditOf({ organisationIds, limit: pageSize, before })
            expect(page.length).toBeLessThanOrEqual(pageSize)
            // each page below the last (else the walk would never end)
            if (before !== undefined) expect(page.every((e) => e.seq < before!)).toBe(true)
            const ours = page.filter((e) => e.seq > marker)
            walked.push(...ours)
            if (page.length < pageSize || ours.length < page.length) break
            before = page[page.length - 1]!.seq
          }
          expect(walked.map(({ seq: _, ...e }) => e)).toEqual(
            appended.filter((e) => organisationIds.includes(e.organisation_id)).reverse()
          )
          const seqs = walked.map((e) => e.seq)
          expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => y - x))
        }),
      props
    )
  })
