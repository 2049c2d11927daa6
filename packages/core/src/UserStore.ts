/**
 * Port: users, memberships, sessions, invitations and the audit log.
 *
 * @module
 */
import { Context, Effect, Layer, Option } from "effect"
import type { StorageError } from "./StorageError.js"
import type { AuditEntry, Invitation, Membership, SessionRecord, User } from "./User.js"

/** What {@link UserStore} `acceptInvitation` did. */
export type Acceptance = "accepted" | "unusable" | "email_taken"

export class UserStore extends Context.Tag("@tradeflow/core/UserStore")<UserStore, {
  /** Inserts a user; false (and nothing stored) when a user has its `email_key` already. */
  readonly insertUser: (user: User) => Effect.Effect<boolean, StorageError>
  readonly getUser: (id: string) => Effect.Effect<Option.Option<User>, StorageError>
  /** The user whose `email_key` (lower-case e-mail) this is. */
  readonly findUserByEmail: (emailKey: string) => Effect.Effect<Option.Option<User>, StorageError>
  /** Whether any user exists. */
  readonly hasUsers: Effect.Effect<boolean, StorageError>
  /** Every user, oldest first. */
  readonly listUsers: Effect.Effect<ReadonlyArray<User>, StorageError>
  readonly setPassword: (userId: string, passwordHash: string) => Effect.Effect<void, StorageError>

  /** Sets a user's role in an organisation (inserting the membership or changing its role). */
  readonly putMembership: (membership: Membership) => Effect.Effect<void, StorageError>
  /** Removes a membership; false when there was none. */
  readonly removeMembership: (userId: string, organisationId: string) => Effect.Effect<boolean, StorageError>
  /** The memberships of a user, oldest first. */
  readonly membershipsOfUser: (userId: string) => Effect.Effect<ReadonlyArray<Membership>, StorageError>
  /** The memberships of an organisation, oldest first. */
  readonly membersOf: (organisationId: string) => Effect.Effect<ReadonlyArray<Membership>, StorageError>

  readonly insertSession: (session: SessionRecord) => Effect.Effect<void, StorageError>
  readonly findSessionByHash: (tokenHash: string) => Effect.Effect<Option.Option<SessionRecord>, StorageError>
  /** Records a session's use at `at` (its `last_seen_at`, which never moves back). */
  readonly touchSession: (id: string, at: number) => Effect.Effect<void, StorageError>
  /** The sessions of a user, newest first. */
  readonly sessionsOfUser: (userId: string) => Effect.Effect<ReadonlyArray<SessionRecord>, StorageError>
  /** Ends one session of a user; false when the user has no such session. */
  readonly deleteSession: (userId: string, id: string) => Effect.Effect<boolean, StorageError>
  /** Ends every session of a user but `except` (when given). */
  readonly deleteSessionsOfUser: (userId: string, except: string | null) => Effect.Effect<void, StorageError>
  /** Removes the sessions that ended (idle since `idleBefore` or expired by `now`). */
  readonly deleteEndedSessions: (idleBefore: number, now: number) => Effect.Effect<void, StorageError>

  readonly insertInvitation: (invitation: Invitation) => Effect.Effect<void, StorageError>
  readonly findInvitationByHash: (tokenHash: string) => Effect.Effect<Option.Option<Invitation>, StorageError>
  /** An organisation's invitations not yet accepted, newest first (expired ones included). */
  readonly pendingInvitations: (organisationId: string) => Effect.Effect<ReadonlyArray<Invitation>, StorageError>
  /** Withdraws an invitation not yet accepted; false when there was none. */
  readonly deleteInvitation: (organisationId: string, id: string) => Effect.Effect<boolean, StorageError>
  /**
   * Atomically: marks the invitation accepted at `at` when it is unaccepted and `at` is before its
   * expiry (else `unusable`), inserts `user` when given (`email_taken` if its e-mail is, and then
   * nothing is stored), puts the memberships and appends the audit entries.
   */
  readonly acceptInvitation: (accept: {
    readonly invitationId: string
    readonly at: number
    readonly user: User | null
    readonly memberships: ReadonlyArray<Membership>
    readonly audit: ReadonlyArray<Omit<AuditEntry, "seq">>
  }) => Effect.Effect<Acceptance, StorageError>

  /** Appends entries to the audit log, in order. */
  readonly appendAudit: (entries: ReadonlyArray<Omit<AuditEntry, "seq">>) => Effect.Effect<void, StorageError>
  /**
   * The newest entries of the organisations given (null: the account and operator entries),
   * at most `limit`, newest first, with `seq` below `before` when given.
   */
  readonly auditOf: (query: {
    readonly organisationIds: ReadonlyArray<string | null>
    readonly limit: number
    readonly before?: number | undefined
  }) => Effect.Effect<ReadonlyArray<AuditEntry>, StorageError>
}>() {}

const newestFirst = <A extends { readonly created_at: number }>(a: A, b: A) => b.created_at - a.created_at

/** A {@link UserStore} in memory, with the semantics of the SQL adapters (the contract suite runs against it). */
export const makeMemory: Effect.Effect<UserStore["Type"]> = Effect.sync(() => {
  const users = new Map<string, User>()
  const byEmail = new Map<string, string>()
  const memberships = new Map<string, Membership>()
  const sessions = new Map<string, SessionRecord>()
  const invitations = new Map<string, Invitation>()
  const audit: Array<AuditEntry> = []
  const membershipKey = (userId: string, organisationId: string) => JSON.stringify([userId, organisationId])
  const insertUser = (user: User) => {
    if (byEmail.has(user.email_key)) return false
    users.set(user.id, user)
    byEmail.set(user.email_key, user.id)
    return true
  }
  const appendAudit = (entries: ReadonlyArray<Omit<AuditEntry, "seq">>) => {
    for (const entry of entries) audit.push({ ...entry, seq: audit.length + 1 })
  }
  return UserStore.of({
    insertUser: (user) => Effect.sync(() => insertUser(user)),
    getUser: (id) => Effect.sync(() => Option.fromNullable(users.get(id))),
    findUserByEmail: (emailKey) => Effect.sync(() => Option.fromNullable(users.get(byEmail.get(emailKey) ?? ""))),
    hasUsers: Effect.sync(() => users.size > 0),
    listUsers: Effect.sync(() => [...users.values()].sort((a, b) => a.created_at - b.created_at)),
    setPassword: (userId, passwordHash) =>
      Effect.sync(() => {
        const user = users.get(userId)
        if (user !== undefined) users.set(userId, { ...user, password_hash: passwordHash })
      }),
    putMembership: (m) =>
      Effect.sync(() => {
        const key = membershipKey(m.user_id, m.organisation_id)
        const existing = memberships.get(key)
        memberships.set(key, existing === undefined ? m : { ...existing, role: m.role })
      }),
    removeMembership: (userId, organisationId) =>
      Effect.sync(() => memberships.delete(membershipKey(userId, organisationId))),
    membershipsOfUser: (userId) =>
      Effect.sync(() =>
        [...memberships.values()].filter((m) => m.user_id === userId).sort((a, b) => a.created_at - b.created_at)
      ),
    membersOf: (organisationId) =>
      Effect.sync(() =>
        [...memberships.values()].filter((m) => m.organisation_id === organisationId)
          .sort((a, b) => a.created_at - b.created_at)
      ),
    insertSession: (session) => Effect.sync(() => void sessions.set(session.id, session)),
    findSessionByHash: (tokenHash) =>
      Effect.sync(() => Option.fromNullable([...sessions.values()].find((s) => s.token_hash === tokenHash))),
    touchSession: (id, at) =>
      Effect.sync(() => {
        const session = sessions.get(id)
        if (session !== undefined) sessions.set(id, { ...session, last_seen_at: Math.max(session.last_seen_at, at) })
      }),
    sessionsOfUser: (userId) =>
      Effect.sync(() => [...sessions.values()].filter((s) => s.user_id === userId).sort(newestFirst)),
    deleteSession: (userId, id) => Effect.sync(() => sessions.get(id)?.user_id === userId && sessions.delete(id)),
    deleteSessionsOfUser: (userId, except) =>
      Effect.sync(() => {
        for (const s of [...sessions.values()]) if (s.user_id === userId && s.id !== except) sessions.delete(s.id)
      }),
    deleteEndedSessions: (idleBefore, now) =>
      Effect.sync(() => {
        for (const s of [...sessions.values()]) {
          if (s.last_seen_at < idleBefore || s.expires_at <= now) sessions.delete(s.id)
        }
      }),
    insertInvitation: (invitation) => Effect.sync(() => void invitations.set(invitation.id, invitation)),
    findInvitationByHash: (tokenHash) =>
      Effect.sync(() => Option.fromNullable([...invitations.values()].find((i) => i.token_hash === tokenHash))),
    pendingInvitations: (organisationId) =>
      Effect.sync(() =>
        [...invitations.values()].filter((i) => i.organisation_id === organisationId && i.accepted_at === null)
          .sort(newestFirst)
      ),
    deleteInvitation: (organisationId, id) =>
      Effect.sync(() => {
        const invitation = invitations.get(id)
        if (invitation?.organisation_id !== organisationId || invitation.accepted_at !== null) return false
        return invitations.delete(id)
      }),
    acceptInvitation: ({ at, audit: entries, invitationId, memberships: granted, user }) =>
      Effect.sync((): Acceptance => {
        const invitation = invitations.get(invitationId)
        if (invitation === undefined || invitation.accepted_at !== null || at >= invitation.expires_at) {
          return "unusable"
        }
        if (user !== null && !insertUser(user)) return "email_taken"
        invitations.set(invitationId, { ...invitation, accepted_at: at })
        for (const m of granted) {
          const key = membershipKey(m.user_id, m.organisation_id)
          const existing = memberships.get(key)
          memberships.set(key, existing === undefined ? m : { ...existing, role: m.role })
        }
        appendAudit(entries)
        return "accepted"
      }),
    appendAudit: (entries) => Effect.sync(() => appendAudit(entries)),
    auditOf: ({ before, limit, organisationIds }) =>
      Effect.sync(() => {
        const out: Array<AuditEntry> = []
        for (let i = audit.length - 1; i >= 0 && out.length < limit; i--) {
          const entry = audit[i]!
          if ((before === undefined || entry.seq < before) && organisationIds.includes(entry.organisation_id)) {
            out.push(entry)
          }
        }
        return out
      })
  })
})

/** {@link makeMemory} as a layer. */
export const layerMemory: Layer.Layer<UserStore> = Layer.effect(UserStore, makeMemory)
