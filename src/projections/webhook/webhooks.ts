import { sql } from 'kysely'
import { WEBHOOK_EVENT_TYPES, webhookStreams } from '../../commands/webhook/webhook.ts'
import type { WebhookEvent } from '../../commands/webhook/webhook.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import { fetchPage } from '../kernel/records.ts'
import type { WebhookRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { WebhookRow } from './tables.ts'

export const webhooksProjector: Projector = {
  name: 'webhooks',
  version: 1,
  eventTypes: WEBHOOK_EVENT_TYPES,
  tables: ['webhooks'],
  async createTables(db) {
    await sql`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY, org_id uuid NOT NULL, url text NOT NULL, event_types jsonb NOT NULL,
        is_active boolean NOT NULL, disabled_reason text, activation integer NOT NULL,
        created_position_commit bigint NOT NULL, created_position_prepare bigint NOT NULL,
        created_by uuid, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL
      )`.execute(db)
    await sql`CREATE INDEX webhooks_org ON webhooks (org_id, created_at)`.execute(db)
  },
  // Every statement sets values (the activation is the event's own revision), so a replay changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<WebhookEvent>(recorded)
    const id = webhookStreams.idOf(recorded.streamName)
    const revision = Number(recorded.revision)
    switch (event.type) {
      case 'WebhookCreated': {
        const { org_id, url, event_types, created_by, at } = event.data
        const row = { id, org_id, url, event_types: JSON.stringify(event_types) as unknown as string[], is_active: true, disabled_reason: null, activation: revision, created_position_commit: String(recorded.position.commit), created_position_prepare: String(recorded.position.prepare), created_by, created_at: new Date(at), updated_at: new Date(at) }
        await db.insertInto('webhooks').values(row).onConflict((oc) => oc.column('id').doNothing()).execute()
        return
      }
      case 'WebhookChanged': {
        const { url, event_types, is_active, at } = event.data
        const enabled = is_active === true ? { is_active: true, disabled_reason: null, activation: revision } : is_active === false ? { is_active: false, disabled_reason: null } : {}
        await db
          .updateTable('webhooks')
          .set({ ...(url !== undefined && { url }), ...(event_types !== undefined && { event_types: JSON.stringify(event_types) as unknown as string[] }), ...enabled, updated_at: new Date(at) })
          .where('id', '=', id)
          .execute()
        return
      }
      case 'WebhookDisabled':
        await db.updateTable('webhooks').set({ is_active: false, disabled_reason: event.data.reason, updated_at: new Date(event.data.at) }).where('id', '=', id).execute()
        return
      case 'WebhookDeleted':
        await db.deleteFrom('webhooks').where('id', '=', id).execute()
        return
    }
  },
}


export const createdPositionOf = (row: WebhookRow): Position => ({ commit: BigInt(row.created_position_commit), prepare: BigInt(row.created_position_prepare) })

export function listWebhooks(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ count: number; rows: WebhookRow[] }> {
  return fetchPage<WebhookRow>(db.selectFrom('webhooks').where('org_id', '=', orgId), page, (q) => q.orderBy('created_at').orderBy('id'))
}

/** A webhook of the organization, or undefined: another org's id looks exactly like a missing one. */
export function webhookOf(db: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** For the delivery worker: one subscription whatever its organization, or every active one. */
export function webhookById(db: Db, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
}

export function activeWebhooks(db: Db): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('is_active', '=', true).orderBy('created_at').orderBy('id').execute()
}
