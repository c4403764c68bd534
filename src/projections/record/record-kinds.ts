import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Viewer } from '../opportunity/queries.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { VisibleKind } from '../../visibility/policy.ts'

/**
 * The kinds of record the activity feed and the notifications speak of, each declared in its
 * module's manifest (`record`), as the original names them (`entity_type`): what a reader of either
 * needs at read time (the record's current display name, who may see it by the visibility policy,
 * where the web app shows it), the feed's entry for each of its events, and the events that notify
 * someone. Names and visibility are read when asked for, so a renamed record shows its new name and
 * a feed follows today's access rules; neither read model depends on another, so each rebuilds alone.
 */
export const ACTIVITY_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'COMMENT'] as const
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number]

/** What the feed makes of an event: its action and a one-line description from its data (`noun`: the kind in words). */
export type Reading = { action: ActivityAction; describe: (data: Record<string, unknown>, noun: string) => string }

export type RecordKindSpec = {
  /** Its `entity_type`, which is also its line in the visibility policy. */
  entityType: VisibleKind
  /**
   * 0 for the kinds the feed and notifications began with; a kind that joins later starts at 1, and
   * each change of its readings or notifying events adds 1: both read models' versions add them up,
   * so they are rebuilt without an edit of their files.
   */
  version: number
  /** The record's read model. */
  table: string
  /** Its display name, as SQL over the read model's row `r`. */
  name: RawBuilder<string>
  /** A person's record: whether they were erased, as SQL over `r` (the name is then blank and the answers mark it, docs/personal-data.md). */
  erased?: RawBuilder<boolean>
  /** The web app's page of a record. */
  page: string
  /** In words, for descriptions and notifications: "deal". */
  noun: string
  /** The feed's entry for each of its events that is activity. */
  activity: Readonly<Record<string, Reading>>
  /**
   * Its events that notify: creation and update set its assignees (a new one is told), a comment
   * names people (each is told); `told`: events that name whom they tell (`data.notify`), each with
   * its verb (`<kind>.<verb>`).
   */
  notifiedBy: { created: string; updated: string; commented: string; told?: Readonly<Record<string, string>> }
}

export const personName = sql<string>`trim(r.first_name || ' ' || coalesce(r.last_name, ''))`
/** The read model's mark of an erased person (its `is_erased` column). */
export const personErased = sql<boolean>`r.is_erased`

// The readings the record modules share.
export const created: Reading = { action: 'CREATE', describe: (_, noun) => `Created the ${noun}` }
export const deleted: Reading = { action: 'DELETE', describe: (_, noun) => `Deleted the ${noun}` }
const commented: Reading = { action: 'COMMENT', describe: () => 'Added a comment' }
const commentEdited: Reading = { action: 'COMMENT', describe: () => 'Edited a comment' }
const commentDeleted: Reading = { action: 'COMMENT', describe: () => 'Removed a comment' }
/** An attachment's entry names its file: the one entry of a person's record that reads a personal field (an erased one reads "a file"). */
export const ATTACHED = 'Attached '
export const attachedDescription = (fileName: unknown) => `${ATTACHED}${typeof fileName === 'string' && fileName ? fileName : 'a file'}`
const attached: Reading = { action: 'UPDATE', describe: (data) => attachedDescription(data.file_name) }
const detached: Reading = { action: 'UPDATE', describe: () => 'Removed an attachment' }
/** The comment and attachment events every record module shares (commands/notes.ts). */
export const noteReadings = (prefix: string): Record<string, Reading> => ({
  [`${prefix}CommentAdded`]: commented,
  [`${prefix}CommentEdited`]: commentEdited,
  [`${prefix}CommentDeleted`]: commentDeleted,
  [`${prefix}AttachmentAdded`]: attached,
  [`${prefix}AttachmentRemoved`]: detached,
})
const fieldsOf = (data: Record<string, unknown>) => Object.keys(data).filter((key) => key !== 'at')
const changedFields = (fields: string[]) => (fields.length ? `Changed ${fields.join(', ')}` : 'Updated')
/** Accounts and contacts record the new values of the changed fields; deals, leads and tasks each change under `changes`. */
export const updatedFlat: Reading = { action: 'UPDATE', describe: (data) => changedFields(fieldsOf(data)) }
export const updatedChanges: Reading = { action: 'UPDATE', describe: (data) => changedFields(Object.keys((data.changes as Record<string, unknown> | undefined) ?? {})) }

/** The kinds the manifests declare, in the order of their names (the feed's filter lists them so). */
export type RecordKinds = {
  readonly specs: readonly RecordKindSpec[]
  /** Their entity types, for the feed's filter and answers. */
  readonly types: readonly [string, ...string[]]
  /** The sum of their versions (RecordKindSpec `version`). */
  readonly version: number
  /** The web app's path of a record; '' for a kind it has no page for. */
  link(type: string, id: string): string
  /** SQL: the current name of the record `<alias>.entity_type`/`<alias>.entity_id` (null once gone from its read model). */
  nameSql(alias: string): RawBuilder<string | null>
  /** SQL: whether that record is a person who was erased (RecordKindSpec `erased`); false for other kinds. */
  erasedSql(alias: string): RawBuilder<boolean>
  /**
   * SQL: whether the viewer may see the record `<alias>.entity_type`/`<alias>.entity_id` by the
   * visibility policy: a kind the viewer sees whole needs no lookup; otherwise its read model row
   * must pass the policy's predicate.
   */
  mayReadSql(alias: string, viewer: Viewer): RawBuilder<boolean>
}

export function recordKindsOf(declared: readonly (RecordKindSpec | undefined)[]): RecordKinds {
  const specs = declared.filter((spec): spec is RecordKindSpec => spec !== undefined).sort((a, b) => a.entityType.localeCompare(b.entityType))
  const byType = new Map<string, RecordKindSpec>(specs.map((spec) => [spec.entityType, spec]))
  const cases = (alias: string, then: (spec: RecordKindSpec, row: (column: string) => RawBuilder<unknown>) => RawBuilder<unknown>, among = specs) => {
    const row = (column: string) => sql.ref(`${alias}.${column}`)
    return sql.join(among.map((spec) => sql`WHEN ${spec.entityType} THEN ${then(spec, row)}`), sql` `)
  }
  const people = specs.filter((spec) => spec.erased)
  const rowOf = (spec: RecordKindSpec, row: (column: string) => RawBuilder<unknown>) => sql`FROM ${sql.table(spec.table)} r WHERE r.id = ${row('entity_id')} AND r.org_id = ${row('org_id')}`
  return {
    specs,
    types: specs.map((spec) => spec.entityType) as [string, ...string[]],
    version: specs.reduce((sum, spec) => sum + spec.version, 0),
    link: (type, id) => {
      const spec = byType.get(type)
      return spec ? `${spec.page}/${id}` : ''
    },
    nameSql: (alias) => sql<string | null>`CASE ${sql.ref(`${alias}.entity_type`)} ${cases(alias, (spec, row) => sql`(SELECT ${spec.name} ${rowOf(spec, row)})`)} END`,
    erasedSql: (alias) =>
      people.length ? sql<boolean>`coalesce(CASE ${sql.ref(`${alias}.entity_type`)} ${cases(alias, (spec, row) => sql`(SELECT ${spec.erased} ${rowOf(spec, row)})`, people)} END, false)` : sql<boolean>`false`,
    mayReadSql: (alias, viewer) =>
      sql<boolean>`CASE ${sql.ref(`${alias}.entity_type`)} ${cases(alias, (spec, row) =>
        ruleFor(spec.entityType, viewer) === 'all' ? sql`true`
        : sql`EXISTS (SELECT 1 FROM ${sql.table(spec.table)} r WHERE r.id = ${row('entity_id')} AND r.org_id = ${row('org_id')} AND ${visibleSql(spec.entityType, viewer, 'r')})`,
      )} ELSE false END`,
  }
}
