import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { newSecret } from '../../identity/secrets.ts'
import { relationErrors } from '../../projections/record/relations.ts'
import { liveTags } from '../../projections/tag/tags.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { SITE_KEY_PREFIX, apiSettingDecider, apiSettingStream } from './api-setting.ts'
import type { ApiSettingFields } from './api-setting.ts'

type ApiSettingDeps = Pick<Deps, 'db' | 'store' | 'clock'>
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The fields as a use case takes them: tags by id or by name (the original took names), resolved against the organization's live tags. */
export type ApiSettingInput = Partial<Omit<ApiSettingFields, 'tags'>> & { tags?: string[] }

const requireAdmin = (caller: Caller) => {
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin may manage API settings')
}

/**
 * The input with its tags as ids, every assignee and tag checked against the organization (400
 * naming the field otherwise). Ids the setting already holds (`current`) may stay.
 */
async function resolved(db: Deps['db'], orgId: string, input: ApiSettingInput, current?: ApiSettingFields): Promise<Partial<ApiSettingFields>> {
  const { tags, ...rest } = input
  const errors: Record<string, string[]> = {}
  let tagIds: string[] | undefined
  if (tags) {
    const active = await liveTags(db, orgId)
    const byName = new Map(active.map((tag) => [tag.name.toLowerCase(), tag.id]))
    tagIds = [...new Set(tags.map((value) => (UUID.test(value) ? value.toLowerCase() : (byName.get(value.trim().toLowerCase()) ?? value))))]
    const unknown = tagIds.filter((id) => !UUID.test(id) || (!active.some((tag) => tag.id === id) && !current?.tags.includes(id)))
    if (unknown.length) errors.tags = [`Expected ids or names of this organization's tags; not: ${unknown.join(', ')}`]
  }
  const assignees = await relationErrors(db, orgId, 'profiles', rest.lead_assigned_to, current?.lead_assigned_to)
  if (assignees) errors.lead_assigned_to = assignees
  if (Object.keys(errors).length) throw new ValidationError(errors)
  return { ...rest, ...(tagIds && { tags: tagIds }) }
}

/** Creates an API setting (admins) with a new key: answers the raw key, which is never shown again. */
export async function createApiSetting(deps: ApiSettingDeps, caller: Caller, input: ApiSettingInput & { title: string }): Promise<{ id: string; apikey: string; position: Position | null }> {
  requireAdmin(caller)
  const fields = { website: null, lead_assigned_to: [], tags: [], ...(await resolved(deps.db, caller.orgId, input)), title: input.title }
  const { raw, hash, displayPrefix } = newSecret(SITE_KEY_PREFIX)
  const session = commandSession(deps.store, caller)
  const id = randomUUID()
  await session.run(apiSettingDecider, apiSettingStream(id), { type: 'CreateApiSetting', apiSettingId: id, orgId: caller.orgId, fields, key: { hash: hash.toString('hex'), prefix: displayPrefix }, actorId: caller.profileId, at: deps.clock().toISOString() })
  return { id, apikey: raw, position: session.position() }
}

/** Changes the named fields of an API setting (admins). */
export async function changeApiSetting(deps: ApiSettingDeps, caller: Caller, current: ApiSettingFields & { id: string }, input: ApiSettingInput): Promise<{ position: Position | null }> {
  requireAdmin(caller)
  const changes = await resolved(deps.db, caller.orgId, input, current)
  const session = commandSession(deps.store, caller)
  await session.run(apiSettingDecider, apiSettingStream(current.id), { type: 'ChangeApiSetting', orgId: caller.orgId, changes, actorId: caller.profileId, at: deps.clock().toISOString() })
  return { position: session.position() }
}

/** Deletes an API setting (admins): its key stops being the organization's. */
export async function deleteApiSetting(deps: ApiSettingDeps, caller: Caller, id: string): Promise<{ position: Position | null }> {
  requireAdmin(caller)
  const session = commandSession(deps.store, caller)
  await session.run(apiSettingDecider, apiSettingStream(id), { type: 'DeleteApiSetting', orgId: caller.orgId, actorId: caller.profileId, at: deps.clock().toISOString() })
  return { position: session.position() }
}
