import type { Config } from '../config.ts'
import type { WebhookDispatcherOptions } from './dispatcher.ts'

/** The dispatcher's configurable policies, from the environment (WEBHOOK_*): spread into createWebhookDispatcher's options. */
export function webhookDispatcherSettings(config: Pick<Config, 'webhookAllowPrivate' | 'webhookDeliveryKeep' | 'webhookDeliveryKeepDays'>): Pick<WebhookDispatcherOptions, 'targets' | 'prune'> {
  return { targets: { allowPrivate: config.webhookAllowPrivate }, prune: { keep: config.webhookDeliveryKeep, keepDays: config.webhookDeliveryKeepDays } }
}
