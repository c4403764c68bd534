import { tasksProjector } from '../projections/task/tasks.ts'
import type { ModuleManifest } from './manifest.ts'

/** Tasks: to-dos on a record, their board, history, comments and attachments. */
export const taskModule: ModuleManifest = {
  name: 'task',
  routes: async (deps, files) => {
    const { taskRoutes } = await import('../http/tasks/tasks.ts')
    return [taskRoutes(deps, files)]
  },
  projectors: [tasksProjector],
  idKinds: [
    [/^\/api\/tasks\/comment\/\{id\}/, 'taskComment'],
    [/^\/api\/tasks\/attachment\/\{id\}/, 'taskAttachment'],
    [/^\/api\/tasks\/\{id\}/, 'task'],
  ],
}
