import type { Db, Role } from '../db/database.ts'
import { ValidationError } from '../errors.ts'
import { memberById } from './users.ts'
import type { MemberRow } from './users.ts'

export type MemberChanges = { first_name?: string; last_name?: string; phone?: string; role?: Role; is_active?: boolean }

const LAST_ADMIN = 'The organization must keep at least one active admin; promote or reactivate another admin first.'

/**
 * Applies changes to a member of `orgId` as plain table updates (identity is not event-sourced).
 * Demoting or deactivating the last active admin is refused: nobody could manage the organization
 * any more. The organization row is locked first, so two admins demoting each other at the same
 * moment cannot both pass the check.
 */
export async function updateMember(db: Db, orgId: string, profileId: string, changes: MemberChanges, now: Date): Promise<MemberRow> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().execute()
    const member = await memberById(trx, orgId, profileId)
    const removesAdmin = member.is_active && member.role === 'ADMIN' && (changes.role === 'USER' || changes.is_active === false)
    if (removesAdmin && !(await hasOtherActiveAdmin(trx, orgId, profileId))) {
      throw new ValidationError(changes.role === 'USER' ? { role: [LAST_ADMIN] } : LAST_ADMIN)
    }
    const { first_name, last_name, ...profile } = changes
    if (first_name !== undefined || last_name !== undefined) {
      await trx.updateTable('users').set({ first_name, last_name }).where('id', '=', member.user_id).execute()
    }
    await trx.updateTable('profiles').set({ ...profile, updated_at: now }).where('id', '=', profileId).where('org_id', '=', orgId).execute()
    return memberById(trx, orgId, profileId)
  })
}

async function hasOtherActiveAdmin(db: Db, orgId: string, profileId: string): Promise<boolean> {
  const row = await db
    .selectFrom('profiles')
    .select('id')
    .where('org_id', '=', orgId)
    .where('role', '=', 'ADMIN')
    .where('is_active', '=', true)
    .where('id', '<>', profileId)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}
