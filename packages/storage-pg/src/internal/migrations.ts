import { SqlClient, type Statement } from "@effect/sql"
import { PgMigrator } from "@effect/sql-pg"
import { StorageRows } from "@tradeflow/storage-sql"
import { Effect } from "effect"

/** The table in which the migrator records what it applied (ours, not the library default). */
export const migrationsTable = "tradeflow_migrations"

const statements = (...parts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(parts, (part) => sql.unsafe(part), { discard: true }))

interface Row {
  readonly organisation_id: string
  readonly reference: string
}

/** Fills the key index (`tradeflow_keys`) from the stored documents, 500 tradeflows at a time. */
const backfillKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let after: Row | undefined = undefined
  while (true) {
    const from: Statement.Fragment = after === undefined
      ? sql`TRUE`
      : sql`(organisation_id, reference) > (${after.organisation_id}, ${after.reference})`
    const rows: ReadonlyArray<Row> = yield* sql<Row>`SELECT organisation_id, reference, doc
      FROM tradeflows WHERE ${from} ORDER BY organisation_id, reference LIMIT 500`
    after = rows[rows.length - 1]
    if (after === undefined) return
    const keyed = (yield* StorageRows.decodeKeyed(rows)).flatMap((r, i) =>
      StorageRows.keyRows({ ...r.doc, organisation_id: rows[i]!.organisation_id, reference: rows[i]!.reference })
    )
    for (const part of StorageRows.chunks(keyed, 1000)) yield* sql`INSERT INTO tradeflow_keys ${sql.insert(part)}`
  }
})

/**
 * An escaped surrogate in JSON text (a regular expression). `JSON.stringify` escapes only a lone
 * surrogate (it writes a pair as it is), which PostgreSQL's JSON refuses to read.
 */
const surrogateEscape = "\\\\u[dD][89a-fA-F]"

/**
 * Fills the reference columns of the targets whose query holds an escaped lone surrogate (or text
 * that looks like one), which `0015_tracking_target_references` leaves: the query is read here and
 * its references bound as text, in which the driver writes a lone surrogate as U+FFFD, as a commit
 * writes them. Such references hardly exist, so a row at a time.
 */
const backfillEscapedReferences = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{
    readonly organisation_id: string
    readonly tradeflow_reference: string
    readonly target_id: string
    readonly query: string
  }>`SELECT organisation_id, tradeflow_reference, target_id, query FROM tracking_targets
    WHERE query ~ ${surrogateEscape}`
  for (const row of rows) {
    const parsed: unknown = yield* Effect.try(() => JSON.parse(row.query))
    const query: Record<string, unknown> = typeof parsed === "object" && parsed !== null ? { ...parsed } : {}
    const text = (value: unknown) => typeof value === "string" ? value : null
    yield* sql`UPDATE tracking_targets SET equipment = ${text(query["equipment"])}, booking = ${text(query["booking"])},
      bill_of_lading = ${text(query["bill_of_lading"])}
      WHERE organisation_id = ${row.organisation_id} AND tradeflow_reference = ${row.tradeflow_reference}
        AND target_id = ${row.target_id}`
  }
})

/**
 * Every schema migration, keyed `NNNN_name` (only ids above the highest applied one run).
 * Numbers coming from JavaScript are `double precision` (exact for every JS number); text that is
 * ordered or compared by the ports is `COLLATE "C"` (code-point order, like the other adapters).
 */
export const migrations = {
  "0001_initial": statements(
    `CREATE TABLE organisations (
      id text COLLATE "C" PRIMARY KEY,
      name text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('production', 'uat')),
      live_organisation_id text COLLATE "C" UNIQUE,
      created_at double precision NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE INDEX organisations_created ON organisations (created_at, position)`,
    `CREATE TABLE api_keys (
      id text COLLATE "C" PRIMARY KEY,
      organisation_id text COLLATE "C" NOT NULL,
      environment text NOT NULL CHECK (environment IN ('production', 'uat')),
      key_hash text COLLATE "C" NOT NULL UNIQUE,
      created_at double precision NOT NULL,
      revoked_at double precision,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE INDEX api_keys_organisation ON api_keys (organisation_id, created_at, position)`,
    `CREATE TABLE jobs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organisation_id text COLLATE "C" NOT NULL,
      environment text NOT NULL CHECK (environment IN ('production', 'uat')),
      payload text NOT NULL,
      received_at double precision NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
      attempt integer NOT NULL DEFAULT 0,
      leased_by text,
      lease_until timestamptz,
      result text,
      error text
    )`,
    `CREATE INDEX jobs_pending ON jobs (id) WHERE status = 'pending'`,
    `CREATE INDEX jobs_pending_organisation ON jobs (organisation_id, id) WHERE status = 'pending'`,
    `CREATE TABLE idempotency_keys (
      organisation_id text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      request_hash text NOT NULL,
      response text NOT NULL,
      created_at double precision NOT NULL,
      PRIMARY KEY (organisation_id, key)
    )`,
    `CREATE TABLE tradeflows (
      organisation_id text COLLATE "C" NOT NULL,
      reference text COLLATE "C" NOT NULL,
      active boolean NOT NULL,
      next_position_at double precision,
      doc text NOT NULL,
      PRIMARY KEY (organisation_id, reference)
    )`,
    `CREATE INDEX tradeflows_due ON tradeflows (next_position_at, organisation_id, reference)
      WHERE next_position_at IS NOT NULL`,
    `CREATE TABLE tradeflow_containers (
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      container_reference text COLLATE "C" NOT NULL,
      PRIMARY KEY (organisation_id, tradeflow_reference, container_reference),
      FOREIGN KEY (organisation_id, tradeflow_reference) REFERENCES tradeflows (organisation_id, reference) ON DELETE CASCADE
    )`,
    `CREATE INDEX tradeflow_containers_container ON tradeflow_containers (organisation_id, container_reference)`,
    `CREATE TABLE messages (
      organisation_id text COLLATE "C" NOT NULL,
      seq bigint NOT NULL,
      hash text COLLATE "C" NOT NULL,
      type text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      container_reference text COLLATE "C",
      generated_at double precision NOT NULL,
      body text NOT NULL,
      PRIMARY KEY (organisation_id, seq),
      UNIQUE (organisation_id, hash)
    )`,
    `CREATE INDEX messages_generated ON messages (organisation_id, generated_at)`,
    `CREATE INDEX messages_tradeflow ON messages (organisation_id, tradeflow_reference, seq)`,
    `CREATE INDEX messages_container ON messages (organisation_id, container_reference, seq)`,
    `CREATE INDEX messages_type ON messages (organisation_id, type, seq)`,
    `CREATE INDEX messages_latest ON messages (organisation_id, tradeflow_reference, type, container_reference, seq)`,
    `CREATE TABLE message_sequences (
      organisation_id text COLLATE "C" PRIMARY KEY,
      last_seq bigint NOT NULL
    )`,
    `CREATE TABLE settings (
      name text COLLATE "C" PRIMARY KEY,
      value text NOT NULL
    )`
  ),
  "0002_automations": statements(
    `CREATE TABLE automations (
      id text COLLATE "C" PRIMARY KEY,
      organisation_id text COLLATE "C" NOT NULL,
      enabled boolean NOT NULL,
      created_at double precision NOT NULL,
      doc text NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE INDEX automations_organisation ON automations (organisation_id, created_at, position)`
  ),
  "0003_deliveries": statements(
    `CREATE TABLE deliveries (
      id bigserial PRIMARY KEY,
      automation_id text COLLATE "C" NOT NULL,
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      message_hash text NOT NULL,
      seq bigint,
      body text,
      test boolean NOT NULL,
      created_at bigint NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
      attempt integer NOT NULL DEFAULT 0,
      retries integer NOT NULL DEFAULT 0,
      schedule_started_at bigint,
      next_attempt_at bigint NOT NULL,
      claim integer NOT NULL DEFAULT 0,
      leased_by text,
      lease_until bigint
    )`,
    `CREATE INDEX deliveries_head ON deliveries (automation_id, organisation_id, tradeflow_reference, id)
      WHERE status = 'pending'`,
    `CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending'`,
    `CREATE INDEX deliveries_pending ON deliveries (id) WHERE status = 'pending'`,
    `CREATE INDEX deliveries_automation ON deliveries (automation_id, id)`,
    `CREATE INDEX deliveries_tradeflow ON deliveries (organisation_id, tradeflow_reference)`,
    `CREATE TABLE delivery_attempts (
      delivery_id bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      automation_id text COLLATE "C" NOT NULL,
      at bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('delivered', 'failed', 'dead')),
      response_status integer,
      error text,
      response_body text,
      PRIMARY KEY (delivery_id, attempt)
    )`,
    `CREATE INDEX delivery_attempts_log ON delivery_attempts (automation_id, at DESC, delivery_id DESC, attempt DESC)`
  ),
  "0004_widget_keys": statements(
    `CREATE TABLE widget_keys (
      id text COLLATE "C" PRIMARY KEY,
      organisation_id text COLLATE "C" NOT NULL,
      key_hash text COLLATE "C" NOT NULL UNIQUE,
      created_at double precision NOT NULL,
      revoked_at double precision
    )`
  ),
  "0005_tradeflow_sizes": statements(
    `ALTER TABLE tradeflows ADD COLUMN container_count integer NOT NULL DEFAULT 0,
      ADD COLUMN event_count integer NOT NULL DEFAULT 0`,
    `UPDATE tradeflows SET container_count = json_array_length(doc::json -> 'containers'),
      event_count = json_array_length(doc::json -> 'events')`
  ),
  "0006_dead_jobs": statements(
    `ALTER TABLE jobs DROP CONSTRAINT jobs_status_check`,
    `UPDATE jobs SET status = 'dead' WHERE status = 'failed'`,
    `ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('pending', 'done', 'dead'))`,
    `ALTER TABLE jobs ADD COLUMN kind text, ADD COLUMN payload_bytes bigint`,
    `UPDATE jobs SET payload_bytes = octet_length(payload), kind = substring(payload from '^\\{"_tag":"([A-Za-z]+)"')
      WHERE status <> 'done'`,
    `CREATE INDEX jobs_dead ON jobs (organisation_id, id) WHERE status = 'dead'`,
    `CREATE INDEX jobs_leased ON jobs (organisation_id, lease_until) WHERE status = 'pending' AND lease_until IS NOT NULL`
  ),
  "0007_tradeflow_keys": Effect.zipRight(
    statements(
      `CREATE TABLE tradeflow_keys (
        organisation_id text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        tradeflow_reference text COLLATE "C" NOT NULL,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        PRIMARY KEY (organisation_id, key, tradeflow_reference),
        FOREIGN KEY (organisation_id, tradeflow_reference) REFERENCES tradeflows (organisation_id, reference) ON DELETE CASCADE
      )`,
      `CREATE INDEX tradeflow_keys_tradeflow ON tradeflow_keys (organisation_id, tradeflow_reference)`
    ),
    backfillKeys
  ),
  "0008_retention": statements(
    `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
    `CREATE INDEX jobs_finished ON jobs (status, received_at) WHERE status <> 'pending'`,
    `CREATE INDEX delivery_attempts_at ON delivery_attempts (at)`,
    `CREATE INDEX deliveries_dead ON deliveries (created_at) WHERE status = 'dead'`
  ),
  "0009_message_heads": statements(
    `CREATE TABLE message_heads (
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      type text COLLATE "C" NOT NULL,
      container_reference text COLLATE "C",
      seq bigint NOT NULL
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
  "0010_message_filter_indexes": statements(
    `CREATE INDEX messages_tradeflow_container ON messages (organisation_id, tradeflow_reference, container_reference, seq)`,
    `CREATE INDEX messages_container_type ON messages (organisation_id, container_reference, type, seq)`,
    `CREATE INDEX messages_tradeflow_type_container ON messages (organisation_id, tradeflow_reference, type, container_reference, seq)`,
    `CREATE INDEX message_heads_container_type ON message_heads (organisation_id, container_reference, type, seq)`
  ),
  "0011_key_revocations": statements(
    `ALTER TABLE api_keys ADD COLUMN revocation_noticed_at double precision`,
    `ALTER TABLE widget_keys ADD COLUMN revocation_noticed_at double precision`,
    `CREATE INDEX api_keys_revocation ON api_keys (revocation_noticed_at) WHERE revocation_noticed_at IS NOT NULL`,
    `CREATE INDEX widget_keys_revocation ON widget_keys (revocation_noticed_at) WHERE revocation_noticed_at IS NOT NULL`
  ),
  "0012_index_rows_unchecked": statements(
    `DO $$
    DECLARE c record;
    BEGIN
      FOR c IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
        WHERE contype = 'f' AND conrelid IN ('tradeflow_containers'::regclass, 'tradeflow_keys'::regclass)
      LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.t, c.conname);
      END LOOP;
    END $$`
  ),
  /**
   * Tracking (issue 15): the index of the tracked targets of the tradeflows' documents by next
   * check, which `TrackingStore.claim` leases due targets from (`tracking_targets_due`), and the raw
   * events of the sources as received, kept once per version (`position` keeps the insertion order).
   * Nothing to fill: no document stored before this migration holds tracking (the field comes with it).
   */
  "0013_tracking": statements(
    `CREATE TABLE tracking_targets (
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      target_id text COLLATE "C" NOT NULL,
      source text COLLATE "C" NOT NULL,
      query text NOT NULL,
      high_water double precision,
      next_check_at double precision,
      lease_until double precision,
      PRIMARY KEY (organisation_id, tradeflow_reference, target_id)
    )`,
    `CREATE INDEX tracking_targets_due ON tracking_targets (next_check_at, organisation_id, tradeflow_reference, target_id)
      WHERE next_check_at IS NOT NULL`,
    `CREATE TABLE tracking_events (
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      source text COLLATE "C" NOT NULL,
      event_id text COLLATE "C" NOT NULL,
      updated_at double precision NOT NULL,
      received_at double precision NOT NULL,
      raw text NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY,
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
  "0014_tracking_subscriptions": statements(
    `CREATE TABLE tracking_subscriptions (
      source text COLLATE "C" NOT NULL,
      subscription_id text COLLATE "C" NOT NULL,
      organisation_id text COLLATE "C" NOT NULL,
      tradeflow_reference text COLLATE "C" NOT NULL,
      target_id text COLLATE "C" NOT NULL,
      secret text NOT NULL,
      created_at double precision NOT NULL,
      PRIMARY KEY (source, subscription_id)
    )`,
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
  "0015_tracking_target_references": Effect.zipRight(
    statements(
      `ALTER TABLE tracking_targets ADD COLUMN equipment text COLLATE "C", ADD COLUMN booking text COLLATE "C",
        ADD COLUMN bill_of_lading text COLLATE "C"`,
      `UPDATE tracking_targets SET equipment = query::json ->> 'equipment', booking = query::json ->> 'booking',
        bill_of_lading = query::json ->> 'bill_of_lading'
        WHERE query !~ '${surrogateEscape}'`,
      `CREATE INDEX tracking_targets_equipment ON tracking_targets (source, equipment) WHERE equipment IS NOT NULL`,
      `CREATE INDEX tracking_targets_booking ON tracking_targets (source, booking) WHERE booking IS NOT NULL`,
      `CREATE INDEX tracking_targets_bill_of_lading ON tracking_targets (source, bill_of_lading)
        WHERE bill_of_lading IS NOT NULL`
    ),
    backfillEscapedReferences
  ),
  /**
   * The people of the web application (`UserStore`): users (one per lower-case e-mail,
   * `users.email_key`), their memberships of organisations (found by user through the primary key,
   * by organisation through `memberships_organisation`), their sessions and the invitations that
   * bring them in (each found by the SHA-256 of its token), and the audit log, numbered by `seq`
   * and read newest first per organisation (`audit_log_organisation`). `position` keeps the
   * insertion order among rows of one instant. No foreign keys: the port keeps no such rule (a
   * membership may name an organisation of no row), as the memory adapter does not.
   */
  "0016_users": statements(
    `CREATE TABLE users (
      id text COLLATE "C" PRIMARY KEY,
      email text NOT NULL,
      email_key text COLLATE "C" NOT NULL UNIQUE,
      password_hash text NOT NULL,
      operator boolean NOT NULL,
      created_at double precision NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE TABLE memberships (
      user_id text COLLATE "C" NOT NULL,
      organisation_id text COLLATE "C" NOT NULL,
      role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
      created_at double precision NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (user_id, organisation_id)
    )`,
    `CREATE INDEX memberships_organisation ON memberships (organisation_id)`,
    `CREATE TABLE sessions (
      id text COLLATE "C" PRIMARY KEY,
      token_hash text COLLATE "C" NOT NULL UNIQUE,
      user_id text COLLATE "C" NOT NULL,
      created_at double precision NOT NULL,
      last_seen_at double precision NOT NULL,
      expires_at double precision NOT NULL,
      user_agent text NOT NULL,
      address text NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE INDEX sessions_user ON sessions (user_id)`,
    `CREATE TABLE invitations (
      id text COLLATE "C" PRIMARY KEY,
      token_hash text COLLATE "C" NOT NULL UNIQUE,
      organisation_id text COLLATE "C" NOT NULL,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
      uat boolean NOT NULL,
      invited_by text NOT NULL,
      created_at double precision NOT NULL,
      expires_at double precision NOT NULL,
      accepted_at double precision,
      position bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE INDEX invitations_organisation ON invitations (organisation_id)`,
    `CREATE TABLE audit_log (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organisation_id text COLLATE "C",
      actor text NOT NULL,
      action text NOT NULL,
      target text NOT NULL,
      at double precision NOT NULL
    )`,
    `CREATE INDEX audit_log_organisation ON audit_log (organisation_id, seq)`
  ),
  "0017_widget_keys_organisation": statements(
    `CREATE INDEX widget_keys_organisation ON widget_keys (organisation_id, created_at)`
  ),
  "0018_key_details": statements(
    `ALTER TABLE api_keys ADD COLUMN name text COLLATE "C" NOT NULL DEFAULT ''`,
    `ALTER TABLE api_keys ADD COLUMN created_by text COLLATE "C"`,
    `ALTER TABLE api_keys ADD COLUMN last_used_at double precision`,
    `ALTER TABLE widget_keys ADD COLUMN name text COLLATE "C" NOT NULL DEFAULT ''`,
    `ALTER TABLE widget_keys ADD COLUMN created_by text COLLATE "C"`,
    `ALTER TABLE widget_keys ADD COLUMN last_used_at double precision`
  ),
  /**
   * The request counters of the rate limits (`RateLimitStore`): one row per key (a digest of the
   * credential) and fixed window, removed once the window has ended. Unlogged: the counters are
   * cheap to write and short-lived, and after a crash (or on a promoted standby) the table starts
   * empty, which only forgives the windows running then.
   */
  "0019_rate_limits": statements(
    `CREATE UNLOGGED TABLE rate_limits (
      key text COLLATE "C" NOT NULL,
      window_start double precision NOT NULL,
      window_end double precision NOT NULL,
      hits integer NOT NULL,
      PRIMARY KEY (key, window_start)
    )`,
    `CREATE INDEX rate_limits_window_end ON rate_limits (window_end)`
  )
}

/** The migrator's loader over {@link migrations}. */
export const loader = PgMigrator.fromRecord(migrations)

/** The id of the latest of {@link migrations}, which a database this build serves must have applied. */
export const latestMigration = Math.max(...Object.keys(migrations).map((id) => Number.parseInt(id, 10)))
