import { Layer } from "effect"
import { Api, ApiV3 } from "../Api.js"
import { apiKeyAuthLayer, consoleAuthLayer, widgetKeyAuthLayer } from "./authentication.js"
import { RequestBodies } from "./body.js"
import { consoleGroup } from "./consoleGroup.js"
import { dcsaGroup } from "./dcsaGroup.js"
import { downstreamGroup } from "./downstreamGroup.js"
import { healthGroup } from "./healthGroup.js"
import { trackingGroup } from "./trackingGroup.js"
import { upstreamGroup } from "./upstreamGroup.js"
import { widgetGroup } from "./widgetGroup.js"

/**
 * Every route group of the root API, `/v3` and the console, with the authentication middlewares and
 * the request bodies they read: what is left to provide is the core services and `HttpConfig`.
 *
 * @internal
 */
export const routeGroups = Layer.mergeAll(
  downstreamGroup(Api),
  downstreamGroup(ApiV3),
  upstreamGroup(Api),
  upstreamGroup(ApiV3),
  dcsaGroup(Api),
  dcsaGroup(ApiV3),
  healthGroup(Api),
  healthGroup(ApiV3),
  widgetGroup(Api),
  widgetGroup(ApiV3),
  consoleGroup,
  trackingGroup
).pipe(Layer.provide([apiKeyAuthLayer, widgetKeyAuthLayer, consoleAuthLayer, RequestBodies.layer]))
