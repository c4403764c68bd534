import { tagsProjector } from '../projections/tag/tags.ts'
import type { ModuleManifest } from './manifest.ts'

/** Tags: labels on accounts, contacts, leads, deals and tasks; admins rename, archive and merge them. */
export const tagModule: ModuleManifest = {
  name: 'tag',
  routes: async (deps) => {
    const { tagRoutes } = await import('../http/tags/tags.ts')
    return [tagRoutes(deps)]
  },
  projectors: [tagsProjector],
  idKinds: [
    [/^\/api\/tags\/\{id\}/, 'tag'],
  ],
}
