import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { isAdmin } from '../identity/identity.ts'
import type { Identity } from '../identity/identity.ts'

/**
 * Who may see a record: the one declaration every read path and every reference check derives
 * from. Commands ask `mayAccess` (the single-record check); lists, search, boards, the dashboard,
 * the activity and notification feeds and the rails on other records' pages add `visibleSql` (the
 * same rule as a SQL predicate) to their WHERE. A new record kind is a line of RECORD_VISIBILITY; a
 * new kind of caller (the customer portal's contact) is a CallerKind, its column in each line, and
 * its rule's two derivations below: no read path changes.
 */

/**
 * Who is asking, as the policy sees them: the member's profile (null for the organization API key)
 * and their role; `contactId` for a customer signed in to the portal (docs/portal.md), who has no
 * profile and is never an admin.
 */
export type Seer = { profileId: string | null; isAdmin: boolean; contactId?: string | null }
/** A seer within their organization: what the read models' queries take (every row is the organization's first). */
export type Viewer = Seer & { orgId: string }

/** The record kinds the policy speaks of, as the original names them (`entity_type`). */
export const VISIBLE_KINDS = ['Account', 'Case', 'Contact', 'Document', 'Lead', 'Opportunity', 'Solution', 'Task', 'Invoice'] as const
export type VisibleKind = (typeof VISIBLE_KINDS)[number]

/** The kinds of caller: an organization admin, a member, the organization API key (no profile), and a customer contact signed in to the portal. */
export type CallerKind = 'admin' | 'member' | 'apiKey' | 'contact'
/** The staff's kinds: whoever signs in with a staff credential (a session, a PAT, the API key). */
const STAFF: readonly CallerKind[] = ['admin', 'member', 'apiKey']

/**
 * What a kind of caller sees of a kind of record:
 * - `all`: every live record of the organization;
 * - `involved`: those the caller created or is assigned to;
 * - `asContact`: those that name the caller among their contacts (the portal's customer);
 * - `published`: those published to customers (knowledge-base solutions);
 * - `none`: no record.
 */
export type Rule = 'all' | 'involved' | 'asContact' | 'published' | 'none'

/**
 * The declaration. Accounts and contacts are the organization's shared address book: every member
 * sees them (this service's choice; the original limits them too), as every member reads the
 * knowledge base's solutions. Leads, deals and tasks are
 * a member's own work: they see those they created or are assigned to (§4.3, §4.4, §4.7). So are
 * cases, where a watcher is involved too (the original's cases/access.py: read is admin, creator,
 * assignee or watcher). The
 * API key has no profile to be involved with, so it sees the shared kinds only. A document reaches its
 * uploader and whoever it is shared with (`assigned_to` in its read model; the teams it is shared
 * with widen that for their members, projections/document/documents.ts), as the original's
 * `_visible_to`. A portal contact sees the cases that name them as a contact and the published
 * solutions, nothing else (docs/portal.md).
 */
export const RECORD_VISIBILITY: Readonly<Record<VisibleKind, Readonly<Record<CallerKind, Rule>>>> = {
  Account: { admin: 'all', member: 'all', apiKey: 'all', contact: 'none' },
  Case: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'asContact' },
  Contact: { admin: 'all', member: 'all', apiKey: 'all', contact: 'none' },
  Document: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'none' },
  Lead: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'none' },
  Opportunity: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'none' },
  Solution: { admin: 'all', member: 'all', apiKey: 'all', contact: 'published' },
  Task: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'none' },
  // The original's invoices/permissions.py: an admin, the creator or an assignee.
  Invoice: { admin: 'all', member: 'involved', apiKey: 'none', contact: 'none' },
}

/** The caller of a request as the policy sees them: every read path takes its viewer from here. */
export const viewerOfIdentity = (identity: Identity): Viewer => ({ orgId: identity.orgId, profileId: identity.profileId, isAdmin: isAdmin(identity) })

export const callerKindOf = (seer: Seer): CallerKind => (seer.contactId ? 'contact' : seer.isAdmin ? 'admin' : seer.profileId === null ? 'apiKey' : 'member')

/** The rule that applies to this caller for this kind. */
export const ruleFor = (kind: VisibleKind, seer: Seer): Rule => RECORD_VISIBILITY[kind][callerKindOf(seer)]

/**
 * Whether some staff caller sees only part of the kind: its read models then keep who is involved
 * with each record. The portal contact's rules read the record's own columns (its contacts, its
 * publication), so they need nothing kept.
 */
export const isRestricted = (kind: VisibleKind): boolean => STAFF.some((caller) => RECORD_VISIBILITY[kind][caller] !== 'all')

/** What the policy reads of a record: its creator and assignees, its watchers and contacts where the kind has them (cases), whether it is published (solutions). */
export type Involvement = { createdBy: string | null; assignedTo: readonly string[]; watchers?: readonly string[]; contacts?: readonly string[]; isPublished?: boolean }

/** The single-record check: whether the caller may see (and so open, edit, move or link to) this record. */
export function mayAccess(kind: VisibleKind, record: Involvement, seer: Seer): boolean {
  const rule = ruleFor(kind, seer)
  const contact = seer.contactId
  if (rule === 'asContact') return typeof contact === 'string' && (record.contacts?.includes(contact) ?? false)
  if (rule === 'published') return record.isPublished === true
  if (rule !== 'involved') return rule === 'all'
  const me = seer.profileId
  return me !== null && (record.createdBy === me || record.assignedTo.includes(me) || (record.watchers?.includes(me) ?? false))
}

/**
 * The same check as SQL over a read model row: `alias` names the row (its `created_by` and
 * `assigned_to` columns); without one the columns are unqualified. In a WHERE; a select list wraps
 * it in coalesce(…, false), as a record without a creator makes it null. `assigned_to && {me}` is
 * `me = ANY(assigned_to)` in the form a GIN index on assigned_to answers. `watchers`: the row also
 * has a `watchers` column whose profiles are involved (a read model that keeps them: the cases').
 * The contact's rules read the row's `contacts` (uuid[]) and `is_published` columns.
 */
export function visibleSql(kind: VisibleKind, seer: Seer, alias?: string, options: { watchers?: boolean } = {}): RawBuilder<boolean> {
  const rule = ruleFor(kind, seer)
  const column = (name: string) => (alias === undefined ? sql.ref(name) : sql.ref(`${alias}.${name}`))
  if (rule === 'asContact') return seer.contactId ? sql<boolean>`(${column('contacts')} && ${sql.val([seer.contactId])}::uuid[])` : sql<boolean>`false`
  if (rule === 'published') return sql<boolean>`(${column('is_published')} IS TRUE)`
  if (rule !== 'involved') return rule === 'all' ? sql<boolean>`true` : sql<boolean>`false`
  const me = sql.val([seer.profileId])
  const watching = options.watchers ? sql` OR ${column('watchers')} && ${me}::uuid[]` : sql``
  return sql<boolean>`(${column('created_by')} = ${seer.profileId}::uuid OR ${column('assigned_to')} && ${me}::uuid[]${watching})`
}
