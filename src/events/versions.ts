import type { RecordedEvent } from '../eventstore/event-store.ts'
import { presentErased } from '../privacy/seal.ts'

/**
 * Schema versions of stored events, and the upcasters that turn an older `data` shape into the
 * current one when it is read (issue 8, "Event hygiene"). Events are never rewritten in the log:
 * a shape change bumps the type's version here, with one upcaster from the previous version, and
 * every reader (deciders through handleCommand, projectors through domainEventOf) sees the current
 * shape only. The zod schema of each current shape is in catalogue.ts.
 *
 * This module imports no command module, so the write and projection paths can use it freely.
 */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>

/** Custom field options as {value, label} pairs: a plain string (version 1) is both. */
const optionPairs = (options: unknown): unknown[] | undefined =>
  Array.isArray(options) ? options.map((option: unknown) => (typeof option === 'string' ? { value: option, label: option } : option)) : undefined

/** Per type, the upcasters from version 1: `[v1→v2, v2→v3, …]`. A type not listed is at version 1. */
const UPCASTERS: ReadonlyMap<string, readonly Upcaster[]> = new Map<string, readonly Upcaster[]>([
  [
    'OpportunityCreated',
    [
      // v1 → v2: deals carry custom field values. A deal created before custom fields existed has none.
      // (Some version-1 events were written after custom fields existed and already carry them: kept.)
      (data) => ({ ...data, custom_fields: data.custom_fields ?? {} }),
    ],
  ],
  // v1 → v2: goals have a type (a won amount, or a number of won deals), a period type and an active flag (the original's SalesGoal).
  ['GoalSet', [(data) => ({ ...data, goal_type: data.goal_type ?? 'REVENUE', period_type: data.period_type ?? 'CUSTOM', is_active: data.is_active ?? true })]],
  // v1 → v2: a select field's options became {value, label} pairs (the original's dropdown options; a v1 string is both), and definitions gained is_filterable and display_order.
  ['CustomFieldDefined', [(data) => ({ ...data, options: optionPairs(data.options) ?? [], is_filterable: data.is_filterable ?? false, display_order: data.display_order ?? 0 })]],
  ['CustomFieldChanged', [(data) => (data.options === undefined ? data : { ...data, options: optionPairs(data.options) })]],
  [
    'AccountCreated',
    [
      // v1 → v2: accounts carry employees, annual revenue and currency (issue 22). An older account has none.
      (data) => ({ number_of_employees: null, annual_revenue: null, currency: null, ...data }),
    ],
  ],
  [
    'ContactCreated',
    [
      // v1 → v2: contacts carry the original's professional and address fields (issue 22); an older contact is active and may be called.
      (data) => ({ organization: null, department: null, linkedin_url: null, address_line: null, city: null, state: null, postcode: null, country: null, do_not_call: false, is_active: true, ...data }),
    ],
  ],
  // v1 → v2: tags carry a description (the original's, issue 22). An older tag has a blank one.
  ['TagCreated', [(data) => ({ ...data, description: data.description ?? '' })]],
  // v1 → v2: tasks carry custom field values (issue 19). A task created before has none.
  ['TaskCreated', [(data) => ({ ...data, custom_fields: data.custom_fields ?? {} })]],
  [
    'LeadCreated',
    [
      // v1 → v2: leads carry an industry (issue 22). A lead created before it has none.
      (data) => ({ ...data, industry: data.industry ?? null }),
      // v2 → v3: and the currency of their amount (issue 22); an older lead has none.
      (data) => ({ ...data, currency: data.currency ?? null }),
      // v3 → v4: and the original's LinkedIn URL, last-contacted and next follow-up dates (issue 30); an older lead has none.
      (data) => ({ linkedin_url: null, last_contacted: null, next_follow_up: null, ...data }),
    ],
  ],
])

/** The version new events of `type` are written with. */
export const currentVersion = (type: string): number => (UPCASTERS.get(type)?.length ?? 0) + 1

/** The upcasters of `type`, oldest first (for the catalogue and its tests). */
export const upcastersOf = (type: string): readonly Upcaster[] => UPCASTERS.get(type) ?? []

/**
 * `data` of an event of `type` stored at `schemaVersion`, brought to the current version. A missing
 * or invalid version reads as 1 (the store's default); a version newer than this code knows (written
 * by a newer process during a rolling deploy) is left as stored.
 */
export function upcast(type: string, schemaVersion: number | undefined, data: unknown): unknown {
  const steps = UPCASTERS.get(type)
  if (!steps) return data
  const from = Number.isInteger(schemaVersion) && schemaVersion! >= 1 ? schemaVersion! : 1
  let result = data
  for (let version = from; version <= steps.length; version++) result = steps[version - 1]!((result ?? {}) as Record<string, unknown>)
  return result
}

/** A recorded event as `{ type, data }` in its current shape, an erased person's fields as the log's tombstones: what the log's readers show (exports, webhooks). */
export const decodeEvent = (recorded: Pick<RecordedEvent, 'type' | 'data' | 'schemaVersion'>): { type: string; data: unknown } => ({
  type: recorded.type,
  data: upcast(recorded.type, recorded.schemaVersion, recorded.data),
})

/**
 * What deciders and projectors fold: decodeEvent, with an erased person's fields as blank strings
 * (presentErased) rather than tombstones, so every fold and column keeps its types.
 */
export const foldedEvent = (recorded: Pick<RecordedEvent, 'type' | 'data' | 'schemaVersion'>): { type: string; data: unknown } => decodeEvent({ ...recorded, data: presentErased(recorded.data) })

/**
 * A recorded event as its aggregate's event union, upcast to the current schema version: for a
 * projector's `apply` (its `eventTypes` already filtered it) or a use case folding a stream it knows.
 */
export const domainEventOf = <Event extends { type: string; data: unknown }>(recorded: RecordedEvent): Event => foldedEvent(recorded) as Event
