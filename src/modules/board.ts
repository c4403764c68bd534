import { boardsProjector } from '../projections/board/boards.ts'
import type { ModuleManifest } from './manifest.ts'

/** Boards: free kanban boards with columns and cards. */
export const boardModule: ModuleManifest = {
  name: 'board',
  routes: async (deps) => {
    const { boardRoutes } = await import('../http/boards/boards.ts')
    return [boardRoutes(deps)]
  },
  projectors: [boardsProjector],
  idKinds: [
    [/^\/api\/boards\/columns\/\{column_pk\}/, 'boardColumn'],
    [/^\/api\/boards\/tasks\/\{id\}/, 'boardCard'],
    [/^\/api\/boards\/\{(id|board_pk)\}/, 'board'],
  ],
}
