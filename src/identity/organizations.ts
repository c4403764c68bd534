import type { Db } from '../db/database.ts'
import { NotFoundError } from '../errors.ts'
import { activeMembershipsOfUser } from './queries.ts'

/**
 * Time zones the runtime knows, plus `UTC` (the column default): ICU's list leaves out the UTC
 * alias, and Node 20 lists some zones under older canonical names (Asia/Calcutta, not Asia/Kolkata).
 */
export const TIMEZONES: readonly string[] = [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])].sort()
const timezoneSet = new Set(TIMEZONES)

// IANA spelling: capitalised segments (`Asia/Kolkata`, `Etc/GMT+5`, `UTC`); Intl would also take `asia/kolkata`.
const IANA_SHAPE = /^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/

/** A listed zone, or an IANA alias the runtime resolves (so Asia/Kolkata is accepted on every Node version). */
export function isTimezone(name: string): boolean {
  if (timezoneSet.has(name)) return true
  if (!IANA_SHAPE.test(name)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

const currencies = new Set(Intl.supportedValuesOf('currency'))

/** An ISO 4217 code the runtime knows, in upper case. */
export const isCurrency = (code: string): boolean => /^[A-Z]{3}$/.test(code) && currencies.has(code)

const orgColumns = ['o.id', 'o.name', 'o.default_currency', 'o.timezone', 'o.is_active', 'o.created_at'] as const

export type OrganizationRow = Awaited<ReturnType<typeof organizationById>>

/** The organization, or a 404: callers only ever pass the organization of their credential. */
export async function organizationById(db: Db, orgId: string) {
  const row = await db.selectFrom('organizations as o').select(orgColumns).where('o.id', '=', orgId).executeTakeFirst()
  if (!row) throw new NotFoundError()
  return row
}

/** Active memberships of a user in active organizations: the organizations they can work in. */
export function organizationsOfUser(db: Db, userId: string) {
  return activeMembershipsOfUser(db, userId)
    .select([...orgColumns, 'p.id as profile_id', 'p.role'])
    .orderBy('o.name')
    .orderBy('o.id')
    .execute()
}

export type OrganizationChanges = { name?: string; default_currency?: string; timezone?: string; is_active?: boolean }

/** A plain table update: identity state is not event-sourced (see the identity migration). */
export async function updateOrganization(db: Db, orgId: string, changes: OrganizationChanges, now: Date): Promise<OrganizationRow> {
  const updated = await db
    .updateTable('organizations')
    .set({ ...changes, updated_at: now })
    .where('id', '=', orgId)
    .returning('id')
    .executeTakeFirst()
  if (!updated) throw new NotFoundError()
  return organizationById(db, orgId)
}
