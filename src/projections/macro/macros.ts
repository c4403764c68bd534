import { sql } from 'kysely'
import { macroStreams } from '../../commands/macro/macro.ts'
import type { MacroEvent } from '../../commands/macro/macro.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Seer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import type { MacroRow } from './tables.ts'

export type { MacroRow } from './tables.ts'

export const macrosProjector: Projector = {
  name: 'macros',
  version: 1,
  eventTypes: ['MacroCreated', 'MacroUpdated', 'MacroDeleted', 'MacroApplied'],
  tables: ['macros'],
  async createTables(db) {
    await db.schema
      .createTable('macros')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('owner', 'uuid')
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('usage_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  // Each change applies only past the row's revision: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<MacroEvent>(recorded)
    const id = macroStreams.idOf(recorded.streamName)
    const revision = recorded.revision.toString()
    const newer = db.updateTable('macros').where('id', '=', id).where('revision', '<', revision)
    switch (event.type) {
      case 'MacroCreated': {
        const { macro_id: _id, org_id, title, body, scope, owner, is_active, created_by, at } = event.data
        return insertRowsOnce(db, 'macros', 'id', [{ id, org_id, title, body, scope, owner, is_active, usage_count: 0, revision, created_by, created_at: at, updated_at: at }])
      }
      case 'MacroUpdated': {
        const { by: _by, at, ...changes } = event.data
        await newer.set({ ...changes, revision, updated_at: new Date(at) }).execute()
        return
      }
      case 'MacroApplied':
        // A use is no edit: the list's order (last edited first) stays.
        await newer.set({ usage_count: sql`usage_count + 1`, revision }).execute()
        return
      case 'MacroDeleted':
        await db.deleteFrom('macros').where('id', '=', id).execute()
    }
  },
}

/** Macros the viewer sees: the organization's org macros and their own personal ones (an admin sees no other member's). */
const visibleMacros = (db: Db, orgId: string, seer: Seer) =>
  db
    .selectFrom('macros')
    .selectAll()
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('scope', '=', 'org'), ...(seer.profileId ? [eb.and([eb('scope', '=', 'personal'), eb('owner', '=', seer.profileId)])] : [])]))

export type MacroFilter = { active?: boolean; search?: string }

/** The viewer's macros, last edited first (the visible set is small: the org's and their own), narrowed by `active` and a search of title and body; and all they see, for the totals. */
export async function listMacros(db: Db, viewer: Seer & { orgId: string }, filter: MacroFilter): Promise<{ rows: MacroRow[]; all: MacroRow[] }> {
  const all = await visibleMacros(db, viewer.orgId, viewer).orderBy('updated_at', 'desc').orderBy('id').execute()
  const search = filter.search?.toLowerCase()
  const rows = all.filter((row) => (filter.active === undefined || row.is_active === filter.active) && (!search || row.title.toLowerCase().includes(search) || row.body.toLowerCase().includes(search)))
  return { rows, all }
}

/** A macro the viewer sees, or undefined: another organization's, or another member's personal one, looks exactly like a missing one. */
export function macroOf(db: Db, viewer: Seer & { orgId: string }, id: string): Promise<MacroRow | undefined> {
  return visibleMacros(db, viewer.orgId, viewer).where('id', '=', id).executeTakeFirst()
}
