/**
 * @tradeflow/storage-pg/test-kit: a fresh PostgreSQL schema per test run.
 *
 * Every function takes the URL of the test server (a database the tests may create schemas in).
 * When it is unreachable they fail with a message saying so; they are never skipped.
 *
 * @module @tradeflow/storage-pg/test-kit
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import {
  AutomationStore,
  DeliveryStore,
  JobQueue,
  MessageStore,
  Storage,
  type StorageError,
  TrackingStore,
  TradeflowStore
} from "@tradeflow/core"
import { Context, Duration, Effect, Layer, Redacted, type Scope } from "effect"
import * as PgStorage from "../src/PgStorage.js"

const shown = (url: string) => url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@")

/** A schema of the test database, dropped when the scope closes. */
export interface TestSchema {
  /** The schema name (`tf_test_<random>`). */
  readonly schema: string
  /** The test database URL. */
  readonly baseUrl: string
  /** The test database URL with `search_path` set to the schema (what a server process is given). */
  readonly url: string
}

/** Tag of the schema a {@link layerTest} runs on, for tests that open more connections to it. */
export class TestDatabase
  extends Context.Tag("@tradeflow/storage-pg/test-kit/TestDatabase")<TestDatabase, TestSchema>()
{}

/** Connects to the test server as an administrator, failing with a readable message when it is down. */
const admin = (url: string) =>
  Layer.build(PgClient.layer({ url: Redacted.make(url), connectTimeout: Duration.seconds(5) })).pipe(
    Effect.map((context) => Context.get(context, SqlClient.SqlClient)),
    Effect.mapError((cause) =>
      new Error(
        `PostgreSQL is not reachable at ${shown(url)}: ` +
          `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ""}`
      )
    )
  )

/**
 * A fresh schema name on the test database at `url` (`tf_test_<random>`). With `create` (default)
 * the schema is created; either way it is dropped, with everything in it, when the scope closes.
 */
export const makeTestSchema = (
  url: string,
  options: { readonly create?: boolean } = {}
): Effect.Effect<TestSchema, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const schema = `tf_test_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`
    yield* Effect.acquireRelease(
      Effect.gen(function*() {
        const sql = yield* admin(url)
        if (options.create ?? true) yield* sql`CREATE SCHEMA ${sql(schema)}`.pipe(Effect.orDie)
      }).pipe(Effect.scoped),
      () =>
        Effect.gen(function*() {
          const sql = yield* admin(url)
          yield* sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`
        }).pipe(Effect.scoped, Effect.ignoreLogged)
    )
    return { schema, baseUrl: url, url: PgStorage.urlWithSchema(url, schema) }
  })

/** Every storage port on a fresh schema of the test database at `url`, dropped when the layer is released. */
export const layerTest = (url: string): Layer.Layer<
  Storage.Storage | SqlClient.SqlClient | PgClient.PgClient | TestDatabase,
  Error | StorageError.StorageError
> =>
  Layer.unwrapScoped(Effect.map(makeTestSchema(url, { create: false }), (test) =>
    Layer.merge(
      PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 8 }),
      Layer.succeed(TestDatabase, test)
    )))

/** One "process" on a test schema: its SQL client and its storage ports. */
export interface Instance {
  readonly sql: SqlClient.SqlClient
  readonly queue: JobQueue.JobQueue["Type"]
  readonly store: TradeflowStore.TradeflowStore["Type"]
  readonly messages: MessageStore.MessageStore["Type"]
  readonly settings: Storage.Settings["Type"]
  readonly automations: AutomationStore.AutomationStore["Type"]
  readonly deliveries: DeliveryStore.DeliveryStore["Type"]
  readonly tracking: TrackingStore.TrackingStore["Type"]
}

/**
 * One more "process" on a test schema: the storage layer built with its own pool of
 * `maxConnections`, as the SQL client and every storage port.
 */
export const openInstance = (
  test: TestSchema,
  maxConnections = 4
): Effect.Effect<Instance, Error | StorageError.StorageError, Scope.Scope> =>
  Layer.build(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections })).pipe(
    Effect.map((context) => ({
      sql: Context.get(context, SqlClient.SqlClient),
      queue: Context.get(context, JobQueue.JobQueue),
      store: Context.get(context, TradeflowStore.TradeflowStore),
      messages: Context.get(context, MessageStore.MessageStore),
      settings: Context.get(context, Storage.Settings),
      automations: Context.get(context, AutomationStore.AutomationStore),
      deliveries: Context.get(context, DeliveryStore.DeliveryStore),
      tracking: Context.get(context, TrackingStore.TrackingStore)
    }))
  )
