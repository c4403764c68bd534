import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import { membersByIds } from '../../identity/users.ts'
import { teamIds } from '../../projections/team/teams.ts'
import type { Caller } from '../caller.ts'
import { adminOnly } from './settings-record.ts'

/**
 * What the case settings (approval rules, routing rules, escalation policies) share: admins write
 * them, and the people and team they name must be of the caller's organization (400 naming the
 * field otherwise; another organization's id reads as no such id).
 */
export const requireAdmin = (caller: Caller): void => adminOnly(caller)

type Refs = Record<string, { profiles: readonly string[] } | { team: string | null | undefined }>

export async function checkOrgRefs(db: Deps['db'], orgId: string, refs: Refs): Promise<void> {
  const errors: Record<string, string[]> = {}
  for (const [field, ref] of Object.entries(refs)) {
    if ('profiles' in ref) {
      const found = new Set((await membersByIds(db, orgId, [...new Set(ref.profiles)])).map((member) => member.id))
      if (ref.profiles.some((id) => !found.has(id))) errors[field] = ['Expected profiles of this organization.']
    } else if (ref.team && !(await teamIds(db, orgId, [ref.team])).has(ref.team)) errors[field] = ['Expected a team of this organization.']
  }
  if (Object.keys(errors).length) throw new ValidationError(errors)
}
