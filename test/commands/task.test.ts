import t from 'tap'
import { fold } from '../../src/commands/decider.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { taskPipelines } from '../../src/commands/pipeline/kinds.ts'
import type { PipelineEvent, PipelineState } from '../../src/commands/pipeline/pipeline.ts'
import { emptyTask, summaryOf } from '../../src/commands/task/fields.ts'
import type { MoveTask, TaskPlacement } from '../../src/commands/task/move.ts'
import { taskDecider } from '../../src/commands/task/task.ts'
import type { TaskCommand, TaskEvent, TaskInput } from '../../src/commands/task/task.ts'
import { CustomFieldsError } from '../../src/commands/custom-field/values.ts'
import type { Definition } from '../../src/commands/custom-field/values.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const assignee: Actor = { profileId: 'assignee', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }

const fields = { ...emptyTask(), title: 'Call Acme', priority: 'High' as const, due_date: '2026-11-30', account: 'acc1', assigned_to: ['assignee'] }
const created: TaskEvent = { type: 'TaskCreated', data: { task_id: 't1', org_id: org, ...fields, created_by: 'creator', at } }
const update = (input: TaskInput, actor = creator, replace = false, customFields: readonly Definition[] = []): TaskCommand => ({ type: 'UpdateTask', orgId: org, actor, input, replace, customFields, at: later })

const stageIds = ['s1', 's2', 's3', 's4', 's5']
const pipelineState = (...events: PipelineEvent[]): PipelineState =>
  fold(taskPipelines.decider, [...taskPipelines.decider.decide({ type: 'CreatePipeline', pipelineId: 'p1', orgId: org, name: 'Dev', isDefault: false, stageIds, actorId: null, at }, fold(taskPipelines.decider, [])), ...events])
const p1 = { id: 'p1', state: pipelineState() }
const move = (stage: string | null | undefined, extra: Partial<MoveTask> = {}): TaskCommand => ({ type: 'MoveTask', orgId: org, actor: assignee, at: later, stage: stage === undefined ? undefined : stage === null ? null : { id: stage, pipeline: p1 }, kanbanOrder: null, ...extra })
const place = (stage: string, stage_id: string, stage_kind: TaskPlacement['stage_kind'] = 'open'): TaskPlacement => ({ pipeline_id: 'p1', stage, stage_id, stage_kind })

t.test('create: the fields given, defaults for the rest; once', async (t) => {
  const task = spec(t, taskDecider)
  task.given([]).when({ type: 'CreateTask', taskId: 't1', orgId: org, actor: creator, customFields: [], input: { title: 'Call Acme', priority: 'High', due_date: '2026-11-30', account: 'acc1', assigned_to: ['assignee'], description: undefined }, at }).then([created])
  task.given([created]).when({ type: 'CreateTask', taskId: 't1', orgId: org, actor: creator, customFields: [], input: { title: 'Again' }, at }).then([], 'created twice, no event')
  task.given([]).when({ type: 'CreateTask', taskId: 't1', orgId: org, actor: creator, customFields: [], input: { title: '  ' }, at }).thenRejects(ValidationError, { errors: { title: [String] } })
  task.given([]).when({ type: 'CreateTask', taskId: 't1', orgId: org, actor: creator, customFields: [], input: { title: 'Two parents', account: 'a', lead: 'l' }, at }).thenRejects(ValidationError, { errors: { account: [/account, lead/] } })
})

t.test('update: only what changed, before and after, with the task as it is now; the one-parent rule on the outcome', async (t) => {
  const task = spec(t, taskDecider)
  const next = { ...fields, status: 'In Progress' as const, assigned_to: ['assignee', 'admin'] }
  task.given([created]).when(update({ status: 'In Progress', assigned_to: ['admin', 'assignee'], title: 'Call Acme' })).then([
    { type: 'TaskUpdated', data: { changes: { status: { from: 'New', to: 'In Progress' }, assigned_to: { from: ['assignee'], to: ['admin', 'assignee'] } }, task: summaryOf({ ...next, assigned_to: ['admin', 'assignee'] }), by: 'creator', at: later } },
  ])
  task.given([created]).when(update({ title: 'Call Acme', assigned_to: ['assignee'] })).then([], 'no change, no event')
  task.given([created]).when(update({ lead: 'l1' })).thenRejects(ValidationError, { errors: { account: [String] } })
  task.given([created]).when(update({ lead: 'l1', account: null })).then([
    { type: 'TaskUpdated', data: { changes: { account: { from: 'acc1', to: null }, lead: { from: null, to: 'l1' } }, task: summaryOf({ ...fields, account: null, lead: 'l1' }), by: 'creator', at: later } },
  ], 'moving the parent clears the other one in the same write')
  task.given([created]).when(update({ title: 'Call Acme' }, creator, true)).then([
    { type: 'TaskUpdated', data: { changes: { priority: { from: 'High', to: 'Medium' }, due_date: { from: '2026-11-30', to: null }, account: { from: 'acc1', to: null }, assigned_to: { from: ['assignee'], to: [] } }, task: summaryOf({ ...emptyTask(), title: 'Call Acme' }), by: 'creator', at: later } },
  ], 'a PUT clears what it leaves out')
})

t.test('custom fields: values checked against the definitions for tasks, as on a lead', async (t) => {
  const task = spec(t, taskDecider)
  const kind: Definition = { key: 'kind', type: 'select', options: [{ value: 'call', label: 'Call' }, { value: 'visit', label: 'Visit' }], required: false, is_active: true }
  const effort: Definition = { key: 'effort', type: 'number', options: [], required: false, is_active: true }
  const legacy: Definition = { key: 'legacy', type: 'text', options: [], required: false, is_active: false }
  const definitions = [kind, effort, legacy]
  const create = (custom: TaskInput['custom'], customFields: readonly Definition[] = definitions): TaskCommand => ({ type: 'CreateTask', taskId: 't1', orgId: org, actor: creator, input: { title: 'Call Acme', custom }, customFields, at })
  const createdData = (custom_fields: Record<string, string | number | boolean>) => ({ task_id: 't1', org_id: org, ...emptyTask(), title: 'Call Acme', custom_fields, created_by: 'creator', at })
  const createdWith = (custom_fields: Record<string, string | number | boolean>): TaskEvent => ({ type: 'TaskCreated', data: createdData(custom_fields) })

  task.given([]).when(create({ cfFields: { cf_effort: '2.5', cf_kind: 'visit', cf_nope: 'x' }, customFields: { kind: 'call', legacy: 'new' } })).then([createdWith({ kind: 'call', effort: 2.5 })], 'cf_<key> and the custom_fields object (which wins), coerced; unknown and inactive keys dropped')
  task.given([]).when(create({ cfFields: { cf_effort: 'lots' } })).thenRejects(CustomFieldsError, { statusCode: 400, errors: { custom_fields: { effort: [String] } } })
  task.given([]).when(create({ cfFields: {}, customFields: { kind: 'email' } })).thenRejects(CustomFieldsError, { errors: { custom_fields: { kind: [/not a valid choice/] } } })
  task.given([]).when(create({ cfFields: {}, customFields: '[1]' })).thenRejects(CustomFieldsError, { errors: { custom_fields: [String] } })
  task.given([]).when(create(undefined, [{ ...effort, required: true }])).thenRejects(CustomFieldsError, { errors: { custom_fields: { effort: ['This field is required.'] } } })

  const stored = createdWith({ kind: 'call', effort: 2, legacy: 'kept' })
  const summary = summaryOf({ ...emptyTask(), title: 'Call Acme' })
  task.given([stored]).when(update({ priority: 'High' }, creator, false, [{ ...effort, required: true }, kind, legacy])).then([{ type: 'TaskUpdated', data: { changes: { priority: { from: 'Medium', to: 'High' } }, task: { ...summary, priority: 'High' }, by: 'creator', at: later } }], 'a PATCH naming no custom value leaves them alone')
  task.given([stored]).when(update({ custom: { cfFields: { cf_effort: '3', cf_kind: '' } } }, creator, false, definitions)).then([
    { type: 'TaskUpdated', data: { changes: { custom_fields: { from: { kind: 'call', effort: 2, legacy: 'kept' }, to: { effort: 3, legacy: 'kept' } } }, task: summary, by: 'creator', at: later } },
  ], 'a PATCH merges; blank clears; a deactivated field keeps its value')
  task.given([stored]).when(update({ custom: { cfFields: { cf_effort: '2' } } }, creator, false, definitions)).then([], 'the same values, no event')
  task.given([stored]).when(update({ title: 'Call Acme', custom: { cfFields: { cf_kind: 'visit' } } }, creator, true, definitions)).then([
    { type: 'TaskUpdated', data: { changes: { custom_fields: { from: { kind: 'call', effort: 2, legacy: 'kept' }, to: { kind: 'visit', legacy: 'kept' } } }, task: summary, by: 'creator', at: later } },
  ], 'a PUT replaces the visible values')
  task.given([stored]).when(update({ title: 'Call Acme' }, creator, true, [{ ...kind, required: true }])).thenRejects(CustomFieldsError, { errors: { custom_fields: { kind: ['This field is required.'] } } })

  // A task created before custom fields existed: its stored event has none.
  const { custom_fields: _none, ...v1 } = createdData({})
  const legacyCreated = { type: 'TaskCreated', data: v1 } as TaskEvent
  task.given([legacyCreated]).when(update({ custom: { cfFields: {}, customFields: { effort: 1 } } }, creator, false, definitions)).then([
    { type: 'TaskUpdated', data: { changes: { custom_fields: { from: {}, to: { effort: 1 } } }, task: summary, by: 'creator', at: later } },
  ], 'an old task folds with no values')
})

t.test('access: admin, creator or assignee read, edit, move and comment; admin or creator delete; other organizations see nothing', async (t) => {
  const task = spec(t, taskDecider)
  task.given([created]).when(update({ priority: 'Low' }, assignee)).then([{ type: 'TaskUpdated', data: { changes: { priority: { from: 'High', to: 'Low' } }, task: summaryOf({ ...fields, priority: 'Low' }), by: 'assignee', at: later } }])
  task.given([created]).when(update({ priority: 'Low' }, stranger)).thenRejects(ForbiddenError)
  task.given([created]).when({ type: 'UpdateTask', orgId: otherOrg, actor: admin, input: { priority: 'Low' }, replace: false, customFields: [], at }).thenRejects(NotFoundError)
  task.given([created]).when({ type: 'DeleteTask', orgId: org, actor: assignee, at }).thenRejects(ForbiddenError)
  task.given([created]).when({ type: 'DeleteTask', orgId: org, actor: creator, at }).then([{ type: 'TaskDeleted', data: { by: 'creator', at } }])
  const deleted: TaskEvent = { type: 'TaskDeleted', data: { by: 'admin', at } }
  task.given([created, deleted]).when({ type: 'DeleteTask', orgId: org, actor: admin, at }).then([], 'deleted twice, no event')
  task.given([created, deleted]).when(update({ priority: 'Low' }, admin)).thenRejects(NotFoundError)
  task.given([created]).when({ type: 'AddComment', orgId: org, actor: assignee, commentId: 'c1', comment: 'On it', at }).then([{ type: 'TaskCommentAdded', data: { comment_id: 'c1', comment: 'On it', by: 'assignee', at } }])
  task.given([created]).when({ type: 'AddComment', orgId: org, actor: stranger, commentId: 'c1', comment: 'Hi', at }).thenRejects(ForbiddenError)
  task.given([created]).when({ type: 'AddComment', orgId: otherOrg, actor: admin, commentId: 'c1', comment: 'Hi', at }).thenRejects(NotFoundError)
})

t.test('moves: a stage sets the status it stands for; a status board move changes the status; the order alone moves the card', async (t) => {
  const task = spec(t, taskDecider)
  const summary = (status: 'New' | 'In Progress' | 'Completed') => summaryOf({ ...fields, status })
  const toReview: TaskEvent = { type: 'TaskMoved', data: { from: null, to: place('REVIEW', 's3'), status: { from: 'New', to: 'In Progress' }, kanban_order: 500, task: summary('In Progress'), by: 'assignee', at: later } }
  task.given([created]).when(move('s3', { kanbanOrder: 500 })).then([toReview])
  task.given([created, toReview]).when(move('s4')).then([{ type: 'TaskMoved', data: { from: place('REVIEW', 's3'), to: place('DONE', 's4', 'won'), status: { from: 'In Progress', to: 'Completed' }, kanban_order: 500, task: summary('Completed'), by: 'assignee', at: later } }], 'done completes')
  task.given([created, toReview]).when(move('s1', { status: 'Completed' })).then([{ type: 'TaskMoved', data: { from: place('REVIEW', 's3'), to: place('TO_DO', 's1'), status: { from: 'In Progress', to: 'Completed' }, kanban_order: 500, task: summary('Completed'), by: 'assignee', at: later } }], 'a status named in the move wins')
  task.given([created, toReview]).when(move('s3', { kanbanOrder: 500 })).then([], 'already there, no event')
  task.given([created, toReview]).when(move('s3', { kanbanOrder: 250 })).then([{ type: 'TaskMoved', data: { from: place('REVIEW', 's3'), to: place('REVIEW', 's3'), kanban_order: 250, task: summary('In Progress'), by: 'assignee', at: later } }])
  task.given([created, toReview]).when(move(null)).then([{ type: 'TaskMoved', data: { from: place('REVIEW', 's3'), to: null, kanban_order: 500, task: summary('In Progress'), by: 'assignee', at: later } }], 'off the pipeline, onto the status board')
  task.given([created]).when(move(undefined, { status: 'Completed', kanbanOrder: 10 })).then([{ type: 'TaskMoved', data: { from: null, to: null, status: { from: 'New', to: 'Completed' }, kanban_order: 10, task: summary('Completed'), by: 'assignee', at: later } }], 'the status board')
  task.given([created]).when(move('nope')).thenRejects(ValidationError, { errors: { stage_id: [String] } })
  task.given([created]).when(move('s2', { actor: stranger })).thenRejects(ForbiddenError)
  const locked = { id: 'p1', state: pipelineState({ type: 'StageLocked', data: { stage_id: 's2', at } }) }
  task.given([created]).when(move('s2', { stage: { id: 's2', pipeline: locked } })).thenRejects(ValidationError, { errors: { stage_id: [/being removed/] } })
  const otherOrgPipeline = { id: 'p1', state: { ...p1.state, orgId: otherOrg } }
  task.given([created]).when(move('s2', { stage: { id: 's2', pipeline: otherOrgPipeline } })).thenRejects(ValidationError)
})

t.test('the task pipeline seed: To Do, In Progress, Review open, Done won, Cancelled lost', async (t) => {
  t.same(p1.state.stages.map((s) => [s.code, s.label, s.kind]), [['TO_DO', 'To Do', 'open'], ['IN_PROGRESS', 'In Progress', 'open'], ['REVIEW', 'Review', 'open'], ['DONE', 'Done', 'won'], ['CANCELLED', 'Cancelled', 'lost']])
})
