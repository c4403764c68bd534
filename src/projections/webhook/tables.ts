/**
 * The webhook subscriptions read model: one row per live subscription (a deleted one is removed;
 * its delivery log stays). `created_position_*` is where delivery starts: the events after the
 * subscription was created. The secret is not here (see the webhooks migration).
 */
export type WebhookRow = {
  id: string; org_id: string; url: string; event_types: string[]
  is_active: boolean; disabled_reason: string | null; activation: number
  created_position_commit: string; created_position_prepare: string
  created_by: string | null; created_at: Date; updated_at: Date
}

export type WebhookTables = { webhooks: WebhookRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends WebhookTables {}
}
