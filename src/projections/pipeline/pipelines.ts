import { sql } from 'kysely'
import { casePipelines, dealPipelines, isStreamOf, leadPipelines, taskPipelines } from '../../commands/pipeline/kinds.ts'
import type { PipelineKind } from '../../commands/pipeline/kinds.ts'
import type { PipelineEvent } from '../../commands/pipeline/pipeline.ts'
import type { Stage } from '../../commands/pipeline/stage-rules.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { PipelinePrefix, PipelineRow, PipelineStageRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { PipelineRow, PipelineStageRow } from './tables.ts'

export type PipelineWithStages = PipelineRow & { stages: PipelineStageRow[] }

/** A kind's projector and the queries over its tables. */
export type PipelineReadModel = {
  projector: Projector
  /** The organization's pipelines: the default first, then by creation. */
  listPipelines(db: Db, orgId: string): Promise<PipelineWithStages[]>
  /** A pipeline of the organization with its stages, or undefined: another org's id looks exactly like a missing one. */
  pipelineOf(db: Db, orgId: string, id: string): Promise<PipelineWithStages | undefined>
  /** A stage of the organization, or undefined. */
  stageOf(db: Db, orgId: string, id: string): Promise<PipelineStageRow | undefined>
}

const stageRow = (pipelineId: string, orgId: string, { order, ...stage }: Stage): PipelineStageRow => ({ ...stage, pipeline_id: pipelineId, org_id: orgId, position: order })

type StageEvent = Exclude<PipelineEvent, { type: 'PipelineCreated' | 'PipelineRenamed' | 'PipelineDeleted' }>

/** Builds a kind's read model over tables `<prefix>pipelines` and `<prefix>pipeline_stages`. */
function pipelineReadModel(name: string, kind: PipelineKind, prefix: PipelinePrefix): PipelineReadModel {
  const P = `${prefix}pipelines` as const
  const S = `${prefix}pipeline_stages` as const

  // Positions are recomputed from the rows, so applying an event twice changes nothing.
  const renumber = (db: Db, pipelineId: string) =>
    sql`UPDATE ${sql.table(S)} s SET position = r.n FROM (SELECT id, row_number() OVER (ORDER BY position, id) AS n FROM ${sql.table(S)} WHERE pipeline_id = ${pipelineId}) r WHERE s.id = r.id AND s.position <> r.n`.execute(db)

  async function applyStageEvent(db: Db, id: string, event: StageEvent): Promise<void> {
    switch (event.type) {
      case 'StageAdded': {
        const pipeline = await db.selectFrom(P).select('org_id').where('id', '=', id).executeTakeFirst()
        if (!pipeline) return
        await db.insertInto(S).values(stageRow(id, pipeline.org_id, event.data.stage)).onConflict((oc) => oc.column('id').doNothing()).execute()
        await renumber(db, id)
        return
      }
      case 'StageUpdated': {
        const { stage_id, at: _at, ...changes } = event.data
        await db.updateTable(S).set(changes).where('id', '=', stage_id).execute()
        return
      }
      case 'StagesReordered':
        for (const [i, stageId] of event.data.stage_ids.entries()) await db.updateTable(S).set({ position: i + 1 }).where('id', '=', stageId).where('pipeline_id', '=', id).execute()
        return
      case 'StageRemoved':
        await db.deleteFrom(S).where('id', '=', event.data.stage_id).execute()
        await renumber(db, id)
    }
  }

  async function apply(db: Db, id: string, event: PipelineEvent): Promise<void> {
    const at = new Date(event.data.at)
    switch (event.type) {
      case 'PipelineCreated': {
        const { org_id, name, is_default, stages, created_by } = event.data
        await db.insertInto(P).values({ id, org_id, name, is_default, created_by, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
        if (stages.length) await db.insertInto(S).values(stages.map((s) => stageRow(id, org_id, s))).onConflict((oc) => oc.column('id').doNothing()).execute()
        return
      }
      case 'PipelineRenamed':
        await db.updateTable(P).set({ name: event.data.name, updated_at: at }).where('id', '=', id).execute()
        return
      case 'PipelineDeleted':
        await db.deleteFrom(S).where('pipeline_id', '=', id).execute()
        await db.deleteFrom(P).where('id', '=', id).execute()
        return
      default:
        await applyStageEvent(db, id, event)
        await db.updateTable(P).set({ updated_at: at }).where('id', '=', id).execute()
    }
  }

  async function createTables(db: Db): Promise<void> {
    await db.schema
      .createTable(P)
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_default', 'boolean', (c) => c.notNull())
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX ${sql.id(`${P}_org`)} ON ${sql.table(P)} (org_id, is_default DESC, created_at)`.execute(db)
    await db.schema
      .createTable(S)
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
    await sql`CREATE INDEX ${sql.id(`${S}_pipeline`)} ON ${sql.table(S)} (pipeline_id, position)`.execute(db)
  }

  async function withStages(db: Db, rows: PipelineRow[]): Promise<PipelineWithStages[]> {
    if (!rows.length) return []
    const stages = (await db.selectFrom(S).selectAll().where('pipeline_id', 'in', rows.map((r) => r.id)).orderBy('position').orderBy('id').execute()) as PipelineStageRow[]
    return rows.map((row) => ({ ...row, stages: stages.filter((s) => s.pipeline_id === row.id) }))
  }

  return {
    projector: {
      name,
      version: 1,
      eventTypes: ['PipelineCreated', 'PipelineRenamed', 'StageAdded', 'StageUpdated', 'StagesReordered', 'StageRemoved', 'PipelineDeleted'],
      tables: [P, S],
      createTables,
      // The other kind's pipelines write the same event types to their own streams.
      apply: async (trx, recorded) => (isStreamOf(kind.streams, recorded.streamName) ? apply(trx, kind.streams.idOf(recorded.streamName), domainEventOf<PipelineEvent>(recorded)) : undefined),
    },
    listPipelines: async (db, orgId) => withStages(db, (await db.selectFrom(P).selectAll().where('org_id', '=', orgId).orderBy('is_default', 'desc').orderBy('created_at').orderBy('id').execute()) as PipelineRow[]),
    pipelineOf: async (db, orgId, id) => {
      const row = (await db.selectFrom(P).selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()) as PipelineRow | undefined
      return row && (await withStages(db, [row]))[0]
    },
    stageOf: async (db, orgId, id) => (await db.selectFrom(S).selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()) as PipelineStageRow | undefined,
  }
}

/** Deal pipelines: tables `pipelines` and `pipeline_stages`. */
export const dealPipelineModel = pipelineReadModel('pipelines', dealPipelines, '')
/** Lead pipelines: tables `lead_pipelines` and `lead_pipeline_stages`. */
export const leadPipelineModel = pipelineReadModel('lead_pipelines', leadPipelines, 'lead_')

/** Task pipelines: tables `task_pipelines` and `task_pipeline_stages`. */
export const taskPipelineModel = pipelineReadModel('task_pipelines', taskPipelines, 'task_')

/** Case pipelines: tables `case_pipelines` and `case_pipeline_stages`. */
export const casePipelineModel = pipelineReadModel('case_pipelines', casePipelines, 'case_')

export const pipelinesProjector = dealPipelineModel.projector
export const leadPipelinesProjector = leadPipelineModel.projector
export const taskPipelinesProjector = taskPipelineModel.projector
export const casePipelinesProjector = casePipelineModel.projector
export const { listPipelines, pipelineOf, stageOf } = dealPipelineModel
