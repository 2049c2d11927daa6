/**
 * The whole service assembled from its parts: the layers an embedding application or a server
 * provides once at its root.
 *
 * @module
 */
import { Layer } from "effect"
import * as Accounts from "./Accounts.js"
import * as AutomationAdmin from "./AutomationAdmin.js"
import * as DcsaPublisher from "./DcsaPublisher.js"
import * as DeliveryAdmin from "./DeliveryAdmin.js"
import * as Documents from "./Documents.js"
import * as Ingest from "./Ingest.js"
import * as JobAdmin from "./JobAdmin.js"
import * as Locations from "./Locations.js"
import * as Readiness from "./Readiness.js"
import * as Retention from "./Retention.js"
import * as Scheduler from "./Scheduler.js"
import * as Schemes from "./Schemes.js"
import * as Storage from "./Storage.js"
import * as Tracker from "./Tracker.js"
import * as TrackingAdmin from "./TrackingAdmin.js"
import * as TrackingConfig from "./TrackingConfig.js"
import * as TrackingPush from "./TrackingPush.js"
import * as Upstream from "./Upstream.js"
import * as Users from "./Users.js"
import * as WidgetSearch from "./WidgetSearch.js"
import * as Worker from "./Worker.js"

/** The services an HTTP adapter or an embedding application calls. */
export type Services =
  | Accounts.Accounts
  | AutomationAdmin.AutomationAdmin
  | DcsaPublisher.DcsaPublisher
  | DeliveryAdmin.DeliveryAdmin
  | Documents.Documents
  | Ingest.Ingest
  | JobAdmin.JobAdmin
  | Upstream.Upstream
  | Worker.Worker
  | Scheduler.Scheduler
  | Tracker.Tracker
  | TrackingAdmin.TrackingAdmin
  | TrackingPush.TrackingPush
  | Schemes.Schemes
  | WidgetSearch.WidgetSearch
  | Retention.Retention
  | Users.Users
  | Readiness.Readiness

/** Options of {@link layer}: the worker's, the upstream feed's under `upstream`, the people's under `users`. */
export interface ServiceOptions extends Worker.WorkerOptions {
  readonly upstream?: Upstream.UpstreamOptions
  readonly users?: Users.UsersOptions
}

/**
 * Every service over the storage ports, the location directory and the tracking settings, with
 * the built-in integration schemes (a host application adds its own with `Schemes.add`). The
 * position scheduler, the tracker and retention run in the background when the worker does (and
 * start when it does, `startAfter`), unless `scheduler`, `tracker` or `retention` say otherwise.
 * The tracker asks the `TrackingSources` of the context, if any (see `Tracker`). `Accounts` and
 * `WidgetSearch` share one cache of authenticated keys and its revocation reader (see
 * `Accounts.layer`). `Readiness` reports on the storage and on these background loops; a
 * delivery worker built with this layer's output reports to it too. A scoped layer: the worker, the scheduler, retention and the revocation
 * reader stop when the scope the host builds it in closes.
 */
export const layer = (
  options: ServiceOptions = {},
  scheduler: Scheduler.SchedulerOptions = {},
  retention: Retention.RetentionOptions = {},
  tracker: Tracker.TrackerOptions = {}
): Layer.Layer<Services, never, Storage.Storage | Locations.Locations | TrackingConfig.TrackingConfig> =>
  Layer.mergeAll(
    Accounts.layer,
    AutomationAdmin.layer,
    DcsaPublisher.layer,
    DeliveryAdmin.layer,
    Documents.layer,
    Ingest.layer,
    JobAdmin.layer,
    Upstream.layer(options.upstream),
    Schemes.layer,
    WidgetSearch.layer,
    Scheduler.layer({ background: options.background, startAfter: options.startAfter, ...scheduler }),
    TrackingAdmin.layer.pipe(
      Layer.provideMerge(Tracker.layer({ background: options.background, startAfter: options.startAfter, ...tracker }))
    ),
    Retention.layer({ background: options.background, startAfter: options.startAfter, ...retention }),
    TrackingPush.layer,
    Users.layer(options.users)
  ).pipe(
    Layer.provideMerge(Worker.layer(options)),
    Layer.provideMerge(Readiness.layer)
  )

/**
 * The whole service in memory (built-in locations, default tracking settings), with the storage
 * ports exposed too. Nothing survives the process: for tests and quick embedding.
 */
export const layerMemory: Layer.Layer<
  Services | Storage.Storage | Locations.Locations | TrackingConfig.TrackingConfig
> = layer().pipe(
  Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
)
