import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { pipelineStreams } from '../commands/pipeline/pipeline.ts'
import type { PipelineEvent } from '../commands/pipeline/pipeline.ts'
import type { Stage, StageKind } from '../commands/pipeline/stage-rules.ts'
import { domainEventOf } from './projector.ts'
import type { Projector } from './projector.ts'

/**
 * The pipelines read model: one row per live pipeline and one per live stage; a deleted pipeline or
 * removed stage leaves no rows. `position` is the stage's 1-based order; `probability` is the default
 * a deal in the stage gets (100 won, 0 lost, the seeded per-code default, or null: none).
 */
export type PipelineRow = { id: string; org_id: string; name: string; is_default: boolean; created_by: string | null; created_at: Date; updated_at: Date }
export type PipelineStageRow = {
  id: string
  pipeline_id: string
  org_id: string
  code: string
  label: string
  position: number
  kind: StageKind
  expected_days: number | null
  warning_days: number | null
  probability: number | null
}

type Tables = { pipelines: PipelineRow; pipeline_stages: PipelineStageRow }

const stageRow = (pipelineId: string, orgId: string, { order, ...stage }: Stage): PipelineStageRow => ({ ...stage, pipeline_id: pipelineId, org_id: orgId, position: order })

// Positions are recomputed from the rows, so applying an event twice changes nothing.
async function renumber(db: Kysely<Tables>, pipelineId: string): Promise<void> {
  await sql`UPDATE pipeline_stages s SET position = r.n FROM (SELECT id, row_number() OVER (ORDER BY position, id) AS n FROM pipeline_stages WHERE pipeline_id = ${pipelineId}) r WHERE s.id = r.id AND s.position <> r.n`.execute(db)
}

async function touch(db: Kysely<Tables>, id: string, at: Date): Promise<void> {
  await db.updateTable('pipelines').set({ updated_at: at }).where('id', '=', id).execute()
}

async function applyStageEvent(db: Kysely<Tables>, id: string, event: Exclude<PipelineEvent, { type: 'PipelineCreated' | 'PipelineRenamed' | 'PipelineDeleted' }>): Promise<void> {
  switch (event.type) {
    case 'StageAdded': {
      const pipeline = await db.selectFrom('pipelines').select('org_id').where('id', '=', id).executeTakeFirst()
      if (!pipeline) return
      await db.insertInto('pipeline_stages').values(stageRow(id, pipeline.org_id, event.data.stage)).onConflict((oc) => oc.column('id').doNothing()).execute()
      return renumber(db, id)
    }
    case 'StageUpdated': {
      const { stage_id, at: _at, ...changes } = event.data
      await db.updateTable('pipeline_stages').set(changes).where('id', '=', stage_id).execute()
      return
    }
    case 'StagesReordered':
      for (const [i, stageId] of event.data.stage_ids.entries()) await db.updateTable('pipeline_stages').set({ position: i + 1 }).where('id', '=', stageId).where('pipeline_id', '=', id).execute()
      return
    case 'StageRemoved':
      await db.deleteFrom('pipeline_stages').where('id', '=', event.data.stage_id).execute()
      return renumber(db, id)
  }
}

export const pipelinesProjector: Projector = {
  name: 'pipelines',
  version: 1,
  eventTypes: ['PipelineCreated', 'PipelineRenamed', 'StageAdded', 'StageUpdated', 'StagesReordered', 'StageRemoved', 'PipelineDeleted'],
  tables: ['pipelines', 'pipeline_stages'],
  async createTables(db) {
    await db.schema
      .createTable('pipelines')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_default', 'boolean', (c) => c.notNull())
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX pipelines_org ON pipelines (org_id, is_default DESC, created_at)`.execute(db)
    await db.schema
      .createTable('pipeline_stages')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('pipeline_id', 'uuid', (c) => c.notNull())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('expected_days', 'integer')
      .addColumn('warning_days', 'integer')
      .addColumn('probability', 'integer')
      .execute()
    await sql`CREATE INDEX pipeline_stages_pipeline ON pipeline_stages (pipeline_id, position)`.execute(db)
  },
  async apply(trx, recorded) {
    const db = trx as unknown as Kysely<Tables>
    const event = domainEventOf<PipelineEvent>(recorded)
    const id = pipelineStreams.idOf(recorded.streamName)
    const at = new Date(event.data.at)
    switch (event.type) {
      case 'PipelineCreated': {
        const { org_id, name, is_default, stages, created_by } = event.data
        await db.insertInto('pipelines').values({ id, org_id, name, is_default, created_by, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
        if (stages.length) await db.insertInto('pipeline_stages').values(stages.map((s) => stageRow(id, org_id, s))).onConflict((oc) => oc.column('id').doNothing()).execute()
        return
      }
      case 'PipelineRenamed':
        await db.updateTable('pipelines').set({ name: event.data.name, updated_at: at }).where('id', '=', id).execute()
        return
      case 'PipelineDeleted':
        await db.deleteFrom('pipeline_stages').where('pipeline_id', '=', id).execute()
        await db.deleteFrom('pipelines').where('id', '=', id).execute()
        return
      default:
        await applyStageEvent(db, id, event)
        return touch(db, id, at)
    }
  },
}

const readDb = (db: Kysely<any>) => db as Kysely<Tables>

export type PipelineWithStages = PipelineRow & { stages: PipelineStageRow[] }

async function withStages(db: Kysely<any>, rows: PipelineRow[]): Promise<PipelineWithStages[]> {
  if (!rows.length) return []
  const stages = await readDb(db).selectFrom('pipeline_stages').selectAll().where('pipeline_id', 'in', rows.map((r) => r.id)).orderBy('position').orderBy('id').execute()
  return rows.map((row) => ({ ...row, stages: stages.filter((s) => s.pipeline_id === row.id) }))
}

/** The organization's pipelines: the default first, then by creation. */
export async function listPipelines(db: Kysely<any>, orgId: string): Promise<PipelineWithStages[]> {
  const rows = await readDb(db).selectFrom('pipelines').selectAll().where('org_id', '=', orgId).orderBy('is_default', 'desc').orderBy('created_at').orderBy('id').execute()
  return withStages(db, rows)
}

/** A pipeline of the organization with its stages, or undefined: another org's id looks exactly like a missing one. */
export async function pipelineOf(db: Kysely<any>, orgId: string, id: string): Promise<PipelineWithStages | undefined> {
  const row = await readDb(db).selectFrom('pipelines').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
  return row && (await withStages(db, [row]))[0]
}

/** A stage of the organization, or undefined. */
export function stageOf(db: Kysely<any>, orgId: string, id: string): Promise<PipelineStageRow | undefined> {
  return readDb(db).selectFrom('pipeline_stages').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}
