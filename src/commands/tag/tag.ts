import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A tag: a named label records (deals, accounts, contacts, leads) carry. A tag is active or
 * archived (the original's `is_active`, issue 22): archiving stops it being offered for new records
 * while the records that carry it keep it, and its name stays taken; unarchiving turns it back on.
 * A merge archives the source after its records moved to the target. Deleting (TagDeleted, freeing
 * the name and hiding the tag from records) is what tags answered before archiving existed: such
 * tags stay deleted until restored.
 */

// Events: the storage contract.
export type TagEvent =
  | { type: 'TagCreated'; data: { tag_id: string; org_id: string; name: string; color: string | null; description: string; created_by: string | null; at: string } }
  | { type: 'TagUpdated'; data: { name?: string; color?: string | null; description?: string; at: string } }
  | { type: 'TagDeleted'; data: { at: string } }
  | { type: 'TagRestored'; data: { at: string } }
  | { type: 'TagArchived'; data: { at: string } }
  | { type: 'TagUnarchived'; data: { at: string } }
  | { type: 'TagMerged'; data: { into_tag_id: string; at: string } }

// Fold.
export type TagState = { exists: boolean; orgId: string | null; name: string; color: string | null; description: string; deleted: boolean; archived: boolean; mergedInto: string | null }

export const initialTagState = (): TagState => ({ exists: false, orgId: null, name: '', color: null, description: '', deleted: false, archived: false, mergedInto: null })

export function evolveTag(state: TagState, event: TagEvent): TagState {
  switch (event.type) {
    case 'TagCreated':
      return { ...state, exists: true, orgId: event.data.org_id, name: event.data.name, color: event.data.color, description: event.data.description }
    case 'TagUpdated':
      return {
        ...state,
        name: event.data.name ?? state.name,
        color: event.data.color === undefined ? state.color : event.data.color,
        description: event.data.description ?? state.description,
      }
    case 'TagDeleted':
      return { ...state, deleted: true }
    case 'TagRestored':
      return { ...state, deleted: false, archived: false }
    case 'TagArchived':
      return { ...state, archived: true }
    case 'TagUnarchived':
      return { ...state, archived: false }
    case 'TagMerged':
      // The source is archived, not gone: its name survives and it can be turned back on (empty).
      return { ...state, archived: true, mergedInto: event.data.into_tag_id }
  }
}

/** Active: offered for new records. */
export const isActiveTag = (state: TagState): boolean => state.exists && !state.deleted && !state.archived

// Decisions. Time, ids and the caller arrive in the command; the org check makes other orgs' tags invisible.
export type TagCommand =
  | { type: 'CreateTag'; tagId: string; orgId: string; name: string; color: string | null; description?: string; actorId: string | null; at: string }
  | { type: 'UpdateTag'; orgId: string; name?: string; color?: string | null; description?: string; at: string }
  | { type: 'DeleteTag'; orgId: string; at: string }
  | { type: 'ArchiveTag'; orgId: string; at: string }
  /** Turns an archived tag back on, or restores a deleted one. */
  | { type: 'RestoreTag'; orgId: string; at: string }
  | { type: 'MergeTag'; orgId: string; intoTagId: string; at: string }

function existing(state: TagState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId) throw new NotFoundError()
}

export function decideTag(command: TagCommand, state: TagState): TagEvent[] {
  switch (command.type) {
    case 'CreateTag':
      if (state.exists) return []
      return [{ type: 'TagCreated', data: { tag_id: command.tagId, org_id: command.orgId, name: command.name, color: command.color, description: command.description ?? '', created_by: command.actorId, at: command.at } }]
    case 'UpdateTag': {
      existing(state, command.orgId)
      if (state.deleted) throw new NotFoundError()
      const changes: { name?: string; color?: string | null; description?: string } = {}
      if (command.name !== undefined && command.name !== state.name) changes.name = command.name
      if (command.color !== undefined && command.color !== state.color) changes.color = command.color
      if (command.description !== undefined && command.description !== state.description) changes.description = command.description
      return Object.keys(changes).length ? [{ type: 'TagUpdated', data: { ...changes, at: command.at } }] : []
    }
    case 'DeleteTag':
      existing(state, command.orgId)
      return state.deleted ? [] : [{ type: 'TagDeleted', data: { at: command.at } }]
    case 'ArchiveTag':
      existing(state, command.orgId)
      return isActiveTag(state) ? [{ type: 'TagArchived', data: { at: command.at } }] : []
    case 'RestoreTag':
      existing(state, command.orgId)
      if (state.deleted) return [{ type: 'TagRestored', data: { at: command.at } }]
      return state.archived ? [{ type: 'TagUnarchived', data: { at: command.at } }] : []
    case 'MergeTag':
      existing(state, command.orgId)
      if (state.deleted) throw new NotFoundError()
      return [{ type: 'TagMerged', data: { into_tag_id: command.intoTagId, at: command.at } }]
  }
}

export const tagDecider: Decider<TagCommand, TagState, TagEvent> = { initialState: initialTagState, evolve: evolveTag, decide: decideTag }

/** Tag names are unique per organization, case-insensitively (name claims of this scope); an archived tag keeps its name. */
export const TAG_NAME_SCOPE = 'tag'

/** The original's palette (Tags.COLOR_CHOICES): a tag's colour is one of these names, or a #rrggbb hex. */
export const TAG_COLORS = ['gray', 'red', 'orange', 'amber', 'yellow', 'lime', 'green', 'emerald', 'teal', 'cyan', 'sky', 'blue', 'indigo', 'violet', 'purple', 'fuchsia', 'pink', 'rose'] as const
export const DEFAULT_TAG_COLOR = 'blue'

export const tagStreams = streamCategory('tag')
export const tagStream = tagStreams.stream
