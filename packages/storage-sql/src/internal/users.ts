import { SqlClient } from "@effect/sql"
import { type User, UserStore } from "@tradeflow/core"
import { Data, Effect, Option } from "effect"
import {
  chunks,
  decodeAuditEntries,
  decodeInvitations,
  decodeMemberships,
  decodeSessions,
  decodeUsers,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"

/** An accepted invitation's user whose e-mail is taken: fails its transaction, so that it rolls back. */
class EmailTaken extends Data.TaggedError("EmailTaken") {}

type NewAuditEntry = Omit<User.AuditEntry, "seq">

/**
 * `UserStore` over the `SqlClient`: a table per kind (`users`, `memberships`, `sessions`,
 * `invitations`, `audit_log`). Rows of one instant keep their insertion order (`rowid` or
 * `position`), as the memory adapter's stable sorts do; a row replaced by id (a session or an
 * invitation inserted again, a membership put again) keeps its place.
 *
 * `insertUser` relies on the unique `email_key` (`ON CONFLICT DO NOTHING`), so two processes
 * inserting one e-mail store one user. `acceptInvitation` is one transaction that starts with a
 * conditional `UPDATE` of the invitation (unaccepted, not expired at `at`), which answers whether it
 * took the invitation: on PostgreSQL a second transaction waits for the row's lock and, once the
 * first commits, finds it accepted; SQLite has one writer. An e-mail taken fails the transaction,
 * which rolls back the invitation's update with everything else.
 */
export const make: Effect.Effect<UserStore.UserStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { bool, chunk, insertionOrder, number } = dialectOf(sql)

  const selectUser = sql`SELECT id, email, email_key, password_hash, operator, created_at FROM users`
  const selectMembership = sql`SELECT user_id, organisation_id, role, created_at FROM memberships`
  const selectSession = sql`SELECT id, token_hash, user_id, created_at, last_seen_at, expires_at, user_agent, address
    FROM sessions`
  const selectInvitation = sql`SELECT id, token_hash, organisation_id, email, role, uat, invited_by, created_at,
    expires_at, accepted_at FROM invitations`
  const selectAudit = sql`SELECT ${number("seq")} AS seq, organisation_id, actor, action, target, at FROM audit_log`

  /** Inserts the user unless its `email_key` is taken; answers whether it did. */
  const insertUser = (user: User.User) =>
    Effect.map(
      sql`INSERT INTO users ${
        sql.insert({
          id: user.id,
          email: user.email,
          email_key: user.email_key,
          password_hash: user.password_hash,
          operator: bool(user.operator),
          created_at: user.created_at
        })
      } ON CONFLICT (email_key) DO NOTHING RETURNING id`,
      (rows) => rows.length > 0
    )

  const putMembership = (m: User.Membership) =>
    sql`INSERT INTO memberships (user_id, organisation_id, role, created_at)
    VALUES (${m.user_id}, ${m.organisation_id}, ${m.role}, ${m.created_at})
    ON CONFLICT (user_id, organisation_id) DO UPDATE SET role = excluded.role`

  const appendAudit = (entries: ReadonlyArray<NewAuditEntry>) =>
    Effect.forEach(
      chunks(entries, 100),
      (part) =>
        sql`INSERT INTO audit_log ${
          sql.insert(part.map((e) => ({
            organisation_id: e.organisation_id,
            actor: e.actor,
            action: e.action,
            target: e.target,
            at: e.at
          })))
        }`,
      { discard: true }
    )

  return UserStore.UserStore.of({
    insertUser: Effect.fn("UserStore.insertUser")(function*(user: User.User) {
      return yield* insertUser(user)
    }, storageError("UserStore.insertUser")),
    getUser: Effect.fn("UserStore.getUser")(function*(id: string) {
      return Option.fromNullable((yield* decodeUsers(yield* sql`${selectUser} WHERE id = ${id}`))[0])
    }, storageError("UserStore.getUser")),
    findUserByEmail: Effect.fn("UserStore.findUserByEmail")(function*(emailKey: string) {
      return Option.fromNullable((yield* decodeUsers(yield* sql`${selectUser} WHERE email_key = ${emailKey}`))[0])
    }, storageError("UserStore.findUserByEmail")),
    hasUsers: sql`SELECT id FROM users LIMIT 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("UserStore.hasUsers"),
      Effect.withSpan("UserStore.hasUsers")
    ),
    listUsers: sql`${selectUser} ORDER BY created_at, ${insertionOrder}`.pipe(
      Effect.flatMap(decodeUsers),
      storageError("UserStore.listUsers"),
      Effect.withSpan("UserStore.listUsers")
    ),
    setPassword: Effect.fn("UserStore.setPassword")(function*(userId: string, passwordHash: string) {
      yield* sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${userId}`
    }, storageError("UserStore.setPassword")),

    putMembership: Effect.fn("UserStore.putMembership")(function*(membership: User.Membership) {
      yield* putMembership(membership)
    }, storageError("UserStore.putMembership")),
    removeMembership: Effect.fn("UserStore.removeMembership")(function*(userId: string, organisationId: string) {
      const rows = yield* sql`DELETE FROM memberships WHERE user_id = ${userId} AND organisation_id = ${organisationId}
        RETURNING user_id`
      return rows.length > 0
    }, storageError("UserStore.removeMembership")),
    membershipsOfUser: Effect.fn("UserStore.membershipsOfUser")(function*(userId: string) {
      return yield* decodeMemberships(
        yield* sql`${selectMembership} WHERE user_id = ${userId} ORDER BY created_at, ${insertionOrder}`
      )
    }, storageError("UserStore.membershipsOfUser")),
    membersOf: Effect.fn("UserStore.membersOf")(function*(organisationId: string) {
      return yield* decodeMemberships(
        yield* sql`${selectMembership} WHERE organisation_id = ${organisationId} ORDER BY created_at, ${insertionOrder}`
      )
    }, storageError("UserStore.membersOf")),

    insertSession: Effect.fn("UserStore.insertSession")(function*(s: User.SessionRecord) {
      yield* sql`INSERT INTO sessions (id, token_hash, user_id, created_at, last_seen_at, expires_at, user_agent, address)
      VALUES (${s.id}, ${s.token_hash}, ${s.user_id}, ${s.created_at}, ${s.last_seen_at}, ${s.expires_at},
        ${s.user_agent}, ${s.address})
      ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, user_id = excluded.user_id,
        created_at = excluded.created_at, last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at,
        user_agent = excluded.user_agent, address = excluded.address`
    }, storageError("UserStore.insertSession")),
    findSessionByHash: Effect.fn("UserStore.findSessionByHash")(function*(tokenHash: string) {
      return Option.fromNullable(
        (yield* decodeSessions(yield* sql`${selectSession} WHERE token_hash = ${tokenHash}`))[0]
      )
    }, storageError("UserStore.findSessionByHash")),
    touchSession: Effect.fn("UserStore.touchSession")(function*(id: string, at: number) {
      yield* sql`UPDATE sessions SET last_seen_at = ${at} WHERE id = ${id} AND last_seen_at < ${at}`
    }, storageError("UserStore.touchSession")),
    sessionsOfUser: Effect.fn("UserStore.sessionsOfUser")(function*(userId: string) {
      return yield* decodeSessions(
        yield* sql`${selectSession} WHERE user_id = ${userId} ORDER BY created_at DESC, ${insertionOrder}`
      )
    }, storageError("UserStore.sessionsOfUser")),
    deleteSession: Effect.fn("UserStore.deleteSession")(function*(userId: string, id: string) {
      const rows = yield* sql`DELETE FROM sessions WHERE id = ${id} AND user_id = ${userId} RETURNING id`
      return rows.length > 0
    }, storageError("UserStore.deleteSession")),
    deleteSessionsOfUser: Effect.fn("UserStore.deleteSessionsOfUser")(function*(userId: string, except: string | null) {
      yield* except === null
        ? sql`DELETE FROM sessions WHERE user_id = ${userId}`
        : sql`DELETE FROM sessions WHERE user_id = ${userId} AND id <> ${except}`
    }, storageError("UserStore.deleteSessionsOfUser")),
    deleteEndedSessions: Effect.fn("UserStore.deleteEndedSessions")(function*(idleBefore: number, now: number) {
      yield* sql`DELETE FROM sessions WHERE last_seen_at < ${idleBefore} OR expires_at <= ${now}`
    }, storageError("UserStore.deleteEndedSessions")),

    insertInvitation: Effect.fn("UserStore.insertInvitation")(function*(i: User.Invitation) {
      yield* sql`INSERT INTO invitations
        (id, token_hash, organisation_id, email, role, uat, invited_by, created_at, expires_at, accepted_at)
      VALUES (${i.id}, ${i.token_hash}, ${i.organisation_id}, ${i.email}, ${i.role}, ${bool(i.uat)}, ${i.invited_by},
        ${i.created_at}, ${i.expires_at}, ${i.accepted_at})
      ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, organisation_id = excluded.organisation_id,
        email = excluded.email, role = excluded.role, uat = excluded.uat, invited_by = excluded.invited_by,
        created_at = excluded.created_at, expires_at = excluded.expires_at, accepted_at = excluded.accepted_at`
    }, storageError("UserStore.insertInvitation")),
    findInvitationByHash: Effect.fn("UserStore.findInvitationByHash")(function*(tokenHash: string) {
      return Option.fromNullable(
        (yield* decodeInvitations(yield* sql`${selectInvitation} WHERE token_hash = ${tokenHash}`))[0]
      )
    }, storageError("UserStore.findInvitationByHash")),
    pendingInvitations: Effect.fn("UserStore.pendingInvitations")(function*(organisationId: string) {
      return yield* decodeInvitations(
        yield* sql`${selectInvitation} WHERE organisation_id = ${organisationId} AND accepted_at IS NULL
          ORDER BY created_at DESC, ${insertionOrder}`
      )
    }, storageError("UserStore.pendingInvitations")),
    deleteInvitation: Effect.fn("UserStore.deleteInvitation")(function*(organisationId: string, id: string) {
      const rows = yield* sql`DELETE FROM invitations
        WHERE id = ${id} AND organisation_id = ${organisationId} AND accepted_at IS NULL RETURNING id`
      return rows.length > 0
    }, storageError("UserStore.deleteInvitation")),
    acceptInvitation: Effect.fn("UserStore.acceptInvitation")(function*(accept: {
      readonly invitationId: string
      readonly at: number
      readonly user: User.User | null
      readonly memberships: ReadonlyArray<User.Membership>
      readonly audit: ReadonlyArray<NewAuditEntry>
    }) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        const taken = yield* sql`UPDATE invitations SET accepted_at = ${accept.at}
          WHERE id = ${accept.invitationId} AND accepted_at IS NULL AND expires_at > ${accept.at} RETURNING id`
        if (taken.length === 0) return "unusable" as const
        if (accept.user !== null && !(yield* insertUser(accept.user))) return yield* new EmailTaken()
        for (const m of accept.memberships) yield* putMembership(m)
        yield* appendAudit(accept.audit)
        return "accepted" as const
      })).pipe(Effect.catchTag("EmailTaken", () => Effect.succeed("email_taken" as const)))
    }, storageError("UserStore.acceptInvitation")),

    appendAudit: Effect.fn("UserStore.appendAudit")(function*(entries: ReadonlyArray<NewAuditEntry>) {
      if (entries.length === 0) return
      yield* entries.length > 100 ? sql.withTransaction(appendAudit(entries)) : appendAudit(entries)
    }, storageError("UserStore.appendAudit")),
    auditOf: Effect.fn("UserStore.auditOf")(function*(query: {
      readonly organisationIds: ReadonlyArray<string | null>
      readonly limit: number
      readonly before?: number | undefined
    }) {
      // a seq is an integer: below `before` is below its ceiling (bound as an integer, as the column is)
      const before = query.before === undefined ? undefined : Math.ceil(query.before)
      const limit = query.limit > 0 ? Math.ceil(query.limit) : 0
      if (limit === 0 || Number.isNaN(before) || (before !== undefined && before < -Number.MAX_SAFE_INTEGER)) return []
      const ids = [...new Set(query.organisationIds)]
      const named = ids.filter((id): id is string => id !== null)
      const scopes = [
        ...chunks(named, chunk).map((part) => sql.in("organisation_id", part)),
        ...(ids.includes(null) ? [sql`organisation_id IS NULL`] : [])
      ]
      // bounds beyond every seq bind as no bound (a bigint parameter takes no exponent)
      const below = before === undefined || before > Number.MAX_SAFE_INTEGER ? sql`` : sql` AND seq < ${before}`
      const limited = limit > Number.MAX_SAFE_INTEGER ? sql`` : sql` LIMIT ${limit}`
      const found: Array<User.AuditEntry> = []
      for (const scope of scopes) {
        found.push(
          ...yield* decodeAuditEntries(yield* sql`${selectAudit} WHERE ${scope}${below} ORDER BY seq DESC${limited}`)
        )
      }
      return scopes.length > 1 ? found.sort((a, b) => b.seq - a.seq).slice(0, limit) : found
    }, storageError("UserStore.auditOf"))
  })
})
