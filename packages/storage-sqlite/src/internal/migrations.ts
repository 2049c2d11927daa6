import { SqlClient } from "@effect/sql"
import { SqliteMigrator } from "@effect/sql-sqlite-node"
import { StorageRows } from "@tradeflow/storage-sql"
import { Effect, Schema } from "effect"

/** The table in which the migrator records what it applied (ours, not the library default). */
export const migrationsTable = "tradeflow_migrations"

const statements = (...parts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(parts, (part) => sql.unsafe(part), { discard: true }))

const decodeSql = Schema.decodeUnknown(Schema.Array(Schema.Struct({ sql: Schema.String })))
const decodeNames = Schema.decodeUnknown(Schema.Array(Schema.Struct({ name: Schema.String })))

/**
 * Jobs that cannot be processed become `dead` (was `failed`), listed with their payload's kind and
 * size. SQLite cannot alter a CHECK constraint, so the table is rebuilt (the documented procedure:
 * a new table from the stored definition with the constraint changed, rows copied (`failed` as
 * `dead`), the old table
 * dropped, the new one renamed, its indexes created again), keeping the AUTOINCREMENT counter so no
 * id is ever reused.
 */
const deadJobs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const definition =
    (yield* decodeSql(yield* sql`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'jobs'`))[0]
  const check = "CHECK (status IN ('pending', 'done', 'failed'))"
  if (definition === undefined || !definition.sql.includes(check)) {
    return yield* Effect.dieMessage("0007_dead_jobs: the jobs table does not have the expected status constraint")
  }
  const indexes = yield* decodeSql(
    yield* sql`SELECT sql FROM sqlite_master
    WHERE type = 'index' AND tbl_name = 'jobs' AND sql IS NOT NULL`
  )
  yield* sql.unsafe(
    definition.sql
      .replace(/^CREATE TABLE "?jobs"?/, "CREATE TABLE jobs_rebuilt")
      .replace(check, "CHECK (status IN ('pending', 'done', 'dead'))")
  )
  const columns = (yield* decodeNames(yield* sql`SELECT name FROM pragma_table_info('jobs') ORDER BY cid`)).map((c) =>
    c.name
  )
  const quoted = columns.map((c) => `"${c.replace(/"/g, "\"\"")}"`)
  const values = columns.map((c, i) =>
    c === "status" ? "CASE status WHEN 'failed' THEN 'dead' ELSE status END" : quoted[i]
  )
  yield* sql.unsafe(`INSERT INTO jobs_rebuilt (${quoted.join(", ")}) SELECT ${values.join(", ")} FROM jobs`)
  yield* sql`DELETE FROM sqlite_sequence WHERE name = 'jobs_rebuilt'`
  yield* sql`UPDATE sqlite_sequence SET name = 'jobs_rebuilt' WHERE name = 'jobs'`
  yield* sql`DROP TABLE jobs`
  yield* sql`ALTER TABLE jobs_rebuilt RENAME TO jobs`
  for (const index of indexes) yield* sql.unsafe(index.sql)
  yield* statements(
    `ALTER TABLE jobs ADD COLUMN kind TEXT`,
    `ALTER TABLE jobs ADD COLUMN payload_bytes INTEGER`,
    `UPDATE jobs SET payload_bytes = length(CAST(payload AS BLOB)),
      kind = CASE WHEN json_valid(payload) THEN json_extract(payload, '$._tag') END
      WHERE status <> 'done'`,
    `CREATE INDEX jobs_dead ON jobs (organisation_id, id) WHERE status = 'dead'`,
    `CREATE INDEX jobs_leased ON jobs (organisation_id, lease_until) WHERE status = 'pending' AND lease_until IS NOT NULL`
  )
})

/** Fills the key index (`tradeflow_keys`) from the stored documents, 500 tradeflows at a time. */
const backfillKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let after = 0
  while (true) {
    const rows = yield* sql<
      { readonly id: number; readonly organisation_id: string; readonly reference: string }
    >`SELECT rowid AS id, organisation_id, reference, doc FROM tradeflows
      WHERE rowid > ${after} ORDER BY rowid LIMIT 500`
    if (rows.length === 0) return
    after = rows[rows.length - 1]!.id
    const keyed = (yield* StorageRows.decodeKeyed(rows)).flatMap((r, i) =>
      StorageRows.keyRows({ ...r.doc, organisation_id: rows[i]!.organisation_id, reference: rows[i]!.reference })
    )
    for (const part of StorageRows.chunks(keyed, 180)) yield* sql`INSERT INTO tradeflow_keys ${sql.insert(part)}`
  }
})

/** Every schema migration, keyed `NNNN_name` (only ids above the highest applied one run; never edit one). */
export const migrations = {
  "0001_initial": statements(
    `CREATE TABLE organisations (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      environment TEXT NOT NULL CHECK (environment IN ('production', 'uat')),
      live_organisation_id TEXT UNIQUE,
      created_at INTEGER NOT NULL
    )`,
    `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY NOT NULL,
      organisation_id TEXT NOT NULL,
      environment TEXT NOT NULL CHECK (environment IN ('production', 'uat')),
      key_hash TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      revoked_at INTEGER
    )`,
    `CREATE INDEX api_keys_organisation ON api_keys (organisation_id, created_at)`,
    `CREATE TABLE jobs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      organisation_id TEXT NOT NULL,
      environment TEXT NOT NULL CHECK (environment IN ('production', 'uat')),
      payload TEXT NOT NULL,
      received_at INTEGER NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
      result TEXT,
      error TEXT
    )`,
    `CREATE INDEX jobs_pending ON jobs (id) WHERE status = 'pending'`,
    `CREATE TABLE idempotency_keys (
      organisation_id TEXT NOT NULL,
      key TEXT NOT NULL,
      request_hash TEXT NOT NULL,
      response TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (organisation_id, key)
    )`,
    `CREATE TABLE tradeflows (
      organisation_id TEXT NOT NULL,
      reference TEXT NOT NULL,
      active INTEGER NOT NULL,
      doc TEXT NOT NULL,
      PRIMARY KEY (organisation_id, reference)
    )`,
    `CREATE TABLE tradeflow_containers (
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      container_reference TEXT NOT NULL,
      PRIMARY KEY (organisation_id, tradeflow_reference, container_reference),
      FOREIGN KEY (organisation_id, tradeflow_reference) REFERENCES tradeflows (organisation_id, reference) ON DELETE CASCADE
    )`,
    `CREATE INDEX tradeflow_containers_container ON tradeflow_containers (organisation_id, container_reference)`,
    `CREATE TABLE messages (
      organisation_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      hash TEXT NOT NULL,
      type TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      container_reference TEXT,
      generated_at INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (organisation_id, seq),
      UNIQUE (organisation_id, hash)
    )`,
    `CREATE INDEX messages_generated ON messages (organisation_id, generated_at)`,
    `CREATE INDEX messages_tradeflow ON messages (organisation_id, tradeflow_reference, seq)`,
    `CREATE INDEX messages_container ON messages (organisation_id, container_reference, seq)`,
    `CREATE INDEX messages_type ON messages (organisation_id, type, seq)`,
    `CREATE TABLE message_sequences (
      organisation_id TEXT PRIMARY KEY NOT NULL,
      last_seq INTEGER NOT NULL
    )`
  ),
  "0002_leases_due_settings_latest": statements(
    `ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE jobs ADD COLUMN leased_by TEXT`,
    `ALTER TABLE jobs ADD COLUMN lease_until INTEGER`,
    `CREATE INDEX jobs_pending_organisation ON jobs (organisation_id, id) WHERE status = 'pending'`,
    `ALTER TABLE tradeflows ADD COLUMN next_position_at INTEGER`,
    `UPDATE tradeflows SET next_position_at = json_extract(doc, '$.next_position_at')
      WHERE json_type(doc, '$.next_position_at') IN ('integer', 'real')`,
    `CREATE INDEX tradeflows_due ON tradeflows (next_position_at, organisation_id, reference)
      WHERE next_position_at IS NOT NULL`,
    `CREATE TABLE settings (
      name TEXT PRIMARY KEY NOT NULL,
      value TEXT NOT NULL
    )`,
    `CREATE INDEX messages_latest ON messages (organisation_id, tradeflow_reference, type, container_reference, seq)`
  ),
  "0003_automations": statements(
    `CREATE TABLE automations (
      id TEXT PRIMARY KEY NOT NULL,
      organisation_id TEXT NOT NULL,
      enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
      created_at INTEGER NOT NULL,
      doc TEXT NOT NULL
    )`,
    `CREATE INDEX automations_organisation ON automations (organisation_id, created_at)`
  ),
  "0004_deliveries": statements(
    `CREATE TABLE deliveries (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      automation_id TEXT NOT NULL,
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      message_hash TEXT NOT NULL,
      seq INTEGER,
      body TEXT,
      test INTEGER NOT NULL CHECK (test IN (0, 1)),
      created_at INTEGER NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
      attempt INTEGER NOT NULL DEFAULT 0,
      retries INTEGER NOT NULL DEFAULT 0,
      schedule_started_at INTEGER,
      next_attempt_at INTEGER NOT NULL,
      claim INTEGER NOT NULL DEFAULT 0,
      leased_by TEXT,
      lease_until INTEGER
    )`,
    `CREATE INDEX deliveries_head ON deliveries (automation_id, organisation_id, tradeflow_reference, id)
      WHERE status = 'pending'`,
    `CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending'`,
    `CREATE INDEX deliveries_automation ON deliveries (automation_id, id)`,
    `CREATE INDEX deliveries_tradeflow ON deliveries (organisation_id, tradeflow_reference)`,
    `CREATE TABLE delivery_attempts (
      delivery_id INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      automation_id TEXT NOT NULL,
      at INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('delivered', 'failed', 'dead')),
      response_status INTEGER,
      error TEXT,
      response_body TEXT,
      PRIMARY KEY (delivery_id, attempt)
    )`,
    `CREATE INDEX delivery_attempts_log ON delivery_attempts (automation_id, at DESC, delivery_id DESC, attempt DESC)`
  ),
  "0005_widget_keys": statements(
    `CREATE TABLE widget_keys (
      id TEXT PRIMARY KEY NOT NULL,
      organisation_id TEXT NOT NULL,
      key_hash TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      revoked_at INTEGER
    )`
  ),
  "0006_deliveries_pending": statements(
    `CREATE INDEX deliveries_pending ON deliveries (id) WHERE status = 'pending'`
  ),
  "0007_tradeflow_sizes": statements(
    `ALTER TABLE tradeflows ADD COLUMN container_count INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE tradeflows ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0`,
    `UPDATE tradeflows SET container_count = json_array_length(doc, '$.containers'),
      event_count = json_array_length(doc, '$.events')`
  ),
  "0008_dead_jobs": deadJobs,
  "0009_tradeflow_keys": Effect.zipRight(
    statements(
      `CREATE TABLE tradeflow_keys (
        organisation_id TEXT NOT NULL,
        key TEXT NOT NULL,
        tradeflow_reference TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (organisation_id, key, tradeflow_reference),
        FOREIGN KEY (organisation_id, tradeflow_reference) REFERENCES tradeflows (organisation_id, reference) ON DELETE CASCADE
      ) WITHOUT ROWID`,
      `CREATE INDEX tradeflow_keys_tradeflow ON tradeflow_keys (organisation_id, tradeflow_reference)`
    ),
    backfillKeys
  ),
  "0010_retention": statements(
    `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
    `CREATE INDEX jobs_finished ON jobs (status, received_at) WHERE status <> 'pending'`,
    `CREATE INDEX delivery_attempts_at ON delivery_attempts (at)`,
    `CREATE INDEX deliveries_dead ON deliveries (created_at) WHERE status = 'dead'`
  ),
  "0011_message_heads": statements(
    `CREATE TABLE message_heads (
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      type TEXT NOT NULL,
      container_reference TEXT,
      seq INTEGER NOT NULL
    )`,
    `CREATE UNIQUE INDEX message_heads_key ON message_heads (organisation_id, tradeflow_reference, type, container_reference)
      WHERE container_reference IS NOT NULL`,
    `CREATE UNIQUE INDEX message_heads_key_none ON message_heads (organisation_id, tradeflow_reference, type)
      WHERE container_reference IS NULL`,
    `INSERT INTO message_heads (organisation_id, tradeflow_reference, type, container_reference, seq)
      SELECT organisation_id, tradeflow_reference, type, container_reference, MAX(seq) FROM messages
      GROUP BY organisation_id, tradeflow_reference, type, container_reference`,
    `CREATE INDEX message_heads_seq ON message_heads (organisation_id, seq)`,
    `CREATE INDEX message_heads_tradeflow ON message_heads (organisation_id, tradeflow_reference, seq)`,
    `CREATE INDEX message_heads_type ON message_heads (organisation_id, type, seq)`,
    `CREATE INDEX message_heads_container ON message_heads (organisation_id, container_reference, seq)`,
    `CREATE INDEX messages_tradeflow_type ON messages (organisation_id, tradeflow_reference, type, seq)`,
    `CREATE INDEX messages_generated_seq ON messages (organisation_id, generated_at, seq)`,
    `DROP INDEX messages_generated`,
    `DROP INDEX messages_latest`
  ),
  "0012_message_filter_indexes": statements(
    `CREATE INDEX messages_tradeflow_container ON messages (organisation_id, tradeflow_reference, container_reference, seq)`,
    `CREATE INDEX messages_container_type ON messages (organisation_id, container_reference, type, seq)`,
    `CREATE INDEX messages_tradeflow_type_container ON messages (organisation_id, tradeflow_reference, type, container_reference, seq)`,
    `CREATE INDEX message_heads_container_type ON message_heads (organisation_id, container_reference, type, seq)`
  ),
  "0013_key_revocations": statements(
    `ALTER TABLE api_keys ADD COLUMN revocation_noticed_at INTEGER`,
    `ALTER TABLE widget_keys ADD COLUMN revocation_noticed_at INTEGER`,
    `CREATE INDEX api_keys_revocation ON api_keys (revocation_noticed_at) WHERE revocation_noticed_at IS NOT NULL`,
    `CREATE INDEX widget_keys_revocation ON widget_keys (revocation_noticed_at) WHERE revocation_noticed_at IS NOT NULL`
  ),
  /**
   * The key index keyed by tradeflow first, with a covering index by key for lookups, and without
   * a foreign key (a commit writes and deletes a tradeflow's keys only with the tradeflow, so it
   * checked nothing, at a lookup of the tradeflow per inserted key). Without statistics SQLite
   * searched the old primary key (organisation, key, tradeflow) on the organisation alone to delete
   * a tradeflow's keys and, for the foreign key, to delete a tradeflow: every commit walked the
   * organisation's whole key index.
   */
  "0014_keys_by_tradeflow": statements(
    `CREATE TABLE tradeflow_keys_rebuilt (
      organisation_id TEXT NOT NULL,
      key TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      created_at REAL NOT NULL,
      updated_at REAL NOT NULL,
      PRIMARY KEY (organisation_id, tradeflow_reference, key)
    ) WITHOUT ROWID`,
    `INSERT INTO tradeflow_keys_rebuilt (organisation_id, key, tradeflow_reference, created_at, updated_at)
      SELECT organisation_id, key, tradeflow_reference, created_at, updated_at FROM tradeflow_keys`,
    `DROP TABLE tradeflow_keys`,
    `ALTER TABLE tradeflow_keys_rebuilt RENAME TO tradeflow_keys`,
    `CREATE INDEX tradeflow_keys_key ON tradeflow_keys (organisation_id, key, tradeflow_reference, created_at, updated_at)`
  ),
  /**
   * Tracking (issue 15): the index of the tracked targets of the tradeflows' documents by next
   * check, which `TrackingStore.claim` leases due targets from (`tracking_targets_due`), and the raw
   * events of the sources as received, kept once per version (read in the order received: `rowid`
   * keeps the insertion order). Nothing to fill: no document stored before this migration holds
   * tracking (the field comes with it).
   */
  "0015_tracking": statements(
    `CREATE TABLE tracking_targets (
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      target_id TEXT NOT NULL,
      source TEXT NOT NULL,
      query TEXT NOT NULL,
      high_water REAL,
      next_check_at REAL,
      lease_until REAL,
      PRIMARY KEY (organisation_id, tradeflow_reference, target_id)
    ) WITHOUT ROWID`,
    `CREATE INDEX tracking_targets_due ON tracking_targets (next_check_at, organisation_id, tradeflow_reference, target_id)
      WHERE next_check_at IS NOT NULL`,
    `CREATE TABLE tracking_events (
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      source TEXT NOT NULL,
      event_id TEXT NOT NULL,
      updated_at REAL NOT NULL,
      received_at REAL NOT NULL,
      raw TEXT NOT NULL,
      PRIMARY KEY (organisation_id, tradeflow_reference, source, event_id, updated_at)
    )`
  ),
  /**
   * The subscriptions tracking sources hold for targets (DCSA 2.2 event subscriptions), keyed by
   * source and subscription id, with the secret their callbacks are signed with. Found by tradeflow
   * (`tracking_subscriptions_tradeflow`, in key order) and, for the stale search, walked oldest first
   * (`tracking_subscriptions_created`, in `created_at` then key order), each probing
   * `tracking_targets` by its primary key. No foreign key to the target index: a subscription
   * outlives its target (a hard delete, a stop) until it is removed at its source.
   */
  "0016_tracking_subscriptions": statements(
    `CREATE TABLE tracking_subscriptions (
      source TEXT NOT NULL,
      subscription_id TEXT NOT NULL,
      organisation_id TEXT NOT NULL,
      tradeflow_reference TEXT NOT NULL,
      target_id TEXT NOT NULL,
      secret TEXT NOT NULL,
      created_at REAL NOT NULL,
      PRIMARY KEY (source, subscription_id)
    ) WITHOUT ROWID`,
    `CREATE INDEX tracking_subscriptions_tradeflow
      ON tracking_subscriptions (organisation_id, tradeflow_reference, source, subscription_id)`,
    `CREATE INDEX tracking_subscriptions_created ON tracking_subscriptions (created_at, source, subscription_id)`
  ),
  /**
   * The references each target asks about, in columns of their own beside its query (filled from it
   * for the rows there are), so that `TrackingStore.targetsAbout` finds the targets of a source
   * asking about a container, a booking or a bill of lading: an index per kind, by source and
   * reference, holding only the rows that have one (most targets ask about one kind).
   */
  "0017_tracking_target_references": statements(
    `ALTER TABLE tracking_targets ADD COLUMN equipment TEXT`,
    `ALTER TABLE tracking_targets ADD COLUMN booking TEXT`,
    `ALTER TABLE tracking_targets ADD COLUMN bill_of_lading TEXT`,
    `UPDATE tracking_targets SET equipment = json_extract(query, '$.equipment'),
      booking = json_extract(query, '$.booking'), bill_of_lading = json_extract(query, '$.bill_of_lading')`,
    `CREATE INDEX tracking_targets_equipment ON tracking_targets (source, equipment) WHERE equipment IS NOT NULL`,
    `CREATE INDEX tracking_targets_booking ON tracking_targets (source, booking) WHERE booking IS NOT NULL`,
    `CREATE INDEX tracking_targets_bill_of_lading ON tracking_targets (source, bill_of_lading)
      WHERE bill_of_lading IS NOT NULL`
  ),
  /**
   * The people of the web application (`UserStore`): users (one per lower-case e-mail,
   * `users.email_key`), their memberships of organisations (found by user through the primary key,
   * by organisation through `memberships_organisation`), their sessions and the invitations that
   * bring them in (each found by the SHA-256 of its token), and the audit log, numbered by `seq`
   * and read newest first per organisation (`audit_log_organisation`). The rowid keeps the
   * insertion order among rows of one instant. No foreign keys: the port keeps no such rule (a
   * membership may name an organisation of no row), as the memory adapter does not.
   */
  "0018_users": statements(
    `CREATE TABLE users (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      email_key TEXT NOT NULL UNIQUE,
      password_hash TEXT NOT NULL,
      operator INTEGER NOT NULL CHECK (operator IN (0, 1)),
      created_at REAL NOT NULL
    )`,
    `CREATE TABLE memberships (
      user_id TEXT NOT NULL,
      organisation_id TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
      created_at REAL NOT NULL,
      PRIMARY KEY (user_id, organisation_id)
    )`,
    `CREATE INDEX memberships_organisation ON memberships (organisation_id)`,
    `CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      token_hash TEXT NOT NULL UNIQUE,
      user_id TEXT NOT NULL,
      created_at REAL NOT NULL,
      last_seen_at REAL NOT NULL,
      expires_at REAL NOT NULL,
      user_agent TEXT NOT NULL,
      address TEXT NOT NULL
    )`,
    `CREATE INDEX sessions_user ON sessions (user_id)`,
    `CREATE TABLE invitations (
      id TEXT PRIMARY KEY,
      token_hash TEXT NOT NULL UNIQUE,
      organisation_id TEXT NOT NULL,
      email TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
      uat INTEGER NOT NULL CHECK (uat IN (0, 1)),
      invited_by TEXT NOT NULL,
      created_at REAL NOT NULL,
      expires_at REAL NOT NULL,
      accepted_at REAL
    )`,
    `CREATE INDEX invitations_organisation ON invitations (organisation_id)`,
    `CREATE TABLE audit_log (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      organisation_id TEXT,
      actor TEXT NOT NULL,
      action TEXT NOT NULL,
      target TEXT NOT NULL,
      at REAL NOT NULL
    )`,
    `CREATE INDEX audit_log_organisation ON audit_log (organisation_id, seq)`
  ),
  "0019_widget_keys_organisation": statements(
    `CREATE INDEX widget_keys_organisation ON widget_keys (organisation_id, created_at)`
  ),
  "0020_key_details": statements(
    `ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
    `ALTER TABLE api_keys ADD COLUMN created_by TEXT`,
    `ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER`,
    `ALTER TABLE widget_keys ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
    `ALTER TABLE widget_keys ADD COLUMN created_by TEXT`,
    `ALTER TABLE widget_keys ADD COLUMN last_used_at INTEGER`
  ),
  /**
   * The request counters of the rate limits (`RateLimitStore`): one row per key (a digest of the
   * credential) and fixed window, removed once the window has ended.
   */
  "0021_rate_limits": statements(
    `CREATE TABLE rate_limits (
      key TEXT NOT NULL,
      window_start INTEGER NOT NULL,
      window_end INTEGER NOT NULL,
      hits INTEGER NOT NULL,
      PRIMARY KEY (key, window_start)
    ) WITHOUT ROWID`,
    `CREATE INDEX rate_limits_window_end ON rate_limits (window_end)`
  )
}

/** The migrator's loader over {@link migrations}. */
export const loader = SqliteMigrator.fromRecord(migrations)

/** The id of the latest of {@link migrations}, which a database this build serves must have applied. */
export const latestMigration = Math.max(...Object.keys(migrations).map((id) => Number.parseInt(id, 10)))
