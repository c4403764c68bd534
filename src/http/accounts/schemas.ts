import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { isCurrency } from '../../identity/organizations.ts'
import { activeMembers } from '../../identity/users.ts'
import { agingStatus, daysSince } from '../../projections/opportunity/aging.ts'
import { accountRollups } from '../../projections/account/accounts.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { AccountDealRow, AccountRow } from '../../projections/account/accounts.ts'
import { allTeams } from '../../projections/team/teams.ts'
import { IdList } from '../kernel/relations.ts'
import { Account, RecordRefs, recordBody, recordRefs } from '../kernel/schemas/records.ts'
import { formNumber } from '../kernel/schemas/form-values.ts'
import { Amount } from '../opportunities/schemas.ts'
import { countryDisplay } from './choices.ts'

/**
 * Shapes the account routes answer with, and the ones the contact routes borrow: the records as
 * the original's web app reads them (issue 22), the side lists its forms are built from.
 */

const blankIsNull = (v: unknown) => (v === '' ? null : v)
/** An optional, nullable body field where a blank (a cleared form input) is null. */
export const blankable = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsNull, schema.nullable()).optional()

/** A relation list in a body, where each item may also be an object with an `id` (what the original accepts for tags, and what a client sends back after reading objects). */
export const RelationList = (what: string) =>
  z.preprocess((v) => (Array.isArray(v) ? v.map((item: unknown) => (item && typeof item === 'object' && 'id' in item ? (item as { id: unknown }).id : item)) : v), IdList(what))

export const Employees = blankable(formNumber(z.number({ error: 'Expected a whole number.' }).int('Expected a whole number.').min(0, 'Expected a number of 0 or more.').max(2_147_483_647)))
export const AnnualRevenue = blankable(Amount).describe('Non-negative decimal (string or number), at most 2 places; answered as a string with 2 decimals')
export const CurrencyCode = blankable(z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')).describe('ISO 4217 code of annual_revenue')

export const Rollups = z
  .object({
    won_amount: z.string().describe('Sum of the amounts of the deals won against the account (decimal string)'),
    won_count: z.number().int(),
    open_pipeline: z.string().describe('Sum of the amounts of its open deals (decimal string)'),
    open_deal_count: z.number().int(),
    overdue_amount: z.string().describe('Past-due invoice amounts: "0.00" until invoices exist'),
    open_tickets: z.number().int().describe('Open cases: 0 until cases exist'),
    first_won_on: z.string().nullable().describe('Close date of the first deal won (YYYY-MM-DD)'),
  })
  .describe('Computed at read time from the deals the caller may see; amounts of every currency added together, as the original does')

/** An account as the account routes answer it: today's fields, its assignees and tags as objects, the original's business fields and the rollups. */
export const AccountRecord = Account.extend({
  ...RecordRefs,
  number_of_employees: z.number().int().nullable(),
  annual_revenue: z.string().nullable().describe('Decimal string with 2 places'),
  currency: z.string().nullable(),
  country_display: z.string().nullable().describe("The country's name when `country` is one of the `countries` codes"),
  rollups: Rollups,
})
export type AccountRecordBody = z.infer<typeof AccountRecord>

/** Accounts as response bodies, their rollups (of the deals the viewer may see), assignees and tags looked up once for the whole batch. */
export async function accountRecords(db: Db, viewer: Viewer, rows: readonly AccountRow[]): Promise<AccountRecordBody[]> {
  const [rollups, refsOf] = await Promise.all([accountRollups(db, viewer, rows.map((row) => row.id)), recordRefs(db, viewer.orgId, rows)])
  return rows.map((row) => ({ ...recordBody(row), ...refsOf(row), country_display: countryDisplay(row.country), rollups: rollups.get(row.id)! }))
}

/** A deal in an account's or a contact's detail, as the original's pages read it. */
export const DealSummary = z.object({
  id: z.uuid(),
  name: z.string(),
  stage: z.string().describe("The stage's code"),
  stage_label: z.string().nullable(),
  stage_kind: z.enum(['open', 'won', 'lost']),
  amount: z.string().nullable().describe('Decimal string'),
  currency: z.string().nullable(),
  probability: z.number().int().nullable(),
  closed_on: z.string().nullable(),
  days_in_stage: z.number().int().nullable(),
  aging_status: z.enum(['green', 'yellow', 'red']).nullable().describe('Open deals only'),
  created_at: z.string(),
})

export function dealSummary(row: AccountDealRow, now: Date): z.infer<typeof DealSummary> {
  const days = daysSince(row.stage_changed_at, now)
  return {
    id: row.id,
    name: row.name,
    stage: row.stage,
    stage_label: row.stage_label,
    stage_kind: row.stage_kind,
    amount: row.amount,
    currency: row.currency,
    probability: row.probability,
    closed_on: row.closed_on,
    days_in_stage: days,
    aging_status: agingStatus(row.stage_kind, days, row),
    created_at: row.created_at.toISOString(),
  }
}

/** `[value, label]` pairs, the original's shape of a choice list. */
export const Choices = z.array(z.tuple([z.string(), z.string()]))
export const UserChoice = z.object({ id: z.uuid().describe('Profile id'), user__email: z.string() })
export const TeamChoice = z.object({ id: z.uuid(), name: z.string(), description: z.string().nullable() })

/** The organization's active members as the original's pickers list them. */
export async function userChoices(db: Db, orgId: string): Promise<z.infer<typeof UserChoice>[]> {
  return (await activeMembers(db, orgId)).map((member) => ({ id: member.id, user__email: member.email }))
}

/** Whom a record may be assigned to, as the original's task and case forms offer it: every active member to an admin, the admins to anyone else. */
export async function assignableChoices(db: Db, viewer: { orgId: string; isAdmin: boolean }): Promise<z.infer<typeof UserChoice>[]> {
  return assignableAmong(await activeMembers(db, viewer.orgId), viewer)
}

/** The same, among members already read (the inactive ones left out). */
export const assignableAmong = (members: readonly { id: string; email: string; role: string; is_active: boolean }[], viewer: { isAdmin: boolean }): z.infer<typeof UserChoice>[] =>
  members.filter((m) => m.is_active && (viewer.isAdmin || m.role === 'ADMIN')).map((m) => ({ id: m.id, user__email: m.email }))

export async function teamChoices(db: Db, orgId: string): Promise<z.infer<typeof TeamChoice>[]> {
  return (await allTeams(db, orgId)).map(({ id, name, description }) => ({ id, name, description }))
}
