/**
 * The API contract as a value: the HttpApi groups of downstream, upstream, DCSA 2.2 events, health,
 * the deprecated widget search and the console. The public groups are served at the root and under
 * `/v3` ({@link ApiV3}).
 *
 * @module
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  Accounts,
  ApiMessage as CoreMessage,
  AutomationAdmin,
  DcsaPublisher,
  DeliveryAdmin,
  Environment,
  Ingest,
  JobAdmin,
  TrackingAdmin,
  TradeflowRecord,
  Upstream,
  WidgetSearch
} from "@tradeflow/core"
import { Schema } from "effect"
import { ApiKeyAuth, ConsoleAuth, WidgetKeyAuth } from "./Authentication.js"
import {
  BadRequest,
  Conflict,
  ContentTooLarge,
  Gone,
  InternalServerError,
  NotFound,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  UnprocessableContent,
  UnsupportedMediaType
} from "./Problem.js"

/**
 * A string query parameter checked by `schema`, with its description in the OpenAPI document (which
 * shows a refinement's description only through its JSON Schema annotation).
 */
const queryString = <S extends Schema.Schema<any, string>>(schema: S, description: string): S =>
  schema.annotations({ description, jsonSchema: { type: "string", description } }) as S

/** The longest `Idempotency-Key` accepted. */
export const maxIdempotencyKeyLength = 255

const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String.annotations({
    description:
      `At most ${maxIdempotencyKeyLength} characters. A repeat with the same body within 24 hours answers the first 202 again ` +
      "and queues nothing; with another body it is 422, while the first is still being answered 409"
  }))
})

const Reference = Schema.Struct({
  reference: Schema.String.annotations({ description: "A tradeflow reference, or * for every tradeflow" })
})

const SchemeName = Schema.Struct({
  scheme: Schema.String.annotations({
    description: "The integration scheme: csv, dcsa-tnt, or one a host application registered"
  })
})

const Flag = Schema.Literal("true", "false")

/** The query parameters of `DELETE /downstream/tradeflows/:reference`. */
export const RemoveParams = Schema.Struct({
  hard: Schema.optional(Flag.annotations({
    description: "true: delete the tradeflows with their messages instead of deactivating them (default false)"
  })),
  confirm: Schema.optional(Schema.String.annotations({
    description: "PRODUCTION: required to delete every tradeflow (reference *) with a production key"
  }))
})

const TypeList = Schema.String.pipe(Schema.filter((s) => {
  const names = s.split(",").map((t) => t.trim())
  const unknown = names.filter((t) => !(CoreMessage.messageTypes as ReadonlyArray<string>).includes(t))
  return unknown.length === 0 ||
    `unknown message type ${JSON.stringify(unknown[0])}; expected one or a comma list of ${
      CoreMessage.messageTypes.join(", ")
    }`
}))

/** A query parameter holding a decimal integer from 1 to `max`. */
const integerUpTo = (max: number, description: string) => {
  const digits = String(max).length
  const pattern = new RegExp(`^[0-9]{1,${digits}}$`)
  return Schema.String.pipe(
    Schema.filter((s) =>
      (pattern.test(s) && Number(s) >= 1 && Number(s) <= max) || `must be an integer from 1 to ${max}`
    )
  ).annotations({ description, jsonSchema: { pattern: pattern.source } })
}

/** `per_page`: a decimal integer from 1 to `Upstream.maxPerPage`. */
export const PerPage = integerUpTo(
  Upstream.maxPerPage,
  `Turns on pagination: messages per page, an integer from 1 to ${Upstream.maxPerPage}`
)

/** The query parameters of `GET /upstream`. */
export const UpstreamParams = Schema.Struct({
  tradeflow: Schema.optional(
    Schema.String.annotations({ description: "Only the messages of this tradeflow reference" })
  ),
  container: Schema.optional(Schema.String.annotations({
    description: "Only the messages of this container number (never SHIPMENT_CHANGE)"
  })),
  type: Schema.optional(queryString(
    TypeList,
    `One message type or a comma list of them: ${CoreMessage.messageTypes.join(", ")}`
  )),
  since: Schema.optional(queryString(
    TradeflowRecord.IsoDateTime,
    "Without per_page: narrows the 24-hour window. With per_page: the first page starts at the first " +
      "matching message generated at or after it (ignored with a cursor, which reaches the whole retained history)"
  )),
  latest: Schema.optional(Flag.annotations({
    description: "true: only the messages that are the newest of their tradeflow, type and container"
  })),
  excludes: Schema.optional(
    Schema.Literal("shipment").annotations({
      description: "shipment: leave payload.shipment out of every message"
    })
  ),
  per_page: Schema.optional(PerPage),
  cursor: Schema.optional(Schema.String.annotations({
    description: "The next_cursor of a previous page (requires per_page); the filters must stay the same"
  }))
})

/** `POST /downstream`, `POST /downstream/tradeflows`, `DELETE /downstream/tradeflows/:reference`. */
export class DownstreamGroup extends HttpApiGroup.make("downstream")
  .add(
    HttpApiEndpoint.post("submit", "/downstream")
      .setPayload(Schema.Array(TradeflowRecord.TradeflowRecordInput))
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Ingest.Accepted, { status: 202 })
      .annotate(
        OpenApi.Description,
        `Queues an array of tradeflow records (at most ${Ingest.maxRecords.toLocaleString("en")}, ` +
          "by default 5 MiB). The request is validated as a whole: every problem is reported at once (422) and " +
          "nothing is queued; the 202 lists each tradeflow with its warnings once the work is durably queued."
      )
  )
  .add(
    HttpApiEndpoint.post("submitTradeflows", "/downstream/tradeflows")
      .setPayload(
        Schema.Union(TradeflowRecord.TradeflowRecordInput, Schema.Array(TradeflowRecord.TradeflowRecordInput))
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Ingest.Accepted, { status: 202 })
      .annotate(OpenApi.Description, "As POST /downstream, taking one record or an array of them.")
  )
  .add(
    HttpApiEndpoint.post("submitScheme", "/downstream/scheme/:scheme")
      .setPath(SchemeName)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Ingest.Accepted, { status: 202 })
      .annotate(
        OpenApi.Description,
        "Runs an integration scheme (built in: csv as text/csv, dcsa-tnt as a JSON array of DCSA Track & Trace 2.2 events, with ?reference=) and queues its records like POST /downstream/tradeflows."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/downstream/tradeflows/:reference")
      .setPath(Reference)
      .setUrlParams(RemoveParams)
      .addSuccess(Ingest.Removed)
      .annotate(
        OpenApi.Description,
        "Deactivates (or, with hard=true, deletes) one tradeflow, or every tradeflow of the organisation with " +
          "reference *. Runs after everything queued before it; an unknown single reference is 404."
      )
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(Conflict)
  .addError(ContentTooLarge)
  .addError(UnsupportedMediaType)
  .addError(UnprocessableContent)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .middleware(ApiKeyAuth)
{}

/** `GET /upstream`. */
export class UpstreamGroup extends HttpApiGroup.make("upstream")
  .add(
    HttpApiEndpoint.get("list", "/upstream")
      .setUrlParams(UpstreamParams)
      .addSuccess(
        Schema.Array(CoreMessage.ApiMessage).annotations({
          description: `Without per_page: the ${Upstream.pollLimit} most recent matching messages of the last 24 ` +
            "hours, oldest first"
        })
      )
      .addSuccess(Upstream.UpstreamPage)
      .annotate(
        OpenApi.Description,
        `The organisation's upstream messages. Without per_page: the ${Upstream.pollLimit} most recent matching ` +
          "messages of the last 24 hours, oldest first. With per_page: a page { data, next_cursor, has_more } in " +
          "sequence order, resumed with cursor."
      )
  )
  .addError(BadRequest)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .middleware(ApiKeyAuth)
{}

/** The request headers of `GET /dcsa/v2/events`. */
export const DcsaEventsHeaders = Schema.Struct({
  "api-version": Schema.optional(Schema.String.annotations({
    description: "The major version of DCSA Track & Trace the client speaks, as 2.2 allows it: 2 (2.2 and 2.2.0 " +
      "are taken too); another version is 400"
  }))
})

/**
 * `GET /dcsa/v2/events` (issue 15): the organisation's tracked events as DCSA Track & Trace 2.2
 * events, for clients that speak DCSA, authenticated like upstream.
 */
export class DcsaGroup extends HttpApiGroup.make("dcsa")
  .add(
    HttpApiEndpoint.get("events", "/dcsa/v2/events")
      .setUrlParams(DcsaPublisher.Parameters)
      .setHeaders(DcsaEventsHeaders)
      .addSuccess(
        Schema.Array(DcsaPublisher.Event).annotations({
          description: "The page's events, in eventCreatedDateTime then eventID order"
        })
      )
      .annotate(
        OpenApi.Description,
        "The organisation's tracked events as DCSA Track & Trace 2.2 events (GET /v2/events of DCSA's document): " +
          "every reading of every milestone of its tradeflows, active or not, a vessel departure or arrival as a " +
          "TRANSPORT event, a container's loading, discharge and gate moves as EQUIPMENT events (unclassified milestones " +
          "are left out, no SHIPMENT event is published). Filters combine with AND; eventCreatedDateTime takes the " +
          `operators :gte, :gt, :lte, :lt and :eq. At most limit events a page (default ${DcsaPublisher.defaultLimit}); ` +
          "when more follow, the Next-Page header holds the URL of the next page (every parameter kept, with cursor). " +
          `Every answer carries API-Version: ${DcsaPublisher.apiVersion}, a page Current-Page; an invalid parameter is 400 ` +
          "naming it, in a body that is both a problem and DCSA's error"
      )
  )
  .addError(BadRequest)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .middleware(ApiKeyAuth)
{}

/** The query parameters of `GET /api/v2/widget-search`. */
export const WidgetSearchParams = Schema.Struct({
  query: queryString(
    Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty")),
    "A tradeflow reference, bill of lading, booking or container number"
  )
})

/**
 * `GET /api/v2/widget-search` (deprecated): every response carries `Deprecation: true`, and
 * `Sunset` once a sunset is configured; from then on 410.
 */
export class WidgetGroup extends HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.get("search", "/api/v2/widget-search")
      .setUrlParams(WidgetSearchParams)
      .addSuccess(CoreMessage.WidgetSearchResult.annotations({ identifier: "WidgetSearchResult" }))
      .annotate(OpenApi.Deprecated, true)
      .annotate(
        OpenApi.Description,
        "Deprecated: the summary of the newest tradeflow matching query by tradeflow reference, bill of lading, booking or " +
          "container number. Responses carry Deprecation: true and, once announced, Sunset; after it 410. " +
          "A widget key may search a limited number of times a second (by default 10, in bursts of 20); beyond, 429 " +
          "with Retry-After. Migrate to GET /upstream."
      )
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(Gone)
  .addError(TooManyRequests)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .middleware(WidgetKeyAuth)
{}

/** `GET /health`, without authentication. */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Description, "Answers { status: ok } while the server runs; no authentication.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Schema.Struct({
        status: Schema.Literal("ready"),
        running: Schema.Array(Schema.String).annotations({ description: "The background loops running." })
      }))
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "Readiness for traffic, for load balancers and orchestrators; no authentication. 200 when the database " +
          "answers with every migration of this build applied and the background workers of this process are " +
          "running; else 503, a problem whose errors name each part missing (path) and why (message)."
      )
  )
{}

/**
 * What tracking sources push (issue 15): the callback of DCSA 2.2 event subscriptions, and the
 * consumer endpoint of DCSA 3.0 carriers. Host-independent and without an API key: a callback is
 * authenticated by its `Notification-Signature` (the HMAC of its body under the subscription's
 * secret), a consumer push by its source's token.
 */
export class TrackingGroup extends HttpApiGroup.make("tracking")
  .add(
    HttpApiEndpoint.post("subscriptionCallback", "/tracking/sources/:source/callback")
      .setPath(Schema.Struct({
        source: Schema.String.annotations({ description: "The tracking source's id, as configured" })
      }))
      .setPayload(
        Schema.Array(
          Schema.Unknown.annotations({ jsonSchema: { type: "object", description: "A DCSA Track & Trace 2.2 event" } })
        ).annotations({
          description: "DCSA Track & Trace 2.2 events, as the carrier's subscription sends them"
        })
      )
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Unauthorized)
      .annotate(
        OpenApi.Description,
        "The callback of a DCSA 2.2 event subscription the service took at a carrier: signed with the subscription's " +
          "secret (Notification-Signature: sha256=<hex HMAC-SHA256 of the raw body>) and naming it (Subscription-ID). " +
          "Its events are stored before the 204; an unsigned or forged callback, or one naming a subscription the " +
          "service does not hold, is 401 and stores nothing; a verified one whose body cannot be read is 400"
      )
  )
  .add(
    HttpApiEndpoint.post("consumerEvents", "/tracking/sources/:source/events")
      .setPath(Schema.Struct({
        source: Schema.String.annotations({ description: "The tracking source's id, as configured" })
      }))
      .setPayload(
        Schema.Struct({
          events: Schema.Array(
            Schema.Unknown.annotations({
              jsonSchema: { type: "object", description: "A DCSA Track & Trace 3.0 event" }
            })
          )
        }).annotations({
          description: "DCSA Track & Trace 3.0 events (PostEventsRequest), as the carrier pushes them"
        })
      )
      .addSuccess(
        Schema.Struct({
          feedbackElements: Schema.Array(Schema.Struct({
            severity: Schema.Literal("ERROR", "WARN", "INFO"),
            message: Schema.String,
            propertyPath: Schema.optional(Schema.String)
          }))
        }).annotations({
          description: "DCSA's PostEventsResponse: an ERROR for each event that could not be read, a WARN for each " +
            "event no tracked target concerns"
        })
      )
      .addError(Unauthorized)
      .annotate(
        OpenApi.Description,
        "The consumer endpoint of a DCSA 3.0 carrier (push consumer): authenticated by the source's token " +
          "(Authorization: Bearer <token>); each event is stored, before the answer, for every tradeflow whose " +
          "target of that source it concerns (its container, bookings or bills of lading), in every organisation. " +
          "A push without the token is 401 and stores nothing; one with it whose body cannot be read is 400"
      )
  )
  .addError(BadRequest)
  .addError(ContentTooLarge)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
{}

/** The body of `POST /console/organisations`. */
export const NewOrganisation = Schema.Struct({ name: Schema.String })
/** The body of `POST /console/organisations/:id/api-keys`. */
export const NewApiKey = Schema.Struct({
  environment: Environment.Environment,
  name: Schema.optional(Schema.String.annotations({
    description: `A name for people, at most ${Accounts.maxKeyNameLength} characters (default: none)`
  }))
})

const pathId = (description: string) => Schema.Struct({ id: Schema.String.annotations({ description }) })
const OrganisationId = pathId("The organisation's id (a live organisation or its (UAT) companion)")
const ApiKeyId = pathId("The API key's id (not the key)")
const WidgetKeyId = pathId("The widget key's id (not the key)")
const AutomationId = pathId("The automation's id")

/** `limit` of the delivery log: a decimal integer from 1 to `DeliveryAdmin.maxLogEntries`. */
export const LogLimit = integerUpTo(
  DeliveryAdmin.maxLogEntries,
  `The most attempts to return, an integer from 1 to ${DeliveryAdmin.maxLogEntries} (default 100)`
)

/** The query parameters of `GET /console/automations/:id/deliveries`. */
export const DeliveryLogParams = Schema.Struct({ limit: Schema.optional(LogLimit) })

/** The query parameters of `GET /console/organisations/:id/jobs`. */
export const JobListParams = Schema.Struct({
  state: Schema.Literal("pending", "dead").annotations({
    description: "dead: jobs given up on (retryable); pending: jobs not processed yet, with the attempts they used"
  }),
  limit: Schema.optional(
    integerUpTo(JobAdmin.maxListed, `The most jobs to return, an integer from 1 to ${JobAdmin.maxListed} (default 100)`)
  )
})

const TradeflowPath = Schema.Struct({
  id: Schema.String.annotations({ description: "The live organisation's id, or its (UAT) companion's id" }),
  reference: Schema.String.annotations({ description: "The tradeflow reference" })
})

/**
 * The console (DECISIONS.md §4): organisations, API keys, widget keys, automations, their deliveries,
 * dead jobs and tradeflow downloads. Host-independent.
 */
export class ConsoleGroup extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.post("createOrganisation", "/console/organisations")
      .setPayload(NewOrganisation)
      .addSuccess(Accounts.CreatedOrganisation, { status: 201 })
      .annotate(OpenApi.Description, "Creates a production organisation.")
  )
  .add(
    HttpApiEndpoint.get("listOrganisations", "/console/organisations")
      .addSuccess(Schema.Array(Accounts.OrganisationSummary))
      .annotate(OpenApi.Description, "Every organisation, live and (UAT) companions.")
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/console/organisations/:id/api-keys")
      .setPath(OrganisationId)
      .setPayload(NewApiKey)
      .addSuccess(Accounts.CreatedApiKey, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Creates an API key of the environment, shown once. The first key of either environment creates the " +
          "organisation's (UAT) companion."
      )
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/console/organisations/:id/api-keys")
      .setPath(OrganisationId)
      .addSuccess(Schema.Array(Accounts.ApiKeyInfo))
      .annotate(OpenApi.Description, "The API keys of the organisation and its companion, without the keys themselves.")
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey", "/console/api-keys/:id")
      .setPath(ApiKeyId)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Revokes an API key: it is refused (403) from then on.")
  )
  .add(
    HttpApiEndpoint.post("createWidgetKey", "/console/organisations/:id/widget-keys")
      .setPath(pathId("The organisation the key reads: a live one or its (UAT) companion"))
      .addSuccess(WidgetSearch.CreatedWidgetKey, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Creates a widget key (wk_…) for the deprecated widget search, shown once. It reads exactly the " +
          "organisation of that id."
      )
  )
  .add(
    HttpApiEndpoint.del("revokeWidgetKey", "/console/widget-keys/:id")
      .setPath(WidgetKeyId)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Revokes a widget key: it is refused (401) from then on.")
  )
  .add(
    HttpApiEndpoint.post("createAutomation", "/console/organisations/:id/automations")
      .setPath(pathId("The organisation; UAT destinations on its (UAT) companion's id"))
      .setPayload(AutomationAdmin.NewAutomation)
      .addSuccess(AutomationAdmin.CreatedAutomation, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Creates a webhook automation, disabled unless enabled is true, and answers its signing secret once. A " +
          "URL, format or type list the rules refuse is 422 naming the field."
      )
  )
  .add(
    HttpApiEndpoint.get("listAutomations", "/console/organisations/:id/automations")
      .setPath(OrganisationId)
      .addSuccess(Schema.Array(AutomationAdmin.AutomationInfo))
      .annotate(OpenApi.Description, "The organisation's automations, without secrets.")
  )
  .add(
    HttpApiEndpoint.post("enableAutomation", "/console/automations/:id/enable")
      .setPath(AutomationId)
      .addSuccess(AutomationAdmin.AutomationInfo)
      .annotate(OpenApi.Description, "Enables the automation.")
  )
  .add(
    HttpApiEndpoint.post("disableAutomation", "/console/automations/:id/disable")
      .setPath(AutomationId)
      .addSuccess(AutomationAdmin.AutomationInfo)
      .annotate(OpenApi.Description, "Disables the automation.")
  )
  .add(
    HttpApiEndpoint.post("rotateAutomationSecret", "/console/automations/:id/rotate-secret")
      .setPath(AutomationId)
      .addSuccess(AutomationAdmin.RotatedSecret)
      .annotate(OpenApi.Description, "Issues a new signing secret; the previous one stays valid for 24 hours.")
  )
  .add(
    HttpApiEndpoint.del("deleteAutomation", "/console/automations/:id")
      .setPath(AutomationId)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Deletes the automation.")
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/console/automations/:id/test")
      .setPath(AutomationId)
      .addSuccess(DeliveryAdmin.TestSend, { status: 202 })
      .annotate(
        OpenApi.Description,
        "Queues one delivery of a sample ocean_basic tradeflow to the automation, enabled or not: its first message " +
          "of the automation's types (format message) or its V3 document (format tradeflow)"
      )
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/console/automations/:id/deliveries")
      .setPath(AutomationId)
      .setUrlParams(DeliveryLogParams)
      .addSuccess(
        Schema.Array(DeliveryAdmin.DeliveryLogInfo).annotations({
          description: "The automation's delivery attempts, newest first"
        })
      )
      .annotate(OpenApi.Description, "The automation's delivery attempts, newest first, one entry per attempt.")
  )
  .add(
    HttpApiEndpoint.post("retryDelivery", "/console/deliveries/:id/retry")
      .setPath(pathId("A delivery id from the delivery log"))
      .addSuccess(HttpApiSchema.Accepted)
      .addError(Conflict)
      .annotate(
        OpenApi.Description,
        "Makes a failed or dead delivery due now, on a fresh retry schedule; 409 for any other delivery"
      )
  )
  .add(
    HttpApiEndpoint.get("listJobs", "/console/organisations/:id/jobs")
      .setPath(OrganisationId)
      .setUrlParams(JobListParams)
      .addSuccess(
        Schema.Array(JobAdmin.JobInfo).annotations({
          description: "The organisation's jobs in that state, oldest first"
        })
      )
      .annotate(
        OpenApi.Description,
        "The organisation's dead jobs (state=dead), or those still queued (state=pending). A job is dead when its " +
          "processing failed, or when it was taken up the configured number of times (default 5) without finishing (its " +
          "process crashed or stopped each time); it no longer holds up the organisation's later jobs."
      )
  )
  .add(
    HttpApiEndpoint.post("retryJob", "/console/jobs/:id/retry")
      .setPath(pathId("A job id from the job list"))
      .addSuccess(HttpApiSchema.Accepted)
      .addError(Conflict)
      .annotate(
        OpenApi.Description,
        "Queues a dead job again with its attempts reset. It keeps its place in the organisation's queue (it runs " +
          "before the organisation's later jobs still pending) and applies what it carries as if posted again; " +
          "409 for a job that is not dead"
      )
  )
  .add(
    HttpApiEndpoint.get("downloadTradeflow", "/console/organisations/:id/tradeflows/:reference/download")
      .setPath(TradeflowPath)
      .addSuccess(CoreMessage.TradeflowDocument)
      .annotate(
        OpenApi.Description,
        "The V3 tradeflow document of the organisation's tradeflow, as an attachment (Content-Disposition: attachment; " +
          "filename=\"<reference>.json\", with an RFC 6266 filename* for non-ASCII references)"
      )
  )
  .add(
    HttpApiEndpoint.get("tradeflowTracking", "/console/organisations/:id/tradeflows/:reference/tracking")
      .setPath(TradeflowPath)
      .addSuccess(TrackingAdmin.TrackingStatus)
      .annotate(
        OpenApi.Description,
        "How a tracking source tracks the tradeflow: each target (a container, booking or bill of lading) with its " +
          "state, last and next check, last event, failures and last error; source null when no source tracks it"
      )
  )
  .add(
    HttpApiEndpoint.post("refreshTracking", "/console/organisations/:id/tradeflows/:reference/refresh")
      .setPath(TradeflowPath)
      .addSuccess(TrackingAdmin.TrackingStatus, { status: 202 })
      .addError(Conflict)
      .addError(TooManyRequests)
      .annotate(
        OpenApi.Description,
        "Asks the source about every target of the tradeflow that is not stopped, now; answers its tracking as it " +
          "stands (the answers follow within seconds). At most once a minute per tradeflow (429 with Retry-After); " +
          "409 when no source tracks it any more"
      )
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(ContentTooLarge)
  .addError(UnsupportedMediaType)
  .addError(UnprocessableContent)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .middleware(ConsoleAuth)
{}

/** The whole API at the root. */
export class Api extends HttpApi.make("tradeflow")
  .add(DownstreamGroup)
  .add(UpstreamGroup)
  .add(DcsaGroup)
  .add(HealthGroup)
  .add(WidgetGroup)
  .add(ConsoleGroup)
  .add(TrackingGroup)
  .annotate(OpenApi.Title, "Container tracking integration service")
  .annotate(OpenApi.Version, "0.1.0")
{}

/** The public groups (downstream, upstream, DCSA events, health, widget search) under `/v3`; the console is not mirrored. */
export const ApiV3 = HttpApi.make("tradeflow")
  .add(DownstreamGroup)
  .add(UpstreamGroup)
  .add(DcsaGroup)
  .add(HealthGroup)
  .add(WidgetGroup)
  .prefix("/v3")
