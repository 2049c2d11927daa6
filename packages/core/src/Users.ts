/**
 * Service: the people of the web application. Users sign in with an e-mail and a password and
 * get a server-side session; memberships give them a role in organisations; invitations bring new
 * members in; every change is written to the audit log.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { OrganisationNotFound } from "./AccountError.js"
import { randomId, randomToken, sha256Hex } from "./internal/crypto.js"
import * as Password from "./internal/password.js"
import type { Organisation } from "./Organisation.js"
import { OrganisationStore } from "./OrganisationStore.js"
import { type Action, permits, toManage } from "./Permission.js"
import type { StorageError } from "./StorageError.js"
import type { AuditEntry, Invitation, Membership, Role, SessionRecord, User } from "./User.js"
import {
  InvalidUserRequest,
  InvitationUnusable,
  MemberNotFound,
  NotPermitted,
  NotSignedIn,
  SignInFailed
} from "./UserError.js"
import { UserStore } from "./UserStore.js"

export type { ScryptCost } from "./internal/password.js"

/**
 * Who asks: a signed-in user, or the holder of the operator token of the console API (which may
 * do everything, as an operator).
 */
export type Actor =
  | { readonly _tag: "User"; readonly user: User }
  | { readonly _tag: "OperatorToken" }

/** The operator token as an {@link Actor}. */
export const operatorToken: Actor = { _tag: "OperatorToken" }

/** A user as an {@link Actor}. */
export const asActor = (user: User): Actor => ({ _tag: "User", user })

/** A signed-in session: its record, its user, and the token (only when it was just created). */
export interface SignedIn {
  readonly session: SessionRecord
  readonly user: User
}

/** A new session and its token: the token goes into the cookie and is never stored. */
export interface NewSession extends SignedIn {
  readonly token: string
}

/** Where a sign-in comes from: shown in the account's list of sessions. */
export interface Client {
  readonly userAgent: string
  readonly address: string
}

/** An organisation the user may open, with the user's role in it. */
export interface Access {
  readonly organisation: Organisation
  readonly role: Role
}

/** A member of a live organisation as the Members screen lists it. */
export interface Member {
  readonly user_id: string
  readonly email: string
  readonly role: Role
  /** Whether the member may also open the organisation's `(UAT)` companion. */
  readonly uat: boolean
  readonly since: number
}

/** A new invitation and its link token, shown once to the inviter. */
export interface NewInvitation {
  readonly invitation: Invitation
  readonly token: string
}

/** What an invitation link offers, for its page. */
export interface InvitationOffer {
  readonly organisation: Organisation
  readonly email: string
  readonly role: Role
  /** Whether an account with the invited e-mail exists (then its password is asked for). */
  readonly existing: boolean
}

/** Options of {@link layer}. */
export interface UsersOptions {
  /** A session ends this long after its last use (default 30 minutes). */
  readonly idleMillis?: number
  /** A session ends this long after sign-in, used or not (default 12 hours). */
  readonly absoluteMillis?: number
  /** An invitation expires this long after it was made (default 7 days). */
  readonly invitationMillis?: number
  /** scrypt's cost for new hashes (default OWASP's N=2^14, r=8, p=5; lower only in tests). */
  readonly passwordCost?: Password.ScryptCost
  /** Password hashes computed at once (default 2: each takes 16 MiB at the default cost). */
  readonly hashConcurrency?: number
}

/**
 * Organisations as a switcher lists them: live ones oldest first (ties in the order given), each
 * followed by its `(UAT)` companion (a companion whose live organisation is not among them takes
 * its own place).
 */
const inOrder = (all: ReadonlyArray<Organisation>): ReadonlyArray<Organisation> => {
  const place = new Map(all.map((o, i) => [o.id, { age: o.created_at, index: i }]))
  const groupOf = (o: Organisation) =>
    (o.live_organisation_id === null ? undefined : place.get(o.live_organisation_id)) ?? place.get(o.id)!
  return [...all].sort((a, b) => {
    const ga = groupOf(a)
    const gb = groupOf(b)
    return ga.age - gb.age || ga.index - gb.index ||
      (a.live_organisation_id === null ? 0 : 1) - (b.live_organisation_id === null ? 0 : 1)
  })
}

/** The shortest password accepted. */
export const minPasswordLength = 12
/** The longest password accepted (it bounds the cost of hashing one). */
export const maxPasswordLength = 1024
/** Default idle timeout of a session: 30 minutes. */
export const defaultIdleMillis = 30 * 60_000
/** Default absolute timeout of a session: 12 hours. */
export const defaultAbsoluteMillis = 12 * 3_600_000
/** Default lifetime of an invitation: 7 days. */
export const defaultInvitationMillis = 7 * 86_400_000
/** A session's use is written at most this often (its idle timeout is this much coarser). */
const touchEveryMillis = 60_000

/** The key users are unique by: the e-mail trimmed, in lower case. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

const checkEmail = (email: string) => {
  const trimmed = email.trim()
  return trimmed.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed)
    ? Effect.succeed(trimmed)
    : Effect.fail(new InvalidUserRequest({ field: "email", detail: "enter an e-mail address such as ana@example.com" }))
}

const checkPassword = (password: string, field = "password") =>
  password.length < minPasswordLength || password.length > maxPasswordLength
    ? Effect.fail(
      new InvalidUserRequest({
        field,
        detail: `a password has ${minPasswordLength} to ${maxPasswordLength} characters`
      })
    )
    : Effect.void

/** How the audit log and key records name an actor: the user's e-mail, or `operator token`. */
export const actorName = (actor: Actor): string => actor._tag === "User" ? actor.user.email : "operator token"

export class Users extends Context.Tag("@tradeflow/core/Users")<Users, {
  /**
   * Creates the first operator with this e-mail and password when no user exists yet; answers
   * the user created, or none when some user existed.
   */
  readonly bootstrap: (
    email: string,
    password: string
  ) => Effect.Effect<Option.Option<User>, InvalidUserRequest | StorageError>
  /** Signs in: a new session. Every failure is the same {@link SignInFailed}, in about the same time. */
  readonly signIn: (
    email: string,
    password: string,
    client: Client
  ) => Effect.Effect<NewSession, SignInFailed | StorageError>
  /**
   * The session of a token, its use recorded (unless `touch` is false: a page refreshing itself
   * does not keep its session alive); {@link NotSignedIn} when unknown or ended.
   */
  readonly session: (
    token: string,
    options?: { readonly touch?: boolean }
  ) => Effect.Effect<SignedIn, NotSignedIn | StorageError>
  /** Ends the session of a token (nothing when there is none). */
  readonly signOut: (token: string) => Effect.Effect<void, StorageError>
  /** The user's sessions still running, newest first. */
  readonly sessionsOf: (user: User) => Effect.Effect<ReadonlyArray<SessionRecord>, StorageError>
  /** Ends one of the user's sessions. */
  readonly endSession: (user: User, sessionId: string) => Effect.Effect<void, MemberNotFound | StorageError>
  /** Ends every session of the user but `keep` (when given). */
  readonly signOutEverywhere: (user: User, keep: string | null) => Effect.Effect<void, StorageError>
  /** Changes the password (the current one is checked) and ends every other session. */
  readonly changePassword: (
    user: User,
    current: string,
    next: string,
    keep: string
  ) => Effect.Effect<void, InvalidUserRequest | StorageError>
  /** The organisations the actor may open, live ones first, each followed by its companion. */
  readonly accessOf: (actor: Actor) => Effect.Effect<ReadonlyArray<Access>, StorageError>
  /**
   * The actor's role in the organisation when it permits `action`: an operator (or the operator
   * token) is an owner everywhere.
   */
  readonly authorize: (
    actor: Actor,
    organisationId: string,
    action: Action
  ) => Effect.Effect<
    { readonly organisation: Organisation; readonly role: Role },
    NotPermitted | OrganisationNotFound | StorageError
  >
  /**
   * Checks that the actor may do `action` in the `(UAT)` companion of a live organisation: an
   * operator always may; anyone else needs a membership of the companion permitting it (UAT
   * access is granted per user). A companion not created yet permits operators only.
   */
  readonly authorizeUat: (
    actor: Actor,
    liveOrganisationId: string,
    action: Action
  ) => Effect.Effect<void, NotPermitted | OrganisationNotFound | StorageError>
  /** Appends a change to the audit log. */
  readonly record: (
    actor: Actor,
    organisationId: string | null,
    action: string,
    target: string
  ) => Effect.Effect<void, StorageError>
  /** The audit log of a live organisation and its companion, newest first. */
  readonly audit: (
    actor: Actor,
    organisationId: string,
    options?: { readonly limit?: number; readonly before?: number }
  ) => Effect.Effect<ReadonlyArray<AuditEntry>, NotPermitted | OrganisationNotFound | StorageError>
  /** The members of a live organisation, with whether each may open its companion. */
  readonly members: (
    actor: Actor,
    organisationId: string
  ) => Effect.Effect<ReadonlyArray<Member>, NotPermitted | OrganisationNotFound | StorageError>
  /** Invites an e-mail into a live organisation (and its companion when `uat`). */
  readonly invite: (
    actor: Actor,
    organisationId: string,
    input: { readonly email: string; readonly role: Role; readonly uat: boolean }
  ) => Effect.Effect<NewInvitation, NotPermitted | OrganisationNotFound | InvalidUserRequest | StorageError>
  /** The invitations of a live organisation not yet accepted. */
  readonly invitations: (
    actor: Actor,
    organisationId: string
  ) => Effect.Effect<ReadonlyArray<Invitation>, NotPermitted | OrganisationNotFound | StorageError>
  /** Withdraws an invitation not yet accepted. */
  readonly withdrawInvitation: (
    actor: Actor,
    organisationId: string,
    invitationId: string
  ) => Effect.Effect<void, NotPermitted | OrganisationNotFound | MemberNotFound | StorageError>
  /** What an invitation link offers; {@link InvitationUnusable} when unknown, used or expired. */
  readonly offer: (token: string) => Effect.Effect<InvitationOffer, InvitationUnusable | StorageError>
  /**
   * Accepts an invitation for an e-mail that has no account yet: creates the account with
   * `password`, grants the memberships and signs in. Single use. For an e-mail that has an account
   * it fails (that person signs in and accepts with {@link Users} `acceptAs`): a link never checks
   * a password, so it cannot be used to guess one.
   */
  readonly accept: (
    token: string,
    password: string,
    client: Client
  ) => Effect.Effect<NewSession, InvitationUnusable | InvalidUserRequest | StorageError>
  /**
   * Accepts an invitation as the signed-in `user`, whose e-mail must be the invited one: grants
   * the memberships the user does not have yet (a membership held already keeps its role).
   */
  readonly acceptAs: (
    token: string,
    user: User
  ) => Effect.Effect<void, InvitationUnusable | InvalidUserRequest | StorageError>
  /** Changes a member's role (in the companion too, where the member has access to it). */
  readonly changeRole: (
    actor: Actor,
    organisationId: string,
    userId: string,
    role: Role
  ) => Effect.Effect<void, NotPermitted | OrganisationNotFound | MemberNotFound | InvalidUserRequest | StorageError>
  /** Grants (or withdraws) a member's access to the organisation's `(UAT)` companion. */
  readonly setUatAccess: (
    actor: Actor,
    organisationId: string,
    userId: string,
    granted: boolean
  ) => Effect.Effect<void, NotPermitted | OrganisationNotFound | MemberNotFound | StorageError>
  /** Removes a member from the organisation and its companion. */
  readonly deactivate: (
    actor: Actor,
    organisationId: string,
    userId: string
  ) => Effect.Effect<void, NotPermitted | OrganisationNotFound | MemberNotFound | InvalidUserRequest | StorageError>
  /** Every user (the operator area). */
  readonly users: (actor: Actor) => Effect.Effect<ReadonlyArray<User>, NotPermitted | StorageError>
  /** The newest changes outside organisations (accounts, the operator), for the operator area. */
  readonly accountAudit: (
    actor: Actor,
    options?: { readonly limit?: number; readonly before?: number }
  ) => Effect.Effect<ReadonlyArray<AuditEntry>, NotPermitted | StorageError>
}>() {}

/**
 * Users over the {@link UserStore} and {@link OrganisationStore} ports. Passwords are hashed with
 * scrypt at OWASP's recommended cost, at most `hashConcurrency` at once; a hash made at another
 * cost is rehashed at the next sign-in.
 */
export const layer = (options: UsersOptions = {}): Layer.Layer<Users, never, UserStore | OrganisationStore> =>
  Layer.effect(
    Users,
    Effect.gen(function*() {
      const store = yield* UserStore
      const organisations = yield* OrganisationStore
      const idle = options.idleMillis ?? defaultIdleMillis
      const absolute = options.absoluteMillis ?? defaultAbsoluteMillis
      const invitationLife = options.invitationMillis ?? defaultInvitationMillis
      const cost = options.passwordCost ?? Password.owaspCost
      const hashing = yield* Effect.makeSemaphore(options.hashConcurrency ?? 2)
      const hash = (password: string) => hashing.withPermits(1)(Password.hash(password, cost))
      const verify = (password: string, stored: string) => hashing.withPermits(1)(Password.verify(password, stored))
      const decoy = yield* Effect.cached(Password.hash(randomToken(16), cost))

      const organisation = (id: string) =>
        Effect.flatMap(
          organisations.get(id),
          Option.match({ onNone: () => Effect.fail(new OrganisationNotFound({ id })), onSome: Effect.succeed })
        )
      const companionOf = (live: Organisation) => Effect.map(organisations.companionOf(live.id), Option.getOrUndefined)

      const openSession = (user: User, client: Client) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const token = randomToken(32)
          const session: SessionRecord = {
            id: randomId("ses"),
            token_hash: yield* sha256Hex(token),
            user_id: user.id,
            created_at: now,
            last_seen_at: now,
            expires_at: now + absolute,
            user_agent: client.userAgent.slice(0, 300),
            address: client.address.slice(0, 100)
          }
          yield* store.insertSession(session)
          yield* store.deleteEndedSessions(now - idle, now)
          return { token, session, user }
        })

      const running = (session: SessionRecord, now: number) =>
        session.expires_at > now && session.last_seen_at + idle > now

      const roleIn = (actor: Actor, organisationId: string) =>
        actor._tag === "OperatorToken" || actor.user.operator
          ? Effect.succeed(Option.some<Role>("owner"))
          : Effect.map(
            store.membershipsOfUser(actor.user.id),
            (ms) => Option.fromNullable(ms.find((m) => m.organisation_id === organisationId)?.role)
          )

      const authorize = (actor: Actor, organisationId: string, action: Action) =>
        Effect.gen(function*() {
          const role = yield* roleIn(actor, organisationId)
          if (Option.isNone(role) || !permits(role.value, action)) {
            return yield* new NotPermitted({ action, role: Option.getOrNull(role) })
          }
          return { organisation: yield* organisation(organisationId), role: role.value }
        })

      /** The live organisation of `organisationId` (its own, or the one a companion belongs to) when `action` is permitted in it. */
      const live = (actor: Actor, organisationId: string, action: Action) =>
        Effect.gen(function*() {
          const { organisation: found } = yield* authorize(actor, organisationId, action)
          if (found.live_organisation_id === null) return found
          return yield* organisation(found.live_organisation_id)
        })

      const record = (actor: Actor, organisationId: string | null, action: string, target: string) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (at) => store.appendAudit([{ organisation_id: organisationId, actor: actorName(actor), action, target, at }])
        )

      /** The member's live membership, when the actor may manage members of its role (and of `role`, when given). */
      const manageable = (actor: Actor, organisationId: string, userId: string, role?: Role) =>
        Effect.gen(function*() {
          const org = yield* live(actor, organisationId, "manage_members")
          const current = (yield* store.membersOf(org.id)).find((m) => m.user_id === userId)
          if (current === undefined) return yield* new MemberNotFound({ id: userId })
          for (const r of role === undefined ? [current.role] : [current.role, role]) {
            yield* authorize(actor, org.id, toManage(r))
          }
          const user = yield* store.getUser(userId)
          return { org, current, email: Option.match(user, { onNone: () => userId, onSome: (u) => u.email }) }
        })

      const keepAnOwner = (org: Organisation, userId: string) =>
        Effect.gen(function*() {
          const owners = (yield* store.membersOf(org.id)).filter((m) => m.role === "owner" && m.user_id !== userId)
          if (owners.length === 0) {
            return yield* new InvalidUserRequest({
              field: "role",
              detail: "an organisation keeps at least one owner: make another member owner first"
            })
          }
        })

      /** The invitation of a link while it can be accepted (unknown, used and expired alike fail). */
      const usable = (token: string) =>
        Effect.gen(function*() {
          const found = yield* store.findInvitationByHash(yield* sha256Hex(token))
          const now = yield* Clock.currentTimeMillis
          if (Option.isNone(found) || found.value.accepted_at !== null || now >= found.value.expires_at) {
            return yield* new InvitationUnusable()
          }
          return found.value
        })

      /** The organisation an invitation is to (gone with its organisation: unusable). */
      const invitedTo = (invitation: Invitation) =>
        Effect.catchTag(
          organisation(invitation.organisation_id),
          "OrganisationNotFound",
          () => new InvitationUnusable()
        )

      const hasAccount = (invitation: Invitation) =>
        new InvalidUserRequest({
          field: "email",
          detail: `${invitation.email} has an account: sign in with it, then open the invitation link again`
        })

      /**
       * Marks the invitation accepted and grants its memberships to `user` (inserted when `isNew`):
       * a membership the user holds already keeps its role.
       */
      const grant = (invitation: Invitation, user: User, isNew: boolean) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const org = yield* invitedTo(invitation)
          const companion = invitation.uat
            ? yield* organisations.ensureCompanion({
              id: randomId("org"),
              name: `${org.name} (UAT)`,
              environment: "uat",
              live_organisation_id: org.id,
              created_at: now
            })
            : undefined
          const held = new Set(isNew ? [] : (yield* store.membershipsOfUser(user.id)).map((m) => m.organisation_id))
          const memberships: Array<Membership> = [org, ...(companion === undefined ? [] : [companion])]
            .filter((o) => !held.has(o.id))
            .map((o) => ({ user_id: user.id, organisation_id: o.id, role: invitation.role, created_at: now }))
          const outcome = yield* store.acceptInvitation({
            invitationId: invitation.id,
            at: now,
            user: isNew ? user : null,
            memberships,
            audit: [{
              organisation_id: org.id,
              actor: user.email,
              action: "invitation.accepted",
              target: `${user.email} as ${invitation.role}${invitation.uat ? " with UAT" : ""}${
                memberships.length === 0 ? " (a member already: nothing changed)" : ""
              }`,
              at: now
            }]
          })
          if (outcome === "unusable") return yield* new InvitationUnusable()
          if (outcome === "email_taken") return yield* hasAccount(invitation)
        })

      return Users.of({
        bootstrap: Effect.fn("Users.bootstrap")(function*(email: string, password: string) {
          if (yield* store.hasUsers) return Option.none()
          const address = yield* checkEmail(email)
          yield* checkPassword(password)
          const user: User = {
            id: randomId("usr"),
            email: address,
            email_key: emailKey(address),
            password_hash: yield* hash(password),
            operator: true,
            created_at: yield* Clock.currentTimeMillis
          }
          if (!(yield* store.insertUser(user))) return Option.none()
          yield* record(asActor(user), null, "operator.created", user.email)
          return Option.some(user)
        }),
        signIn: Effect.fn("Users.signIn")(function*(email: string, password: string, client: Client) {
          const found = yield* store.findUserByEmail(emailKey(email))
          const ok = yield* verify(
            password.slice(0, maxPasswordLength),
            Option.isSome(found) ? found.value.password_hash : yield* decoy
          )
          if (Option.isNone(found) || !ok || password.length > maxPasswordLength) return yield* new SignInFailed()
          let user = found.value
          if (Password.outdated(user.password_hash, cost)) {
            user = { ...user, password_hash: yield* hash(password) }
            yield* store.setPassword(user.id, user.password_hash)
          }
          return yield* openSession(user, client)
        }),
        session: (token, options = {}) =>
          Effect.gen(function*() {
            if (token === "") return yield* new NotSignedIn()
            const found = yield* store.findSessionByHash(yield* sha256Hex(token))
            const now = yield* Clock.currentTimeMillis
            if (Option.isNone(found) || !running(found.value, now)) return yield* new NotSignedIn()
            const user = yield* store.getUser(found.value.user_id)
            if (Option.isNone(user)) return yield* new NotSignedIn()
            let session = found.value
            if (options.touch !== false && now - session.last_seen_at >= touchEveryMillis) {
              yield* store.touchSession(session.id, now)
              session = { ...session, last_seen_at: now }
            }
            return { session, user: user.value }
          }),
        signOut: Effect.fn("Users.signOut")(function*(token: string) {
          const found = yield* store.findSessionByHash(yield* sha256Hex(token))
          if (Option.isSome(found)) yield* store.deleteSession(found.value.user_id, found.value.id)
        }),
        sessionsOf: (user) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            return (yield* store.sessionsOfUser(user.id)).filter((s) => running(s, now))
          }),
        endSession: Effect.fn("Users.endSession")(function*(user: User, sessionId: string) {
          if (!(yield* store.deleteSession(user.id, sessionId))) return yield* new MemberNotFound({ id: sessionId })
          yield* record(asActor(user), null, "session.ended", sessionId)
        }),
        signOutEverywhere: Effect.fn("Users.signOutEverywhere")(function*(user: User, keep: string | null) {
          yield* store.deleteSessionsOfUser(user.id, keep)
          yield* record(asActor(user), null, "sessions.ended", user.email)
        }),
        changePassword: Effect.fn("Users.changePassword")(
          function*(user: User, current: string, next: string, keep: string) {
            if (current.length > maxPasswordLength || !(yield* verify(current, user.password_hash))) {
              return yield* new InvalidUserRequest({
                field: "current_password",
                detail: "the current password is wrong"
              })
            }
            yield* checkPassword(next, "new_password")
            yield* store.setPassword(user.id, yield* hash(next))
            yield* store.deleteSessionsOfUser(user.id, keep)
            yield* record(asActor(user), null, "password.changed", user.email)
          }
        ),
        accessOf: (actor) =>
          Effect.gen(function*() {
            if (actor._tag === "OperatorToken" || actor.user.operator) {
              return inOrder(yield* organisations.list).map((organisation) => ({
                organisation,
                role: "owner" as const
              }))
            }
            const memberships = yield* store.membershipsOfUser(actor.user.id)
            const roles = new Map(memberships.map((m) => [m.organisation_id, m.role]))
            const found = yield* Effect.forEach(memberships, (m) => organisations.get(m.organisation_id))
            return inOrder(found.flatMap(Option.toArray)).map((organisation) => ({
              organisation,
              role: roles.get(organisation.id)!
            }))
          }),
        authorize,
        authorizeUat: (actor, liveOrganisationId, action) =>
          Effect.gen(function*() {
            if (actor._tag === "OperatorToken" || actor.user.operator) return
            const companion = yield* organisations.companionOf(liveOrganisationId)
            if (Option.isNone(companion)) return yield* new NotPermitted({ action, role: null })
            yield* authorize(actor, companion.value.id, action)
          }),
        record,
        audit: (actor, organisationId, options = {}) =>
          Effect.gen(function*() {
            const org = yield* live(actor, organisationId, "manage_members")
            const companion = yield* companionOf(org)
            return yield* store.auditOf({
              organisationIds: companion === undefined ? [org.id] : [org.id, companion.id],
              limit: Math.min(Math.max(1, options.limit ?? 100), 500),
              before: options.before
            })
          }),
        members: (actor, organisationId) =>
          Effect.gen(function*() {
            const org = yield* live(actor, organisationId, "read")
            const companion = yield* companionOf(org)
            const inUat = new Set(
              companion === undefined ? [] : (yield* store.membersOf(companion.id)).map((m) => m.user_id)
            )
            const members: Array<Member> = []
            for (const m of yield* store.membersOf(org.id)) {
              const user = yield* store.getUser(m.user_id)
              if (Option.isSome(user)) {
                members.push({
                  user_id: m.user_id,
                  email: user.value.email,
                  role: m.role,
                  uat: inUat.has(m.user_id),
                  since: m.created_at
                })
              }
            }
            return members
          }),
        invite: Effect.fn("Users.invite")(
          function*(actor: Actor, organisationId: string, input: { email: string; role: Role; uat: boolean }) {
            const org = yield* live(actor, organisationId, "manage_members")
            yield* authorize(actor, org.id, toManage(input.role))
            const email = yield* checkEmail(input.email)
            const now = yield* Clock.currentTimeMillis
            const token = randomToken(32)
            const invitation: Invitation = {
              id: randomId("inv"),
              token_hash: yield* sha256Hex(token),
              organisation_id: org.id,
              email,
              role: input.role,
              uat: input.uat,
              invited_by: actorName(actor),
              created_at: now,
              expires_at: now + invitationLife,
              accepted_at: null
            }
            yield* store.insertInvitation(invitation)
            yield* record(actor, org.id, "member.invited", `${email} as ${input.role}${input.uat ? " with UAT" : ""}`)
            return { invitation, token }
          }
        ),
        invitations: (actor, organisationId) =>
          Effect.gen(function*() {
            const org = yield* live(actor, organisationId, "manage_members")
            return yield* store.pendingInvitations(org.id)
          }),
        withdrawInvitation: Effect.fn("Users.withdrawInvitation")(
          function*(actor: Actor, organisationId: string, invitationId: string) {
            const org = yield* live(actor, organisationId, "manage_members")
            const invitation = (yield* store.pendingInvitations(org.id)).find((i) => i.id === invitationId)
            if (invitation === undefined) return yield* new MemberNotFound({ id: invitationId })
            yield* authorize(actor, org.id, toManage(invitation.role))
            if (!(yield* store.deleteInvitation(org.id, invitationId))) {
              return yield* new MemberNotFound({ id: invitationId })
            }
            yield* record(actor, org.id, "invitation.withdrawn", invitationId)
          }
        ),
        offer: (token) =>
          Effect.gen(function*() {
            const invitation = yield* usable(token)
            const org = yield* invitedTo(invitation)
            const existing = Option.isSome(yield* store.findUserByEmail(emailKey(invitation.email)))
            return { organisation: org, email: invitation.email, role: invitation.role, existing }
          }),
        accept: Effect.fn("Users.accept")(function*(token: string, password: string, client: Client) {
          const invitation = yield* usable(token)
          if (Option.isSome(yield* store.findUserByEmail(emailKey(invitation.email)))) {
            return yield* hasAccount(invitation)
          }
          yield* checkPassword(password)
          const user: User = {
            id: randomId("usr"),
            email: invitation.email,
            email_key: emailKey(invitation.email),
            password_hash: yield* hash(password),
            operator: false,
            created_at: yield* Clock.currentTimeMillis
          }
          yield* grant(invitation, user, true)
          return yield* openSession(user, client)
        }),
        acceptAs: Effect.fn("Users.acceptAs")(function*(token: string, user: User) {
          const invitation = yield* usable(token)
          if (emailKey(invitation.email) !== user.email_key) return yield* hasAccount(invitation)
          yield* grant(invitation, user, false)
        }),
        changeRole: Effect.fn("Users.changeRole")(
          function*(actor: Actor, organisationId: string, userId: string, role: Role) {
            const { current, email, org } = yield* manageable(actor, organisationId, userId, role)
            if (current.role === role) return
            if (current.role === "owner") yield* keepAnOwner(org, userId)
            yield* store.putMembership({ ...current, role })
            const companion = yield* companionOf(org)
            if (companion !== undefined) {
              const inUat = (yield* store.membersOf(companion.id)).find((m) => m.user_id === userId)
              if (inUat !== undefined) yield* store.putMembership({ ...inUat, role })
            }
            yield* record(actor, org.id, "member.role_changed", `${email}: ${current.role} → ${role}`)
          }
        ),
        setUatAccess: Effect.fn("Users.setUatAccess")(
          function*(actor: Actor, organisationId: string, userId: string, granted: boolean) {
            const { current, email, org } = yield* manageable(actor, organisationId, userId)
            const now = yield* Clock.currentTimeMillis
            if (granted) {
              const companion = yield* organisations.ensureCompanion({
                id: randomId("org"),
                name: `${org.name} (UAT)`,
                environment: "uat",
                live_organisation_id: org.id,
                created_at: now
              })
              yield* store.putMembership({ ...current, organisation_id: companion.id, created_at: now })
            } else {
              const companion = yield* companionOf(org)
              if (companion !== undefined) yield* store.removeMembership(userId, companion.id)
            }
            yield* record(actor, org.id, granted ? "member.uat_granted" : "member.uat_withdrawn", email)
          }
        ),
        deactivate: Effect.fn("Users.deactivate")(function*(actor: Actor, organisationId: string, userId: string) {
          const { current, email, org } = yield* manageable(actor, organisationId, userId)
          if (current.role === "owner") yield* keepAnOwner(org, userId)
          const companion = yield* companionOf(org)
          yield* store.removeMembership(userId, org.id)
          if (companion !== undefined) yield* store.removeMembership(userId, companion.id)
          yield* record(actor, org.id, "member.deactivated", email)
        }),
        users: (actor) =>
          actor._tag === "OperatorToken" || actor.user.operator
            ? store.listUsers
            : Effect.fail(new NotPermitted({ action: "operate the service", role: null })),
        accountAudit: (actor, options = {}) =>
          actor._tag === "OperatorToken" || actor.user.operator
            ? store.auditOf({
              organisationIds: [null],
              limit: Math.min(Math.max(1, options.limit ?? 100), 500),
              before: options.before
            })
            : Effect.fail(new NotPermitted({ action: "operate the service", role: null }))
      })
    })
  )
