import { webhooksProjector } from '../projections/webhook/webhooks.ts'
import type { ModuleManifest } from './manifest.ts'

/** Webhooks: where the organization's events are POSTed (the dispatcher is the runtime's). */
export const webhookModule: ModuleManifest = {
  name: 'webhook',
  routes: async (deps) => {
    const { webhookRoutes } = await import('../http/webhooks/webhooks.ts')
    return [webhookRoutes(deps)]
  },
  projectors: [webhooksProjector],
  idKinds: [
    [/^\/api\/webhooks\/\{id\}/, 'webhook'],
  ],
  idParams: { delivery_id: 'webhookDelivery' },
}
