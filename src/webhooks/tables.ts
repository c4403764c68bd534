/** The webhook tables of the migrations (secrets, delivery checkpoints, the delivery log); store.ts holds their queries. */
export type WebhookCheckpointRow = {
  webhook_id: string
  position_commit: string
  position_prepare: string
  activation: number
  consecutive_failures: number
  last_error: string | null
  updated_at: Date
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export type DeliveryKind = 'delivery' | 'redelivery'

export type DeliveryRow = {
  seq: string
  id: string
  webhook_id: string
  org_id: string
  event_id: string
  event_type: string
  stream: string
  revision: string
  position_commit: string
  position_prepare: string
  kind: DeliveryKind
  attempt: number
  status: DeliveryStatus
  status_code: number | null
  error: string | null
  duration_ms: number | null
  redelivery_of: string | null
  created_at: Date
  completed_at: Date | null
}

export type WebhookStoreTables = {
  webhook_secrets: { webhook_id: string; org_id: string; secret: string; previous_secret: string | null; previous_expires_at: Date | null }
  webhook_checkpoints: WebhookCheckpointRow
  webhook_deliveries: DeliveryRow
}

