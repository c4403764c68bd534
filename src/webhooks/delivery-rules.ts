import { formatPosition } from '../eventstore/event-store.ts'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import { decodeEvent } from '../events/versions.ts'
import type { WebhookRow } from '../projections/webhook/webhooks.ts'

/** What a delivery carries and to whom, and when a failed one is tried again: the dispatcher's pure rules. */

export type RetryPolicy = {
  /** First retry after this long; each further one waits twice as long… */
  baseMs: number
  /** …up to this. */
  maxMs: number
  /** This many failed attempts in a row disable the subscription (event WebhookDisabled). */
  maxFailures: number
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1000, maxMs: 5 * 60_000, maxFailures: 10 }

/** Exponential backoff after the `failures`-th failure in a row: base, 2·base, 4·base… capped at maxMs. */
export const backoffMs = (retry: RetryPolicy, failures: number): number => Math.min(retry.maxMs, retry.baseMs * 2 ** Math.min(30, Math.max(0, failures - 1)))

/** `Opportunity*` matches every type starting with Opportunity; an empty list matches every type. */
export function typeMatcher(patterns: readonly string[]): (type: string) => boolean {
  if (patterns.length === 0) return () => true
  const regexes = patterns.map((p) => new RegExp(`^${p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`))
  return (type) => regexes.some((r) => r.test(type))
}

/** What a subscription receives: its organization's events of the types it asked for, never webhook configuration. */
export function wants(hook: WebhookRow, matches: (type: string) => boolean, event: RecordedEvent): boolean {
  return event.metadata.orgId === hook.org_id && !event.type.startsWith('Webhook') && matches(event.type)
}

export const deliveryBody = (event: RecordedEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, position: formatPosition(event.position), stream: event.streamName, revision: Number(event.revision), data: decodeEvent(event).data, at: event.createdAt.toISOString() })
