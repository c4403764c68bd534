import { sql } from 'kysely'
import { apiSettingStreams } from '../../commands/api-setting/api-setting.ts'
import type { ApiSettingEvent } from '../../commands/api-setting/api-setting.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { ApiSettingRow } from './tables.ts'

export type { ApiSettingRow } from './tables.ts'

export const apiSettingsProjector: Projector = {
  name: 'api_settings',
  version: 1,
  eventTypes: ['ApiSettingCreated', 'ApiSettingUpdated', 'ApiSettingDeleted'],
  tables: ['api_settings'],
  async createTables(db) {
    await db.schema
      .createTable('api_settings')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('website', 'text')
      .addColumn('lead_assigned_to', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('tags', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  // Inserts once, sets values or deletes: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<ApiSettingEvent>(recorded)
    const id = apiSettingStreams.idOf(recorded.streamName)
    switch (event.type) {
      case 'ApiSettingCreated': {
        const { api_setting_id: _id, at, ...fields } = event.data
        return insertRowsOnce(db, 'api_settings', 'id', [{ id, ...fields, created_at: at, updated_at: at }])
      }
      case 'ApiSettingUpdated': {
        const { by: _by, at, ...changes } = event.data
        await db.updateTable('api_settings').set({ ...changes, updated_at: new Date(at) }).where('id', '=', id).execute()
        return
      }
      case 'ApiSettingDeleted':
        await db.deleteFrom('api_settings').where('id', '=', id).execute()
    }
  },
}

/** The organization's API settings, newest first (the original's ordering). */
export function listApiSettings(db: Db, orgId: string): Promise<ApiSettingRow[]> {
  return db.selectFrom('api_settings').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id').execute()
}

/** A live API setting of the organization, or undefined: another organization's id looks exactly like a missing one. */
export function apiSettingOf(db: Db, orgId: string, id: string): Promise<ApiSettingRow | undefined> {
  return db.selectFrom('api_settings').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}
