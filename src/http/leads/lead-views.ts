import type { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import { LEAD_NOTES } from '../../projections/lead/leads.ts'
import { notesView } from '../kernel/note-views.ts'
import type { LeadRow } from '../../projections/lead/leads.ts'
import { timeAgo } from '../opportunities/opportunity-views.ts'
import { contactRef, erasedMark, nameRefs, profileRefs, tagRefs } from '../kernel/relations.ts'
import { answeredRating } from './schemas.ts'
import type { Lead } from './schemas.ts'

/**
 * Lead rows as response bodies. What they point at (accounts, contacts, tags, teams, profiles,
 * custom field definitions) is fetched once per batch of rows, so a page of any size costs the same
 * handful of queries.
 */
const unique = (ids: Iterable<string | null>) => [...new Set([...ids].filter((id): id is string => id !== null))]
const indexed = <T extends { id: string }>(rows: readonly T[]) => new Map(rows.map((row) => [row.id, row]))
const picked = <T>(map: Map<string, T>, ids: readonly string[]) => ids.flatMap((id) => map.get(id) ?? [])

export async function leadsOf(db: Db, orgId: string, rows: readonly LeadRow[], now: Date): Promise<z.infer<typeof Lead>[]> {
  const [accounts, teams, tags, profiles, contacts, definitions] = await Promise.all([
    nameRefs(db, 'accounts', orgId, unique(rows.map((r) => r.account))),
    nameRefs(db, 'teams', orgId, unique(rows.flatMap((r) => r.teams))),
    tagRefs(db, orgId, unique(rows.flatMap((r) => r.tags))),
    profileRefs(db, orgId, unique(rows.flatMap((r) => [...r.assigned_to, r.created_by, r.converted_by]))),
    liveContacts(db, orgId, unique(rows.flatMap((r) => r.contacts))),
    definitionsOf(db, orgId, 'leads', { activeOnly: true }),
  ])
  const people = indexed(profiles)
  const tagsById = indexed(tags)
  const contactsById = indexed(contacts.map(contactRef))
  const shownKeys = new Set(definitions.map((d) => d.key))
  const person = (id: string | null) => (id ? (people.get(id) ?? null) : null)
  return rows.map((row) => {
    const { org_id: _org, is_deleted: _deleted, is_erased, worked_at: _worked, pipeline_id, stage_id: _stage, stage_changed_at, converted_account, converted_contact, converted_opportunity, converted_by, converted_at, created_by, created_at, updated_at, custom_fields, ...fields } = row
    return {
      ...fields,
      rating: answeredRating(fields.rating),
      job_title: fields.title,
      account: row.account ? (accounts.get(row.account) ?? null) : null,
      contacts: picked(contactsById, row.contacts),
      tags: picked(tagsById, row.tags),
      teams: picked(teams, row.teams),
      assigned_to: picked(people, row.assigned_to),
      created_by: person(created_by),
      created_at: created_at.toISOString(),
      updated_at: updated_at.toISOString(),
      created_on_arrow: timeAgo(created_at, now),
      pipeline: pipeline_id,
      stage_changed_at: stage_changed_at?.toISOString() ?? null,
      conversion:
        converted_account && converted_contact && converted_opportunity && converted_at
          ? { account_id: converted_account, contact_id: converted_contact, opportunity_id: converted_opportunity, converted_by: person(converted_by), converted_at: converted_at.toISOString() }
          : null,
      custom_fields: Object.fromEntries(Object.entries(custom_fields ?? {}).filter(([key]) => shownKeys.has(key))),
      ...erasedMark({ is_erased }),
    }
  })
}

/** A lead's live comments and attachments as the detail and the comment answer show them. */
export const leadNotesView = (db: Db, orgId: string, leadId: string) => notesView(db, orgId, LEAD_NOTES, 'leads', leadId)
