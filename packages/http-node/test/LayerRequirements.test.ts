/**
 * Every layer of the API requires only the services it calls, and the API's services are what its
 * layers require (checked by the type checker: a requirement added to a layer, or a service added
 * to `HttpApp.Services` that no layer requires, fails `tsc`).
 */
import type { HttpApiGroup } from "@effect/platform"
import { it } from "@effect/vitest"
import type {
  Accounts,
  AutomationAdmin,
  DcsaPublisher,
  DeliveryAdmin,
  Documents,
  Ingest,
  JobAdmin,
  RateLimitStore,
  Readiness,
  Schemes,
  TrackingAdmin,
  TrackingPush,
  Upstream,
  Users,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import type { Effect, Layer } from "effect"
import { expectTypeOf } from "vitest"
import { Api, ApiV3 } from "../src/Api.js"
import type { ApiKeyAuth, ConsoleAuth, WidgetKeyAuth } from "../src/Authentication.js"
import type { HttpConfig } from "../src/HttpConfig.js"
import type { HttpApp } from "../src/index.js"
import { apiKeyAuthLayer, consoleAuthLayer, widgetKeyAuthLayer } from "../src/internal/authentication.js"
import type { RequestBodies } from "../src/internal/body.js"
import { consoleGroup } from "../src/internal/consoleGroup.js"
import { dcsaGroup } from "../src/internal/dcsaGroup.js"
import { downstreamGroup } from "../src/internal/downstreamGroup.js"
import { healthGroup } from "../src/internal/healthGroup.js"
import { problemMiddleware } from "../src/internal/problemMiddleware.js"
import type { routeGroups } from "../src/internal/routeGroups.js"
import { trackingGroup } from "../src/internal/trackingGroup.js"
import { upstreamGroup } from "../src/internal/upstreamGroup.js"
import type { makeWebApp } from "../src/internal/webApp.js"
import { widgetGroup } from "../src/internal/widgetGroup.js"

type Group<Name extends string, R> = Layer.Layer<HttpApiGroup.ApiGroup<"tradeflow", Name>, never, R>

it("each route group requires only the services its handlers call, on the root and on /v3", () => {
  for (const api of [Api, ApiV3]) {
    expectTypeOf(downstreamGroup(api)).toEqualTypeOf<
      Group<"downstream", Ingest.Ingest | Schemes.Schemes | ApiKeyAuth | RequestBodies>
    >()
    expectTypeOf(upstreamGroup(api)).toEqualTypeOf<Group<"upstream", Upstream.Upstream | ApiKeyAuth>>()
    expectTypeOf(dcsaGroup(api)).toEqualTypeOf<Group<"dcsa", DcsaPublisher.DcsaPublisher | ApiKeyAuth>>()
    expectTypeOf(widgetGroup(api)).toEqualTypeOf<Group<"widget", WidgetSearch.WidgetSearch | WidgetKeyAuth>>()
    expectTypeOf(healthGroup(api)).toEqualTypeOf<Group<"health", Readiness.Readiness>>()
  }
  expectTypeOf(trackingGroup).toEqualTypeOf<Group<"tracking", TrackingPush.TrackingPush | RequestBodies>>()
  expectTypeOf(consoleGroup).toEqualTypeOf<
    Group<
      "console",
      | Users.Users
      | Accounts.Accounts
      | AutomationAdmin.AutomationAdmin
      | DeliveryAdmin.DeliveryAdmin
      | Documents.Documents
      | JobAdmin.JobAdmin
      | TrackingAdmin.TrackingAdmin
      | WidgetSearch.WidgetSearch
      | WebhookDestination.WebhookDestination
      | ConsoleAuth
      | RequestBodies
    >
  >()
})

it("the authentication layers and the problem middleware require only what they read", () => {
  expectTypeOf(apiKeyAuthLayer).toEqualTypeOf<Layer.Layer<ApiKeyAuth, never, Accounts.Accounts | HttpConfig>>()
  expectTypeOf(widgetKeyAuthLayer).toEqualTypeOf<
    Layer.Layer<WidgetKeyAuth, never, WidgetSearch.WidgetSearch | HttpConfig>
  >()
  expectTypeOf(consoleAuthLayer).toEqualTypeOf<Layer.Layer<ConsoleAuth, never, HttpConfig | Users.Users>>()
  expectTypeOf(problemMiddleware).toEqualTypeOf<
    Layer.Layer<never, never, HttpConfig | RateLimitStore.RateLimitStore>
  >()
})

it("the API's services are exactly what its route groups, middleware and web application require, less HttpConfig", () => {
  expectTypeOf<HttpApp.Services>().toEqualTypeOf<
    Exclude<
      Layer.Layer.Context<typeof routeGroups | typeof problemMiddleware> | Effect.Effect.Context<typeof makeWebApp>,
      HttpConfig
    >
  >()
})
