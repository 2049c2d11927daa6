/**
 * Errors of authentication and the console's account operations.
 *
 * @module
 */
import { Schema } from "effect"

/** Missing or unknown API key. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  detail: Schema.String
}) {}

/** The API key was revoked. */
export class KeyRevoked extends Schema.TaggedError<KeyRevoked>()("KeyRevoked", {}) {}

/** No organisation with this id. */
export class OrganisationNotFound extends Schema.TaggedError<OrganisationNotFound>()("OrganisationNotFound", {
  id: Schema.String
}) {}

/** No API key with this id. */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  id: Schema.String
}) {}

/** The operation does not apply to this organisation (for example a production key for a UAT organisation). */
export class InvalidOrganisationRequest
  extends Schema.TaggedError<InvalidOrganisationRequest>()("InvalidOrganisationRequest", {
    detail: Schema.String
  })
{}
