import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import { ValidationError } from '../../errors.ts'
import { updateMember } from '../../identity/member-updates.ts'
import { memberById } from '../../identity/users.ts'

/** The kind that names a member's profile in POST /api/privacy/erasures/ (the members who sign in). */
export const MEMBER_KIND = 'user'

/** What stands in for an erased user's email, which must stay unique and non-null: made of their random id, never of the address. */
const erasedEmail = (userId: string) => `erased-${userId}@erased.invalid`

/**
 * Erases a member's profile in the organization (issue 31). Identity is not event-sourced
 * (migrations/…-identity.ts): the rows are blanked in place. The profile is deactivated with its
 * phone blanked (the last active admin is refused, as a deactivation is), its tokens and sessions
 * revoked. The user's email and name are shared by every organization they belong to: they are
 * blanked only when this was their only profile, otherwise they stay, the other organizations'
 * data as much as this one's. Answers the kinds of fields erased. A second run finds them blank.
 */
export async function eraseMemberProfile(db: Db, orgId: string, profileId: string, byProfileId: string | null, now: Date): Promise<string[]> {
  if (profileId === byProfileId) throw new ValidationError({ id: ['Expected another member: an admin cannot erase the profile they act with'] })
  const member = await memberById(db, orgId, profileId)
  await updateMember(db, orgId, profileId, { is_active: false, phone: '' }, now)
  return db.transaction().execute(async (trx) => {
    const fields = member.phone ? ['phone'] : []
    await trx.updateTable('personal_access_tokens').set({ revoked_at: now }).where('profile_id', '=', profileId).where('revoked_at', 'is', null).execute()
    await trx.updateTable('refresh_tokens').set({ revoked_at: now }).where('profile_id', '=', profileId).where('revoked_at', 'is', null).execute()
    await sql`DELETE FROM profile_sign_ins WHERE profile_id = ${profileId}`.execute(trx)
    const { rows } = await sql<{ others: number }>`SELECT count(*)::int AS others FROM profiles WHERE user_id = ${member.user_id} AND id <> ${profileId}`.execute(trx)
    if (rows[0]!.others > 0) return fields
    await sql`DELETE FROM magic_links WHERE user_id = ${member.user_id}`.execute(trx)
    await trx.updateTable('users').set({ email: erasedEmail(member.user_id), first_name: '', last_name: '' }).where('id', '=', member.user_id).execute()
    const held = [['email', member.email], ['first_name', member.first_name], ['last_name', member.last_name]].filter(([, value]) => value && value !== erasedEmail(member.user_id))
    return [...fields, ...held.map(([field]) => field!)].sort()
  })
}
