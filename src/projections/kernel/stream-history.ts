import { isNoteEvent } from '../../commands/notes.ts'
import type { NoteEvent } from '../../commands/notes.ts'
import { formatPosition } from '../../eventstore/event-store.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'

/**
 * A record's history read straight from its own stream (issue 8 for deals, issue 19 for tasks):
 * one entry per event, and the record folded up to an instant. Pure: the routes read the stream and
 * name the actors. Times are the events' own `at` (the clock the command saw), so a test's movable
 * clock moves them too; an event without one falls back to when it was stored. Each module says
 * what its own events changed (opportunity/opportunity-history.ts, task/task-history.ts); comments and attachments are
 * told the same way for every module (`noteEntry`).
 */

/** What these functions read of a recorded event. */
export type StoredEvent = Pick<RecordedEvent, 'type' | 'data' | 'metadata' | 'revision' | 'position' | 'createdAt'>

/** A field's values before and after, or a relation list's ids added and removed. */
export type Change = { from: unknown; to: unknown } | { added: string[]; removed: string[] }
/** The comment, attachment or stage an event is about; `name` is the file name or stage code (null for a comment). */
export type Subject = { kind: 'comment' | 'attachment' | 'stage' | 'line_item'; id: string; name: string | null }

export type HistoryEntry = {
  /** The global position, `commit-prepare`. */
  position: string
  revision: number
  type: string
  at: string
  /** The profile that caused the event; null for system work and the organization API key. */
  actor_id: string | null
  changes: Record<string, Change>
  subject: Subject | null
}

export const atOf = (event: Pick<StoredEvent, 'data' | 'createdAt'>): string => {
  const at = (event.data as { at?: unknown } | null)?.at
  return typeof at === 'string' ? at : event.createdAt.toISOString()
}

export const listChange = (from: readonly string[], to: readonly string[]): Change => ({ added: to.filter((id) => !from.includes(id)), removed: from.filter((id) => !to.includes(id)) })

/** Field changes as history shows them: the `relations` lists as added and removed ids, every other field as from and to. */
export function fieldChanges(changes: Record<string, { from: unknown; to: unknown } | undefined>, relations: readonly string[]): Record<string, Change> {
  return Object.fromEntries(
    Object.entries(changes).flatMap(([key, change]) => (change ? [[key, relations.includes(key) ? listChange(change.from as string[], change.to as string[]) : { from: change.from, to: change.to }]] : [])),
  )
}

/** A creation as history shows it: every field from null (relation lists from empty). */
export function createdChanges(fields: object, relations: readonly string[]): Record<string, Change> {
  const changes = Object.fromEntries(Object.entries(fields).map(([key, to]) => [key, { from: relations.includes(key) ? [] : null, to }]))
  return fieldChanges(changes, relations)
}

/** What an event's entry says, and the state after it. */
export type StepResult<State> = { state: State; changes: Record<string, Change>; subject: Subject | null }
/** Every step of a history: the state before, the event, and what the entry says. */
export type Step<State, Event> = (state: State, event: Event) => StepResult<State>

export function historyOf<State, Event extends { type: string; data: unknown }>(events: readonly StoredEvent[], initial: State, step: Step<State, Event>): HistoryEntry[] {
  let state = initial
  return events.map((recorded) => {
    const next = step(state, { type: recorded.type, data: recorded.data } as Event)
    state = next.state
    return {
      position: formatPosition(recorded.position),
      revision: Number(recorded.revision),
      type: recorded.type,
      at: atOf(recorded),
      actor_id: recorded.metadata.actorId ?? null,
      changes: next.changes,
      subject: next.subject,
    }
  })
}

/** The comment texts and file names a history has seen so far, by id: what an edit or removal was. */
export type NoteNames = { comments: Record<string, string>; files: Record<string, string> }
export const noNoteNames = (): NoteNames => ({ comments: {}, files: {} })

/** The entry of a comment or attachment event of a record whose note events are `<prefix>CommentAdded` …; undefined for any other event. */
export function noteEntry(prefix: string, names: NoteNames, event: { type: string; data: unknown }): StepResult<NoteNames> | undefined {
  if (!isNoteEvent(prefix, event)) return undefined
  const data = (event as NoteEvent<string>).data as Record<string, string>
  const comment = (to: string | null): StepResult<NoteNames> => {
    const id = data.comment_id!
    const comments = { ...names.comments }
    if (to === null) delete comments[id]
    else comments[id] = to
    return { state: { ...names, comments }, changes: { comment: { from: names.comments[id] ?? null, to } }, subject: { kind: 'comment', id, name: null } }
  }
  switch (event.type.slice(prefix.length)) {
    case 'CommentAdded':
    case 'CommentEdited':
      return comment(data.comment!)
    case 'CommentDeleted':
      return comment(null)
    case 'AttachmentAdded': {
      const { attachment_id: id, file_name: name } = data as { attachment_id: string; file_name: string }
      return { state: { ...names, files: { ...names.files, [id]: name } }, changes: { attachment: { from: null, to: name } }, subject: { kind: 'attachment', id, name } }
    }
    default: {
      const id = data.attachment_id!
      const name = names.files[id] ?? null
      return { state: names, changes: { attachment: { from: name, to: null } }, subject: { kind: 'attachment', id, name } }
    }
  }
}

export type HistoryPage = { order: 'asc' | 'desc'; limit: number; offset: number }

/** One page of entries, oldest first (`asc`) or newest first, with the count of them all. */
export function pageOfHistory<T>(entries: readonly T[], { order, limit, offset }: HistoryPage): { count: number; offset: number; limit: number; results: T[] } {
  const ordered = order === 'desc' ? [...entries].reverse() : entries
  return { count: entries.length, offset, limit, results: ordered.slice(offset, offset + limit) }
}

/** A record as it stood at an instant: its folded state and the facts its read-model row would have had then. */
export type AsOf<State> = {
  state: State
  createdAt: string
  /** Revision and time of the last change to the record itself (`isNote` events leave them, as in the read model). */
  revision: bigint
  updatedAt: string
}

type Fold<State, Event> = { initialState: () => State; evolve: (state: State, event: Event) => State }

/**
 * The record folded over its events up to `at` (inclusive), stopping at the first later one;
 * undefined when it did not exist yet or was already deleted then (answered 404, like a missing
 * record). `isNote`: the event types that keep rows of their own (comments, attachments, line
 * items), which the record's revision and updated_at ignore, as in its read model.
 */
export function foldAsOf<State extends { exists: boolean; deleted: boolean }, Event>(events: readonly StoredEvent[], at: Date, fold: Fold<State, Event>, isNote: (type: string) => boolean): AsOf<State> | undefined {
  const instant = at.getTime()
  let state = fold.initialState()
  let createdAt: string | null = null
  let last: { revision: bigint; at: string } | null = null
  for (const recorded of events) {
    const eventAt = atOf(recorded)
    if (Date.parse(eventAt) > instant) break
    state = fold.evolve(state, { type: recorded.type, data: recorded.data } as Event)
    createdAt ??= eventAt
    if (!isNote(recorded.type)) last = { revision: recorded.revision, at: eventAt }
  }
  if (!state.exists || state.deleted || createdAt === null || last === null) return undefined
  return { state, createdAt, revision: last.revision, updatedAt: last.at }
}
