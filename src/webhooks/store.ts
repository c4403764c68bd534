import { sql } from 'kysely'
import type { Position, RecordedEvent } from '../eventstore/event-store.ts'
import { fetchPage } from '../projections/kernel/records.ts'
import type { DeliveryKind, DeliveryRow, DeliveryStatus, WebhookCheckpointRow } from './tables.ts'
import type { Db } from '../db/database.ts'

export type { DeliveryKind, DeliveryRow, DeliveryStatus, WebhookCheckpointRow } from './tables.ts'


export async function saveWebhookSecret(db: Db, webhookId: string, orgId: string, secret: string): Promise<void> {
  await db.insertInto('webhook_secrets').values({ webhook_id: webhookId, org_id: orgId, secret }).execute()
}

/** The secrets a delivery is signed with now: the current one, and the one it replaced while its rotation's grace period lasts. */
export async function webhookSecrets(db: Db, webhookId: string, now: Date): Promise<string[]> {
  const row = await db.selectFrom('webhook_secrets').select(['secret', 'previous_secret', 'previous_expires_at']).where('webhook_id', '=', webhookId).executeTakeFirst()
  if (!row) return []
  const previousValid = row.previous_secret !== null && row.previous_expires_at !== null && row.previous_expires_at.getTime() > now.getTime()
  return previousValid ? [row.secret, row.previous_secret!] : [row.secret]
}

/** Makes `secret` the current one; the one it replaces still signs until `previousExpiresAt`. */
export async function rotateWebhookSecret(db: Db, webhookId: string, secret: string, previousExpiresAt: Date): Promise<void> {
  await db
    .updateTable('webhook_secrets')
    .set((eb) => ({ previous_secret: eb.ref('secret'), previous_expires_at: previousExpiresAt, secret }))
    .where('webhook_id', '=', webhookId)
    .execute()
}

export const positionOf = (row: { position_commit: string; position_prepare: string }): Position => ({ commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) })

export async function webhookCheckpoint(db: Db, webhookId: string): Promise<WebhookCheckpointRow | undefined> {
  return (await webhookCheckpoints(db, [webhookId])).get(webhookId)
}

/** Moves the checkpoint forward only (two processes briefly both delivering cannot move it back), with the failure streak. */
export async function saveWebhookCheckpoint(db: Db, webhookId: string, state: { position: Position; activation: number; failures: number; lastError: string | null }): Promise<void> {
  const { commit, prepare } = state.position
  await sql`
    INSERT INTO webhook_checkpoints (webhook_id, position_commit, position_prepare, activation, consecutive_failures, last_error)
    VALUES (${webhookId}, ${commit}, ${prepare}, ${state.activation}, ${state.failures}, ${state.lastError})
    ON CONFLICT (webhook_id) DO UPDATE SET
      position_commit = CASE WHEN (EXCLUDED.position_commit, EXCLUDED.position_prepare) > (webhook_checkpoints.position_commit, webhook_checkpoints.position_prepare) THEN EXCLUDED.position_commit ELSE webhook_checkpoints.position_commit END,
      position_prepare = CASE WHEN (EXCLUDED.position_commit, EXCLUDED.position_prepare) > (webhook_checkpoints.position_commit, webhook_checkpoints.position_prepare) THEN EXCLUDED.position_prepare ELSE webhook_checkpoints.position_prepare END,
      activation = EXCLUDED.activation, consecutive_failures = EXCLUDED.consecutive_failures, last_error = EXCLUDED.last_error, updated_at = clock_timestamp()`.execute(db)
}

export type DeliveryRecord = {
  id: string
  webhookId: string
  orgId: string
  event: Pick<RecordedEvent, 'id' | 'type' | 'streamName' | 'revision' | 'position'>
  kind: DeliveryKind
  attempt: number
  status: DeliveryStatus
  statusCode?: number | null
  error?: string | null
  durationMs?: number | null
  redeliveryOf?: string | null
}

export async function recordDelivery(db: Db, d: DeliveryRecord): Promise<DeliveryRow> {
  return db
    .insertInto('webhook_deliveries')
    .values({
      id: d.id,
      webhook_id: d.webhookId,
      org_id: d.orgId,
      event_id: d.event.id,
      event_type: d.event.type,
      stream: d.event.streamName,
      revision: String(d.event.revision),
      position_commit: String(d.event.position.commit),
      position_prepare: String(d.event.position.prepare),
      kind: d.kind,
      attempt: d.attempt,
      status: d.status,
      status_code: d.statusCode ?? null,
      error: d.error ?? null,
      duration_ms: d.durationMs ?? null,
      redelivery_of: d.redeliveryOf ?? null,
      completed_at: d.status === 'pending' ? null : sql<Date>`clock_timestamp()`,
    } as never)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A pending redelivery's outcome; only the first completion counts. */
export async function completeDelivery(db: Db, id: string, outcome: { status: 'succeeded' | 'failed'; statusCode: number | null; error: string | null; durationMs: number }): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: outcome.status, status_code: outcome.statusCode, error: outcome.error, duration_ms: outcome.durationMs, completed_at: sql<Date>`clock_timestamp()` } as never)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute()
}

export function pendingRedeliveries(db: Db, limit: number): Promise<DeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('status', '=', 'pending').orderBy('seq').limit(limit).execute()
}

/** The delivery log of one webhook, newest first. */
export function listDeliveries(db: Db, webhookId: string, page: { limit: number; offset: number }): Promise<{ count: number; rows: DeliveryRow[] }> {
  return fetchPage<DeliveryRow>(db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId), page, (q) => q.orderBy('seq', 'desc'))
}

export function deliveryOf(db: Db, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst()
}

export async function deleteWebhookSecret(db: Db, webhookId: string): Promise<void> {
  await db.deleteFrom('webhook_secrets').where('webhook_id', '=', webhookId).execute()
}

export async function webhookCheckpoints(db: Db, webhookIds: readonly string[]): Promise<Map<string, WebhookCheckpointRow>> {
  if (!webhookIds.length) return new Map()
  const rows = await db.selectFrom('webhook_checkpoints').selectAll().where('webhook_id', 'in', webhookIds).execute()
  return new Map(rows.map((r) => [r.webhook_id, r]))
}
