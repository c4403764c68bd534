import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/** A tag: a named label records (deals, accounts, contacts, leads) carry. Deleting is soft. */

// Events: the storage contract.
export type TagEvent =
  | { type: 'TagCreated'; data: { tag_id: string; org_id: string; name: string; color: string | null; created_by: string | null; at: string } }
  | { type: 'TagUpdated'; data: { name?: string; color?: string | null; at: string } }
  | { type: 'TagDeleted'; data: { at: string } }
  | { type: 'TagRestored'; data: { at: string } }
  | { type: 'TagMerged'; data: { into_tag_id: string; at: string } }

// Fold.
export type TagState = { exists: boolean; orgId: string | null; name: string; color: string | null; deleted: boolean; mergedInto: string | null }

export const initialTagState = (): TagState => ({ exists: false, orgId: null, name: '', color: null, deleted: false, mergedInto: null })

export function evolveTag(state: TagState, event: TagEvent): TagState {
  switch (event.type) {
    case 'TagCreated':
      return { ...state, exists: true, orgId: event.data.org_id, name: event.data.name, color: event.data.color }
    case 'TagUpdated':
      return { ...state, name: event.data.name ?? state.name, color: event.data.color === undefined ? state.color : event.data.color }
    case 'TagDeleted':
      return { ...state, deleted: true }
    case 'TagRestored':
      return { ...state, deleted: false }
    case 'TagMerged':
      return { ...state, deleted: true, mergedInto: event.data.into_tag_id }
  }
}

// Decisions. Time, ids and the caller arrive in the command; the org check makes other orgs' tags invisible.
export type TagCommand =
  | { type: 'CreateTag'; tagId: string; orgId: string; name: string; color: string | null; actorId: string | null; at: string }
  | { type: 'UpdateTag'; orgId: string; name?: string; color?: string | null; at: string }
  | { type: 'DeleteTag'; orgId: string; at: string }
  | { type: 'RestoreTag'; orgId: string; at: string }
  | { type: 'MergeTag'; orgId: string; intoTagId: string; at: string }

function existing(state: TagState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.mergedInto) throw new NotFoundError()
}

export function decideTag(command: TagCommand, state: TagState): TagEvent[] {
  switch (command.type) {
    case 'CreateTag':
      if (state.exists) return []
      return [{ type: 'TagCreated', data: { tag_id: command.tagId, org_id: command.orgId, name: command.name, color: command.color, created_by: command.actorId, at: command.at } }]
    case 'UpdateTag': {
      existing(state, command.orgId)
      if (state.deleted) throw new NotFoundError()
      const changes: { name?: string; color?: string | null } = {}
      if (command.name !== undefined && command.name !== state.name) changes.name = command.name
      if (command.color !== undefined && command.color !== state.color) changes.color = command.color
      return Object.keys(changes).length ? [{ type: 'TagUpdated', data: { ...changes, at: command.at } }] : []
    }
    case 'DeleteTag':
      existing(state, command.orgId)
      return state.deleted ? [] : [{ type: 'TagDeleted', data: { at: command.at } }]
    case 'RestoreTag':
      existing(state, command.orgId)
      return state.deleted ? [{ type: 'TagRestored', data: { at: command.at } }] : []
    case 'MergeTag':
      existing(state, command.orgId)
      if (state.deleted) throw new NotFoundError()
      return [{ type: 'TagMerged', data: { into_tag_id: command.intoTagId, at: command.at } }]
  }
}

export const tagDecider: Decider<TagCommand, TagState, TagEvent> = { initialState: initialTagState, evolve: evolveTag, decide: decideTag }

/** Tag names are unique per organization, case-insensitively (name claims of this scope). */
export const TAG_NAME_SCOPE = 'tag'

export const tagStreams = streamCategory('tag')
export const tagStream = tagStreams.stream

