/**
 * People of the web application: users, their memberships of organisations with a role, their
 * sessions, the invitations that bring them in, and the audit log of what they change.
 *
 * @module
 */
import { Schema } from "effect"

/**
 * A member's role in one organisation, from least to most: a `viewer` reads; a `member` also
 * operates (Send test, Retry, refresh tracking); an `admin` also configures (API and widget keys,
 * automations) and manages members below owner; an `owner` may do everything, owners included.
 */
export const Role = Schema.Literal("viewer", "member", "admin", "owner")
export type Role = typeof Role.Type

/** The roles from least to most. */
export const roles: ReadonlyArray<Role> = ["viewer", "member", "admin", "owner"]

/**
 * A user: `email` as given (trimmed), unique ignoring case (`email_key`, its lower case);
 * `password_hash` a self-describing scrypt hash (see `Users`). An `operator` runs the service:
 * every organisation, and the operator area.
 */
export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  email_key: Schema.String,
  password_hash: Schema.String,
  operator: Schema.Boolean,
  created_at: Schema.Number
})
export type User = typeof User.Type

/**
 * A user's role in one organisation. The `(UAT)` companion of a live organisation is an
 * organisation of its own: access to it is a membership of its own, granted per user.
 */
export const Membership = Schema.Struct({
  user_id: Schema.String,
  organisation_id: Schema.String,
  role: Role,
  created_at: Schema.Number
})
export type Membership = typeof Membership.Type

/**
 * A signed-in session, stored by the SHA-256 of its token (the cookie's value is never stored).
 * It ends `idle` after its last use or at `expires_at`, whichever comes first.
 */
export const SessionRecord = Schema.Struct({
  id: Schema.String,
  token_hash: Schema.String,
  user_id: Schema.String,
  created_at: Schema.Number,
  last_seen_at: Schema.Number,
  expires_at: Schema.Number,
  user_agent: Schema.String,
  address: Schema.String
})
export type SessionRecord = typeof SessionRecord.Type

/**
 * An invitation to join an organisation with a role (and its `(UAT)` companion when `uat`): a
 * single-use link whose token is stored only as its SHA-256, valid until `expires_at`.
 */
export const Invitation = Schema.Struct({
  id: Schema.String,
  token_hash: Schema.String,
  organisation_id: Schema.String,
  email: Schema.String,
  role: Role,
  uat: Schema.Boolean,
  invited_by: Schema.String,
  created_at: Schema.Number,
  expires_at: Schema.Number,
  accepted_at: Schema.NullOr(Schema.Number)
})
export type Invitation = typeof Invitation.Type

/**
 * One change, for the audit log: who (`actor`, a user's e-mail or `operator token`), what
 * (`action`, e.g. `api_key.created`, and `target`, what it was done to), when, in which
 * organisation (null for a change of one's own account or of the operator area).
 */
export const AuditEntry = Schema.Struct({
  seq: Schema.Number,
  organisation_id: Schema.NullOr(Schema.String),
  actor: Schema.String,
  action: Schema.String,
  target: Schema.String,
  at: Schema.Number
})
export type AuditEntry = typeof AuditEntry.Type
