/**
 * The tracking service inside this host: one runtime that stores in a SQLite file, runs the
 * worker and the scheduler, serves the API under /tracking and answers the host's own calls.
 */
// #region runtime
import { Accounts, Ingest, Locations, Service, TrackingConfig, Upstream } from "@tradeflow/core"
import { HttpConfig, HttpMount } from "@tradeflow/http-node"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Ssrf } from "@tradeflow/webhook"
import { Effect, Layer, ManagedRuntime } from "effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** Everything the host runs of the tracking service, stored under `dataDir`. */
export const makeTracking = (options: { readonly dataDir: string; readonly consoleToken: string }) =>
  ManagedRuntime.make(
    HttpMount.layer({ prefix: "/tracking" }).pipe(
      Layer.provideMerge(HttpConfig.layer({ consoleToken: options.consoleToken })),
      Layer.provideMerge(Ssrf.layer({ allowPrivate: false, allowHttp: false })),
      Layer.provideMerge(Service.layer()),
      Layer.provideMerge(Layer.mergeAll(
        SqliteStorage.layer({ filename: join(options.dataDir, "tracking.sqlite") }),
        Locations.layerBuiltin,
        TrackingConfig.layer()
      ))
    )
  )
// #endregion

// #region in-process
/** The host's organisation in the tracking service and its API key. */
export interface Account {
  readonly organisationId: string
  readonly apiKey: string
}

/** The host's account, kept in `dataDir/account.json`: created in-process on the first start. */
export const ensureAccount = (dataDir: string) =>
  Effect.gen(function*() {
    const file = join(dataDir, "account.json")
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as Account
    const accounts = yield* Accounts.Accounts
    const organisation = yield* accounts.createOrganisation("Embedding host")
    const { key } = yield* accounts.createApiKey(organisation.id, "production")
    const account: Account = { organisationId: organisation.id, apiKey: key }
    writeFileSync(file, JSON.stringify(account), { mode: 0o600 })
    return account
  })

/** Posts tradeflow records as `POST /tracking/downstream` would, without HTTP. */
export const postTradeflows = (account: Account, records: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const ingest = yield* Ingest.Ingest
    return yield* ingest.submit({
      organisation_id: account.organisationId,
      environment: "production",
      body: records,
      form: "array"
    })
  })

/** The organisation's messages of the last 24 hours, as `GET /tracking/upstream` answers them. */
export const messages = (account: Account) =>
  Effect.gen(function*() {
    const upstream = yield* Upstream.Upstream
    const stored = yield* upstream.list({ organisation_id: account.organisationId })
    return stored.map((message) => JSON.parse(message.body) as unknown)
  })
// #endregion
