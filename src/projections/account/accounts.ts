import { sql } from 'kysely'
import { accountNames, accountStreams } from '../../commands/account/account.ts'
import { containsPattern } from '../../db/like.ts'
import { dateRange } from '../../db/date-range.ts'
import { anyOf, fetchPage, liveRecordsTagged, recordProjector } from '../kernel/records.ts'
import { noteTables } from '../kernel/notes.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { AccountRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { AccountRow } from './tables.ts'

/** The account's comments and attachments (projections/kernel/notes.ts), kept by the same projector. */
export const ACCOUNT_NOTES = noteTables('account')

export const accountsProjector = recordProjector({
  name: 'accounts',
  // 2: the account's comments and attachments. 3: employees, annual revenue and currency (issue 22).
  version: 3,
  table: 'accounts',
  streams: accountStreams,
  events: accountNames.events,
  notes: { prefix: accountNames.notes, tables: ACCOUNT_NOTES },
  columns: (table) =>
    ['email', 'phone', 'website', 'industry', 'address_line', 'city', 'state', 'postcode', 'country', 'description']
      .reduce((t, column) => t.addColumn(column, 'text'), table.addColumn('name', 'text', (c) => c.notNull()))
      .addColumn('number_of_employees', 'integer')
      .addColumn('annual_revenue', sql`numeric(15, 2)`)
      .addColumn('currency', 'text')
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull())
      .addColumn('tags', sql`uuid[]`, (c) => c.notNull()),
  indexes: async (db) => {
    await sql`CREATE INDEX accounts_org_name ON accounts (org_id, lower(name))`.execute(db)
  },
})


export type AccountListFilter = {
  limit: number
  offset: number
  name?: string
  search?: string
  city?: string
  industry?: string
  tags?: string[]
  assignedTo?: string[]
  createdFrom?: string
  createdTo?: string
  /** Only active (true) or inactive (false) accounts; both when absent. */
  isActive?: boolean
}

/** The organization's live accounts matching the filter, by name: one page and the count of all. */
export function listAccounts(db: Db, orgId: string, filter: AccountListFilter): Promise<{ count: number; rows: AccountRow[] }> {
  let query = db.selectFrom('accounts').where('org_id', '=', orgId).where('is_deleted', '=', false)
  if (filter.name) query = query.where('name', 'ilike', containsPattern(filter.name))
  if (filter.search) {
    const pattern = containsPattern(filter.search)
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('city', 'ilike', pattern)]))
  }
  if (filter.city) query = query.where('city', 'ilike', containsPattern(filter.city))
  if (filter.industry) query = query.where('industry', 'ilike', containsPattern(filter.industry))
  if (filter.tags) query = query.where(anyOf('tags', filter.tags))
  if (filter.assignedTo) query = query.where(anyOf('assigned_to', filter.assignedTo))
  for (const condition of dateRange(sql.ref('created_at'), 'timestamptz', { from: filter.createdFrom, to: filter.createdTo })) query = query.where(condition)
  if (filter.isActive !== undefined) query = query.where('is_active', '=', filter.isActive)
  return fetchPage<AccountRow>(query, filter, (q) => q.orderBy(sql`lower(name)`).orderBy('id'))
}

/**
 * What an account is worth, has in play and owes, computed at read time from the deals read model
 * (never stored, so never stale). Sums of `numeric` as decimal strings; wins and open deals by the
 * stage kind (§3: everything that counts wins reads the kind). There is no invoice or ticket read
 * model yet: `overdue_amount` is "0.00" and `open_tickets` 0.
 */
export type AccountRollups = {
  won_amount: string
  won_count: number
  open_pipeline: string
  open_deal_count: number
  overdue_amount: string
  open_tickets: number
  first_won_on: string | null
}

export const noRollups = (): AccountRollups => ({ won_amount: '0.00', won_count: 0, open_pipeline: '0.00', open_deal_count: 0, overdue_amount: '0.00', open_tickets: 0, first_won_on: null })

/** The rollups of these accounts of the viewer's organization, by account id (every id answered, zeroes when it has no deal), over the deals the viewer may see. */
export async function accountRollups(db: Db, viewer: Viewer, accountIds: readonly string[]): Promise<Map<string, AccountRollups>> {
  const result = new Map(accountIds.map((id) => [id, noRollups()]))
  if (!accountIds.length) return result
  const { rows } = await sql<{ account: string; won_amount: string; won_count: string; open_pipeline: string; open_deal_count: string; first_won_on: string | null }>`
    SELECT account,
      coalesce(sum(amount) FILTER (WHERE stage_kind = 'won'), 0)::numeric(15, 2)::text AS won_amount,
      count(*) FILTER (WHERE stage_kind = 'won') AS won_count,
      coalesce(sum(amount) FILTER (WHERE stage_kind = 'open'), 0)::numeric(15, 2)::text AS open_pipeline,
      count(*) FILTER (WHERE stage_kind = 'open') AS open_deal_count,
      (min(closed_on) FILTER (WHERE stage_kind = 'won'))::text AS first_won_on
    FROM opportunities WHERE org_id = ${viewer.orgId} AND account = any(${sql.val([...accountIds])}::uuid[]) AND NOT is_deleted AND ${visibleSql('Opportunity', viewer)} GROUP BY account`.execute(db)
  for (const row of rows) {
    result.set(row.account, { ...noRollups(), won_amount: row.won_amount, won_count: Number(row.won_count), open_pipeline: row.open_pipeline, open_deal_count: Number(row.open_deal_count), first_won_on: row.first_won_on })
  }
  return result
}

/** A deal of an account as the account detail lists it, with its stage's label and rotting thresholds. */
export type AccountDealRow = {
  id: string
  name: string
  stage: string
  stage_kind: 'open' | 'won' | 'lost'
  stage_label: string | null
  amount: string | null
  currency: string | null
  probability: number | null
  closed_on: string | null
  stage_changed_at: Date
  expected_days: number | null
  warning_days: number | null
  created_at: Date
}

/** The live deals of the viewer's organization pointing at an account, or naming a contact (`contacts`), that the viewer may see, newest first. */
export async function dealsOf(db: Db, viewer: Viewer, of: { account: string } | { contact: string }, limit?: number): Promise<AccountDealRow[]> {
  const match = 'account' in of ? sql`o.account = ${of.account}` : sql`${of.contact}::uuid = any(o.contacts)`
  const { rows } = await sql<AccountDealRow>`
    SELECT o.id, o.name, o.stage, o.stage_kind, s.label AS stage_label, o.amount::text AS amount, o.currency, o.probability, o.closed_on::text AS closed_on,
      o.stage_changed_at, s.expected_days, s.warning_days, o.created_at
    FROM opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id
    WHERE o.org_id = ${viewer.orgId} AND NOT o.is_deleted AND ${match} AND ${visibleSql('Opportunity', viewer, 'o')}
    ORDER BY o.created_at DESC, o.id ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`.execute(db)
  return rows
}

/** The organization's live accounts' ids and names, by name: the contact form's account picker. */
export function accountNamesOf(db: Db, orgId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (!ids.length) return Promise.resolve([])
  return db.selectFrom('accounts').select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).where('is_deleted', '=', false).execute()
}

/** A live account of the organization, or undefined: another org's id looks exactly like a missing one. */
export function accountOf(db: Db, orgId: string, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The live accounts of the organization carrying a tag, for a tag merge. */
export const accountsTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'accounts', orgId, tagId)

/** Every live account of the organization, by name: the deal list's accounts_list picker. */
export function liveAccounts(db: Db, orgId: string): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false).orderBy(sql`lower(name)`).orderBy('id').execute()
}
