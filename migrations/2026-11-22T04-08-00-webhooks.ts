import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Webhooks (issue 8): operational state of the delivery worker, which a rebuild of the read models
 * must never drop, so it lives here rather than in a projector's tables.
 * - webhook_secrets: the signing secret of each subscription, as is (HMAC needs it back); kept out
 *   of the event log so event feeds, backups of the log and rebuilds never carry it.
 * - webhook_checkpoints: how far each subscription has been delivered, and its failure streak
 *   (`activation` tells which enabling of the subscription the streak belongs to).
 * - webhook_deliveries: one row per delivery attempt (and per requested redelivery), the log admins read.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_secrets (
      webhook_id uuid PRIMARY KEY, org_id uuid NOT NULL, secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`.execute(db)
  await sql`
    CREATE TABLE webhook_checkpoints (
      webhook_id uuid PRIMARY KEY, position_commit bigint NOT NULL, position_prepare bigint NOT NULL,
      activation integer NOT NULL, consecutive_failures integer NOT NULL DEFAULT 0, last_error text,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`.execute(db)
  await sql`
    CREATE TABLE webhook_deliveries (
      seq bigserial UNIQUE, id uuid PRIMARY KEY, webhook_id uuid NOT NULL, org_id uuid NOT NULL,
      event_id uuid NOT NULL, event_type text NOT NULL, stream text NOT NULL, revision bigint NOT NULL,
      position_commit bigint NOT NULL, position_prepare bigint NOT NULL,
      kind text NOT NULL CHECK (kind IN ('delivery', 'redelivery')), attempt integer NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')), status_code integer, error text,
      duration_ms integer, redelivery_of uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(), completed_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq DESC)`.execute(db)
  await sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (seq) WHERE status = 'pending'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE webhook_deliveries`.execute(db)
  await sql`DROP TABLE webhook_checkpoints`.execute(db)
  await sql`DROP TABLE webhook_secrets`.execute(db)
}
