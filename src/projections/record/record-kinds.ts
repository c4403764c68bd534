import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Viewer } from '../opportunity/queries.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'

/**
 * The kinds of record the activity feed and the notifications speak of, as the original names them
 * (`entity_type`), with what a reader of either needs at read time: the record's current display
 * name, who may see it (the visibility policy, as its own list), and where the web app shows it. Names and
 * visibility are read when asked for, so a renamed record shows its new name and a feed follows
 * today's access rules; neither read model depends on another, so each rebuilds alone.
 */
export const ENTITY_TYPES = ['Account', 'Contact', 'Lead', 'Opportunity', 'Task'] as const
export type EntityType = (typeof ENTITY_TYPES)[number]

type Kind = {
  /** The record's read model. */
  table: string
  /** Its display name, as SQL over the read model's row `r`. */
  name: RawBuilder<string>
  /** The web app's page of a record. */
  page: string
  /** In words, for descriptions and notifications: "deal". */
  noun: string
}

const personName = sql<string>`trim(r.first_name || ' ' || coalesce(r.last_name, ''))`

export const RECORD_KINDS: Record<EntityType, Kind> = {
  Account: { table: 'accounts', name: sql<string>`r.name`, page: '/accounts', noun: 'account' },
  Contact: { table: 'contacts', name: personName, page: '/contacts', noun: 'contact' },
  Lead: { table: 'leads', name: personName, page: '/leads', noun: 'lead' },
  Opportunity: { table: 'opportunities', name: sql<string>`r.name`, page: '/pipeline', noun: 'deal' },
  Task: { table: 'tasks', name: sql<string>`r.title`, page: '/tasks', noun: 'task' },
}

export const isEntityType = (value: string): value is EntityType => (ENTITY_TYPES as readonly string[]).includes(value)

/** The web app's path of a record; '' for a kind it has no page for. */
export const recordLink = (type: string, id: string): string => (isEntityType(type) ? `${RECORD_KINDS[type].page}/${id}` : '')

/** SQL: the current name of the record `<alias>.entity_type`/`<alias>.entity_id` (null once gone from its read model). */
export function recordNameSql(alias: string): RawBuilder<string | null> {
  const row = (column: string) => sql.ref(`${alias}.${column}`)
  const cases = ENTITY_TYPES.map((type) => {
    const kind = RECORD_KINDS[type]
    return sql`WHEN ${type} THEN (SELECT ${kind.name} FROM ${sql.table(kind.table)} r WHERE r.id = ${row('entity_id')} AND r.org_id = ${row('org_id')})`
  })
  return sql<string | null>`CASE ${row('entity_type')} ${sql.join(cases, sql` `)} END`
}

/**
 * SQL: whether the viewer may see the record `<alias>.entity_type`/`<alias>.entity_id` by the
 * visibility policy: a kind the viewer sees whole needs no lookup; otherwise its read model row
 * must pass the policy's predicate.
 */
export function mayReadRecordSql(alias: string, viewer: Viewer): RawBuilder<boolean> {
  const row = (column: string) => sql.ref(`${alias}.${column}`)
  const rules = ENTITY_TYPES.map((type) => {
    const kind = RECORD_KINDS[type]
    const rule =
      ruleFor(type, viewer) === 'all' ? sql`true`
      : sql`EXISTS (SELECT 1 FROM ${sql.table(kind.table)} r WHERE r.id = ${row('entity_id')} AND r.org_id = ${row('org_id')} AND ${visibleSql(type, viewer, 'r')})`
    return sql`WHEN ${type} THEN ${rule}`
  })
  return sql<boolean>`CASE ${row('entity_type')} ${sql.join(rules, sql` `)} ELSE false END`
}
