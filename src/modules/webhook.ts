import { z } from 'zod'
import type { WebhookEvent } from '../commands/webhook/webhook.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { webhooksProjector } from '../projections/webhook/webhooks.ts'
import type { ModuleManifest } from './manifest.ts'

/** Webhooks: where the organization's events are POSTed (the dispatcher is the runtime's). */
export const webhookModule: ModuleManifest = {
  name: 'webhook',
  events: noPersonalData(eventsOf<WebhookEvent>()({
    // webhook-<id>
    WebhookCreated: { stream: 'webhook', description: "A webhook subscription was created: where the organization's events are POSTed, and which types (never its secret).", data: z.strictObject({ webhook_id: Id, org_id: Id, url: z.string(), event_types: z.array(z.string()), created_by: By, ...at }) },
    WebhookChanged: { stream: 'webhook', description: 'A webhook changed URL, event types or active flag: only the changed values.', data: z.strictObject({ url: z.string().optional(), event_types: z.array(z.string()).optional(), is_active: z.boolean().optional(), ...at }) },
    WebhookDisabled: { stream: 'webhook', description: 'The delivery worker disabled a webhook after a streak of failed deliveries.', data: z.strictObject({ reason: z.string(), failures: z.number().int().min(0), ...at }) },
    WebhookDeleted: { stream: 'webhook', description: 'A webhook subscription was deleted.', data: z.strictObject(at) },
  })),
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
