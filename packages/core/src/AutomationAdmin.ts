/**
 * Service: the administration of an organisation's webhook automations (DECISIONS.md §4, §6):
 * create, list, enable, disable, delete and secret rotation, and the bodies they take and answer.
 * The automation itself is `Automation`; where automations are kept, the `AutomationStore` port.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { OrganisationNotFound } from "./AccountError.js"
import { Automation, AutomationFormat, IntegrationType } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import { Issue } from "./DownstreamError.js"
import { randomId } from "./internal/crypto.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StorageError } from "./StorageError.js"

/** How long a rotated-out secret keeps signing deliveries: 24 hours. */
export const previousSecretMillis = 24 * 60 * 60 * 1000

/** The longest accepted destination URL. */
export const maxUrlLength = 2048

/** The formats of an automation. */
export const formats: ReadonlyArray<AutomationFormat> = AutomationFormat.literals

/** The integration types, the default `types` of an automation. */
export const integrationTypes: ReadonlyArray<IntegrationType> = IntegrationType.literals

/** The automation request does not satisfy the rules; nothing was stored. */
export class InvalidAutomation extends Schema.TaggedError<InvalidAutomation>()("InvalidAutomation", {
  errors: Schema.Array(Issue)
}) {}

/** No automation with this id. */
export class AutomationNotFound extends Schema.TaggedError<AutomationNotFound>()("AutomationNotFound", {
  id: Schema.String
}) {}

/**
 * What an automation is created from (the body of `POST /console/organisations/:id/automations`);
 * everything but `url` has a default. The service checks the URL and `types` (BASIC_STATUS is
 * refused, it is not an integration type).
 */
export const NewAutomation = Schema.Struct({
  url: Schema.String.annotations({
    description: "An absolute https URL (http only when private destinations are allowed)"
  }),
  format: Schema.optional(AutomationFormat.annotations({ description: "Default: message" })),
  types: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description: `A non-empty list of ${IntegrationType.literals.join(", ")} (default: all of them)`
    })
  ),
  enabled: Schema.optional(Schema.Boolean.annotations({ description: "Default: false (enable it after configuring)" }))
}).annotations({ identifier: "NewAutomation" })
export type NewAutomation = typeof NewAutomation.Type

/** A freshly created automation: `secret` (`whsec_…`) is shown once. */
export const CreatedAutomation = Schema.Struct({
  ...Struct.pick(Automation.fields, "id", "url", "format", "types", "enabled"),
  secret: Schema.String.annotations({ description: "The signing secret (whsec_…), shown once" })
}).annotations({ identifier: "CreatedAutomation" })
export type CreatedAutomation = typeof CreatedAutomation.Type

/** An automation as listed (never its secrets); instants as ISO 8601. */
export const AutomationInfo = Schema.Struct({
  ...Struct.pick(Automation.fields, "id", "organisation_id", "url", "format", "types", "enabled"),
  disabled_reason: Automation.fields.disabled_reason.annotations({
    description: "Why the service disabled it (the receiver answered 410, or it failed for 5 days); null otherwise"
  }),
  failing_since: Schema.NullOr(Schema.String).annotations({
    description: "Since when every delivery failed (ISO 8601)"
  }),
  created_at: Schema.String
}).annotations({ identifier: "Automation" })
export type AutomationInfo = typeof AutomationInfo.Type

/** The answer of a secret rotation. */
export const RotatedSecret = Schema.Struct({
  secret: Schema.String.annotations({
    description: "The new signing secret; the previous one stays valid for 24 hours"
  })
}).annotations({ identifier: "RotatedSecret" })
export type RotatedSecret = typeof RotatedSecret.Type

export class AutomationAdmin extends Context.Tag("@tradeflow/core/AutomationAdmin")<AutomationAdmin, {
  /** Creates an automation of an organisation (UAT destinations on its `(UAT)` companion). */
  readonly create: (organisationId: string, input: NewAutomation) => Effect.Effect<
    CreatedAutomation,
    InvalidAutomation | OrganisationNotFound | StorageError
  >
  /** The organisation's automations, oldest first. */
  readonly list: (
    organisationId: string
  ) => Effect.Effect<ReadonlyArray<AutomationInfo>, OrganisationNotFound | StorageError>
  readonly get: (id: string) => Effect.Effect<AutomationInfo, AutomationNotFound | StorageError>
  /**
   * Changes an automation's URL, format and types (checked as {@link validate} checks a new one);
   * its secrets, state and deliveries already queued are kept.
   */
  readonly update: (
    id: string,
    change: { readonly url: string; readonly format: AutomationFormat; readonly types: ReadonlyArray<string> }
  ) => Effect.Effect<AutomationInfo, InvalidAutomation | AutomationNotFound | StorageError>
  /** Enables an automation; clears `disabled_reason` and `failing_since`. */
  readonly enable: (id: string) => Effect.Effect<AutomationInfo, AutomationNotFound | StorageError>
  /** Disables an automation by hand (`disabled_reason` null). */
  readonly disable: (id: string) => Effect.Effect<AutomationInfo, AutomationNotFound | StorageError>
  readonly remove: (id: string) => Effect.Effect<void, AutomationNotFound | StorageError>
  /**
   * Makes a new current secret; the previous one keeps signing for {@link previousSecretMillis}
   * and already-expired ones are dropped.
   */
  readonly rotateSecret: (id: string) => Effect.Effect<RotatedSecret, AutomationNotFound | StorageError>
}>() {}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export const generateSecret = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32))
  let s = ""
  for (const b of bytes) s += String.fromCharCode(b)
  return `whsec_${btoa(s)}`
}

const iso = (millis: number): string => new Date(millis).toISOString()

/** The listed form of a stored automation. */
export const info = (a: Automation): AutomationInfo => ({
  id: a.id,
  organisation_id: a.organisation_id,
  url: a.url,
  format: a.format,
  types: a.types,
  enabled: a.enabled,
  disabled_reason: a.disabled_reason,
  failing_since: a.failing_since === null ? null : iso(a.failing_since),
  created_at: iso(a.created_at)
})

const urlIssue = (url: unknown): string | undefined => {
  if (typeof url !== "string" || url.trim() === "") return "is required: an absolute http(s) URL"
  if (url.length > maxUrlLength) return `must be at most ${maxUrlLength} characters`
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "must be an absolute http(s) URL"
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return `scheme ${parsed.protocol} is not allowed; use https`
  }
  if (parsed.hostname === "") return "must name a host"
  if (parsed.username !== "" || parsed.password !== "") return "must not carry credentials"
  return undefined
}

/** @inline */
type Validated = {
  readonly url: string
  readonly format: AutomationFormat
  readonly types: ReadonlyArray<IntegrationType>
}

/**
 * Checks a new automation: an absolute http(s) URL without credentials, a known format and a
 * non-empty list of integration types (BASIC_STATUS is refused). Issues carry JSON Pointers.
 */
export const validate = (input: NewAutomation): Effect.Effect<Validated, InvalidAutomation> => {
  const errors: Array<{ path: string; message: string }> = []
  const url = urlIssue(input.url)
  if (url !== undefined) errors.push({ path: "/url", message: url })
  const format = input.format ?? "message"
  if (!(formats as ReadonlyArray<string>).includes(format)) {
    errors.push({ path: "/format", message: `must be one of ${formats.join(", ")}` })
  }
  const types = input.types ?? integrationTypes
  if (types.length === 0) {
    errors.push({ path: "/types", message: `must name at least one of ${integrationTypes.join(", ")}` })
  }
  types.forEach((t, i) => {
    if (t === "BASIC_STATUS") {
      errors.push({
        path: `/types/${i}`,
        message: `BASIC_STATUS is not an integration type; use ${integrationTypes.join(", ")}`
      })
    } else if (!(integrationTypes as ReadonlyArray<string>).includes(t)) {
      errors.push({
        path: `/types/${i}`,
        message: `unknown type ${JSON.stringify(t)}; use ${integrationTypes.join(", ")}`
      })
    }
  })
  if (errors.length > 0) return Effect.fail(new InvalidAutomation({ errors }))
  return Effect.succeed({
    url: input.url,
    format: format as AutomationFormat,
    types: [...new Set(types as ReadonlyArray<IntegrationType>)]
  })
}

/** The automation administration over the {@link AutomationStore} and {@link OrganisationStore} ports. */
export const layer: Layer.Layer<AutomationAdmin, never, AutomationStore | OrganisationStore> = Layer.effect(
  AutomationAdmin,
  Effect.gen(function*() {
    const store = yield* AutomationStore
    const organisations = yield* OrganisationStore

    const organisation = (id: string) =>
      organisations.get(id).pipe(Effect.flatMap(Option.match({
        onNone: () => new OrganisationNotFound({ id }),
        onSome: Effect.succeed
      })))

    const automation = (id: string) =>
      store.get(id).pipe(Effect.flatMap(Option.match({
        onNone: () => new AutomationNotFound({ id }),
        onSome: Effect.succeed
      })))

    const update = (id: string, f: (a: Automation, now: number) => Automation) =>
      Effect.gen(function*() {
        const current = yield* automation(id)
        const next = f(current, yield* Clock.currentTimeMillis)
        yield* store.put(next)
        return next
      })

    return AutomationAdmin.of({
      create: Effect.fn("AutomationAdmin.create")(function*(organisationId: string, input: NewAutomation) {
        const valid = yield* validate(input)
        const owner = yield* organisation(organisationId)
        const now = yield* Clock.currentTimeMillis
        const secret = generateSecret()
        const created: Automation = {
          id: randomId("auto"),
          organisation_id: owner.id,
          url: valid.url,
          format: valid.format,
          types: valid.types,
          enabled: input.enabled === true,
          secrets: [{ secret, expires_at: null }],
          disabled_reason: null,
          failing_since: null,
          created_at: now,
          updated_at: now
        }
        yield* store.put(created)
        return {
          id: created.id,
          url: created.url,
          format: created.format,
          types: created.types,
          enabled: created.enabled,
          secret
        }
      }),
      list: Effect.fn("AutomationAdmin.list")(function*(organisationId: string) {
        yield* organisation(organisationId)
        return (yield* store.list(organisationId)).map(info)
      }),
      get: Effect.fn("AutomationAdmin.get")(function*(id: string) {
        return info(yield* automation(id))
      }),
      update: Effect.fn("AutomationAdmin.update")(
        function*(id: string, change: { url: string; format: AutomationFormat; types: ReadonlyArray<string> }) {
          const valid = yield* validate(change)
          return info(yield* update(id, (a, now) => ({ ...a, ...valid, updated_at: now })))
        }
      ),
      enable: Effect.fn("AutomationAdmin.enable")(function*(id: string) {
        return info(
          yield* update(id, (a, now) => ({
            ...a,
            enabled: true,
            disabled_reason: null,
            failing_since: null,
            updated_at: now
          }))
        )
      }),
      disable: Effect.fn("AutomationAdmin.disable")(function*(id: string) {
        return info(yield* update(id, (a, now) => ({ ...a, enabled: false, disabled_reason: null, updated_at: now })))
      }),
      remove: Effect.fn("AutomationAdmin.remove")(function*(id: string) {
        if (!(yield* store.remove(id))) return yield* new AutomationNotFound({ id })
      }),
      rotateSecret: Effect.fn("AutomationAdmin.rotateSecret")(function*(id: string) {
        const secret = generateSecret()
        yield* update(id, (a, now) => {
          const [current, ...older] = a.secrets
          const kept = older.filter((s) => s.expires_at !== null && s.expires_at > now)
          return {
            ...a,
            secrets: [
              { secret, expires_at: null },
              { secret: current.secret, expires_at: now + previousSecretMillis },
              ...kept
            ],
            updated_at: now
          }
        })
        return { secret }
      })
    })
  })
)
