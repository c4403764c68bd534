import t from 'tap'
import { caseDecider, mayReadCase } from '../../src/commands/case/case.ts'
import type { CaseCommand, CaseEvent, CaseInput } from '../../src/commands/case/case.ts'
import { CASE_STATUSES, emptyCase, summaryOf } from '../../src/commands/case/fields.ts'
import type { CaseFields } from '../../src/commands/case/fields.ts'
import type { ParentFacts } from '../../src/commands/case/parent.ts'
import { slaView } from '../../src/commands/case/sla.ts'
import type { SlaKind } from '../../src/commands/case/sla.ts'
import { escalationId } from '../../src/commands/case/escalation.ts'
import type { BusinessCalendar } from '../../src/commands/business-hours/calendar.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { fold } from '../../src/commands/decider.ts'
import { casePipelines } from '../../src/commands/pipeline/kinds.ts'
import type { MoveCase } from '../../src/commands/case/move.ts'
import type { CaseSolutionCommand } from '../../src/commands/case/solution-links.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { eventsOf } from '../helpers/events.ts'
import { spec } from '../helpers/given-when-then.ts'

const caseEvent = eventsOf<CaseEvent>()
const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const assignee: Actor = { profileId: 'assignee', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }
const apiKey: Actor = { profileId: null, isAdmin: false, isSuperuser: false }

const fields: CaseFields = { ...emptyCase(), name: 'Printer on fire', priority: 'High', account: 'acc1', assigned_to: ['assignee'] }
const created = caseEvent('CaseCreated', { case_id: 'c1', org_id: org, ...fields, sla_first_response_hours: 4, sla_resolution_hours: 24, created_by: 'creator', at })
const closedFields: CaseFields = { ...fields, status: 'Closed', closed_on: '2026-11-23' }
const closed = caseEvent('CaseUpdated', { changes: { status: { from: 'New', to: 'Closed' }, closed_on: { from: null, to: '2026-11-23' } }, case: summaryOf(closedFields), by: 'creator', at: later })
const create = (input: CaseInput, extra: Partial<Extract<CaseCommand, { type: 'CreateCase' }>> = {}): CaseCommand => ({ type: 'CreateCase', caseId: 'c1', orgId: org, actor: creator, input, customFields: [], calendarVersion: 3, at, ...extra })
const activated = (sla: SlaKind, target_minutes: number, when = at, priority: CaseFields['priority'] = 'High') => caseEvent('CaseSlaActivated', { sla, target_minutes, policy: 'priority_defaults', priority, calendar_version: 3, at: when })
/** A case opened with its two SLA instances (a High one: 4 and 24 hours). */
const opened = [created, activated('first_response', 240), activated('resolution', 1440)]
const update = (input: CaseInput, actor = creator, extra: Partial<Extract<CaseCommand, { type: 'UpdateCase' }>> = {}): CaseCommand => ({ type: 'UpdateCase', orgId: org, actor, input, replace: false, customFields: [], at: later, ...extra })
const updated = (changes: Extract<CaseEvent, { type: 'CaseUpdated' }>['data']['changes'], next: CaseFields, by = 'creator') => caseEvent('CaseUpdated', { changes, case: summaryOf(next), by, at: later })
const comment = (actor: Actor, commentId: string, internal?: boolean): CaseCommand => ({ type: 'AddComment', orgId: org, actor, commentId, comment: 'On it', ...(internal && { internal }), at: later })

t.test('create: the fields given, defaults for the rest, SLA targets by priority; once', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given([]).when(create({ name: 'Printer on fire', priority: 'High', account: 'acc1', assigned_to: ['assignee'], description: undefined })).then(opened, 'created, with its SLA instances in the calendar version of the command')
  kase.given([created]).when(create({ name: 'Again' })).then([], 'created twice, no event')
  const targets = (priority: 'Low' | 'Normal' | 'High' | 'Urgent') => (caseDecider.decide(create({ name: 'X', priority }), caseDecider.initialState())[0]!.data as { sla_first_response_hours: number; sla_resolution_hours: number })
  t.match(targets('Low'), { sla_first_response_hours: 24, sla_resolution_hours: 72 })
  t.match(targets('Normal'), { sla_first_response_hours: 8, sla_resolution_hours: 48 })
  t.match(targets('Urgent'), { sla_first_response_hours: 1, sla_resolution_hours: 4 }, 'the original\'s defaults: 24/8/4/1 and 72/48/24/4')
  kase.given([]).when(create({ name: '  ' })).thenRejects(ValidationError, { errors: { name: [String] } })
  kase.given([]).when(create({ name: 'Done already', status: 'Closed' })).thenRejects(ValidationError, { errors: { closed_on: ['Closed date is required when closing a case'] } })
  t.same(caseDecider.decide(create({ name: 'Done already', status: 'Closed', closed_on: '2026-11-22' }), caseDecider.initialState()).map((e) => e.type), ['CaseCreated', 'CaseSlaActivated', 'CaseSlaActivated', 'CaseSlaFulfilled'], 'a case may open Closed with its date, resolved at once')
})

t.test('update: only what changed; the account is fixed at creation; PUT clears what it leaves out but the parent', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given([created]).when(update({ status: 'Assigned', assigned_to: ['assignee', 'admin'], name: 'Printer on fire' })).then([updated({ status: { from: 'New', to: 'Assigned' }, assigned_to: { from: ['assignee'], to: ['assignee', 'admin'] } }, { ...fields, status: 'Assigned', assigned_to: ['assignee', 'admin'] })])
  kase.given([created]).when(update({ name: 'Printer on fire', assigned_to: ['assignee'] })).then([], 'no change, no event')
  kase.given([created]).when(update({ account: 'acc2' })).then([], "an update's account is ignored, as the original's read-only field")
  const linked = updated({ parent: { from: null, to: 'p1' } }, { ...fields, parent: 'p1' })
  kase.given([created, linked]).when(update({ name: 'Printer on fire' }, creator, { replace: true })).then([
    updated({ priority: { from: 'High', to: 'Normal' }, assigned_to: { from: ['assignee'], to: [] } }, { ...fields, priority: 'Normal', assigned_to: [], parent: 'p1' }),
  ], 'a PUT resets the fields it leaves out, keeps the account and the parent')
})

t.test('statuses: every one of the six may follow any other; closing needs closed_on, reopening clears it', async (t) => {
  const kase = spec(t, caseDecider)
  for (const status of CASE_STATUSES.filter((s) => s !== 'New' && s !== 'Closed')) {
    kase.given([created]).when(update({ status })).then([updated({ status: { from: 'New', to: status } }, { ...fields, status })], `New → ${status}`)
  }
  kase.given([created]).when(update({ status: 'Closed' })).thenRejects(ValidationError, { errors: { closed_on: [String] } })
  kase.given([created]).when(update({ status: 'Closed', closed_on: '2026-11-23' })).then([closed])
  const dated = updated({ closed_on: { from: null, to: '2026-11-20' } }, { ...fields, closed_on: '2026-11-20' })
  kase.given([created, dated]).when(update({ status: 'Closed' })).then([updated({ status: { from: 'New', to: 'Closed' } }, { ...fields, status: 'Closed', closed_on: '2026-11-20' })], 'a date already on the case satisfies the close')
  kase.given([created, closed]).when(update({ description: 'Burnt' })).then([updated({ description: { from: null, to: 'Burnt' } }, { ...closedFields, description: 'Burnt' })], 'a closed case is edited without a new date')
  kase.given([created, closed]).when(update({ status: 'Assigned' })).then([updated({ status: { from: 'Closed', to: 'Assigned' }, closed_on: { from: '2026-11-23', to: null } }, { ...fields, status: 'Assigned' })], 'reopening clears the closing date')
  kase.given([created, closed]).when(update({ status: 'Pending', closed_on: '2026-11-24' })).then([updated({ status: { from: 'Closed', to: 'Pending' }, closed_on: { from: '2026-11-23', to: null } }, { ...fields, status: 'Pending' })], 'even one the same body names')
})

t.test('who: admin, creator and assignee change a case; a watcher reads it; 404 for another organization or once deleted', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given([created]).when(update({ priority: 'Low' }, assignee)).then([updated({ priority: { from: 'High', to: 'Low' } }, { ...fields, priority: 'Low' }, 'assignee')])
  kase.given([created]).when(update({ priority: 'Low' }, admin)).then([updated({ priority: { from: 'High', to: 'Low' } }, { ...fields, priority: 'Low' }, 'admin')])
  kase.given([created]).when(update({ priority: 'Low' }, stranger)).thenRejects(ForbiddenError)
  kase.given([created]).when(update({ priority: 'Low' }, apiKey)).thenRejects(ForbiddenError)
  const watched = caseEvent('CaseWatched', { profile_id: 'stranger', subscribed_via: 'manual', by: 'admin', at })
  kase.given([created, watched]).when(update({ priority: 'Low' }, stranger)).thenRejects(ForbiddenError)
  const state = fold(caseDecider, [created, watched])
  t.ok(mayReadCase(state, stranger), 'a watcher may read the case')
  t.notOk(mayReadCase(fold(caseDecider, [created]), stranger), 'an uninvolved member may not')
  kase.given([created]).when({ ...update({ priority: 'Low' }), orgId: otherOrg }).thenRejects(NotFoundError)
  kase.given([]).when(update({ priority: 'Low' })).thenRejects(NotFoundError)
  const deleted = caseEvent('CaseDeleted', { by: 'creator', at: later })
  kase.given([created, deleted]).when(update({ priority: 'Low' })).thenRejects(NotFoundError)
})

t.test('delete: an admin or the creator, once; not an assignee', async (t) => {
  const kase = spec(t, caseDecider)
  const remove = (actor: Actor): CaseCommand => ({ type: 'DeleteCase', orgId: org, actor, at: later })
  kase.given([created]).when(remove(creator)).then([caseEvent('CaseDeleted', { by: 'creator', at: later })])
  kase.given([created]).when(remove(admin)).then([caseEvent('CaseDeleted', { by: 'admin', at: later })])
  kase.given([created]).when(remove(assignee)).thenRejects(ForbiddenError)
  kase.given([created, caseEvent('CaseDeleted', { by: 'creator', at: later })]).when(remove(creator)).then([], 'deleted twice, no event')
  kase.given([created]).when({ ...remove(admin), orgId: otherOrg }).thenRejects(NotFoundError)
})

t.test('the tree: no self-parent, no cycle, at most three levels, nothing merged', async (t) => {
  const kase = spec(t, caseDecider)
  const facts = (extra: Partial<ParentFacts> = {}): ParentFacts => ({ id: 'p1', status: 'New', chain: ['p1'], chainLoops: false, subtreeDepth: 0, ...extra })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts() })).then([updated({ parent: { from: null, to: 'p1' } }, { ...fields, parent: 'p1' })])
  kase.given([created]).when(update({ parent: 'c1' }, creator, { parent: facts({ id: 'c1', chain: ['c1'] }) })).thenRejects(ValidationError, { errors: { parent: ['A case cannot be its own parent.'] } })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts({ chain: ['p1', 'c1'] }) })).thenRejects(ValidationError, { errors: { parent: ['Linking would create a cycle.'] } })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts({ chain: ['p1', 'g1'], subtreeDepth: 1 }) })).thenRejects(ValidationError, { errors: { parent: ['Case tree is limited to 3 levels.'] } })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts({ chain: ['p1', 'g1'] }) })).then([updated({ parent: { from: null, to: 'p1' } }, { ...fields, parent: 'p1' })], 'a third level is allowed')
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts({ status: 'Duplicate' }) })).thenRejects(ValidationError, { errors: { parent: ['Cannot link to or from a merged case.'] } })
  kase.given([created]).when(update({ parent: 'p1', status: 'Duplicate' }, creator, { parent: facts() })).thenRejects(ValidationError, { errors: { parent: [String] } })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parent: facts({ chainLoops: true }) })).thenRejects(ValidationError, { errors: { parent: [/already contains a cycle/] } })
  kase.given([created]).when(update({ parent: 'p1' }, creator, { parentField: 'parent_id' })).thenRejects(ValidationError, { errors: { parent_id: ['Parent case not found in this organization.'] } })
})

t.test("replies: the first public comment of a member is the case's first response; internal notes and later comments are not", async (t) => {
  const kase = spec(t, caseDecider)
  const first = caseEvent('CaseCommentAdded', { comment_id: 'k1', comment: 'On it', by: 'assignee', at: later })
  const responded = caseEvent('CaseFirstResponded', { comment_id: 'k1', by: 'assignee', at: later })
  kase.given([created]).when(comment(assignee, 'k1')).then([first, responded])
  kase.given([created, first, responded]).when(comment(creator, 'k2')).then([caseEvent('CaseCommentAdded', { comment_id: 'k2', comment: 'On it', by: 'creator', at: later })], 'answered already')
  kase.given([created]).when(comment(assignee, 'k1', true)).then([caseEvent('CaseCommentAdded', { comment_id: 'k1', comment: 'On it', by: 'assignee', internal: true, at: later })], 'a note to the team is no answer')
  kase.given([created, first, responded]).when(comment(assignee, 'k1')).then([], 'the same comment twice, no event')
  kase.given([created]).when(comment(stranger, 'k1')).thenRejects(ForbiddenError)
  kase.given([created, caseEvent('CaseWatched', { profile_id: 'stranger', subscribed_via: 'manual', by: 'admin', at })]).when(comment(stranger, 'k1')).thenRejects(ForbiddenError)
})

t.test("the portal's customer (a contact caller of the policy) replies to a case naming them, and only to one; it is no first response", async (t) => {
  const kase = spec(t, caseDecider)
  const theirs = caseEvent('CaseCreated', { ...created.data, contacts: ['peter'] })
  const peter: Actor = { profileId: null, isAdmin: false, isSuperuser: false, contactId: 'peter' }
  const milton: Actor = { ...peter, contactId: 'milton' }
  kase.given([theirs]).when(comment(peter, 'k1')).then([caseEvent('CaseCommentAdded', { comment_id: 'k1', comment: 'On it', by: null, at: later })])
  kase.given([theirs]).when(comment(milton, 'k1')).thenRejects(ForbiddenError)
  kase.given([created]).when(comment(peter, 'k1')).thenRejects(ForbiddenError)
  t.ok(mayReadCase(caseDecider.evolve(caseDecider.initialState(), theirs), peter), 'peter reads it')
  t.notOk(mayReadCase(caseDecider.evolve(caseDecider.initialState(), theirs), milton), 'milton does not')
})

t.test('watching: whoever may read follows and unfollows, once each', async (t) => {
  const kase = spec(t, caseDecider)
  const watch = (actor: Actor, type: 'WatchCase' | 'UnwatchCase' = 'WatchCase'): CaseCommand => ({ type, orgId: org, actor, at: later })
  const watched = caseEvent('CaseWatched', { profile_id: 'admin', subscribed_via: 'manual', by: 'admin', at: later })
  kase.given([created]).when(watch(admin)).then([watched])
  kase.given([created, watched]).when(watch(admin)).then([], 'already watching')
  kase.given([created, watched]).when(watch(admin, 'UnwatchCase')).then([caseEvent('CaseUnwatched', { profile_id: 'admin', by: 'admin', at: later })])
  kase.given([created]).when(watch(assignee, 'UnwatchCase')).then([], 'not watching, nothing to stop')
  kase.given([created]).when(watch(stranger)).thenRejects(ForbiddenError)
  kase.given([created]).when({ ...watch(admin), orgId: otherOrg }).thenRejects(NotFoundError)
})

t.test('solutions: an admin, the creator or an assignee links and unlinks a live solution, once each; a merged duplicate refuses', async (t) => {
  const kase = spec(t, caseDecider)
  const solution = { id: 's1', live: true }
  const link = (actor: Actor, type: CaseSolutionCommand['type'] = 'LinkCaseSolution', extra: Partial<CaseSolutionCommand> = {}): CaseCommand => ({ type, orgId: org, actor, solution, at: later, ...extra })
  const linked = caseEvent('CaseSolutionLinked', { solution_id: 's1', by: 'assignee', at: later })
  kase.given([created]).when(link(assignee)).then([linked])
  kase.given([created, linked]).when(link(admin)).then([], 'already linked')
  kase.given([created, linked]).when(link(creator, 'UnlinkCaseSolution')).then([caseEvent('CaseSolutionUnlinked', { solution_id: 's1', by: 'creator', at: later })])
  kase.given([created, linked, caseEvent('CaseSolutionUnlinked', { solution_id: 's1', by: 'creator', at: later })]).when(link(admin, 'UnlinkCaseSolution')).then([], 'not linked any more, nothing to unlink')
  kase.given([created]).when(link(admin, 'UnlinkCaseSolution')).then([], 'never linked')
  kase.given([created, linked]).when(link(admin, 'LinkCaseSolution', { solution: { id: 's2', live: true } })).then([caseEvent('CaseSolutionLinked', { solution_id: 's2', by: 'admin', at: later })], 'another solution beside it')
  const watchedBy = caseEvent('CaseWatched', { profile_id: 'stranger', subscribed_via: 'manual', by: 'stranger', at })
  // A watcher reads the case but may not change it; refused before the solution is looked at.
  kase.given([created, watchedBy]).when(link(stranger)).thenRejects(ForbiddenError)
  kase.given([created]).when(link(admin, 'LinkCaseSolution', { solution: { id: 'gone', live: false } })).thenRejects(NotFoundError, { errors: 'Solution not found' })
  kase.given([created]).when(link(stranger, 'LinkCaseSolution', { solution: { id: 'gone', live: false } })).thenRejects(ForbiddenError)
  kase.given([created]).when(link(admin, 'LinkCaseSolution', { orgId: otherOrg })).thenRejects(NotFoundError)
  kase.given([created, caseEvent('CaseDeleted', { by: 'creator', at })]).when(link(admin)).thenRejects(NotFoundError)
  const merged = caseEvent('CaseMerged', { into_case_id: 'c2', comment_ids: [], attachment_ids: [], watchers: [], aliases: [], by: 'admin', at })
  kase.given([created, merged]).when(link(admin)).thenRejects(ValidationError, { errors: 'This ticket has been merged into another: unmerge it first.' })
  t.same(fold(caseDecider, [created, linked]).solutions, ['s1'], 'the case keeps the ids it links')
})

t.test('moves on the board: a stage sets the status it stands for; into Closed dates the case, out of it clears the date', async (t) => {
  const kase = spec(t, caseDecider)
  const stageIds = ['s1', 's2', 's3', 's4']
  const pipeline = { id: 'p1', state: fold(casePipelines.decider, casePipelines.decider.decide({ type: 'CreatePipeline', pipelineId: 'p1', orgId: org, name: 'Support', isDefault: false, stageIds, actorId: null, at }, fold(casePipelines.decider, []))) }
  const move = (stage: string | null | undefined, extra: Partial<MoveCase> = {}): CaseCommand => ({ type: 'MoveCase', orgId: org, actor: assignee, at: later, day: '2026-11-23', stage: stage === undefined ? undefined : stage === null ? null : { id: stage, pipeline }, kanbanOrder: null, ...extra })
  const place = (stage: string, stage_id: string, stage_kind: 'open' | 'won' | 'lost' = 'open') => ({ pipeline_id: 'p1', stage, stage_id, stage_kind })
  const order = Date.parse(at)
  const moved = (data: Partial<Extract<CaseEvent, { type: 'CaseMoved' }>['data']>, next: CaseFields) => caseEvent('CaseMoved', { from: null, to: null, kanban_order: order, case: summaryOf(next), by: 'assignee', at: later, ...data })
  kase.given([created]).when(move('s2')).then([moved({ to: place('IN_PROGRESS', 's2'), status: { from: 'New', to: 'Assigned' } }, { ...fields, status: 'Assigned' })], 'an open stage past the first is Assigned')
  kase.given([created]).when(move('s3')).then([moved({ to: place('RESOLVED', 's3', 'won'), status: { from: 'New', to: 'Closed' }, closed_on: { from: null, to: '2026-11-23' } }, { ...fields, status: 'Closed' })], 'resolved closes it, dated the day of the move')
  kase.given([created]).when(move('s4')).then([moved({ to: place('REJECTED', 's4', 'lost'), status: { from: 'New', to: 'Rejected' } }, { ...fields, status: 'Rejected' })])
  kase.given([created, closed]).when(move(undefined, { status: 'Pending', kanbanOrder: 5 })).then([moved({ status: { from: 'Closed', to: 'Pending' }, closed_on: { from: '2026-11-23', to: null }, kanban_order: 5 }, { ...fields, status: 'Pending' })], 'out of Closed on the status board clears the date')
  kase.given(opened).when(move('s3')).then([moved({ to: place('RESOLVED', 's3', 'won'), status: { from: 'New', to: 'Closed' }, closed_on: { from: null, to: '2026-11-23' } }, { ...fields, status: 'Closed' }), caseEvent('CaseSlaFulfilled', { sla: 'resolution', at: later })], 'a move into Closed resolves, as closing does')
  kase.given([created]).when(move(undefined, { status: 'New' })).then([], 'already there')
  kase.given([created]).when(move('nope')).thenRejects(ValidationError, { errors: { stage_id: [String] } })
  kase.given([created]).when(move('s2', { actor: stranger })).thenRejects(ForbiddenError)
})

t.test('the SLA instances: activated on opening, paused in Pending, fulfilled by the first answer and by closing, retargeted by a priority, a new resolution on reopening', async (t) => {
  const kase = spec(t, caseDecider)
  const sla = (type: 'CaseSlaPaused' | 'CaseSlaResumed' | 'CaseSlaFulfilled', kind: SlaKind, when = later) => caseEvent(type, { sla: kind, at: when })
  const status = (from: CaseFields['status'], to: CaseFields['status'], extra: Partial<CaseFields> = {}) => updated({ status: { from, to } }, { ...fields, status: to, ...extra })
  const pending = [status('New', 'Pending'), sla('CaseSlaPaused', 'first_response'), sla('CaseSlaPaused', 'resolution')]
  kase.given(opened).when(update({ status: 'Pending' })).then(pending, 'Pending pauses both')
  kase.given([...opened, ...pending]).when(update({ description: 'Still waiting' })).then([updated({ description: { from: null, to: 'Still waiting' } }, { ...fields, status: 'Pending', description: 'Still waiting' })], 'staying in Pending pauses nothing again')
  kase.given([...opened, ...pending]).when(update({ status: 'Assigned' })).then([status('Pending', 'Assigned'), sla('CaseSlaResumed', 'first_response'), sla('CaseSlaResumed', 'resolution')], 'leaving it resumes both')
  const closing = updated({ status: { from: 'Pending', to: 'Closed' }, closed_on: { from: null, to: '2026-11-23' } }, { ...closedFields })
  kase.given([...opened, ...pending]).when(update({ status: 'Closed', closed_on: '2026-11-23' })).then([closing, sla('CaseSlaFulfilled', 'resolution'), sla('CaseSlaResumed', 'first_response')], 'closing from Pending resolves; the unanswered first response runs on, as the original')
  const first = caseEvent('CaseCommentAdded', { comment_id: 'k1', comment: 'On it', by: 'assignee', at: later })
  const responded = caseEvent('CaseFirstResponded', { comment_id: 'k1', by: 'assignee', at: later })
  kase.given(opened).when(comment(assignee, 'k1')).then([first, responded, sla('CaseSlaFulfilled', 'first_response')], 'the first public answer fulfils the first response')
  kase.given([...opened, ...pending]).when(comment(assignee, 'k1')).then([first, responded, sla('CaseSlaFulfilled', 'first_response')], 'also while paused')
  const retargeted = (kind: SlaKind, target_minutes: number) => caseEvent('CaseSlaRetargeted', { sla: kind, target_minutes, policy: 'priority_defaults', priority: 'Urgent', at: later })
  const urgent = updated({ priority: { from: 'High', to: 'Urgent' } }, { ...fields, priority: 'Urgent' })
  kase.given(opened).when(update({ priority: 'Urgent' })).then([urgent, retargeted('first_response', 60), retargeted('resolution', 240)], "a new priority retargets both to its defaults")
  kase.given([...opened, first, responded, sla('CaseSlaFulfilled', 'first_response')]).when(update({ priority: 'Urgent' })).then([urgent, retargeted('resolution', 240)], 'a fulfilled instance keeps its target')
  const closedOpen = [...opened, closed, sla('CaseSlaFulfilled', 'resolution')]
  kase.given(closedOpen).when(update({ status: 'Assigned' })).then([updated({ status: { from: 'Closed', to: 'Assigned' }, closed_on: { from: '2026-11-23', to: null } }, { ...fields, status: 'Assigned' }), activated('resolution', 1440, later)], 'reopening starts a new resolution instance, in the calendar version of the last')
  kase.given(closedOpen).when(update({ status: 'Pending' })).then([updated({ status: { from: 'Closed', to: 'Pending' }, closed_on: { from: '2026-11-23', to: null } }, { ...fields, status: 'Pending' }), activated('resolution', 1440, later), sla('CaseSlaPaused', 'first_response'), sla('CaseSlaPaused', 'resolution')], 'into Pending: new, and paused at once')
  kase.given([created]).when(update({ status: 'Pending' })).then([status('New', 'Pending')], 'a case opened before SLA instances has none to pause')
})

t.test('the SLA view: the one clock over business hours; a deadline crosses a weekend and a holiday; a pause costs only business time', async (t) => {
  const nine = [{ open: 9 * 60, close: 17 * 60 }]
  const calendar: BusinessCalendar = { timeZone: 'Europe/Berlin', week: { monday: nine, tuesday: nine, wednesday: nine, thursday: nine, friday: nine, saturday: [], sunday: [] }, holidays: [{ date: '2026-11-30' }] }
  const calendars = () => calendar
  // Friday 27 November, 15:00 Berlin (14:00Z): a High case, 4 business hours to answer, 24 to resolve.
  const friday = '2026-11-27T14:00:00.000Z'
  const history = [{ ...created, data: { ...created.data, at: friday } }, activated('first_response', 240, friday), activated('resolution', 1440, friday)]
  const view = (events: CaseEvent[], now: string) => slaView(fold(caseDecider, events).sla, calendars, new Date(now))
  t.match(view(history, '2026-11-27T15:00:00Z'), { first_response_sla_deadline: new Date('2026-12-01T10:00:00Z'), is_sla_first_response_breached: false }, 'two hours on Friday, the weekend and the Monday holiday off: Tuesday 11:00 Berlin')
  t.match(view(history, '2026-11-30T16:00:00Z'), { is_sla_first_response_breached: false }, 'nothing counts on the holiday')
  t.match(view(history, '2026-12-01T10:30:00Z'), { is_sla_first_response_breached: true, is_sla_resolution_breached: false })
  const paused = [...history, caseEvent('CaseSlaPaused', { sla: 'first_response', at: '2026-11-27T15:00:00.000Z' }), caseEvent('CaseSlaResumed', { sla: 'first_response', at: '2026-12-01T09:00:00.000Z' })]
  t.match(view(paused, '2026-12-01T09:00:00Z'), { first_response_sla_deadline: new Date('2026-12-01T12:00:00Z') }, 'paused from Friday 16:00 to Tuesday 10:00 Berlin: two business hours paused (Friday\'s last, Tuesday\'s first), the deadline two hours later')
  t.match(view([created], '2026-12-01T09:00:00Z'), { first_response_sla_deadline: null, is_sla_first_response_breached: false }, 'no instances, no deadline')
})

t.test('escalation: an open case breached now, level by level, at most three, an hour apart; its id from the case and the level', async (t) => {
  const kase = spec(t, caseDecider)
  const around = () => ({ timeZone: 'UTC', week: { monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [], sunday: [] }, holidays: [] })
  const escalate = (when: string): CaseCommand => ({ type: 'EscalateCase', orgId: org, calendars: around, policies: {}, active: [], at: when })
  const escalated = (level: number, when: string, breached: SlaKind[] = ['first_response']) => caseEvent('CaseEscalated', { escalation_id: escalationId('c1', level), level, breached, at: when })
  // Around the clock: the High case's first response (4 h) is due at 13:00, its resolution (24 h) the next day at 09:00.
  kase.given(opened).when(escalate('2026-11-22T13:00:00.000Z')).then([], 'at the deadline itself: not breached yet')
  kase.given(opened).when(escalate('2026-11-22T13:30:00.000Z')).then([escalated(1, '2026-11-22T13:30:00.000Z')])
  const once = [...opened, escalated(1, '2026-11-22T13:30:00.000Z')]
  kase.given(once).when(escalate('2026-11-22T14:29:00.000Z')).then([], 'within the hour: nothing')
  kase.given(once).when(escalate('2026-11-23T09:30:00.000Z')).then([escalated(2, '2026-11-23T09:30:00.000Z', ['first_response', 'resolution'])], 'both breached')
  const thrice = [...once, escalated(2, '2026-11-22T14:30:00.000Z'), escalated(3, '2026-11-22T15:30:00.000Z')]
  kase.given(thrice).when(escalate('2026-11-23T12:00:00.000Z')).then([], 'three is the cap')
  const answered = [...opened, caseEvent('CaseSlaFulfilled', { sla: 'first_response', at: '2026-11-22T10:00:00.000Z' })]
  kase.given(answered).when(escalate('2026-11-22T13:30:00.000Z')).then([], 'answered in time: nothing breached')
  kase.given([...opened, closed, caseEvent('CaseSlaFulfilled', { sla: 'resolution', at: later })]).when(escalate('2026-11-23T12:00:00.000Z')).then([], 'a closed case is not escalated')
  kase.given([...opened, caseEvent('CaseDeleted', { by: 'creator', at })]).when(escalate('2026-11-23T12:00:00.000Z')).then([], 'nor a deleted one')
  kase.given(opened).when({ ...escalate('2026-11-23T12:00:00.000Z'), orgId: otherOrg }).then([], "nor another organization's")
  t.not(escalationId('c1', 1), escalationId('c1', 2))
})

t.test("escalation acts on its priority's active policy: notify the target and the team, reassign to the target, active members only", async (t) => {
  const kase = spec(t, caseDecider)
  const around = () => ({ timeZone: 'UTC', week: { monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [], sunday: [] }, holidays: [] })
  const when = '2026-11-23T09:30:00.000Z'
  const escalate = (policies: Extract<CaseCommand, { type: 'EscalateCase' }>['policies'], active = ['boss', 'lead', 'mate']): CaseCommand => ({ type: 'EscalateCase', orgId: org, calendars: around, policies, active, at: when })
  const escalated = (extra: object) => caseEvent('CaseEscalated', { escalation_id: escalationId('c1', 1), level: 1, breached: ['first_response', 'resolution'], ...extra, at: when })
  const both = (action: 'notify' | 'reassign' | 'notify_and_reassign', team: string[] = []) => ({ High: { first_response: { action, target: 'boss' }, resolution: null, team } })
  const reassigned = (to: string[]) => caseEvent('CaseUpdated', { changes: { assigned_to: { from: ['assignee'], to } }, case: summaryOf({ ...fields, assigned_to: to }), by: null, at: when })
  const boss = [{ sla: 'first_response' as const, action: 'notify' as const, target: 'boss' }]
  kase.given(opened).when(escalate(both('notify', ['mate', 'boss', 'gone']))).then([escalated({ actions: boss, notify: ['boss', 'mate'] })], 'notify: the target and the active members of the team, once each')
  kase.given(opened).when(escalate(both('reassign', ['mate']))).then([escalated({ actions: [{ ...boss[0], action: 'reassign' }], notify: [] }), reassigned(['boss'])], 'reassign: the target alone is assigned, by the system; the team is not told')
  kase.given(opened).when(escalate(both('notify_and_reassign'))).then([escalated({ actions: [{ ...boss[0], action: 'notify_and_reassign' }], notify: ['boss'] }), reassigned(['boss'])])
  kase.given(opened).when(escalate(both('notify_and_reassign', ['mate']), ['mate'])).then([escalated({ actions: [{ ...boss[0], action: 'notify_and_reassign' }], notify: ['mate'] })], 'a deactivated target is neither assigned nor told (the original assigned them)')
  const two = { High: { first_response: { action: 'reassign' as const, target: 'boss' }, resolution: { action: 'reassign' as const, target: 'lead' }, team: [] } }
  kase.given(opened).when(escalate(two)).then([escalated({ actions: [{ sla: 'first_response', action: 'reassign', target: 'boss' }, { sla: 'resolution', action: 'reassign', target: 'lead' }], notify: [] }), reassigned(['lead'])], "both reassigning: the resolution's target, as the original's second set")
  kase.given(opened).when(escalate({ Low: both('notify').High })).then([escalated({})], "another priority's policy: the escalation only")
  kase.given(opened).when(escalate({ High: { first_response: null, resolution: null, team: ['mate'] } })).then([escalated({})], 'a policy without targets: the escalation only, the team is not told on its own')
})
