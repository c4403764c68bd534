import type { z } from 'zod'
import type { Definition } from '../../commands/custom-field/values.ts'
import type { LeadFilter } from '../../projections/lead/leads.ts'
import { customFieldFilters } from '../kernel/custom-field-filters.ts'
import type { LeadListQuery } from './schemas.ts'

/** The lead list's query string (§4.1) as the shared filter: one mapping, so the list and the lead board narrow identically. A rating matches in any case (the original's clients send HOT). */
export function leadFilterOf(query: z.infer<typeof LeadListQuery>, definitions: readonly Definition[]): LeadFilter {
  return {
    name: query.name, salutation: query.salutation, source: query.source, status: query.status, assignedTo: query.assigned_to, tags: query.tags, city: query.city, email: query.email, rating: query.rating?.toLowerCase(), search: query.search,
    createdFrom: query.created_at__gte, createdTo: query.created_at__lte, closeFrom: query.close_date__gte, closeTo: query.close_date__lte, nextFollowUp: query.next_follow_up, customFields: customFieldFilters(query, definitions),
  }
}
