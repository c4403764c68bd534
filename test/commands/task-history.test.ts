import t from 'tap'
import { emptyTask, summaryOf } from '../../src/commands/task/fields.ts'
import type { TaskEvent } from '../../src/commands/task/task.ts'
import { taskAsOf, taskHistory, taskRowAsOf } from '../../src/projections/task/task-history.ts'
import type { StoredEvent } from '../../src/projections/kernel/stream-history.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const day = (n: number) => new Date(Date.UTC(2026, 10, 1 + n, 9)).toISOString()
const review = { pipeline_id: 'p1', stage: 'REVIEW', stage_id: 's3', stage_kind: 'open' as const }

const stored = (events: readonly TaskEvent[]): StoredEvent[] =>
  events.map(({ type, data }, i) => ({ type, data, metadata: { actorId: 'alice' }, revision: BigInt(i), position: { commit: BigInt(100 + i), prepare: 0n }, createdAt: new Date(day(30)) }))

const fields = { ...emptyTask(), title: 'Call', tags: ['t1'] }
const events = stored([
  { type: 'TaskCreated', data: { ...fields, task_id: 'k1', org_id: org, created_by: 'alice', at: day(0) } },
  { type: 'TaskUpdated', data: { changes: { tags: { from: ['t1'], to: ['t2'] }, due_date: { from: null, to: '2026-11-05' } }, task: summaryOf(fields), by: 'alice', at: day(1) } },
  { type: 'TaskMoved', data: { from: null, to: review, status: { from: 'New', to: 'In Progress' }, kanban_order: 5, task: summaryOf(fields), by: 'alice', at: day(2) } },
  { type: 'TaskMoved', data: { from: review, to: review, kanban_order: 7, task: summaryOf(fields), by: 'alice', at: day(3) } },
  { type: 'TaskCommentAdded', data: { comment_id: 'c1', comment: 'hi', by: 'alice', at: day(4) } },
  { type: 'TaskDeleted', data: { by: 'alice', at: day(6) } },
])

t.test('taskHistory: fields as from and to, relations as ids added and removed, moves by what changed', async (t) => {
  const entries = taskHistory(events)
  t.same(entries.map((e) => e.revision), [0, 1, 2, 3, 4, 5])
  t.match(entries[0]!.changes, { title: { from: null, to: 'Call' }, status: { from: null, to: 'New' }, tags: { added: ['t1'], removed: [] }, teams: { added: [], removed: [] } })
  t.same(entries[1]!.changes, { tags: { added: ['t2'], removed: ['t1'] }, due_date: { from: null, to: '2026-11-05' } })
  t.same(entries[2]!.changes, { stage: { from: null, to: 'REVIEW' }, pipeline: { from: null, to: 'p1' }, status: { from: 'New', to: 'In Progress' }, kanban_order: { from: Date.parse(day(0)), to: 5 } })
  t.same(entries[3]!.changes, { kanban_order: { from: 5, to: 7 } }, 'a reorder in the same column')
  t.same([entries[4]!.subject, entries[4]!.changes], [{ kind: 'comment', id: 'c1', name: null }, { comment: { from: null, to: 'hi' } }])
  t.same(entries[5]!.changes, {})
})

t.test('taskAsOf: the task up to an instant, comments leaving its revision and updated_at', async (t) => {
  t.equal(taskAsOf(events, new Date(Date.parse(day(0)) - 1)), undefined, 'before it existed')
  t.equal(taskAsOf(events, new Date(day(7))), undefined, 'after it was deleted')
  const then = taskAsOf(events, new Date(day(5)))!
  t.match(then, { revision: 3n, createdAt: day(0), updatedAt: day(3) })
  t.match(taskRowAsOf('k1', then), { id: 'k1', org_id: org, title: 'Call', tags: ['t2'], due_date: '2026-11-05', status: 'In Progress', pipeline_id: 'p1', stage_id: 's3', stage: 'REVIEW', kanban_order: 7, created_by: 'alice', is_deleted: false })
  t.match(taskRowAsOf('k1', taskAsOf(events, new Date(day(1)))!), { tags: ['t2'], status: 'New', stage: null, kanban_order: Date.parse(day(0)) })
})
