import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db, Role } from '../db/database.ts'
import { idsAmong } from '../db/ids-among.ts'
import { containsPattern } from '../db/like.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts'
import type { Identity } from './identity.ts'
import { ensureUser } from './memberships.ts'

/**
 * Members of an organization: a profile (role, phone, active flag; one per organization) joined to
 * its user (email and name, shared by every organization the user belongs to). Every query takes
 * the caller's organization, so another organization's id reads as missing.
 */
function members(db: Db, orgId: string) {
  return db
    .selectFrom('profiles as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .innerJoin('organizations as o', 'o.id', 'p.org_id')
    // The last sign-in into this organization, never the user's sign-ins into another (issue 35).
    .leftJoin('profile_sign_ins as s', 's.profile_id', 'p.id')
    .select(['p.id', 'p.user_id', 'u.email', 'u.first_name', 'u.last_name', 's.last_login', 'p.role', 'p.is_active', 'p.phone', 'p.created_at', 'o.id as org_id', 'o.name as org_name'])
    .where('p.org_id', '=', orgId)
}

export type MemberRow = Awaited<ReturnType<typeof memberById>>

export async function memberById(db: Db, orgId: string, profileId: string) {
  const row = await members(db, orgId).where('p.id', '=', profileId).executeTakeFirst()
  if (!row) throw new NotFoundError()
  return row
}

/**
 * A member by profile id or by user id: the original's `/api/user/{id}/` takes the user id, ours the
 * profile id, and both are uuids that never collide, so either names the same member.
 */
export async function memberByEitherId(db: Db, orgId: string, id: string): Promise<MemberRow> {
  const row = await members(db, orgId)
    .where((eb) => eb.or([eb('p.id', '=', id), eb('p.user_id', '=', id)]))
    .executeTakeFirst()
  if (!row) throw new NotFoundError()
  return row
}

export async function memberByUserId(db: Db, orgId: string, userId: string): Promise<MemberRow> {
  const row = await members(db, orgId).where('p.user_id', '=', userId).executeTakeFirst()
  if (!row) throw new NotFoundError()
  return row
}

export type MemberFilters = { email?: string; role?: string }
export type Page = { limit: number; offset: number }

/** One page of the active or inactive members, newest first, with the count of the whole filtered set. */
export async function memberPage(db: Db, orgId: string, active: boolean, filters: MemberFilters, page: Page) {
  let query = members(db, orgId).where('p.is_active', '=', active)
  if (filters.email) query = query.where('u.email', 'ilike', containsPattern(filters.email))
  if (filters.role) query = query.where('p.role', '=', filters.role as Role)
  const [rows, total] = await Promise.all([
    query.orderBy('p.created_at', 'desc').orderBy('u.email').orderBy('p.id').limit(page.limit).offset(page.offset).execute(),
    query.clearSelect().select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ])
  return { rows, count: Number(total.count) }
}

/** Active members ordered by email, for pickers (assignees, mentions). */
export const activeMembers = (db: Db, orgId: string) => activeMembersAnd(db, orgId, [])

/** The active members and those of `ids` (active or not), ordered by email: a picker and the members a page of records points at, in one query. */
export function activeMembersAnd(db: Db, orgId: string, ids: readonly string[]) {
  return members(db, orgId)
    .where((eb) => (ids.length ? eb.or([eb('p.is_active', '=', true), eb('p.id', 'in', ids)]) : eb('p.is_active', '=', true)))
    .orderBy(sql`lower(u.email)`)
    .orderBy('p.id')
    .execute()
}

/** Which of these profile ids are active members of the organization (for records that point at members). */
export function activeProfileIds(db: Db, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return idsAmong(db.selectFrom('profiles').where('org_id', '=', orgId).where('is_active', '=', true), ids)
}

/** The organization's earliest active admin: its contact for members (`admin_email`). */
export async function adminContact(db: Db, orgId: string): Promise<string | null> {
  const row = await members(db, orgId).where('p.is_active', '=', true).where('p.role', '=', 'ADMIN').orderBy('p.created_at').orderBy('p.id').executeTakeFirst()
  return row?.email ?? null
}

/**
 * Adds a user (found by email case-insensitively, created when new) to the organization. A user
 * who already has a profile here, active or not, is refused on `email`.
 */
export async function addMember(db: Db, orgId: string, input: { email: string; role: Role; phone?: string }): Promise<{ profileId: string; userId: string }> {
  return db.transaction().execute(async (trx) => {
    const userId = await ensureUser(trx, input.email)
    const inserted = await trx
      .insertInto('profiles')
      .values({ id: randomUUID(), user_id: userId, org_id: orgId, role: input.role, phone: input.phone ?? '' })
      .onConflict((oc) => oc.columns(['user_id', 'org_id']).doNothing())
      .returning(['id', 'is_active'])
      .executeTakeFirst()
    if (inserted) return { profileId: inserted.id, userId }
    const existing = await memberByUserId(trx, orgId, userId)
    const hint = existing.is_active ? '' : ` (inactive: reactivate it with POST /api/user/${userId}/status/)`
    throw new ValidationError({ email: [`A user with this email is already a member of this organization${hint}.`] })
  })
}

/**
 * Records an interactive sign-in into the profile's organization (magic link, Google, a switch
 * of organization): its `last_login`. Called where a sign-in issues its first session, never on a
 * token refresh or a personal access token's use.
 */
export async function recordSignIn(db: Db, profileId: string, at: Date): Promise<void> {
  await db.insertInto('profile_sign_ins').values({ profile_id: profileId, last_login: at }).onConflict((oc) => oc.column('profile_id').doUpdateSet({ last_login: at })).execute()
}

/** A member's display name: first and last name, or the email when they have none. */
export const displayName = (member: { first_name: string; last_name: string; email: string }): string => `${member.first_name} ${member.last_name}`.trim() || member.email

/** Per profile of the organization, its tokens that would authenticate were the profile active: neither revoked nor expired. */
export async function validTokenCounts(db: Db, orgId: string, profileIds: readonly string[], now: Date): Promise<Map<string, number>> {
  if (!profileIds.length) return new Map()
  const rows = await db
    .selectFrom('personal_access_tokens')
    .select(['profile_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('org_id', '=', orgId)
    .where('profile_id', 'in', profileIds)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .groupBy('profile_id')
    .execute()
  return new Map(rows.map((row) => [row.profile_id, Number(row.n)]))
}

/** The user behind a credential; the organization API key belongs to no user. */
export function requireUser(identity: Identity): { userId: string; profileId: string } {
  if (!identity.userId || !identity.profileId) throw new ForbiddenError("This route acts on a user's own profile; the organization API key belongs to no user")
  return { userId: identity.userId, profileId: identity.profileId }
}

/** Whether the user also belongs to another organization, where a change to their name would show too. */
export async function belongsElsewhere(db: Db, userId: string, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('profiles').select('id').where('user_id', '=', userId).where('org_id', '<>', orgId).limit(1).executeTakeFirst()
  return row !== undefined
}

/** The organization's members among these profile ids (active or not), by email: who a record is assigned to. */
export function membersByIds(db: Db, orgId: string, ids: readonly string[]) {
  if (!ids.length) return Promise.resolve([])
  return members(db, orgId).where('p.id', 'in', ids).orderBy(sql`lower(u.email)`).orderBy('p.id').execute()
}

/** Whether the user holds the platform-level superuser flag (false for the API key, which has no user). */
export async function isSuperuser(db: Db, userId: string | null): Promise<boolean> {
  if (userId === null) return false
  const row = await db.selectFrom('users').select('is_superuser').where('id', '=', userId).executeTakeFirst()
  return row?.is_superuser ?? false
}
