import { sql } from 'kysely'
import type { Db } from '../db/database.ts'

/** A membership with what authentication needs: role and whether the profile and its organization are active. */
function memberships(db: Db) {
  return db
    .selectFrom('profiles as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .innerJoin('organizations as o', 'o.id', 'p.org_id')
    .select(['p.id as profile_id', 'p.user_id', 'p.org_id', 'p.role', 'p.is_active as profile_active', 'o.is_active as org_active', 'u.email'])
}

/** A user's active profiles in active organizations: where they can sign in and work. */
export function activeMembershipsOfUser(db: Db, userId: string) {
  return db
    .selectFrom('profiles as p')
    .innerJoin('organizations as o', 'o.id', 'p.org_id')
    .where('p.user_id', '=', userId)
    .where('p.is_active', '=', true)
    .where('o.is_active', '=', true)
}

export type Membership = NonNullable<Awaited<ReturnType<typeof membershipOf>>>

export function membershipOf(db: Db, userId: string, orgId: string) {
  return memberships(db).where('p.user_id', '=', userId).where('p.org_id', '=', orgId).executeTakeFirst()
}

export function membershipByEmail(db: Db, email: string, orgId: string) {
  return memberships(db).where(sql<string>`lower(u.email)`, '=', email.toLowerCase()).where('p.org_id', '=', orgId).executeTakeFirst()
}

export function personalAccessTokenByHash(db: Db, hash: Buffer) {
  return memberships(db)
    .innerJoin('personal_access_tokens as t', 't.profile_id', 'p.id')
    .select(['t.id as token_id', 't.scopes', 't.expires_at', 't.revoked_at', 't.last_used_at'])
    .where('t.token_hash', '=', hash)
    .executeTakeFirst()
}

export function organizationByApiKeyHash(db: Db, hash: Buffer) {
  return db.selectFrom('organizations').select(['id', 'is_active']).where('api_key_hash', '=', hash).executeTakeFirst()
}

/**
 * Marks a token used, at most once a minute, so authentication stays a read on the hot path.
 * Returns true when this was the token's first use.
 */
export async function touchPersonalAccessToken(db: Db, tokenId: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('personal_access_tokens as t')
    .set({ last_used_at: now })
    .where('t.id', '=', tokenId)
    .where((eb) => eb.or([eb('t.last_used_at', 'is', null), eb('t.last_used_at', '<', new Date(now.getTime() - 60_000))]))
    .returning(sql<boolean>`(SELECT last_used_at IS NULL FROM personal_access_tokens WHERE id = ${tokenId})`.as('first_use'))
    .executeTakeFirst()
  return row?.first_use ?? false
}
