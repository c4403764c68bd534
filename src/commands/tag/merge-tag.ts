import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { tagOf } from '../../projections/tag/tags.ts'
import type { TagRow } from '../../projections/tag/tags.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { retagsOf } from './retag.ts'
import { tagDecider, tagStream } from './tag.ts'

/**
 * Merges tag `sourceId` into `intoId` (admins only): every live account, contact, deal, lead and
 * task tagged with the source is retagged and the source recorded as merged (archived, its name kept, as
 * the original's merge leaves it), all in one append (one transaction on PostgreSQL). The target
 * must be another active tag of the organization (the original refuses an archived one: records
 * moved onto it would hide behind a tag that is off). Answers the target, how many records moved
 * and the position to wait for.
 */
export async function mergeTag(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, merge: { sourceId: string; intoId: string }): Promise<{ into: TagRow; moved: number; position: Position | null }> {
  const { db, store, clock } = deps
  const { orgId } = caller
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin may do this')
  const source = await orNotFound(tagOf(db, orgId, merge.sourceId))
  if (source.is_deleted) throw new NotFoundError()
  const target = await tagOf(db, orgId, merge.intoId)
  if (!target || target.is_deleted) throw new NotFoundError()
  if (target.id === source.id) throw new ValidationError({ into: ['A tag cannot merge into itself.'] })
  if (!target.is_active) throw new ValidationError({ into: ['Restore that tag before merging records onto it.'] })
  const { run, position } = commandSession(store, caller)
  const at = clock().toISOString()
  const retags = await retagsOf(db, { orgId, from: source.id, into: target.id, at })
  await run(tagDecider, tagStream(source.id), { type: 'MergeTag', orgId, intoTagId: target.id, at }, { also: retags })
  return { into: target, moved: retags.length, position: position() }
}
