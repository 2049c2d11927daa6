import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import {
  AccountError,
  Accounts,
  ApiMessage,
  AutomationAdmin,
  DeliveryAdmin,
  Documents,
  DownstreamError,
  JobAdmin,
  Permission,
  type StorageError,
  TrackingAdmin,
  Users,
  Validation,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import { Effect, Either, Option, Schema } from "effect"
import { Api, NewApiKey, NewOrganisation } from "../Api.js"
import { ConsoleActor } from "../Authentication.js"
import * as Problem from "../Problem.js"
import { RequestBodies } from "./body.js"
import { attachment } from "./contentDisposition.js"
import { type CoreError, mapCoreErrors, noneWithId, toProblem } from "./errors.js"

/**
 * Decodes a console body: 422 naming each field, as the record rules do (`name must be a string,
 * got an array`), never with the value sent (Schema's formatter prints it whole, recursively: a
 * stack overflow at some thousand levels of nesting, megabytes for a large value).
 */
const decodeBody = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Effect.Effect<A, Problem.Problem> =>
  Schema.decodeUnknown(schema, { errors: "all" })(body).pipe(
    Effect.mapError((error) => {
      const { issues, total } = Validation.collectIssues(error, { input: body, room: DownstreamError.maxIssues })
      return Problem.make(
        422,
        "the request body does not match the expected shape",
        DownstreamError.listIssues(issues, total)
      )
    })
  )

/**
 * Creates an automation: the service's rules plus the `WebhookDestination` check of its URL;
 * all issues in one 422.
 */
const createAutomation = Effect.gen(function*() {
  const bodies = yield* RequestBodies
  const automations = yield* AutomationAdmin.AutomationAdmin
  const destinations = yield* WebhookDestination.WebhookDestination
  return (organisationId: string) =>
    Effect.gen(function*() {
      const input = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(AutomationAdmin.NewAutomation, body))
      const rules = yield* Effect.either(AutomationAdmin.validate(input))
      const issues = Either.isLeft(rules) ? rules.left.errors : []
      const destination = yield* Effect.either(destinations.check(input.url))
      const refused = Either.isLeft(destination) && !issues.some((i) => i.path === "/url")
        ? [{ path: "/url", message: destination.left.message }]
        : []
      return yield* mapCoreErrors(
        issues.length + refused.length > 0
          ? new AutomationAdmin.InvalidAutomation({ errors: [...refused, ...issues] })
          : automations.create(organisationId, input)
      )
    })
})

/** `f` of a numeric path id (the ids deliveries and jobs have); any other id is a 404 naming `what`. */
const byNumericId = <A, R>(
  id: string,
  what: string,
  f: (id: number) => Effect.Effect<A, Problem.Problem, R>
): Effect.Effect<A, Problem.Problem, R> => /^[0-9]{1,15}$/.test(id) ? f(Number(id)) : Effect.fail(noneWithId(what, id))

/**
 * The console: organisations, keys, automations, deliveries, jobs, tradeflow downloads and
 * tracking. The console token may do everything; a signed-in user what their role in the
 * organisation permits (403 otherwise; a resource of an organisation they are not a member of is
 * a 404, as an unknown one). Every change is written to the audit log.
 */
export const consoleGroup = HttpApiBuilder.group(Api, "console", (handlers) =>
  Effect.gen(function*() {
    const bodies = yield* RequestBodies
    const users = yield* Users.Users
    const accounts = yield* Accounts.Accounts
    const documents = yield* Documents.Documents
    const automations = yield* AutomationAdmin.AutomationAdmin
    const deliveries = yield* DeliveryAdmin.DeliveryAdmin
    const jobs = yield* JobAdmin.JobAdmin
    const widgets = yield* WidgetSearch.WidgetSearch
    const tracking = yield* TrackingAdmin.TrackingAdmin
    const newAutomation = yield* createAutomation
    /** A change of an automation the caller may configure, written to the audit log. */
    const automationChange = <A>(id: string, action: string, change: Effect.Effect<A, CoreError>) =>
      Effect.gen(function*() {
        const owner = yield* mapCoreErrors(Effect.map(automations.get(id), (a) => a.organisation_id))
        yield* allowedOn(Effect.succeed(owner), "configure", noneWithId("automation", id))
        const result = yield* mapCoreErrors(change)
        yield* Effect.flatMap(ConsoleActor, (actor) => mapCoreErrors(users.record(actor, owner, action, id)))
        return result
      })
    /** `effect` once the organisation is known (an unknown one is a 404 naming it). */
    const inOrganisation = <A, E, R>(
      organisationId: string,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | AccountError.OrganisationNotFound | StorageError.StorageError, R> =>
      Effect.flatMap(
        accounts.organisation(organisationId),
        (found): Effect.Effect<A, E | AccountError.OrganisationNotFound, R> =>
          Option.isNone(found) ? Effect.fail(new AccountError.OrganisationNotFound({ id: organisationId })) : effect
      )
    /**
     * Checks that a user may do `action` in the organisation; a user who is no member of it is
     * told `missing` (a resource of another organisation is as unknown as one that does not exist).
     */
    const permitted = (
      actor: Users.Actor,
      organisationId: string,
      action: Permission.Action,
      missing?: Problem.Problem
    ): Effect.Effect<void, Problem.Problem> =>
      users.authorize(actor, organisationId, action).pipe(
        Effect.asVoid,
        Effect.catchAll((error) =>
          missing !== undefined && error._tag === "NotPermitted" && error.role === null
            ? Effect.fail(missing)
            : Effect.flatMap(toProblem(error), Effect.fail)
        )
      )
    /** Checks that the caller may do `action` in the organisation (the console token may do everything). */
    const allowed = (organisationId: string, action: Permission.Action) =>
      Effect.flatMap(ConsoleActor, (actor) =>
        actor._tag === "OperatorToken" ? Effect.void : permitted(actor, organisationId, action))
    /** Checks `action` on a resource of the organisation `owner` answers (unknown to a non-member: `missing`). */
    const allowedOn = (
      owner: Effect.Effect<string, Problem.Problem>,
      action: Permission.Action,
      missing: Problem.Problem
    ) =>
      Effect.flatMap(ConsoleActor, (actor) =>
        actor._tag === "OperatorToken"
          ? Effect.void
          : Effect.flatMap(owner, (organisationId) =>
            permitted(actor, organisationId, action, missing)))
    /** Writes a change to the audit log, as the caller. */
    const audit = (organisationId: string | null, action: string, target: string) =>
      Effect.flatMap(ConsoleActor, (actor) => mapCoreErrors(users.record(actor, organisationId, action, target)))
    /** The organisations the user may `action` in (every organisation for the console token). */
    const organisationsFor = (action: Permission.Action) =>
      Effect.flatMap(ConsoleActor, (actor) =>
        Effect.map(
          mapCoreErrors(users.accessOf(actor)),
          (access) => access.filter((a) => Permission.permits(a.role, action)).map((a) => a.organisation)
        ))
    /** Whether an organisation is a live one (not a `(UAT)` companion); an unknown one is a 404. */
    const isLive = (id: string) =>
      Effect.map(
        mapCoreErrors(inOrganisation(id, accounts.organisation(id))),
        (found) => Option.isSome(found) && found.value.live_organisation_id === null
      )
    /** Checks that a user has UAT access permitting `action` to a live organisation's companion (403 otherwise). */
    const uatAllowed = (actor: Users.Actor, liveId: string, action: Permission.Action) =>
      actor._tag === "OperatorToken" ? Effect.void : mapCoreErrors(users.authorizeUat(actor, liveId, action))
    const automationOwner = (id: string) => mapCoreErrors(Effect.map(automations.get(id), (a) => a.organisation_id))
    const noAutomation = (id: string) => noneWithId("automation", id)
    return handlers
      .handleRaw("createOrganisation", () =>
        Effect.gen(function*() {
          const actor = yield* ConsoleActor
          if (actor._tag === "User" && !actor.user.operator) {
            return yield* Problem.make(403, "only an operator creates organisations")
          }
          const { name } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewOrganisation, body))
          const organisation = yield* mapCoreErrors(accounts.createOrganisation(name))
          yield* audit(organisation.id, "organisation.created", organisation.name)
          return { id: organisation.id, name: organisation.name }
        }))
      .handle("listOrganisations", () =>
        Effect.flatMap(ConsoleActor, (actor) =>
          actor._tag === "OperatorToken"
            ? mapCoreErrors(accounts.listOrganisations)
            : Effect.map(mapCoreErrors(users.accessOf(actor)), (access) => access.map((a) => a.organisation))))
      .handleRaw("createApiKey", ({ path }) =>
        Effect.gen(function*() {
          yield* allowed(path.id, "configure")
          const { environment, name } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewApiKey, body))
          const actor = yield* ConsoleActor
          if (environment === "uat" && (yield* isLive(path.id))) yield* uatAllowed(actor, path.id, "configure")
          const created = yield* mapCoreErrors(
            accounts.createApiKey(path.id, environment, { name, createdBy: Users.actorName(actor) })
          )
          yield* audit(created.organisation.id, "api_key.created", `${created.id} (${environment})`)
          return created
        }))
      .handle("listApiKeys", ({ path }) =>
        Effect.gen(function*() {
          yield* allowed(path.id, "read")
          const keys = yield* mapCoreErrors(accounts.listApiKeys(path.id))
          const uat = yield* Effect.either(uatAllowed(yield* ConsoleActor, path.id, "read"))
          return Either.isRight(uat) ? keys : keys.filter((k) => k.organisation.id === path.id)
        }))
      .handle("revokeApiKey", ({ path }) =>
        Effect.gen(function*() {
          const actor = yield* ConsoleActor
          let owner: string | null = null
          if (actor._tag === "User") {
            for (const organisation of yield* organisationsFor("read")) {
              if (organisation.live_organisation_id !== null) continue
              const key = (yield* mapCoreErrors(accounts.listApiKeys(organisation.id))).find((k) => k.id === path.id)
              if (key !== undefined) owner = key.organisation.id
            }
            if (owner === null) return yield* noneWithId("API key", path.id)
            yield* allowedOn(Effect.succeed(owner), "configure", noneWithId("API key", path.id))
          }
          yield* mapCoreErrors(accounts.revokeApiKey(path.id))
          yield* audit(owner, "api_key.revoked", path.id)
        }))
      .handle("createWidgetKey", ({ path }) =>
        Effect.gen(function*() {
          yield* allowed(path.id, "configure")
          const created = yield* mapCoreErrors(
            widgets.createKey(path.id, { createdBy: Users.actorName(yield* ConsoleActor) })
          )
          yield* audit(path.id, "widget_key.created", created.id)
          return created
        }))
      .handle("revokeWidgetKey", ({ path }) =>
        Effect.gen(function*() {
          const actor = yield* ConsoleActor
          let owner: string | null = null
          if (actor._tag === "User") {
            for (const organisation of yield* organisationsFor("configure")) {
              if ((yield* mapCoreErrors(widgets.listKeys(organisation.id))).some((k) => k.id === path.id)) {
                owner = organisation.id
              }
            }
            if (owner === null) return yield* noneWithId("widget key", path.id)
          }
          yield* mapCoreErrors(widgets.revokeKey(path.id))
          yield* audit(owner, "widget_key.revoked", path.id)
        }))
      .handleRaw("createAutomation", ({ path }) =>
        Effect.gen(function*() {
          yield* allowed(path.id, "configure")
          const created = yield* newAutomation(path.id)
          yield* audit(path.id, "automation.created", created.url)
          return created
        }))
      .handle("listAutomations", ({ path }) =>
        Effect.zipRight(allowed(path.id, "read"), mapCoreErrors(automations.list(path.id))))
      .handle("enableAutomation", ({ path }) =>
        automationChange(path.id, "automation.enabled", automations.enable(path.id)))
      .handle("disableAutomation", ({ path }) =>
        automationChange(path.id, "automation.disabled", automations.disable(path.id)))
      .handle("rotateAutomationSecret", ({ path }) =>
        automationChange(path.id, "automation.secret_rotated", automations.rotateSecret(path.id)))
      .handle("deleteAutomation", ({ path }) =>
        Effect.gen(function*() {
          const owner = yield* Effect.option(automationOwner(path.id))
          yield* allowedOn(automationOwner(path.id), "configure", noAutomation(path.id))
          yield* mapCoreErrors(automations.remove(path.id))
          yield* audit(Option.getOrNull(owner), "automation.deleted", path.id)
        }))
      .handle("sendTest", ({ path }) =>
        Effect.gen(function*() {
          yield* allowedOn(automationOwner(path.id), "operate", noAutomation(path.id))
          const sent = yield* mapCoreErrors(deliveries.sendTest(path.id))
          yield* audit(yield* automationOwner(path.id), "automation.test_sent", path.id)
          return sent
        }))
      .handle("listDeliveries", ({ path, urlParams }) =>
        Effect.zipRight(
          allowedOn(automationOwner(path.id), "read", noAutomation(path.id)),
          mapCoreErrors(deliveries.log(path.id, urlParams.limit === undefined ? undefined : Number(urlParams.limit)))
        ))
      .handle("retryDelivery", ({ path }) =>
        byNumericId(path.id, "delivery", (id) =>
          Effect.gen(function*() {
            yield* allowedOn(mapCoreErrors(deliveries.organisationOf(id)), "operate", noneWithId("delivery", id))
            yield* mapCoreErrors(deliveries.retry(id))
            yield* audit(yield* mapCoreErrors(deliveries.organisationOf(id)), "delivery.retried", String(id))
          })))
      .handle("listJobs", ({ path, urlParams }) =>
        Effect.zipRight(
          allowed(path.id, "read"),
          mapCoreErrors(
            jobs.list(path.id, urlParams.state, urlParams.limit === undefined ? undefined : Number(urlParams.limit))
          )
        ))
      .handle("retryJob", ({ path }) =>
        byNumericId(path.id, "job", (id) =>
          Effect.gen(function*() {
            yield* allowedOn(mapCoreErrors(jobs.organisationOf(id)), "operate", noneWithId("job", id))
            yield* mapCoreErrors(jobs.retry(id))
            yield* audit(yield* mapCoreErrors(jobs.organisationOf(id)), "job.retried", String(id))
          })))
      .handle("tradeflowTracking", ({ path }) =>
        Effect.zipRight(
          allowed(path.id, "read"),
          mapCoreErrors(inOrganisation(path.id, tracking.status(path.id, path.reference)))
        ))
      .handle("refreshTracking", ({ path }) =>
        Effect.zipRight(
          allowed(path.id, "operate"),
          inOrganisation(path.id, tracking.refresh(path.id, path.reference)).pipe(
            Effect.catchTag("RefreshTooSoon", (error) =>
              Effect.flatMap(toProblem(error), (problem) =>
                Effect.succeed(Problem.toResponse(problem, { "retry-after": String(error.retry_after_seconds) })))),
            mapCoreErrors
          )
        ))
      .handle("downloadTradeflow", ({ path }) =>
        Effect.gen(function*() {
          yield* allowed(path.id, "read")
          const document = yield* mapCoreErrors(inOrganisation(path.id, documents.download(path.id, path.reference)))
          const encoded = yield* Schema.encode(ApiMessage.TradeflowDocument)(document).pipe(Effect.orDie)
          return HttpServerResponse.text(JSON.stringify(encoded), {
            contentType: "application/json",
            headers: { "content-disposition": attachment(path.reference) }
          })
        }))
  }))
