import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseMergeEvent } from '../../commands/case/merge.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { CaseMergeRow } from './merge-tables.ts'

/**
 * Where merged cases went (commands/case/merge.ts), from the survivor's events: a duplicate's row
 * while it is merged, and the alias of each case id that now reaches another. A merge of a case
 * that had absorbed duplicates moves their aliases to the new survivor, so following a merge of a
 * merge is one lookup, not a walk.
 */
async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE case_merges (source_id uuid PRIMARY KEY, org_id uuid NOT NULL, into_id uuid NOT NULL, merged_by uuid, merged_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE TABLE case_aliases (alias_id uuid PRIMARY KEY, org_id uuid NOT NULL, case_id uuid NOT NULL)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_merges_into ON case_merges (into_id, merged_at DESC)`.execute(db)
}

async function apply(db: Db, intoId: string, orgId: string, event: CaseMergeEvent): Promise<void> {
  switch (event.type) {
    case 'CaseDuplicateAbsorbed': {
      const { source_case_id, aliases, by, at } = event.data
      await db.insertInto('case_merges').values({ source_id: source_case_id, org_id: orgId, into_id: intoId, merged_by: by, merged_at: new Date(at) }).onConflict((oc) => oc.column('source_id').doUpdateSet({ into_id: intoId, merged_by: by, merged_at: new Date(at) })).execute()
      if (aliases.length) await db.insertInto('case_aliases').values(aliases.map((alias_id) => ({ alias_id, org_id: orgId, case_id: intoId }))).onConflict((oc) => oc.column('alias_id').doUpdateSet({ case_id: intoId })).execute()
      return
    }
    case 'CaseDuplicateReleased': {
      // The duplicate is no alias any more; the ones it had brought reach it again.
      const { source_case_id, aliases } = event.data
      await db.deleteFrom('case_merges').where('source_id', '=', source_case_id).execute()
      await db.deleteFrom('case_aliases').where('alias_id', '=', source_case_id).execute()
      const own = aliases.filter((alias) => alias !== source_case_id)
      if (own.length) await db.updateTable('case_aliases').set({ case_id: source_case_id }).where('alias_id', 'in', own).execute()
      return
    }
  }
}

export const caseMergesProjector: Projector = {
  name: 'case_merges',
  version: 1,
  eventTypes: ['CaseDuplicateAbsorbed', 'CaseDuplicateReleased'],
  tables: ['case_merges', 'case_aliases'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, caseStreams.idOf(recorded.streamName), recorded.metadata.orgId ?? '', domainEventOf<CaseMergeEvent>(recorded)),
}

/**
 * The case that a merged case's mail and links now reach, following merges of merges, in one
 * lookup; undefined when `caseId` is not merged (it is its own survivor). The survivor may since
 * have been deleted: check it as any case id. Inbound mail threads by it.
 */
export async function survivingCase(db: Db, orgId: string, caseId: string): Promise<string | undefined> {
  const row = await db.selectFrom('case_aliases').select('case_id').where('org_id', '=', orgId).where('alias_id', '=', caseId).executeTakeFirst()
  return row?.case_id
}

/** Where a duplicate was merged (its direct survivor), or undefined when it is not merged. */
export const mergeOf = (db: Db, orgId: string, sourceId: string): Promise<CaseMergeRow | undefined> =>
  db.selectFrom('case_merges').selectAll().where('org_id', '=', orgId).where('source_id', '=', sourceId).executeTakeFirst()

/** The duplicates merged into a case, latest first, with their names (the original's `merged_from_cases`). */
export async function mergedFromCases(db: Db, orgId: string, intoId: string): Promise<{ id: string; name: string; merged_at: Date }[]> {
  const { rows } = await sql<{ id: string; name: string; merged_at: Date }>`SELECT m.source_id AS id, c.name, m.merged_at FROM case_merges m JOIN cases c ON c.id = m.source_id WHERE m.org_id = ${orgId} AND m.into_id = ${intoId} ORDER BY m.merged_at DESC, m.source_id`.execute(db)
  return rows
}
