import { ForbiddenError, NotFoundError } from '../errors.ts'
import type { Decider } from './decider.ts'
import { decideNote, evolveNotes, isNoteCommand, isNoteEvent, noNotes } from './notes.ts'
import type { NoteCommand, NoteEvent, Notes } from './notes.ts'

/**
 * What the plain CRM records (accounts, contacts) share: a bag of fields written by create,
 * replace (PUT) and partial update (PATCH), soft deletion by an admin or the creator, and
 * invisibility to other organizations. Each record module keeps its own fields and names (its
 * events are the storage contract) and gets its decider from `recordDecider`. A module that names
 * a note prefix also has comments and attachments (commands/notes.ts) on the record's stream.
 */
export type RecordState<Fields> = { exists: boolean; orgId: string | null; createdBy: string | null; deleted: boolean; fields: Fields; notes: Notes }

export const initialRecordState = <Fields>(empty: Fields): RecordState<Fields> => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: empty, notes: noNotes() })

/** The caller deleting: their profile (null for the API key) and whether they are an admin. */
export type Actor = { profileId: string | null; isAdmin: boolean }

/** Another organization's record, a missing one and a deleted one all look the same: 404. */
export function assertVisible(state: RecordState<unknown>, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError()
}

export function assertMayDelete(state: RecordState<unknown>, actor: Actor): void {
  if (!actor.isAdmin && (actor.profileId === null || actor.profileId !== state.createdBy)) throw new ForbiddenError('Only an admin or the creator may delete this record')
}

// Relation lists are sets: the same ids in another order are no change.
const comparable = (value: unknown) => (Array.isArray(value) ? JSON.stringify([...value].sort()) : JSON.stringify(value ?? null))

/** A tag list with `from` replaced by `into` (a tag merge), kept a set: a record that already had `into` holds it once. */
export const retagged = (tags: readonly string[], { from, into }: { from: string; into: string }): string[] => [...new Set(tags.map((id) => (id === from ? into : id)))]

/** The requested values that differ from the current ones; empty when the outcome already holds. */
export function changedFields<Fields extends object>(current: Fields, requested: Partial<Fields>): Partial<Fields> {
  const changes: Partial<Fields> = {}
  for (const key of Object.keys(requested) as (keyof Fields)[]) {
    if (requested[key] !== undefined && comparable(requested[key]) !== comparable(current[key])) changes[key] = requested[key]
  }
  return changes
}

/** A PUT: every field the body leaves out takes its empty value, so relation lists it does not mention are cleared. */
export function replacing<Fields extends object>(empty: Fields, body: Partial<Fields>): Fields {
  const fields = { ...empty }
  for (const key of Object.keys(empty) as (keyof Fields)[]) if (body[key] !== undefined) fields[key] = body[key] as Fields[keyof Fields]
  return fields
}

/**
 * A record module's names. Events are the storage contract, so each module spells out its own
 * stored types and id key (e.g. `AccountCreated`, `account_id`); commands keep their own names too.
 */
export type RecordNames = {
  events: { created: string; updated: string; deleted: string; idKey: string }
  commands: { create: string; update: string; delete: string; idKey: string }
  /** The prefix of the record's note events (`Account` → `AccountCommentAdded`); a module without one has no notes. */
  notes?: string
}
type Keyed<Key extends string> = { [K in Key]: string }
type NoteEventsOf<N extends RecordNames> = N extends { notes: infer P extends string } ? NoteEvent<P> : never

export type RecordEvent<Fields, N extends RecordNames> =
  | { type: N['events']['created']; data: Fields & Keyed<N['events']['idKey']> & { org_id: string; created_by: string | null; at: string } }
  | { type: N['events']['updated']; data: Partial<Fields> & { at: string } }
  | { type: N['events']['deleted']; data: { at: string } }
  | NoteEventsOf<N>

// Time, ids, the caller and looked-up facts arrive in the command. PUT sends every field, PATCH only the named ones; both decide only what differs.
export type RecordCommand<Fields, N extends RecordNames> =
  | ({ type: N['commands']['create']; orgId: string; fields: Fields; actorId: string | null; at: string } & Keyed<N['commands']['idKey']>)
  | { type: N['commands']['update']; orgId: string; changes: Partial<Fields>; at: string }
  | { type: N['commands']['delete']; orgId: string; actor: Actor; at: string }
  | (N extends { notes: string } ? NoteCommand : never)

export type RecordDecider<Fields, N extends RecordNames> = Decider<RecordCommand<Fields, N>, RecordState<Fields>, RecordEvent<Fields, N>>

/**
 * The decider of a plain record: create once, update what differs, soft-delete by an admin or the
 * creator; with a note prefix, notes too. Any member of the record's organization may see the record,
 * so any member may add notes; only their author or an admin changes one (commands/notes.ts).
 */
export function recordDecider<Fields extends object, const N extends RecordNames>(empty: () => Fields, names: N): RecordDecider<Fields, N> {
  type Event = RecordEvent<Fields, N>
  // The union members' types are generic, so TypeScript cannot narrow on them: each branch names the member it builds or reads.
  const evolve = (state: RecordState<Fields>, event: Event): RecordState<Fields> => {
    if (names.notes && isNoteEvent(names.notes, event)) return { ...state, notes: evolveNotes(names.notes, state.notes, event) }
    if (event.type === names.events.created) {
      const { [names.events.idKey]: _id, org_id, created_by, at: _at, ...fields } = event.data as Record<string, unknown>
      return { ...state, exists: true, orgId: org_id as string, createdBy: created_by as string | null, deleted: false, fields: fields as Fields }
    }
    if (event.type === names.events.updated) {
      const { at: _at, ...changes } = event.data as Partial<Fields> & { at: string }
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    // A module may add events of its own (an account's sent mail) that change nothing here.
    return event.type === names.events.deleted ? { ...state, deleted: true } : state
  }
  const decide = (command: RecordCommand<Fields, N>, state: RecordState<Fields>): Event[] => {
    if (names.notes && isNoteCommand(command)) {
      assertVisible(state, command.orgId)
      return decideNote(names.notes, state.notes, command, true) as Event[]
    }
    if (command.type === names.commands.create) {
      const { orgId, fields, actorId, at } = command as { orgId: string; fields: Fields; actorId: string | null; at: string }
      const id = (command as unknown as Record<string, string>)[names.commands.idKey]
      return state.exists ? [] : [{ type: names.events.created, data: { [names.events.idKey]: id, org_id: orgId, ...fields, created_by: actorId, at } } as Event]
    }
    if (command.type === names.commands.update) {
      const { orgId, changes, at } = command as { orgId: string; changes: Partial<Fields>; at: string }
      assertVisible(state, orgId)
      const changed = changedFields(state.fields, changes)
      return Object.keys(changed).length ? [{ type: names.events.updated, data: { ...changed, at } } as Event] : []
    }
    const { orgId, actor, at } = command as { orgId: string; actor: Actor; at: string }
    if (state.exists && state.orgId === orgId && state.deleted) return []
    assertVisible(state, orgId)
    assertMayDelete(state, actor)
    return [{ type: names.events.deleted, data: { at } } as Event]
  }
  return { initialState: () => initialRecordState(empty()), evolve, decide }
}
