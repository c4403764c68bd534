import { leadPipelinesProjector, pipelinesProjector, taskPipelinesProjector } from '../projections/pipeline/pipelines.ts'
import type { ModuleManifest } from './manifest.ts'

/** Pipelines: the stages of deals, leads and tasks (three kinds of pipeline, one decider). */
export const pipelineModule: ModuleManifest = {
  name: 'pipeline',
  routes: async (deps) => {
    const [{ pipelineRoutes }, { leadPipelineRoutes }, { taskPipelineRoutes }] = await Promise.all([import('../http/pipelines/pipelines.ts'), import('../http/pipelines/lead-pipelines.ts'), import('../http/pipelines/task-pipelines.ts')])
    return [pipelineRoutes(deps), leadPipelineRoutes(deps), taskPipelineRoutes(deps)]
  },
  projectors: [pipelinesProjector, leadPipelinesProjector, taskPipelinesProjector],
  idKinds: [
    [/^\/api\/opportunities\/pipelines\/\{id\}/, 'pipeline'],
    [/^\/api\/opportunities\/stages\/\{id\}/, 'stage'],
    [/^\/api\/leads\/pipelines\/\{(id|pipeline_pk)\}/, 'leadPipeline'],
    [/^\/api\/leads\/stages\/\{id\}/, 'leadStage'],
    [/^\/api\/tasks\/pipelines\/\{(id|pipeline_pk)\}/, 'taskPipeline'],
    [/^\/api\/tasks\/stages\/\{id\}/, 'taskStage'],
  ],
}
