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
  type StorageError,
  TrackingAdmin,
  Validation,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import { Effect, Either, Option, Schema } from "effect"
import { Api, NewApiKey, NewOrganisation } from "../Api.js"
import * as Problem from "../Problem.js"
import { RequestBodies } from "./body.js"
import { attachment } from "./contentDisposition.js"
import { mapCoreErrors, noneWithId, toProblem } from "./errors.js"

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

/** The console: organisations, keys, automations, deliveries, jobs, tradeflow downloads and tracking. */
export const consoleGroup = HttpApiBuilder.group(Api, "console", (handlers) =>
  Effect.gen(function*() {
    const bodies = yield* RequestBodies
    const accounts = yield* Accounts.Accounts
    const documents = yield* Documents.Documents
    const automations = yield* AutomationAdmin.AutomationAdmin
    const deliveries = yield* DeliveryAdmin.DeliveryAdmin
    const jobs = yield* JobAdmin.JobAdmin
    const widgets = yield* WidgetSearch.WidgetSearch
    const tracking = yield* TrackingAdmin.TrackingAdmin
    const newAutomation = yield* createAutomation
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
    return handlers
      .handleRaw("createOrganisation", () =>
        Effect.gen(function*() {
          const { name } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewOrganisation, body))
          const organisation = yield* mapCoreErrors(accounts.createOrganisation(name))
          return { id: organisation.id, name: organisation.name }
        }))
      .handle("listOrganisations", () => mapCoreErrors(accounts.listOrganisations))
      .handleRaw("createApiKey", ({ path }) =>
        Effect.gen(function*() {
          const { environment } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewApiKey, body))
          return yield* mapCoreErrors(accounts.createApiKey(path.id, environment))
        }))
      .handle("listApiKeys", ({ path }) => mapCoreErrors(accounts.listApiKeys(path.id)))
      .handle("revokeApiKey", ({ path }) => mapCoreErrors(accounts.revokeApiKey(path.id)))
      .handle("createWidgetKey", ({ path }) => mapCoreErrors(widgets.createKey(path.id)))
      .handle("revokeWidgetKey", ({ path }) => mapCoreErrors(widgets.revokeKey(path.id)))
      .handleRaw("createAutomation", ({ path }) => newAutomation(path.id))
      .handle("listAutomations", ({ path }) => mapCoreErrors(automations.list(path.id)))
      .handle("enableAutomation", ({ path }) => mapCoreErrors(automations.enable(path.id)))
      .handle("disableAutomation", ({ path }) => mapCoreErrors(automations.disable(path.id)))
      .handle("rotateAutomationSecret", ({ path }) => mapCoreErrors(automations.rotateSecret(path.id)))
      .handle("deleteAutomation", ({ path }) => mapCoreErrors(automations.remove(path.id)))
      .handle("sendTest", ({ path }) => mapCoreErrors(deliveries.sendTest(path.id)))
      .handle("listDeliveries", ({ path, urlParams }) =>
        mapCoreErrors(deliveries.log(path.id, urlParams.limit === undefined ? undefined : Number(urlParams.limit))))
      .handle("retryDelivery", ({ path }) =>
        byNumericId(path.id, "delivery", (id) =>
          mapCoreErrors(deliveries.retry(id))))
      .handle("listJobs", ({ path, urlParams }) =>
        mapCoreErrors(
          jobs.list(path.id, urlParams.state, urlParams.limit === undefined ? undefined : Number(urlParams.limit))
        ))
      .handle("retryJob", ({ path }) =>
        byNumericId(path.id, "job", (id) =>
          mapCoreErrors(jobs.retry(id))))
      .handle("tradeflowTracking", ({ path }) =>
        mapCoreErrors(inOrganisation(path.id, tracking.status(path.id, path.reference))))
      .handle("refreshTracking", ({ path }) =>
        inOrganisation(path.id, tracking.refresh(path.id, path.reference)).pipe(
          Effect.catchTag("RefreshTooSoon", (error) =>
            Effect.flatMap(toProblem(error), (problem) =>
              Effect.succeed(Problem.toResponse(problem, { "retry-after": String(error.retry_after_seconds) })))),
          mapCoreErrors
        ))
      .handle("downloadTradeflow", ({ path }) =>
        Effect.gen(function*() {
          const document = yield* mapCoreErrors(inOrganisation(path.id, documents.download(path.id, path.reference)))
          const encoded = yield* Schema.encode(ApiMessage.TradeflowDocument)(document).pipe(Effect.orDie)
          return HttpServerResponse.text(JSON.stringify(encoded), {
            contentType: "application/json",
            headers: { "content-disposition": attachment(path.reference) }
          })
        }))
  }))
