import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../db/database.ts'
import { NotFoundError } from '../errors.ts'
import { PAT_PREFIX, newSecret } from './secrets.ts'

const tokenColumns = ['t.id', 't.name', 't.token_prefix', 't.scopes', 't.created_at', 't.expires_at', 't.last_used_at', 't.revoked_at'] as const

export type TokenRow = Awaited<ReturnType<typeof tokensOfProfile>>[number]

export function tokensOfProfile(db: Db, profileId: string) {
  return db.selectFrom('personal_access_tokens as t').select(tokenColumns).where('t.profile_id', '=', profileId).orderBy('t.created_at', 'desc').execute()
}

export function tokensOfOrganization(db: Db, orgId: string) {
  return db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('profiles as p', 'p.id', 't.profile_id')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select([...tokenColumns, 'p.id as owner_id', 'u.email as owner_email', 'u.first_name as owner_first_name', 'u.last_name as owner_last_name', 'p.role as owner_role', 'p.is_active as owner_active'])
    .where('t.org_id', '=', orgId)
    .orderBy('t.created_at', 'desc')
    .execute()
}

export async function createToken(db: Db, input: { profileId: string; orgId: string; name: string; scopes: string[]; expiresAt: Date | null }) {
  const secret = newSecret(PAT_PREFIX)
  const row = await db
    .insertInto('personal_access_tokens')
    .values({ id: randomUUID(), profile_id: input.profileId, org_id: input.orgId, name: input.name, token_prefix: secret.displayPrefix, token_hash: secret.hash, scopes: input.scopes, expires_at: input.expiresAt, last_used_at: null, revoked_at: null })
    .returning(['id', 'name', 'token_prefix', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'])
    .executeTakeFirstOrThrow()
  return { row, raw: secret.raw }
}

/**
 * Revokes a token of `orgId` (and of `profileId` when given). A second revocation is a no-op that
 * keeps the first `revoked_at`; returns whether this call revoked it. Unknown ids are a 404.
 */
export async function revokeToken(db: Db, tokenId: string, scope: { orgId: string; profileId?: string }, now: Date): Promise<{ revokedNow: boolean; ownerId: string }> {
  let query = db
    .updateTable('personal_access_tokens')
    .set({ revoked_at: sql`coalesce(revoked_at, ${now})` })
    .where('id', '=', tokenId)
    .where('org_id', '=', scope.orgId)
  if (scope.profileId) query = query.where('profile_id', '=', scope.profileId)
  const row = await query.returning(['profile_id', sql<boolean>`revoked_at = ${now}`.as('revoked_now')]).executeTakeFirst()
  if (!row) throw new NotFoundError()
  return { revokedNow: row.revoked_now, ownerId: row.profile_id }
}
