import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { archivedTagsNamed } from '../../projections/tag/tags.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { withClaimedName } from '../unique-name.ts'
import { DEFAULT_TAG_COLOR, TAG_NAME_SCOPE, tagDecider, tagStream } from './tag.ts'

export type NewTag = { name: string; color?: string | null; description?: string }

/**
 * Creates a tag, or, as the original does, turns back on the archived tag of the same name (any
 * case) with the colour and description given: an archived tag keeps its name, so a second tag of
 * that name could not exist beside it. Names are claimed in the tag's own append (unique per
 * organization, case-insensitively, also under concurrency). Answers the tag's id, whether it was
 * reactivated, and the position to wait for.
 */
export async function createTag(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, input: NewTag, session: CommandSession = commandSession(deps.store, caller)): Promise<{ tagId: string; reactivated: boolean; position: Position | null }> {
  const { orgId } = caller
  const { run, position } = session
  const at = deps.clock().toISOString()
  const [archived] = await archivedTagsNamed(deps.db, orgId, input.name)
  if (archived) {
    const stream = tagStream(archived.id)
    // The archived tag normally holds its name already (claiming again is then a no-op); a tag merged or deleted before archiving existed freed it, and takes it back here.
    await withClaimedName(run, { scope: TAG_NAME_SCOPE, orgId, ownerId: archived.id, name: archived.name, field: 'name' }, (withClaim) => withClaim(tagDecider, stream, { type: 'RestoreTag', orgId, at }))
    if (input.color !== undefined || input.description !== undefined) await run(tagDecider, stream, { type: 'UpdateTag', orgId, color: input.color, description: input.description, at })
    return { tagId: archived.id, reactivated: true, position: position() }
  }
  const tagId = randomUUID()
  const create = { type: 'CreateTag' as const, tagId, orgId, name: input.name, color: input.color === undefined ? DEFAULT_TAG_COLOR : input.color, description: input.description ?? '', actorId: caller.profileId, at }
  await withClaimedName(run, { scope: TAG_NAME_SCOPE, orgId, ownerId: tagId, name: input.name, field: 'name' }, (withClaim) => withClaim(tagDecider, tagStream(tagId), create))
  return { tagId, reactivated: false, position: position() }
}
