import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * An API setting (the original's `APISettings`): a named key an organization hands to one of its
 * websites, with the members its leads go to and the tags they get. The key is shown once, when
 * created; only its SHA-256 hash and a short prefix (to tell keys apart) are kept, in the log as in
 * the read model, so neither a log reader nor a database dump learns a usable key.
 */

export type ApiSettingFields = { title: string; website: string | null; lead_assigned_to: string[]; tags: string[] }

// Events: the storage contract.
export type ApiSettingEvent =
  | { type: 'ApiSettingCreated'; data: { api_setting_id: string; org_id: string; title: string; website: string | null; lead_assigned_to: string[]; tags: string[]; key_hash: string; key_prefix: string; created_by: string | null; at: string } }
  | { type: 'ApiSettingUpdated'; data: { title?: string; website?: string | null; lead_assigned_to?: string[]; tags?: string[]; by: string | null; at: string } }
  | { type: 'ApiSettingDeleted'; data: { by: string | null; at: string } }

// Fold.
export type ApiSettingState = { exists: boolean; orgId: string | null; fields: ApiSettingFields; deleted: boolean }

export const initialApiSettingState = (): ApiSettingState => ({ exists: false, orgId: null, fields: { title: '', website: null, lead_assigned_to: [], tags: [] }, deleted: false })

export function evolveApiSetting(state: ApiSettingState, event: ApiSettingEvent): ApiSettingState {
  switch (event.type) {
    case 'ApiSettingCreated': {
      const { org_id, title, website, lead_assigned_to, tags } = event.data
      return { ...state, exists: true, orgId: org_id, fields: { title, website, lead_assigned_to, tags } }
    }
    case 'ApiSettingUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'ApiSettingDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. The key's hash arrives in the command (the decider draws no random bytes); admins only, checked by the use case.
export type ApiSettingCommand =
  | { type: 'CreateApiSetting'; apiSettingId: string; orgId: string; fields: ApiSettingFields; key: { hash: string; prefix: string }; actorId: string | null; at: string }
  | { type: 'ChangeApiSetting'; orgId: string; changes: Partial<ApiSettingFields>; actorId: string | null; at: string }
  | { type: 'DeleteApiSetting'; orgId: string; actorId: string | null; at: string }

function live(state: ApiSettingState, orgId: string): void {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw new NotFoundError()
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id) => b.includes(id))

function changed(current: ApiSettingFields, requested: Partial<ApiSettingFields>): Partial<ApiSettingFields> {
  const out: Partial<ApiSettingFields> = {}
  if (requested.title !== undefined && requested.title !== current.title) out.title = requested.title
  if (requested.website !== undefined && requested.website !== current.website) out.website = requested.website
  if (requested.lead_assigned_to !== undefined && !sameSet(requested.lead_assigned_to, current.lead_assigned_to)) out.lead_assigned_to = requested.lead_assigned_to
  if (requested.tags !== undefined && !sameSet(requested.tags, current.tags)) out.tags = requested.tags
  return out
}

export function decideApiSetting(command: ApiSettingCommand, state: ApiSettingState): ApiSettingEvent[] {
  const by = command.actorId
  switch (command.type) {
    case 'CreateApiSetting':
      if (state.exists) return []
      return [{ type: 'ApiSettingCreated', data: { api_setting_id: command.apiSettingId, org_id: command.orgId, ...command.fields, key_hash: command.key.hash, key_prefix: command.key.prefix, created_by: by, at: command.at } }]
    case 'ChangeApiSetting': {
      live(state, command.orgId)
      const changes = changed(state.fields, command.changes)
      return Object.keys(changes).length ? [{ type: 'ApiSettingUpdated', data: { ...changes, by, at: command.at } }] : []
    }
    case 'DeleteApiSetting':
      if (state.exists && state.deleted && state.orgId === command.orgId) return []
      live(state, command.orgId)
      return [{ type: 'ApiSettingDeleted', data: { by, at: command.at } }]
  }
}

export const apiSettingDecider: Decider<ApiSettingCommand, ApiSettingState, ApiSettingEvent> = { initialState: initialApiSettingState, evolve: evolveApiSetting, decide: decideApiSetting }

export const apiSettingStreams = streamCategory('api_setting')
export const apiSettingStream = apiSettingStreams.stream

/** The raw key's prefix: it says what the secret is when one leaks (secrets.ts). */
export const SITE_KEY_PREFIX = 'svc_site_'
