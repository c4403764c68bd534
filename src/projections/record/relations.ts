import type { Db } from '../../db/database.ts'
import { ValidationError } from '../../errors.ts'
import { activeProfileIds } from '../../identity/users.ts'
import { liveContactIds } from '../contact/contacts.ts'
import { liveTagIds } from '../tag/tags.ts'
import { teamIds } from '../team/teams.ts'

/**
 * The existence checks a command's use case makes before deciding (deciders stay pure): every id a
 * record points at must be a live record of the caller's organization.
 */

export type Relations = { tags?: readonly string[]; assigned_to?: readonly string[]; contacts?: readonly string[]; teams?: readonly string[] }

// What a relation list may point at, and how its error names it.
const relationKinds = {
  tags: { live: liveTagIds, what: 'tags' },
  profiles: { live: activeProfileIds, what: 'active profiles' },
  contacts: { live: liveContactIds, what: 'contacts' },
  teams: { live: teamIds, what: 'teams' },
}

/**
 * The error of one relation list, or undefined: the ids it adds that are not live records of the
 * organization (another org's ids included). Ids the record already holds (`current`) may stay
 * after their tag is deleted or their profile deactivated, so a client can send back what it read.
 */
export async function relationErrors(db: Db, orgId: string, kind: keyof typeof relationKinds, requested: readonly string[] = [], current: readonly string[] = []): Promise<string[] | undefined> {
  const added = [...new Set(requested)].filter((id) => !current.includes(id))
  const live = await relationKinds[kind].live(db, orgId, added)
  const missing = added.filter((id) => !live.has(id))
  return missing.length ? [`Expected ${relationKinds[kind].what} of this organization; not: ${missing.join(', ')}`] : undefined
}

/** 400 naming every relation field (and any `extra` error of the module's own relations) with an id it may not point at. */
export async function checkRelations(db: Db, orgId: string, relations: Relations, extra: Record<string, string[]> = {}, current: Relations = {}): Promise<void> {
  const [tags, assigned, contacts, teams] = await Promise.all([
    relationErrors(db, orgId, 'tags', relations.tags, current.tags),
    relationErrors(db, orgId, 'profiles', relations.assigned_to, current.assigned_to),
    relationErrors(db, orgId, 'contacts', relations.contacts, current.contacts),
    relationErrors(db, orgId, 'teams', relations.teams, current.teams),
  ])
  const errors = { ...extra, ...(tags && { tags }), ...(assigned && { assigned_to: assigned }), ...(contacts && { contacts }), ...(teams && { teams }) }
  if (Object.keys(errors).length) throw new ValidationError(errors)
}
