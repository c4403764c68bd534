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

// The original offers region zones only: no bare names (`EST`, `GB`) and no legacy folders (`US/Eastern`, `Etc/GMT+5`); UTC is added back.
const LEGACY_PREFIXES = ['US/', 'Canada/', 'Mexico/', 'Brazil/', 'Chile/', 'Etc/', 'SystemV/']
const SELECTABLE = TIMEZONES.filter((name) => name === 'UTC' || (name.includes('/') && !LEGACY_PREFIXES.some((prefix) => name.startsWith(prefix))))
const offsetFormats = new Map<string, Intl.DateTimeFormat>()

/** Minutes east of UTC of the zone at `at` (so it follows daylight saving). */
export function offsetMinutes(zone: string, at: Date): number {
  let format = offsetFormats.get(zone)
  if (!format) offsetFormats.set(zone, (format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })))
  const text = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT'
  const match = /^GMT([+-])(\d{2}):(\d{2})$/.exec(text)
  return match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0
}

/** "+05:30", "-04:00", "+00:00". */
export function offsetText(minutes: number): string {
  const abs = Math.abs(minutes)
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

/** The zones a client may offer for an organization, by name, each with its UTC offset now. */
export const selectableTimezones = (at: Date) =>
  SELECTABLE.map((name) => {
    const minutes = offsetMinutes(name, at)
    return { name, offset_minutes: minutes, offset: offsetText(minutes), label: `${name.replace(/_/g, ' ')} (UTC${minutes === 0 ? '' : offsetText(minutes)})` }
  })

const currencies = new Set(Intl.supportedValuesOf('currency'))

/** The currency's symbol as English (US) writes it: $, €, £, ₹, CA$; the code itself when none. */
export function currencySymbol(code: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: code }).formatToParts(0).find((part) => part.type === 'currency')?.value ?? code
  } catch {
    return code
  }
}

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

/** The settings page's fields (issue 22): company profile, default country and two support switches. */
const settingsColumns = [
  ...orgColumns,
  'o.company_name', 'o.address_line', 'o.city', 'o.state', 'o.postcode', 'o.country', 'o.phone', 'o.email', 'o.website', 'o.tax_id', 'o.default_country', 'o.csat_enabled', 'o.auto_close_children_on_parent_close',
] as const

export type OrganizationSettingsRow = Awaited<ReturnType<typeof organizationSettings>>

/** The organization's settings with its count of active members, or a 404. */
export async function organizationSettings(db: Db, orgId: string) {
  const row = await db
    .selectFrom('organizations as o')
    .select([...settingsColumns, (eb) => eb.selectFrom('profiles as p').select(eb.fn.countAll<string>().as('n')).whereRef('p.org_id', '=', 'o.id').where('p.is_active', '=', true).as('member_count')])
    .where('o.id', '=', orgId)
    .executeTakeFirst()
  if (!row) throw new NotFoundError()
  return { ...row, member_count: Number(row.member_count ?? 0) }
}

export type SettingsChanges = {
  [K in 'company_name' | 'address_line' | 'city' | 'state' | 'postcode' | 'country' | 'phone' | 'email' | 'website' | 'tax_id']?: string
} & { default_country?: string | null; csat_enabled?: boolean; auto_close_children_on_parent_close?: boolean }

export type OrganizationChanges = { name?: string; default_currency?: string; timezone?: string; is_active?: boolean } & SettingsChanges

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
