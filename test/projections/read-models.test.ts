import { randomUUID } from 'node:crypto'
import t from 'tap'
import { emptyTask, summaryOf } from '../../src/commands/task/fields.ts'
import { tagStream } from '../../src/commands/tag/tag.ts'
import { taskStream } from '../../src/commands/task/task.ts'
import { teamStreams } from '../../src/commands/team/team.ts'
import { tagsProjector } from '../../src/projections/tag/tags.ts'
import { tasksProjector } from '../../src/projections/task/tasks.ts'
import { teamsProjector } from '../../src/projections/team/teams.ts'
import { EVENT_AT, tagCreated, tagEvent, taskCreated, taskEvent, teamCreated, teamEvent } from '../helpers/events.ts'
import { readModel } from '../helpers/read-models.ts'

/**
 * Read models without HTTP: given a stream's events, the rows one projector leaves. The routes'
 * tests (test/http) cover what is answered from these rows; here, what the rows are.
 */

const org = randomUUID()
const admin = randomUUID()
const later = '2026-11-23T10:00:00.000Z'

t.test('tags: a tag renamed and merged keeps its row, inactive, pointing at its target; a deleted one is flagged', async (t) => {
  const [vip, key, doomed] = [randomUUID(), randomUUID(), randomUUID()]
  await readModel(t, tagsProjector)
    .given([
      { stream: tagStream(vip), orgId: org, events: [tagCreated({ tag_id: vip, org_id: org, name: 'VIP', color: '#f00', created_by: admin })] },
      { stream: tagStream(key), orgId: org, events: [tagCreated({ tag_id: key, org_id: org, name: 'Key' }), tagEvent('TagUpdated', { name: 'Key account', at: later }), tagEvent('TagMerged', { into_tag_id: vip, at: later })] },
      { stream: tagStream(doomed), orgId: org, events: [tagCreated({ tag_id: doomed, org_id: org, name: 'Doomed' }), tagEvent('TagDeleted', { at: later })] },
    ])
    .then({
      tags: [
        { id: vip, name: 'VIP', color: '#f00', is_active: true, is_deleted: false, merged_into: null, created_by: admin, updated_at: new Date(EVENT_AT) },
        { id: key, name: 'Key account', color: null, is_active: false, is_deleted: false, merged_into: vip, created_by: null, updated_at: new Date(later) },
        { id: doomed, name: 'Doomed', color: null, is_active: false, is_deleted: true, merged_into: null, created_by: null, updated_at: new Date(later) },
      ],
    })
})

t.test('teams: members are replaced whole; a deleted team leaves no row, nor members', async (t) => {
  const [sales, gone] = [randomUUID(), randomUUID()]
  const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()]
  await readModel(t, teamsProjector)
    .given([
      { stream: teamStreams.stream(sales), orgId: org, events: [teamCreated({ team_id: sales, org_id: org, name: 'Sales', users: [alice, bob] }), teamEvent('TeamMembersChanged', { users: [bob, carol], at: later }), teamEvent('TeamUpdated', { description: 'Field sales', at: later })] },
      { stream: teamStreams.stream(gone), orgId: org, events: [teamCreated({ team_id: gone, org_id: org, name: 'Gone', users: [alice] }), teamEvent('TeamDeleted', { at: later })] },
    ])
    .then({
      teams: [{ id: sales, name: 'Sales', description: 'Field sales', created_at: new Date(EVENT_AT), updated_at: new Date(later) }],
      team_members: [{ team_id: sales, profile_id: bob }, { team_id: sales, profile_id: carol }],
    })
})

t.test('tasks: a change set applies its "to" values, a move places the card and sets the status, a delete flags the row', async (t) => {
  const [call, doomed, pipeline, stage] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  const fields = { ...emptyTask(), title: 'Call Ada' }
  const changed = { ...fields, priority: 'High' as const, due_date: '2026-12-01' }
  const placement = { pipeline_id: pipeline, stage: 'DOING', stage_id: stage, stage_kind: 'open' as const }
  await readModel(t, tasksProjector)
    .given([
      {
        stream: taskStream(call),
        orgId: org,
        events: [
          taskCreated({ task_id: call, org_id: org, title: 'Call Ada', created_by: admin }),
          taskEvent('TaskUpdated', { changes: { priority: { from: 'Medium', to: 'High' }, due_date: { from: null, to: '2026-12-01' } }, task: summaryOf(changed), by: admin, at: later }),
          taskEvent('TaskMoved', { from: null, to: placement, status: { from: 'New', to: 'In Progress' }, kanban_order: 5, task: summaryOf({ ...changed, status: 'In Progress' }), by: admin, at: later }),
        ],
      },
      { stream: taskStream(doomed), orgId: org, events: [taskCreated({ task_id: doomed, org_id: org, title: 'Doomed' }), taskEvent('TaskDeleted', { by: null, at: later })] },
    ])
    .then({
      tasks: [
        { id: call, title: 'Call Ada', status: 'In Progress', priority: 'High', pipeline_id: pipeline, stage_id: stage, stage: 'DOING', kanban_order: 5, is_deleted: false, created_by: admin },
        { id: doomed, title: 'Doomed', status: 'New', priority: 'Medium', pipeline_id: null, stage_id: null, stage: null, kanban_order: Date.parse(EVENT_AT), is_deleted: true, created_by: null },
      ],
      task_comments: [],
    })
})
