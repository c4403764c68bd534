import { z } from 'zod'
import { TASK_PRIORITIES, TASK_STATUSES } from '../../commands/task/fields.ts'
import type { Db } from '../../db/database.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import type { Viewer } from '../../projections/opportunity/queries.ts'
import { listTasks, parentNames, taskConditions } from '../../projections/task/tasks.ts'
import type { TaskFilter, TaskRow } from '../../projections/task/tasks.ts'
import { Erased, PrimaryEmailContactRef, erasedMark, ProfileRef, TagRef, nameRefs, primaryEmailContactRef, profileRefs, tagRefs } from '../kernel/relations.ts'

/**
 * Tasks as the original answers them and its web app reads them: parents as `{id, name}` (the app
 * derives a task's "related" link from whichever is set), assignees as profiles with
 * `user_details`, tags and teams as objects, contacts with the original's `primary_email`.
 */
const Ref = z.object({ id: z.uuid(), name: z.string() })
/** A lead parent also by its person's names (the original's phone app labels the task with them; a lead always has one of the two), marked once the person was erased. */
const LeadRef = Ref.extend({ first_name: z.string(), last_name: z.string().nullable(), erased: Erased })

export const Task = z.object({
  id: z.uuid(),
  title: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(TASK_PRIORITIES),
  due_date: z.string().nullable().describe('YYYY-MM-DD'),
  description: z.string().nullable(),
  account: Ref.nullable(),
  opportunity: Ref.nullable().describe('Null also when the caller may not see the deal, as for the lead'),
  case: Ref.nullable().describe('Null also when the caller may not see the case'),
  lead: LeadRef.nullable(),
  contacts: z.array(PrimaryEmailContactRef),
  teams: z.array(Ref),
  assigned_to: z.array(ProfileRef),
  tags: z.array(TagRef),
  created_by: ProfileRef.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  is_overdue: z.boolean().describe('Due before today and not Completed'),
  days_until_due: z.number().int().nullable().describe('Negative when overdue; null without a due date'),
  pipeline: z.uuid().nullable().describe('The task pipeline of its board stage; null on the status board'),
  stage: z.uuid().nullable().describe("The task pipeline stage's id; null on the status board"),
  stage_code: z.string().nullable(),
  kanban_order: z.number(),
  custom_fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("Values of the organization's active custom fields for tasks, by key (no value: no key)"),
})
export type TaskBody = z.infer<typeof Task>

const unique = (ids: Iterable<string | null>) => [...new Set([...ids].filter((id): id is string => id !== null))]
const indexed = <T extends { id: string }>(rows: readonly T[]) => new Map(rows.map((row) => [row.id, row]))
const picked = <T>(map: Map<string, T>, ids: readonly string[]) => ids.flatMap((id) => map.get(id) ?? [])
const DAY_MS = 86_400_000

/** The organization's active custom fields for tasks, in display order: the ones a task shows and its list filters by. */
export const activeTaskFields = (db: Db, orgId: string) => definitionsOf(db, orgId, 'tasks', { activeOnly: true })

/**
 * Task rows as response bodies; what they point at (and the active custom fields) is fetched once
 * for the whole batch. A parent the viewer may not see shows as none, as an unknown one would. `today`: YYYY-MM-DD.
 */
export async function tasksOf(db: Db, viewer: Viewer, rows: readonly TaskRow[], today: string): Promise<TaskBody[]> {
  const { orgId } = viewer
  const [parents, teams, tags, profiles, contacts, definitions] = await Promise.all([
    parentNames(db, viewer, rows),
    nameRefs(db, 'teams', orgId, unique(rows.flatMap((r) => r.teams))),
    tagRefs(db, orgId, unique(rows.flatMap((r) => r.tags))),
    profileRefs(db, orgId, unique(rows.flatMap((r) => [...r.assigned_to, r.created_by]))),
    liveContacts(db, orgId, unique(rows.flatMap((r) => r.contacts))),
    activeTaskFields(db, orgId),
  ])
  const shownKeys = new Set(definitions.map((d) => d.key))
  const people = indexed(profiles)
  const tagsById = indexed(tags)
  const contactsById = indexed(contacts.map(primaryEmailContactRef))
  const parent = (id: string | null) => (id && parents.has(id) ? { id, name: parents.get(id)!.name } : null)
  const leadParent = (id: string | null) => {
    const found = id ? parents.get(id) : undefined
    return id && found ? { id, name: found.name, first_name: found.first_name ?? '', last_name: found.last_name, ...erasedMark(found) } : null
  }
  return rows.map((row) => {
    const days = row.due_date === null ? null : Math.round((Date.parse(row.due_date) - Date.parse(today)) / DAY_MS)
    return {
      id: row.id,
      title: row.title,
      status: row.status,
      priority: row.priority,
      due_date: row.due_date,
      description: row.description,
      account: parent(row.account),
      opportunity: parent(row.opportunity),
      case: parent(row.case),
      lead: leadParent(row.lead),
      contacts: picked(contactsById, row.contacts),
      teams: picked(teams, row.teams),
      assigned_to: picked(people, row.assigned_to),
      tags: picked(tagsById, row.tags),
      created_by: row.created_by ? (people.get(row.created_by) ?? null) : null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      is_overdue: days !== null && days < 0 && row.status !== 'Completed',
      days_until_due: days,
      pipeline: row.pipeline_id,
      stage: row.stage_id,
      stage_code: row.stage,
      kanban_order: row.kanban_order,
      // A deactivated field's values stay stored but are not shown.
      custom_fields: Object.fromEntries(Object.entries(row.custom_fields ?? {}).filter(([key]) => shownKeys.has(key))),
    }
  })
}

/** Today as YYYY-MM-DD (UTC): what due dates are compared with. */
export const todayOf = (now: Date): string => now.toISOString().slice(0, 10)

/** A task in a record's detail (an account's, a contact's), as the web app's task rail reads it. */
export const TaskLink = z.object({ id: z.uuid(), title: z.string(), status: z.enum(TASK_STATUSES), priority: z.enum(TASK_PRIORITIES), due_date: z.string().nullable() })

/** The newest tasks linked to a record that the viewer may open (the task list's visibility), at most `limit`. */
export async function taskLinks(db: Db, viewer: Viewer, link: NonNullable<TaskFilter['parents']>, limit = 20): Promise<z.infer<typeof TaskLink>[]> {
  const { rows } = await listTasks(db, taskConditions(viewer, { parents: link }), { limit, offset: 0 })
  return rows.map(({ id, title, status, priority, due_date }) => ({ id, title, status, priority, due_date }))
}
