import { sql } from 'kysely'
import { CONTACT_PERSONAL_FIELDS, contactNames, contactStreams } from '../../commands/contact/contact.ts'
import { containsPattern } from '../../db/like.ts'
import { dateRange } from '../../db/date-range.ts'
import { idsAmong } from '../../db/ids-among.ts'
import { anyOf, fetchPage, liveRecordsTagged, recordProjector } from '../kernel/records.ts'
import { noteTables } from '../kernel/notes.ts'
import { personRecordEraser, withErasure } from '../privacy/erasing.ts'
import type { ContactRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { ContactRow } from './tables.ts'

/** The contact's comments and attachments (projections/kernel/notes.ts), kept by the same projector. */
export const CONTACT_NOTES = noteTables('contact')

/** Erasing a contact blanks their row's personal fields and their notes (issue 31). */
export const contactsProjector = withErasure(recordProjector({
  name: 'contacts',
  // 2: the contact's comments and attachments. 3: the original's professional and address fields, do_not_call, is_active (issue 22). 4: erasures blank, '' not "[erased]" (issue 31). 5: is_erased.
  version: 5,
  table: 'contacts',
  streams: contactStreams,
  events: contactNames.events,
  notes: { prefix: contactNames.notes, tables: CONTACT_NOTES },
  columns: (table) =>
    ['last_name', 'email', 'phone', 'title', 'description', 'organization', 'department', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country']
      .reduce((t, column) => t.addColumn(column, 'text'), table.addColumn('first_name', 'text', (c) => c.notNull()))
      .addColumn('do_not_call', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
      // Set by the erasure (personRecordEraser): the records pointing at the contact answer it as erased.
      .addColumn('is_erased', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('account', 'uuid')
      .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull())
      .addColumn('tags', sql`uuid[]`, (c) => c.notNull()),
  indexes: async (db) => {
    await sql`CREATE INDEX contacts_org_name ON contacts (org_id, lower(first_name), lower(last_name))`.execute(db)
    await sql`CREATE INDEX contacts_account ON contacts (account)`.execute(db)
  },
}), personRecordEraser({ kind: 'contact', table: 'contacts', columns: CONTACT_PERSONAL_FIELDS, notes: CONTACT_NOTES }))


export type ContactListFilter = {
  limit: number
  offset: number
  name?: string
  search?: string
  city?: string
  phone?: string
  email?: string
  account?: string[]
  tags?: string[]
  assignedTo?: string[]
  createdFrom?: string
  createdTo?: string
  /** Only active (true) or inactive (false) contacts; both when absent. */
  isActive?: boolean
}

const byName = (q: any) => q.orderBy(sql`lower(first_name)`).orderBy(sql`lower(coalesce(last_name, ''))`).orderBy('id')

export function listContacts(db: Db, orgId: string, filter: ContactListFilter): Promise<{ count: number; rows: ContactRow[] }> {
  let query = db.selectFrom('contacts').where('org_id', '=', orgId).where('is_deleted', '=', false)
  if (filter.name) {
    const pattern = containsPattern(filter.name)
    query = query.where((eb) => eb.or([eb('first_name', 'ilike', pattern), eb('last_name', 'ilike', pattern)]))
  }
  if (filter.search) {
    const pattern = containsPattern(filter.search)
    query = query.where((eb) => eb.or([eb('first_name', 'ilike', pattern), eb('last_name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('phone', 'ilike', pattern)]))
  }
  if (filter.city) query = query.where('city', 'ilike', containsPattern(filter.city))
  if (filter.phone) query = query.where('phone', 'ilike', containsPattern(filter.phone))
  if (filter.email) query = query.where('email', 'ilike', containsPattern(filter.email))
  if (filter.account) query = query.where(filter.account.length ? sql<boolean>`account = any(${sql.val(filter.account)}::uuid[])` : sql<boolean>`false`)
  if (filter.tags) query = query.where(anyOf('tags', filter.tags))
  if (filter.assignedTo) query = query.where(anyOf('assigned_to', filter.assignedTo))
  for (const condition of dateRange(sql.ref('created_at'), 'timestamptz', { from: filter.createdFrom, to: filter.createdTo })) query = query.where(condition)
  if (filter.isActive !== undefined) query = query.where('is_active', '=', filter.isActive)
  return fetchPage<ContactRow>(query, filter, byName)
}

/** How many of the filtered contacts are active and inactive (the filter's own is_active is ignored): what a list holding one half back says it holds back. */
export async function countContactsByActivity(db: Db, orgId: string, filter: ContactListFilter): Promise<{ active: number; inactive: number }> {
  const [active, inactive] = await Promise.all([true, false].map(async (isActive) => (await listContacts(db, orgId, { ...filter, isActive, limit: 0, offset: 0 })).count))
  return { active: active!, inactive: inactive! }
}

/** Other live contacts of the same account, by name (at most `limit`): a contact's colleagues. */
export function colleaguesOf(db: Db, orgId: string, contact: { id: string; account: string | null }, limit: number): Promise<ContactRow[]> {
  if (!contact.account) return Promise.resolve([])
  return byName(db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('account', '=', contact.account).where('id', '!=', contact.id).where('is_deleted', '=', false)).limit(limit).execute()
}

/** Ids and first names of the organization's live contacts, by name, and whether each was erased: the account form's contact picker. */
export function contactPicker(db: Db, orgId: string): Promise<{ id: string; first_name: string; is_erased: boolean }[]> {
  return byName(db.selectFrom('contacts').select(['id', 'first_name', 'is_erased']).where('org_id', '=', orgId).where('is_deleted', '=', false)).execute()
}

/** A live contact of the organization, or undefined: another org's id looks exactly like a missing one. */
export function contactOf(db: Db, orgId: string, id: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The live contact of the organization with this email (case-insensitive; emails are unique per organization), or undefined: who the portal signs in. */
export function contactByEmail(db: Db, orgId: string, email: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false).where(sql<boolean>`lower(email) = lower(${email.trim()})`).executeTakeFirst()
}

/** The live contacts of one account, for the account detail. */
export function contactsOfAccount(db: Db, orgId: string, accountId: string): Promise<ContactRow[]> {
  return byName(db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('account', '=', accountId).where('is_deleted', '=', false)).execute()
}

/** The live contacts of the organization carrying a tag, for a tag merge. */
export const contactsTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'contacts', orgId, tagId)

/** Which of these ids are live contacts of the organization: what a deal may point at. */
export function liveContactIds(db: Db, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return idsAmong(db.selectFrom('contacts').where('org_id', '=', orgId).where('is_deleted', '=', false), ids)
}

/** Live contacts of the organization, by name; only those of `ids` when given (a deal's contacts). */
export function liveContacts(db: Db, orgId: string, ids?: readonly string[]): Promise<ContactRow[]> {
  if (ids && !ids.length) return Promise.resolve([])
  let query = db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false)
  if (ids) query = query.where('id', 'in', ids)
  return byName(query).execute()
}
