import type { z } from 'zod'
import type { Definition } from '../../commands/custom-field/values.ts'
import type { TaskFilter } from '../../projections/task/tasks.ts'
import { customFieldFilters } from '../kernel/custom-field-filters.ts'
import { isUuid } from '../kernel/relations.ts'
import type { TaskFilterQuery } from './schemas.ts'

const PARENT_FILTERS = ['account', 'opportunity', 'case', 'lead', 'contact'] as const

/**
 * The list's filters from its query: a repeated status is any of them; a malformed parent id matches
 * nothing; `cf_<key>` against the active custom field `definitions` (an unknown key matches nothing).
 */
export function filterOf(query: z.infer<typeof TaskFilterQuery>, definitions: readonly Definition[]): TaskFilter {
  const statuses = query.status === undefined ? [] : [query.status].flat().map((s) => s.trim()).filter(Boolean)
  const parents: TaskFilter['parents'] = {}
  for (const parent of PARENT_FILTERS) {
    const id = query[parent]?.trim()
    if (id) parents[parent] = isUuid(id) ? id.toLowerCase() : '00000000-0000-0000-0000-000000000000'
  }
  return {
    title: query.title,
    search: query.search,
    status: statuses.length ? statuses : undefined,
    priority: query.priority?.trim() || undefined,
    assignedTo: query.assigned_to,
    tags: query.tags,
    dueFrom: query.due_date__gte,
    dueTo: query.due_date__lte,
    createdFrom: query.created_at__gte,
    createdTo: query.created_at__lte,
    parents,
    customFields: customFieldFilters(query, definitions),
  }
}

