import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { CaseEvent, CaseFieldChanges, WatchVia } from './case.ts'
import type { Note, Notes } from '../notes.ts'
import { summaryOf } from './fields.ts'
import type { CaseFields, CaseStatus } from './fields.ts'
import { slaEventsOf } from './sla.ts'
import type { SlaClocks } from './sla.ts'

/**
 * Merging a duplicate case into the one that survives, and undoing it (the original's merge_views.py
 * and unmerge_views.py, where unmerge trusted a JSON blob and skipped what had moved since). Both are
 * two events appended together, one on each case: the duplicate records what left it (every
 * comment, attachment and watcher, and the aliases that followed it), the survivor what it received.
 * Unmerge gives each case back exactly what the merge moved, with every edit made since. The
 * duplicate becomes Duplicate, closed on the merge's day, and read-only until unmerged; unmerge
 * restores its status and closing date. Rules: admin or the creator of both; not into itself, a
 * deleted case or one merged elsewhere (no chains: a case merged into a merged case would be lost);
 * merging again into the same case changes nothing. An alias is a case id whose mail and links now
 * reach the survivor: the duplicate's own and those merged into it before, so a merge of a merge
 * is still one lookup (projections/case/merges.ts `survivingCase`).
 */

/** A watcher as it watched: how, and since when (restored as it was). */
export type Watch = { profile_id: string; subscribed_via: WatchVia; since: string }
export type MovedNote = { id: string; by: string | null; text?: string; removed: boolean }

/** On the duplicate: where it went, and what left it. */
export type MergedInto = { caseId: string; comments: string[]; attachments: string[]; watchers: Watch[]; aliases: string[]; status: CaseStatus; closedOn: string | null }
/** On the survivor, per duplicate: what it received (the watchers it did not have already). */
export type Absorbed = { comments: string[]; attachments: string[]; watchers: string[]; aliases: string[] }
export type CaseMerges = { into: MergedInto | null; absorbed: Record<string, Absorbed> }
export const noMerges = (): CaseMerges => ({ into: null, absorbed: {} })

type By = { by: string | null; at: string }
export type CaseMergeEvent =
  /** On the duplicate, followed by its CaseUpdated to Duplicate. */
  | { type: 'CaseMerged'; data: { into_case_id: string; comment_ids: string[]; attachment_ids: string[]; watchers: Watch[]; aliases: string[] } & By }
  /** On the survivor: the notes as they were (so it decides on them), the watchers new to it, the aliases it now answers for. */
  | { type: 'CaseDuplicateAbsorbed'; data: { source_case_id: string; comments: MovedNote[]; attachments: MovedNote[]; watchers: Watch[]; aliases: string[] } & By }
  /** On the duplicate, followed by its CaseUpdated back: what comes back, the notes as they are now. */
  | { type: 'CaseUnmerged'; data: { from_case_id: string; comments: MovedNote[]; attachments: MovedNote[]; watchers: Watch[]; aliases: string[] } & By }
  /** On the survivor: what it gives back (watchers it received and still has). */
  | { type: 'CaseDuplicateReleased'; data: { source_case_id: string; comment_ids: string[]; attachment_ids: string[]; watchers: string[]; aliases: string[] } & By }

export const MERGE_EVENT_TYPES = ['CaseMerged', 'CaseDuplicateAbsorbed', 'CaseUnmerged', 'CaseDuplicateReleased'] as const
export const isMergeEvent = (event: { type: string }): event is CaseMergeEvent => (MERGE_EVENT_TYPES as readonly string[]).includes(event.type)

/** The other case as the deciding one sees it: who created it, whether it is a live case of the organization, whether it is merged and where. */
export type OtherCase = { id: string; orgId: string | null; createdBy: string | null; live: boolean; mergedInto: string | null }

type Command<T extends string, X> = { type: T; orgId: string; actor: Actor; at: string } & X
export type CaseMergeCommand =
  /** On the duplicate. `day`: the merge's day (YYYY-MM-DD), its closing date. */
  | Command<'MergeCase', { into: OtherCase; day: string }>
  /** On the survivor, with the duplicate's folded state. */
  | Command<'AbsorbDuplicate', { source: OtherCase & { notes: Notes; watchers: Watch[]; aliases: string[] } }>
  /** On the survivor. */
  | Command<'ReleaseDuplicate', { source: OtherCase }>
  /** On the duplicate, with the survivor's notes as they are now. */
  | Command<'UnmergeCase', { from: OtherCase & { notes: Notes } }>
export const MERGE_COMMANDS: readonly CaseMergeCommand['type'][] = ['MergeCase', 'AbsorbDuplicate', 'ReleaseDuplicate', 'UnmergeCase']
export const isMergeCommand = (command: { type: string }): command is CaseMergeCommand => (MERGE_COMMANDS as readonly string[]).includes(command.type)

/** What the merge reads and changes of a case's folded state. */
export type Mergeable = { id: string | null; orgId: string | null; exists: boolean; deleted: boolean; createdBy: string | null; fields: CaseFields; notes: Notes; watchers: string[]; watches: Record<string, Watch>; sla: SlaClocks; merges: CaseMerges }

type Decided = CaseEvent[]

const notFound = () => new NotFoundError('Ticket not found.')
const isLive = (state: Mergeable, orgId: string) => state.exists && state.orgId === orgId && !state.deleted

/** Admin, or the creator of both cases (the original's `_can_merge`). */
function assertMayMerge(actor: Actor, one: string | null, other: string | null, verb: string): void {
  if (actor.isAdmin) return
  if (actor.profileId === null || one !== actor.profileId || other !== actor.profileId) throw new ForbiddenError(`You must be an admin, or the creator of both tickets, to ${verb} them.`)
}

/** The duplicate's status and closing date set, as a CaseUpdated with its SLA events (the same as any change of status). */
function statusChange(state: Mergeable, to: { status: CaseStatus; closed_on: string | null }, by: string | null, at: string): Decided {
  const next = { ...state.fields, ...to }
  const changes: CaseFieldChanges = {}
  if (next.status !== state.fields.status) changes.status = { from: state.fields.status, to: next.status }
  if (next.closed_on !== state.fields.closed_on) changes.closed_on = { from: state.fields.closed_on, to: next.closed_on }
  if (!Object.keys(changes).length) return []
  return [{ type: 'CaseUpdated', data: { changes, case: summaryOf(next), by, at } }, ...slaEventsOf(state.sla, state.fields, next, at)]
}

function decideMerge(command: Extract<CaseMergeCommand, { type: 'MergeCase' }>, state: Mergeable): Decided {
  const { into, actor, at } = command
  // Another organization's case is no case, whichever else it names.
  if (!isLive(state, command.orgId)) throw notFound()
  if (into.id === state.id) throw new ValidationError('Cannot merge a ticket into itself.')
  if (!into.live || into.orgId !== command.orgId) throw notFound()
  assertMayMerge(actor, state.createdBy, into.createdBy, 'merge')
  if (state.merges.into) {
    if (state.merges.into.caseId === into.id) return []
    throw new ValidationError('Source ticket is already merged into a different ticket.')
  }
  if (into.mergedInto !== null) throw new ValidationError('Target ticket has already been merged elsewhere.')
  const by = actor.profileId
  const moved = { comment_ids: state.notes.comments.map((n) => n.id), attachment_ids: state.notes.attachments.map((n) => n.id), watchers: state.watchers.map((id) => state.watches[id]!), aliases: aliasesOf(state.merges) }
  return [{ type: 'CaseMerged', data: { into_case_id: into.id, ...moved, by, at } }, ...statusChange(state, { status: 'Duplicate', closed_on: command.day }, by, at)]
}

function decideAbsorb(command: Extract<CaseMergeCommand, { type: 'AbsorbDuplicate' }>, state: Mergeable): Decided {
  const { source, actor, at } = command
  if (!isLive(state, command.orgId)) throw notFound()
  if (state.merges.absorbed[source.id]) return []
  if (state.merges.into) throw new ValidationError('Target ticket has already been merged elsewhere.')
  const note = (n: Note): MovedNote => ({ id: n.id, by: n.by, ...(n.text !== undefined && { text: n.text }), removed: n.removed })
  const watchers = source.watchers.filter((w) => !state.watchers.includes(w.profile_id))
  return [{ type: 'CaseDuplicateAbsorbed', data: { source_case_id: source.id, comments: source.notes.comments.map(note), attachments: source.notes.attachments.map(note), watchers, aliases: [source.id, ...source.aliases], by: actor.profileId, at } }]
}

function decideUnmerge(command: Extract<CaseMergeCommand, { type: 'UnmergeCase' }>, state: Mergeable): Decided {
  const { from, actor, at } = command
  if (!isLive(state, command.orgId)) throw notFound()
  const record = state.merges.into
  if (!record) throw new ValidationError('This ticket is not currently merged.')
  if (record.caseId !== from.id) throw notFound()
  assertMayMerge(actor, state.createdBy, from.createdBy, 'unmerge')
  if (from.mergedInto !== null) throw new ValidationError('The ticket this one was merged into has since been merged elsewhere: unmerge that one first.')
  const pick = (notes: readonly Note[], ids: readonly string[]): MovedNote[] => notes.filter((n) => ids.includes(n.id)).map((n) => ({ id: n.id, by: n.by, ...(n.text !== undefined && { text: n.text }), removed: n.removed }))
  const by = actor.profileId
  const back = { comments: pick(from.notes.comments, record.comments), attachments: pick(from.notes.attachments, record.attachments), watchers: record.watchers, aliases: record.aliases }
  return [{ type: 'CaseUnmerged', data: { from_case_id: from.id, ...back, by, at } }, ...statusChange(state, { status: record.status, closed_on: record.closedOn }, by, at)]
}

/** Gives back what the duplicate brought; a deleted survivor still gives it back, so no merge is ever stuck. */
function decideRelease(command: Extract<CaseMergeCommand, { type: 'ReleaseDuplicate' }>, state: Mergeable): Decided {
  if (!state.exists || state.orgId !== command.orgId) throw notFound()
  const absorbed = state.merges.absorbed[command.source.id]
  if (!absorbed) return []
  const watchers = absorbed.watchers.filter((id) => state.watchers.includes(id))
  return [{ type: 'CaseDuplicateReleased', data: { source_case_id: command.source.id, comment_ids: absorbed.comments, attachment_ids: absorbed.attachments, watchers, aliases: absorbed.aliases, by: command.actor.profileId, at: command.at } }]
}

export function decideCaseMerge(command: CaseMergeCommand, state: Mergeable): Decided {
  switch (command.type) {
    case 'MergeCase':
      return decideMerge(command, state)
    case 'AbsorbDuplicate':
      return decideAbsorb(command, state)
    case 'UnmergeCase':
      return decideUnmerge(command, state)
    case 'ReleaseDuplicate':
      return decideRelease(command, state)
  }
}

/** The case ids that now reach this case: every duplicate merged into it, and theirs. */
export const aliasesOf = (merges: CaseMerges): string[] => Object.values(merges.absorbed).flatMap((a) => a.aliases)

const without = (notes: readonly Note[], ids: readonly string[]) => notes.filter((n) => !ids.includes(n.id))
const asNotes = (moved: readonly MovedNote[]): Note[] => moved.map((n) => ({ id: n.id, by: n.by, ...(n.text !== undefined && { text: n.text }), removed: n.removed }))

/** The fold of the merge events; the CaseUpdated that follows a merge or unmerge changes the status as any other. */
export function evolveCaseMerge<S extends Mergeable>(state: S, event: CaseMergeEvent): S {
  const { notes, merges } = state
  switch (event.type) {
    case 'CaseMerged': {
      const d = event.data
      const into: MergedInto = { caseId: d.into_case_id, comments: d.comment_ids, attachments: d.attachment_ids, watchers: d.watchers, aliases: d.aliases, status: state.fields.status, closedOn: state.fields.closed_on }
      return { ...state, notes: { comments: without(notes.comments, d.comment_ids), attachments: without(notes.attachments, d.attachment_ids) }, watchers: [], watches: {}, merges: { ...merges, into } }
    }
    case 'CaseUnmerged': {
      // What it had absorbed itself stayed on record while it was merged: its duplicates can be unmerged from it once it is back.
      const d = event.data
      const watchers = d.watchers.map((w) => w.profile_id)
      return { ...state, notes: { comments: [...notes.comments, ...asNotes(d.comments)], attachments: [...notes.attachments, ...asNotes(d.attachments)] }, watchers, watches: Object.fromEntries(d.watchers.map((w) => [w.profile_id, w])), merges: { ...merges, into: null } }
    }
    case 'CaseDuplicateAbsorbed': {
      const d = event.data
      const absorbed: Absorbed = { comments: d.comments.map((n) => n.id), attachments: d.attachments.map((n) => n.id), watchers: d.watchers.map((w) => w.profile_id), aliases: d.aliases }
      return {
        ...state,
        notes: { comments: [...notes.comments, ...asNotes(d.comments)], attachments: [...notes.attachments, ...asNotes(d.attachments)] },
        watchers: [...state.watchers, ...absorbed.watchers],
        watches: { ...state.watches, ...Object.fromEntries(d.watchers.map((w) => [w.profile_id, w])) },
        merges: { ...merges, absorbed: { ...merges.absorbed, [d.source_case_id]: absorbed } },
      }
    }
    case 'CaseDuplicateReleased': {
      const d = event.data
      const { [d.source_case_id]: _gone, ...absorbed } = merges.absorbed
      const watches = Object.fromEntries(Object.entries(state.watches).filter(([id]) => !d.watchers.includes(id)))
      return { ...state, notes: { comments: without(notes.comments, d.comment_ids), attachments: without(notes.attachments, d.attachment_ids) }, watchers: state.watchers.filter((id) => !d.watchers.includes(id)), watches, merges: { ...merges, absorbed } }
    }
  }
}
