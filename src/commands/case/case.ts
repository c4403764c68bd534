import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../caller.ts'
import { customValuesAfter } from '../custom-field/values.ts'
import type { CustomValuesInput, Definition } from '../custom-field/values.ts'
import type { Decider } from '../decider.ts'
import { decideNote, evolveNotes, isNoteCommand, isNoteEvent, noNotes } from '../notes.ts'
import type { NoteCommand, NoteEvent, Notes } from '../notes.ts'
import { changedFields, replacing } from '../record.ts'
import { streamCategory } from '../streams.ts'
import { emptyCase, summaryOf } from './fields.ts'
import type { CaseFields, CaseSummary } from './fields.ts'
import { decideEscalation, evolveEscalations, noEscalations } from './escalation.ts'
import type { CaseEscalated, EscalateCase, Escalations } from './escalation.ts'
import { checkApprovalGate } from '../case-approval/gate.ts'
import type { ApprovalGate } from '../case-approval/gate.ts'
import { decideCaseMove } from './move.ts'
import type { CaseMoved, CasePlacement, MoveCase } from './move.ts'
import { decideReceivedEmail } from './inbound.ts'
import type { CaseEmailReceived, ReceiveCaseEmail } from './inbound.ts'
import { checkParent } from './parent.ts'
import { decideCaseMerge, evolveCaseMerge, isMergeCommand, isMergeEvent, noMerges } from './merge.ts'
import type { CaseMergeCommand, CaseMergeEvent, CaseMerges, Watch } from './merge.ts'
import { decideSolutionLink, evolveSolutionLinks, isSolutionLinkEvent } from './solution-links.ts'
import type { CaseSolutionCommand, CaseSolutionEvent, SolutionLinks } from './solution-links.ts'
import type { ParentFacts } from './parent.ts'
import { evolveSlaClocks, firstResponseFulfilled, isSlaEvent, noSlaClocks, slaEventsOf, slaTargetsOf } from './sla.ts'
import type { CaseSlaEvent, SlaClocks, SlaTargets } from './sla.ts'

/**
 * A support case (the original's cases app): a ticket with a status, a priority, assignees, teams,
 * contacts, an account and a place in a problem → incident tree. One stream per case. Rules, from
 * the original's cases/access.py: an admin, the creator, an assignee or a watcher may read it; an
 * admin, the creator or an assignee may change, link and reply to it; only an admin or the creator
 * deletes it. Closing needs `closed_on`; leaving Closed clears it. The first public comment of a
 * member is the case's first response (the SLA's first target).
 */

export type CaseFieldChanges = { [K in keyof CaseFields]?: { from: CaseFields[K]; to: CaseFields[K] } }
export type WatchVia = 'manual' | 'mention' | 'auto_assignee' | 'auto_team'

// Events: the storage contract (never change a type name or data shape).
export type CaseEvent =
  | { type: 'CaseCreated'; data: CaseFields & SlaTargets & { case_id: string; org_id: string; created_by: string | null; at: string } }
  /** Only the fields that changed, each before and after, and the case as it now is. */
  | { type: 'CaseUpdated'; data: { changes: CaseFieldChanges; case: CaseSummary; by: string | null; at: string } }
  | { type: 'CaseDeleted'; data: { by: string | null; at: string } }
  /** The first public comment by a member: the moment the first-response target is met. */
  | { type: 'CaseFirstResponded'; data: { comment_id: string; by: string; at: string } }
  | { type: 'CaseWatched'; data: { profile_id: string; subscribed_via: WatchVia; by: string | null; at: string } }
  | { type: 'CaseUnwatched'; data: { profile_id: string; by: string | null; at: string } }
  | CaseMoved
  | CaseSlaEvent
  | CaseEscalated
  | CaseEmailReceived
  | CaseMergeEvent
  | CaseSolutionEvent
  | NoteEvent<'Case'>

/**
 * `kanbanOrder`: the card's position in its column; until a move sets it, the creation time in ms (as tasks). `sla`: its SLA instances' events (sla.ts).
 * `watches`: each watcher's way and time of watching (what a merge moves and an unmerge restores); `merges`: where it was merged, and what it absorbed (merge.ts).
 * `solutions`: the knowledge-base solutions it links (solution-links.ts).
 */
export type CaseState = { exists: boolean; id: string | null; orgId: string | null; createdBy: string | null; deleted: boolean; fields: CaseFields; notes: Notes; firstResponseAt: string | null; watchers: string[]; watches: Record<string, Watch>; placement: CasePlacement | null; kanbanOrder: number; sla: SlaClocks; escalations: Escalations; merges: CaseMerges; solutions: SolutionLinks }

export const initialCaseState = (): CaseState => ({ exists: false, id: null, orgId: null, createdBy: null, deleted: false, fields: emptyCase(), notes: noNotes(), firstResponseAt: null, watchers: [], watches: {}, placement: null, kanbanOrder: 0, sla: noSlaClocks(), escalations: noEscalations(), merges: noMerges(), solutions: [] })

export function evolveCase(state: CaseState, event: CaseEvent): CaseState {
  if (isNoteEvent('Case', event)) return { ...state, notes: evolveNotes('Case', state.notes, event) }
  if (isSlaEvent(event)) return { ...state, sla: evolveSlaClocks(state.sla, event) }
  if (isMergeEvent(event)) return evolveCaseMerge(state, event)
  if (isSolutionLinkEvent(event)) return { ...state, solutions: evolveSolutionLinks(state.solutions, event) }
  switch (event.type) {
    case 'CaseCreated': {
      const { case_id, org_id, created_by, at, sla_first_response_hours: _f, sla_resolution_hours: _r, ...fields } = event.data
      return { ...initialCaseState(), exists: true, id: case_id, orgId: org_id, createdBy: created_by, fields, kanbanOrder: Date.parse(at) }
    }
    case 'CaseUpdated':
      return { ...state, fields: applyChanges(state.fields, event.data.changes) }
    case 'CaseDeleted':
      return { ...state, deleted: true }
    case 'CaseFirstResponded':
      return { ...state, firstResponseAt: event.data.at }
    case 'CaseWatched':
      return { ...state, watchers: [...state.watchers, event.data.profile_id], watches: { ...state.watches, [event.data.profile_id]: { profile_id: event.data.profile_id, subscribed_via: event.data.subscribed_via, since: event.data.at } } }
    case 'CaseUnwatched': {
      const { [event.data.profile_id]: _gone, ...watches } = state.watches
      return { ...state, watchers: state.watchers.filter((id) => id !== event.data.profile_id), watches }
    }
    case 'CaseEscalated':
      return { ...state, escalations: evolveEscalations(state.escalations, event) }
    case 'CaseEmailReceived':
      return state
    case 'CaseMoved': {
      const { to, status, closed_on, kanban_order } = event.data
      return { ...state, placement: to, kanbanOrder: kanban_order, fields: { ...state.fields, ...(status && { status: status.to }), ...(closed_on && { closed_on: closed_on.to }) } }
    }
  }
}

/** The fields after a change set (the projector applies the same). */
export function applyChanges(fields: CaseFields, changes: CaseFieldChanges): CaseFields {
  const next = { ...fields }
  for (const [key, change] of Object.entries(changes)) (next as Record<string, unknown>)[key] = change.to
  return next
}

/** What a client may set: every field, custom values as sent (`cf_<key>` and `custom_fields`, checked here). */
export type CaseInput = Partial<Omit<CaseFields, 'custom_fields'>> & { custom?: CustomValuesInput }

/**
 * `customFields`: the organization's definitions for cases. `parent`: the facts of the parent the
 * input names when it names a new one (the use case looks them up); `parentField`: the body field a
 * refusal names (`parent`, or `parent_id` on link/).
 */
type WriteFacts = { orgId: string; actor: Actor; input: CaseInput; customFields: readonly Definition[]; parent?: ParentFacts; parentField?: string; at: string } & Gated
/** `approvalGate`: the approval rules and approvals a close is checked against (case-approval/gate.ts), given by every use case that may close. */
type Gated = { approvalGate?: ApprovalGate }

export type CaseCommand =
  /** `calendarVersion`: the organization's business calendar version now in force, the one its SLA instances measure in. */
  | ({ type: 'CreateCase'; caseId: string; calendarVersion: number } & WriteFacts)
  /** PUT (`replace`: fields left out take their empty value, except `account`, fixed at creation, and `parent`, changed only when named) or PATCH. */
  | ({ type: 'UpdateCase'; replace: boolean } & WriteFacts)
  | { type: 'DeleteCase'; orgId: string; actor: Actor; at: string }
  | { type: 'WatchCase'; orgId: string; actor: Actor; at: string }
  | { type: 'UnwatchCase'; orgId: string; actor: Actor; at: string }
  | (MoveCase & Gated)
  | EscalateCase
  /** A customer's email (inbound mail); `open`: it opens the case in the same append (no thread found). */
  | (ReceiveCaseEmail & { open?: Omit<Extract<CaseCommand, { type: 'CreateCase' }>, 'type'> })
  | CaseMergeCommand
  | CaseSolutionCommand
  | NoteCommand

function visible(state: CaseState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError('Case not found')
}

/** What the access rules read of a case: its creator, assignees, watchers and contacts (the portal's customer). */
type Involved = { createdBy: string | null; fields: Pick<CaseFields, 'assigned_to'> & Partial<Pick<CaseFields, 'contacts'>>; watchers: readonly string[] }
/** Who may read: an admin, the creator, an assignee or a watcher (cases/access.py `read`); in the portal, a contact of the case. */
export const mayReadCase = (state: Involved, actor: Actor): boolean => mayAccess('Case', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to, watchers: state.watchers, contacts: state.fields.contacts }, actor)
/** Who may change, link and reply: an admin, the creator or an assignee; watching is following, not holding the keys (`write`). A portal contact of the case replies (the portal's only write). */
export const mayWriteCase = (state: Omit<Involved, 'watchers'>, actor: Actor): boolean => mayAccess('Case', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to, contacts: state.fields.contacts }, actor)

function assertMayWrite(state: CaseState, actor: Actor): void {
  if (!mayWriteCase(state, actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may change this case')
}

const writable = ({ custom: _custom, ...fields }: CaseInput): Partial<CaseFields> => fields
const withoutUndefined = <T extends object>(input: T): Partial<T> => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>

/** The rules on the case as it would be: a name; a closing date to enter Closed; a parent the tree rules allow. */
function checkOutcome(command: WriteFacts, caseId: string, before: CaseFields | null, next: CaseFields): void {
  if (!next.name.trim()) throw new ValidationError({ name: ['This field is required.'] })
  const entersClosed = next.status === 'Closed' && before?.status !== 'Closed'
  if (entersClosed && !next.closed_on) throw new ValidationError({ closed_on: ['Closed date is required when closing a case'] })
  if (next.parent !== null && next.parent !== before?.parent) checkParent(caseId, next.status, command.parent, next.parent, command.parentField ?? 'parent')
}

function decideCreate(command: Extract<CaseCommand, { type: 'CreateCase' }>, state: CaseState): CaseEvent[] {
  if (state.exists) return []
  const fields: CaseFields = { ...emptyCase(), ...withoutUndefined(writable(command.input)), custom_fields: customValuesAfter(command.customFields, {}, command.input.custom, 'create') }
  checkOutcome(command, command.caseId, null, fields)
  return [
    { type: 'CaseCreated', data: { case_id: command.caseId, org_id: command.orgId, ...fields, ...slaTargetsOf(fields.priority), created_by: command.actor.profileId, at: command.at } },
    ...slaEventsOf(state.sla, null, fields, command.at, command.calendarVersion),
  ]
}

function decideUpdate(command: Extract<CaseCommand, { type: 'UpdateCase' }>, state: CaseState): CaseEvent[] {
  visible(state, command.orgId)
  assertMayWrite(state, command.actor)
  const current = state.fields
  const custom_fields = customValuesAfter(command.customFields, current.custom_fields, command.input.custom, command.replace ? 'replace' : 'patch')
  const input = writable(command.input)
  const body = command.replace ? replacing(emptyCase(), { ...input, parent: input.parent === undefined ? current.parent : input.parent }) : input
  const requested: Partial<CaseFields> = { ...body, account: current.account, custom_fields }
  const next = { ...current, ...changedFields(current, requested) }
  // Leaving Closed clears the closing date, so a reopened case cannot be closed again on last month's (the original's signals.py).
  if (current.status === 'Closed' && next.status !== 'Closed') next.closed_on = null
  checkOutcome(command, state.id ?? '', current, next)
  const changes: CaseFieldChanges = {}
  for (const key of Object.keys(changedFields(current, next)) as (keyof CaseFields)[]) (changes as Record<string, unknown>)[key] = { from: current[key], to: next[key] }
  if (!Object.keys(changes).length) return []
  return [{ type: 'CaseUpdated', data: { changes, case: summaryOf(next), by: command.actor.profileId, at: command.at } }, ...slaEventsOf(state.sla, current, next, command.at)]
}

function decideDelete(command: Extract<CaseCommand, { type: 'DeleteCase' }>, state: CaseState): CaseEvent[] {
  if (state.exists && state.orgId === command.orgId && state.deleted) return []
  visible(state, command.orgId)
  const { actor } = command
  if (!actor.isAdmin && (actor.profileId === null || actor.profileId !== state.createdBy)) throw new ForbiddenError('Only an admin or the creator may delete this case')
  return [{ type: 'CaseDeleted', data: { by: actor.profileId, at: command.at } }]
}

/** Watching is the caller's own subscription: whoever may read the case; a repeat changes nothing. */
function decideWatch(command: Extract<CaseCommand, { type: 'WatchCase' | 'UnwatchCase' }>, state: CaseState): CaseEvent[] {
  visible(state, command.orgId)
  const { actor, at } = command
  if (!mayReadCase(state, actor)) throw new ForbiddenError('Only whoever may see this case may watch it')
  if (actor.profileId === null) throw new ForbiddenError('Only a member may watch a case')
  const watching = state.watchers.includes(actor.profileId)
  if (command.type === 'WatchCase') return watching ? [] : [{ type: 'CaseWatched', data: { profile_id: actor.profileId, subscribed_via: 'manual', by: actor.profileId, at } }]
  return watching ? [{ type: 'CaseUnwatched', data: { profile_id: actor.profileId, by: actor.profileId, at } }] : []
}

/** A note; the first public comment of a member also stamps the first response (an internal note is not an answer to the customer). */
function decideCaseNote(command: NoteCommand, state: CaseState): CaseEvent[] {
  visible(state, command.orgId)
  const events: CaseEvent[] = decideNote('Case', state.notes, command, mayWriteCase(state, command.actor))
  const by = command.actor.profileId
  const answers = command.type === 'AddComment' && !command.internal && events.length > 0 && by !== null && state.firstResponseAt === null
  if (answers) events.push({ type: 'CaseFirstResponded', data: { comment_id: command.commentId, by, at: command.at } }, ...firstResponseFulfilled(state.sla, command.at))
  return events
}

/** A move, and the SLA events of the status it lands in. */
function decideMove(command: MoveCase, state: CaseState): CaseEvent[] {
  const moved = decideCaseMove(command, state)
  const status = moved[0]?.data.status?.to
  return status ? [...moved, ...slaEventsOf(state.sla, state.fields, { ...state.fields, status }, command.at)] : moved
}

/** The system's own changes to a case (an escalation's reassignment), as routing's. */
const SYSTEM: Actor = { profileId: null, isAdmin: true, isSuperuser: false }

/** An escalation, and in the same decision the reassignment its policy makes (commands/case/escalation.ts). */
function decideEscalate(command: EscalateCase, state: CaseState): CaseEvent[] {
  const decided = decideEscalation(command, state)
  if (!decided) return []
  const { escalated, reassignTo } = decided
  if (reassignTo === null) return [escalated]
  return [escalated, ...decideUpdate({ type: 'UpdateCase', orgId: command.orgId, actor: SYSTEM, input: { assigned_to: [reassignTo] }, replace: false, customFields: [], at: command.at }, state)]
}

/** A merged duplicate is read-only until unmerged: what happens to the ticket happens on the case it was merged into. */
function assertNotMerged(command: CaseCommand, state: CaseState): void {
  if (!state.merges.into || command.type === 'EscalateCase') return
  visible(state, command.orgId)
  throw new ValidationError('This ticket has been merged into another: unmerge it first.')
}

/** The decision, and the approval gate on a case it closes (judged on the case as closed). */
export function decideCase(command: CaseCommand, state: CaseState): CaseEvent[] {
  if (isMergeCommand(command)) return decideCaseMerge(command, state)
  assertNotMerged(command, state)
  const events = decideCaseCommand(command, state)
  if ('approvalGate' in command && command.approvalGate && state.fields.status !== 'Closed') {
    const after = events.reduce(evolveCase, state)
    if (after.fields.status === 'Closed') checkApprovalGate(command.approvalGate, after.fields)
  }
  return events
}

function decideCaseCommand(command: Exclude<CaseCommand, CaseMergeCommand>, state: CaseState): CaseEvent[] {
  if (isNoteCommand(command)) return decideCaseNote(command, state)
  switch (command.type) {
    case 'CreateCase':
      return decideCreate(command, state)
    case 'UpdateCase':
      return decideUpdate(command, state)
    case 'DeleteCase':
      return decideDelete(command, state)
    case 'WatchCase':
    case 'UnwatchCase':
      return decideWatch(command, state)
    case 'EscalateCase':
      // A scheduled process asks: a case gone or not its organization's has nothing to escalate.
      return state.exists && state.orgId === command.orgId && !state.deleted ? decideEscalate(command, state) : []
    case 'MoveCase':
      visible(state, command.orgId)
      assertMayWrite(state, command.actor)
      return decideMove(command, state)
    case 'LinkCaseSolution':
    case 'UnlinkCaseSolution':
      visible(state, command.orgId)
      assertMayWrite(state, command.actor)
      return decideSolutionLink(command, state.solutions)
    case 'ReceiveCaseEmail': {
      const opened = command.open ? decideCreate({ ...command.open, type: 'CreateCase' }, state) : []
      const now = opened.reduce(evolveCase, state)
      return [...opened, ...decideReceivedEmail(command, { ...now, attachmentIds: now.notes.attachments.map((a) => a.id) }, opened.length > 0)]
    }
  }
}

export const caseDecider: Decider<CaseCommand, CaseState, CaseEvent> = { initialState: initialCaseState, evolve: evolveCase, decide: decideCase }

export const caseStreams = streamCategory('case')
export const caseStream = caseStreams.stream
