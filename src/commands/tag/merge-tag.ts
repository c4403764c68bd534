import type { Deps } from '../../deps.ts'
import { ForbiddenError, ValidationError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { tagOf } from '../../projections/tags.ts'
import type { TagRow } from '../../projections/tags.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { nameRelease } from '../unique-name.ts'
import { retagsOf } from './retag.ts'
import { TAG_NAME_SCOPE, tagDecider, tagStream } from './tag.ts'

/**
 * Merges tag `sourceId` into `intoId` (admins only): every live account, contact, deal and lead
 * tagged with the source is retagged, the source recorded as merged and its name freed, all in one
 * append (one transaction on PostgreSQL). Answers the target and the position to wait for.
 */
export async function mergeTag(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, merge: { sourceId: string; intoId: string }): Promise<{ into: TagRow; position: Position | null }> {
  const { db, store, clock } = deps
  const { orgId } = caller
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin may do this')
  const source = await orNotFound(tagOf(db, orgId, merge.sourceId))
  const target = await tagOf(db, orgId, merge.intoId)
  if (!target || target.is_deleted || target.id === source.id) throw new ValidationError({ into: ['Expected another active tag of this organization.'] })
  const { run, position } = commandSession(store, caller)
  const at = clock().toISOString()
  const retags = await retagsOf(db, { orgId, from: source.id, into: target.id, at })
  const release = nameRelease({ scope: TAG_NAME_SCOPE, orgId, ownerId: source.id, name: source.name })
  await run(tagDecider, tagStream(source.id), { type: 'MergeTag', orgId, intoTagId: target.id, at }, { also: [...retags, release] })
  return { into: target, position: position() }
}
