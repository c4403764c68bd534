import t from 'tap'
import { taskPipelinesProjector, taskPipelineModel } from '../../src/projections/pipeline/pipelines.ts'
import { tasksProjector } from '../../src/projections/task/tasks.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Column = { id: string; name: string; maps_to_status: string; task_count: number; tasks: { id: string; status: string }[] }

t.test('task pipelines, the task board and card moves', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject } = collectionClient(app, '/api/tasks/')
  const json = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, body?: object, status = 200) => {
    const res = await inject(method, url, headers, body)
    t.equal(res.statusCode, status, `${method} ${url}: ${res.body.slice(0, 300)}`)
    return res.body ? res.json() : null
  }
  const task = async (headers: Record<string, string>, body: object) => (await json('POST', '/api/tasks/', headers, body)).id as string
  const a = await task(alice.headers, { title: 'A', assigned_to: [bob.profileId] })
  const b = await task(admin, { title: 'B', status: 'In Progress' })
  const c = await task(admin, { title: 'C' })

  const { pipelines } = await json('GET', '/api/tasks/pipelines/', admin)
  t.match(pipelines, [{ name: 'Default task pipeline', is_default: true, stages: [{ code: 'TO_DO' }, { code: 'IN_PROGRESS' }, { code: 'REVIEW' }, { code: 'DONE', kind: 'won' }, { code: 'CANCELLED', kind: 'lost' }] }])
  const dev = await json('POST', '/api/tasks/pipelines/', admin, { name: 'Development' }, 201)
  const [toDo, inProgress, review, doneStage] = dev.stages as { id: string }[]

  t.test('pipeline administration follows the deal rules: admins write, PUT renames, stages added, reordered, refused while tasks are in them', async (t) => {
    t.equal((await inject('POST', '/api/tasks/pipelines/', alice.headers, { name: 'Mine' })).statusCode, 403)
    t.match(await json('PUT', `/api/tasks/pipelines/${dev.id}/`, admin, { name: 'Dev' }), { name: 'Dev' })
    const added = await json('POST', `/api/tasks/pipelines/${dev.id}/stages/`, admin, { label: 'Blocked', kind: 'open' }, 201)
    const blocked = added.stages.at(-1)
    t.match(blocked, { code: 'BLOCKED', order: 6 })
    await json('PATCH', `/api/tasks/${a}/move/`, admin, { stage_id: blocked.id })
    t.match((await inject('DELETE', `/api/tasks/stages/${blocked.id}/`, admin)).json(), { errors: { stage: [/tasks in the stage/] } })
    await json('PATCH', `/api/tasks/${a}/move/`, admin, { stage_id: null })
    t.equal((await inject('DELETE', `/api/tasks/stages/${blocked.id}/`, admin)).statusCode, 204)
    const order = [review, toDo, inProgress, doneStage, dev.stages[4]].map((s) => s!.id)
    t.same((await json('POST', `/api/tasks/pipelines/${dev.id}/stages/reorder/`, admin, { stage_ids: order })).stages.map((s: { id: string }) => s.id), order)
    await json('POST', `/api/tasks/pipelines/${dev.id}/stages/reorder/`, admin, { stage_ids: dev.stages.map((s: { id: string }) => s.id) })
    t.equal((await inject('GET', `/api/tasks/pipelines/${dev.id}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('PUT', `/api/tasks/stages/${toDo!.id}/`, globex.admin.headers, { label: 'X' })).statusCode, 404)
  })

  t.test('the status board: a column per status, every visible task', async (t) => {
    const board = await json('GET', '/api/tasks/kanban/', admin)
    t.match(board, { mode: 'status', pipeline: null, total_tasks: 3 })
    t.same(board.columns.map((col: Column) => [col.id, col.task_count]), [['New', 1], ['In Progress', 2], ['Completed', 0]], 'A went In Progress when it entered the Blocked stage')
    t.same(board.columns.map((col: Column & { color: string }) => col.color), ['#3B82F6', '#F59E0B', '#22C55E'], "the original's status colours")
    t.same((await json('GET', '/api/tasks/kanban/', bob.headers)).total_tasks, 1, 'a member sees what they may open')
    t.equal((await json('GET', '/api/tasks/kanban/?search=B', admin)).total_tasks, 1, 'the list filters apply')
    t.equal((await inject('GET', `/api/tasks/kanban/?pipeline_id=${dev.id}`, globex.admin.headers)).statusCode, 404)
  })

  t.test('moves: a stage sets its status, a status column sets the status, access and organization checked', async (t) => {
    const moved = await json('PATCH', `/api/tasks/${a}/move/`, bob.headers, { stage_id: review!.id })
    t.match(moved, { task: { id: a, status: 'In Progress', pipeline: dev.id, stage: review!.id, stage_code: 'REVIEW' } })
    t.match((await json('PATCH', `/api/tasks/${a}/move/`, bob.headers, { stage_id: doneStage!.id })).task, { status: 'Completed' })
    t.match((await json('PATCH', `/api/tasks/${a}/move/`, bob.headers, { stage_id: toDo!.id })).task, { status: 'New' })
    t.match((await json('PATCH', `/api/tasks/${c}/move/`, admin, { status: 'Completed' })).task, { status: 'Completed', stage: null })
    t.equal((await inject('PATCH', `/api/tasks/${b}/move/`, bob.headers, { status: 'New' })).statusCode, 403)
    t.match((await inject('PATCH', `/api/tasks/${b}/move/`, admin, {})).json(), { errors: { stage_id: [String] } })
    const theirs = (await json('GET', '/api/tasks/pipelines/', globex.admin.headers)).pipelines[0].stages[0].id
    t.match((await inject('PATCH', `/api/tasks/${b}/move/`, admin, { stage_id: theirs })).json(), { errors: { stage_id: [String] } }, "another organization's stage")
    t.equal((await inject('PATCH', `/api/tasks/${b}/move/`, globex.admin.headers, { status: 'New' })).statusCode, 404)
    const board = await json('GET', `/api/tasks/kanban/?pipeline_id=${dev.id}`, admin)
    t.match(board, { mode: 'pipeline', pipeline: { id: dev.id }, total_tasks: 1 })
    t.match(board.columns[0], { id: toDo!.id, name: 'To Do', maps_to_status: 'New', stage_kind: 'open', tasks: [{ id: a }] })
    t.match(board.columns[3], { name: 'Done', maps_to_status: 'Completed', stage_type: 'completed' })
    t.match((await inject('DELETE', `/api/tasks/pipelines/${dev.id}/`, admin)).json(), { errors: { pipeline: [/tasks/] } }, 'a pipeline with tasks stays')
  })

  t.test('order in a column stays what the moves said over many random moves', async (t) => {
    const ids = [a, b, c, ...(await Promise.all(Array.from({ length: 5 }, (_, i) => task(admin, { title: `T${i}` }))))]
    for (const id of ids) await json('PATCH', `/api/tasks/${id}/move/`, admin, { stage_id: inProgress!.id })
    const expected = [...ids]
    let seed = 7
    const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n
    for (let i = 0; i < 30; i++) {
      const card = expected.splice(random(expected.length), 1)[0]!
      const at = random(expected.length + 1)
      const body = at < expected.length ? { stage_id: inProgress!.id, below_task_id: expected[at] } : { stage_id: inProgress!.id, above_task_id: expected.at(-1) }
      expected.splice(at, 0, card)
      await json('PATCH', `/api/tasks/${card}/move/`, admin, body)
    }
    const column = (await json('GET', `/api/tasks/kanban/?pipeline_id=${dev.id}`, admin)).columns[1] as Column
    t.same(column.tasks.map((x) => x.id), expected)
    t.match((await inject('PATCH', `/api/tasks/${a}/move/`, admin, { stage_id: review!.id, above_task_id: b })).json(), { errors: { above_task_id: [String] } }, 'a neighbour of another column')
  })

  t.test('the read models rebuilt from the log are identical', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, [tasksProjector, taskPipelinesProjector], { tables: ['tasks', 'task_pipeline_stages'] })
    t.ok(await taskPipelineModel.pipelineOf(database.db, acme.orgId, dev.id))
  })
})
