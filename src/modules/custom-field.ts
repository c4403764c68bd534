import { customFieldsProjector } from '../projections/custom-field/custom-fields.ts'
import type { ModuleManifest } from './manifest.ts'

/** Custom fields: per-organization fields of deals, leads and tasks. */
export const customFieldModule: ModuleManifest = {
  name: 'custom-field',
  routes: async (deps) => {
    const { customFieldRoutes } = await import('../http/custom-fields/custom-fields.ts')
    return [customFieldRoutes(deps)]
  },
  projectors: [customFieldsProjector],
  idKinds: [
    [/^\/api\/custom-fields\/\{id\}/, 'customField'],
  ],
}
