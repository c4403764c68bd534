import { z } from 'zod'
import { STAGE_KINDS } from '../commands/pipeline/stage-rules.ts'
import type { PipelineEvent } from '../commands/pipeline/pipeline.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { casePipelinesProjector, leadPipelinesProjector, pipelinesProjector, taskPipelinesProjector } from '../projections/pipeline/pipelines.ts'
import type { ModuleManifest } from './manifest.ts'

// Pipelines (pipeline-<id>).
const Stage = z.strictObject({
  id: Id,
  code: z.string(),
  label: z.string(),
  order: z.number().int().min(1),
  kind: z.enum(STAGE_KINDS),
  expected_days: z.number().int().nullable(),
  warning_days: z.number().int().nullable(),
  probability: z.number().min(0).max(100).nullable(),
})

/** Pipelines: the stages of deals, leads and tasks (three kinds of pipeline, one decider). */
export const pipelineModule: ModuleManifest = {
  name: 'pipeline',
  events: noPersonalData(eventsOf<PipelineEvent>()({
    // pipeline-<id>; lead pipelines write the same events to lead_pipeline-<id>
    PipelineCreated: { stream: 'pipeline', description: 'A pipeline was created with its stages (whole snapshots).', data: z.strictObject({ pipeline_id: Id, org_id: Id, name: z.string(), is_default: z.boolean(), stages: z.array(Stage), created_by: By, ...at }) },
    PipelineRenamed: { stream: 'pipeline', description: 'A pipeline was renamed.', data: z.strictObject({ name: z.string(), ...at }) },
    StageAdded: { stream: 'pipeline', description: 'A stage was added at the end of a pipeline.', data: z.strictObject({ stage: Stage, ...at }) },
    StageUpdated: {
      stream: 'pipeline',
      description: 'A stage changed label, kind, thresholds or default probability: only the changed values.',
      data: z.strictObject({ stage_id: Id, label: z.string().optional(), kind: z.enum(STAGE_KINDS).optional(), expected_days: z.number().int().nullable().optional(), warning_days: z.number().int().nullable().optional(), probability: z.number().min(0).max(100).nullable().optional(), ...at }),
    },
    StagesReordered: { stream: 'pipeline', description: "A pipeline's stages were put in a new order (every stage id, in order).", data: z.strictObject({ stage_ids: Ids, ...at }) },
    StageRemoved: { stream: 'pipeline', description: 'A stage with no deals was removed.', data: z.strictObject({ stage_id: Id, ...at }) },
    PipelineDeleted: { stream: 'pipeline', description: 'A pipeline with no deals was deleted.', data: z.strictObject(at) },
    StageLocked: { stream: 'pipeline', description: 'A stage was closed to deals while its deals are counted (before a removal or kind change).', data: z.strictObject({ stage_id: Id, ...at }) },
    StageUnlocked: { stream: 'pipeline', description: 'A locked stage was opened to deals again.', data: z.strictObject({ stage_id: Id, ...at }) },
    PipelineLocked: { stream: 'pipeline', description: 'A whole pipeline was closed to deals while its deals are counted (before deletion).', data: z.strictObject(at) },
    PipelineUnlocked: { stream: 'pipeline', description: 'A locked pipeline was opened to deals again.', data: z.strictObject(at) },
  })),
  routes: async (deps) => {
    const [{ pipelineRoutes }, { leadPipelineRoutes }, { taskPipelineRoutes }, { casePipelineRoutes }] = await Promise.all([import('../http/pipelines/pipelines.ts'), import('../http/pipelines/lead-pipelines.ts'), import('../http/pipelines/task-pipelines.ts'), import('../http/pipelines/case-pipelines.ts')])
    return [pipelineRoutes(deps), leadPipelineRoutes(deps), taskPipelineRoutes(deps), casePipelineRoutes(deps)]
  },
  projectors: [pipelinesProjector, leadPipelinesProjector, taskPipelinesProjector, casePipelinesProjector],
  idKinds: [
    [/^\/api\/opportunities\/pipelines\/\{id\}/, 'pipeline'],
    [/^\/api\/opportunities\/stages\/\{id\}/, 'stage'],
    [/^\/api\/leads\/pipelines\/\{(id|pipeline_pk)\}/, 'leadPipeline'],
    [/^\/api\/leads\/stages\/\{id\}/, 'leadStage'],
    [/^\/api\/tasks\/pipelines\/\{(id|pipeline_pk)\}/, 'taskPipeline'],
    [/^\/api\/tasks\/stages\/\{id\}/, 'taskStage'],
    [/^\/api\/cases\/pipelines\/\{(id|pipeline_pk)\}/, 'casePipeline'],
    [/^\/api\/cases\/stages\/\{id\}/, 'caseStage'],
  ],
}
