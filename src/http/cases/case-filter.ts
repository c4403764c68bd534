import type { z } from 'zod'
import type { Definition } from '../../commands/custom-field/values.ts'
import type { CaseFilter } from '../../projections/case/queries.ts'
import { customFieldFilters } from '../kernel/custom-field-filters.ts'
import { isUuid } from '../kernel/relations.ts'
import type { CaseFilterQuery } from './schemas.ts'

const NO_MATCH = '00000000-0000-0000-0000-000000000000'
const given = (value: string | undefined) => value?.trim() || undefined

/**
 * The list's filters from its query (the original's apply_case_list_filters): a repeated status is
 * any of them; a malformed account id matches nothing; `cf_<key>` against the active custom field
 * `definitions`; `sla_breached=true` judged at `now`. Merged duplicates (status Duplicate) are left
 * out unless `show_merged=true`, or a status filter names them.
 */
export function filterOf(query: z.infer<typeof CaseFilterQuery>, definitions: readonly Definition[], now: Date): CaseFilter {
  const statuses = query.status === undefined ? [] : [query.status].flat().map((s) => s.trim()).filter(Boolean)
  const account = given(query.account)
  const showMerged = query.show_merged === 'true'
  return {
    name: query.name,
    search: query.search,
    status: statuses.length ? statuses : undefined,
    hideMerged: !showMerged && !statuses.length,
    priority: given(query.priority),
    caseType: given(query.case_type),
    account: account === undefined ? undefined : isUuid(account) ? account.toLowerCase() : NO_MATCH,
    assignedTo: query.assigned_to,
    tags: query.tags,
    createdFrom: query.created_at__gte,
    createdTo: query.created_at__lte,
    slaBreachedAt: query.sla_breached === 'true' ? now : undefined,
    customFields: customFieldFilters(query, definitions),
  }
}
