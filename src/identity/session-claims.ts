import { randomUUID } from 'node:crypto'
import type { Db, Role } from '../db/database.ts'

/**
 * What a signed-in client reads without another round trip, as the original service hands it out:
 * the access token's display claims (the web app decodes the JWT for the user, organization, role
 * and currency) and the `user` / `current_org` of sign-in answers. Authorization never trusts these
 * claims: every request re-reads role and membership (authenticate.ts), so a stale `role` in a live
 * token only changes what a client shows until its next refresh.
 */
/** The membership a session acts as. */
export type SessionSubject = { user_id: string; org_id: string; profile_id: string }

export type OrgSettingsClaim = { default_currency: string; currency_symbol: string; default_country: string | null }

export type DisplayClaims = {
  token_type: 'access'
  jti: string
  user_id: string
  user_email: string
  user_name: string
  user_profile_pic: string
  org_name: string
  role: Role
  org_settings: OrgSettingsClaim
}

export type CurrentOrg = OrgSettingsClaim & { id: string; name: string; timezone: string }

export type UserOrganization = { id: string; name: string; role: Role; is_organization_admin: boolean; has_sales_access: boolean; has_marketing_access: boolean }

export type UserDetail = { id: string; email: string; name: string; profile_pic: string; is_active: boolean; organizations: UserOrganization[] }

/** An organization as the original's sign-in answers list it (`_org_payload`): the phone app keeps it and prices with its currency. */
export type SignInOrganization = CurrentOrg & { role: Role }

/** `$` for USD, `€` for EUR …; `$` for a code Intl does not know, as the original defaults. */
export function currencySymbol(code: string): string {
  try {
    const parts = new Intl.NumberFormat('en', { style: 'currency', currency: code, currencyDisplay: 'narrowSymbol' }).formatToParts(0)
    return parts.find((part) => part.type === 'currency')?.value ?? '$'
  } catch {
    return '$'
  }
}

/** The original names a user by their address's local part (its users have no display name). */
const displayName = (first: string, last: string, email: string): string => `${first} ${last}`.trim() || email.split('@')[0]!

async function membershipDetail(db: Db, subject: SessionSubject) {
  return db
    .selectFrom('profiles as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .innerJoin('organizations as o', 'o.id', 'p.org_id')
    .select(['u.email', 'u.first_name', 'u.last_name', 'p.role', 'o.name as org_name', 'o.default_currency', 'o.default_country', 'o.timezone'])
    .where('p.id', '=', subject.profile_id)
    .executeTakeFirstOrThrow()
}

function currentOrgOf(orgId: string, m: Awaited<ReturnType<typeof membershipDetail>>): CurrentOrg {
  return { id: orgId, name: m.org_name, default_currency: m.default_currency, currency_symbol: currencySymbol(m.default_currency), default_country: m.default_country, timezone: m.timezone }
}

/** The display claims and the current organization of a session about to be issued. */
export async function sessionDisplay(db: Db, subject: SessionSubject): Promise<{ claims: DisplayClaims; currentOrg: CurrentOrg }> {
  const m = await membershipDetail(db, subject)
  const currentOrg = currentOrgOf(subject.org_id, m)
  const { id: _id, name: _name, timezone: _timezone, ...orgSettings } = currentOrg
  const claims: DisplayClaims = {
    token_type: 'access',
    jti: randomUUID(),
    user_id: subject.user_id,
    user_email: m.email,
    user_name: displayName(m.first_name, m.last_name, m.email),
    user_profile_pic: '',
    org_name: m.org_name,
    role: m.role,
    org_settings: orgSettings,
  }
  return { claims, currentOrg }
}

/** The original's user detail: the user and every organization they are an active member of. */
export async function userDetail(db: Db, userId: string): Promise<UserDetail | undefined> {
  const user = await db.selectFrom('users').select(['id', 'email', 'first_name', 'last_name']).where('id', '=', userId).executeTakeFirst()
  if (!user) return undefined
  const profiles = await activeOrganizationsOf(db, userId).select(['o.id', 'o.name', 'p.role']).execute()
  // Sales and marketing access are not separate grants here: every active member has both.
  const organizations = profiles.map((p) => ({ ...p, is_organization_admin: p.role === 'ADMIN', has_sales_access: true, has_marketing_access: true }))
  return { id: user.id, email: user.email, name: displayName(user.first_name, user.last_name, user.email), profile_pic: '', is_active: true, organizations }
}

/** The user's active organizations, oldest membership first, with the settings a client prices with. */
export async function signInOrganizations(db: Db, userId: string): Promise<SignInOrganization[]> {
  const rows = await activeOrganizationsOf(db, userId).select(['o.id', 'o.name', 'p.role', 'o.default_currency', 'o.default_country', 'o.timezone']).execute()
  return rows.map((o) => ({ ...o, currency_symbol: currencySymbol(o.default_currency) }))
}

function activeOrganizationsOf(db: Db, userId: string) {
  return db
    .selectFrom('profiles as p')
    .innerJoin('organizations as o', 'o.id', 'p.org_id')
    .where('p.user_id', '=', userId)
    .where('p.is_active', '=', true)
    .where('o.is_active', '=', true)
    .orderBy('p.created_at')
    .orderBy('p.id')
}
