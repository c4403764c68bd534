import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Viewer } from '../opportunity/queries.ts'

/**
 * The kinds of record the activity feed and the notifications speak of, as the original names them
 * (`entity_type`), with what a reader of either needs at read time: the record's current display
 * name, who may see it (the rule its own list applies), and where the web app shows it. Names and
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
  /** Whether a member sees every record of the kind (accounts, contacts) or only those they created or are assigned to (leads, deals, tasks). */
  orgWide: boolean
  /** The web app's page of a record. */
  page: string
  /** In words, for descriptions and notifications: "deal". */
  noun: string
}

const personName = sql<string>`trim(r.first_name || ' ' || coalesce(r.last_name, ''))`

export const RECORD_KINDS: Record<EntityType, Kind> = {
  Account: { table: 'accounts', name: sql<string>`r.name`, orgWide: true, page: '/accounts', noun: 'account' },
  Contact: { table: 'contacts', name: personName, orgWide: true, page: '/contacts', noun: 'contact' },
  Lead: { table: 'leads', name: personName, orgWide: false, page: '/leads', noun: 'lead' },
  Opportunity: { table: 'opportunities', name: sql<string>`r.name`, orgWide: false, page: '/pipeline', noun: 'deal' },
  Task: { table: 'tasks', name: sql<string>`r.title`, orgWide: false, page: '/tasks', noun: 'task' },
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
 * SQL: whether the viewer may see the record `<alias>.entity_type`/`<alias>.entity_id` by its
 * list's rule: an admin sees every record; a member every account and contact, and the leads,
 * deals and tasks they created or are assigned to; the organization API key (no profile) only org-wide kinds.
 */
export function mayReadRecordSql(alias: string, viewer: Viewer): RawBuilder<boolean> {
  if (viewer.isAdmin) return sql<boolean>`true`
  const row = (column: string) => sql.ref(`${alias}.${column}`)
  const member = viewer.profileId
  const rules = ENTITY_TYPES.map((type) => {
    const kind = RECORD_KINDS[type]
    const rule =
      kind.orgWide ? sql`true`
      : member === null ? sql`false`
      : sql`EXISTS (SELECT 1 FROM ${sql.table(kind.table)} r WHERE r.id = ${row('entity_id')} AND r.org_id = ${row('org_id')} AND (r.created_by = ${member} OR ${member}::uuid = ANY (r.assigned_to)))`
    return sql`WHEN ${type} THEN ${rule}`
  })
  return sql<boolean>`CASE ${row('entity_type')} ${sql.join(rules, sql` `)} ELSE false END`
}
