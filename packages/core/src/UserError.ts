/**
 * Errors of the web application's people: sign-in, sessions, permissions, invitations and members.
 *
 * @module
 */
import { Schema } from "effect"
import { Role } from "./User.js"

/** Sign-in refused: the same error whatever was wrong (unknown e-mail or wrong password). */
export class SignInFailed extends Schema.TaggedError<SignInFailed>()("SignInFailed", {}) {}

/** No session: none was given, it is unknown, or it ended (idle or absolute timeout). */
export class NotSignedIn extends Schema.TaggedError<NotSignedIn>()("NotSignedIn", {}) {}

/** The user's role in the organisation does not permit the action (`role` null: not a member). */
export class NotPermitted extends Schema.TaggedError<NotPermitted>()("NotPermitted", {
  action: Schema.String,
  role: Schema.NullOr(Role)
}) {}

/** The invitation link is unknown, used already or expired: the same error for each. */
export class InvitationUnusable extends Schema.TaggedError<InvitationUnusable>()("InvitationUnusable", {}) {}

/** A request about people that cannot be done, with why (`field` names the input at fault). */
export class InvalidUserRequest extends Schema.TaggedError<InvalidUserRequest>()("InvalidUserRequest", {
  field: Schema.String,
  detail: Schema.String
}) {}

/** No member (or session) with this id in this organisation (or account). */
export class MemberNotFound extends Schema.TaggedError<MemberNotFound>()("MemberNotFound", {
  id: Schema.String
}) {}
