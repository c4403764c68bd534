import { randomUUID } from 'node:crypto'
import t from 'tap'
import { emptyTask } from '../../src/commands/task/fields.ts'
import { taskStream } from '../../src/commands/task/task.ts'
import { tasksProjector } from '../../src/projections/task/tasks.ts'
import { collectionClient, givenTwoOrganizations, succeeding } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const BASE = '/api/tasks/'

t.test('custom fields on tasks: writes, detail, list and board filters, as on leads and deals (the original Task.custom_fields)', async (t) => {
  const { app, database, store, projections, acme, globex, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail, list } = collectionClient(app, BASE)
  const ok = succeeding(t, app)
  const define = async (body: object, headers = admin) => (await ok('POST', '/api/custom-fields/', headers, { target_model: 'Task', ...body })).id as string
  await define({ key: 'kind', label: 'Kind', field_type: 'dropdown', options: [{ value: 'call', label: 'Call' }, { value: 'visit', label: 'Visit' }], is_required: true })
  await define({ key: 'effort', label: 'Effort (h)', field_type: 'number' })
  const billable = await define({ key: 'billable', label: 'Billable', field_type: 'checkbox' })
  await define({ key: 'region', label: 'Region', field_type: 'text', target_model: 'Lead' })
  await define({ key: 'kind', label: 'Theirs', field_type: 'text' }, globex.admin.headers)
  const titles = async (query: string, headers = admin) => ((await list(headers, query)).tasks as { title: string }[]).map((task) => task.title).sort()

  t.test('writes are checked against the definitions for tasks: 400 in the error shape; unknown custom keys are dropped', async (t) => {
    const missing = await create(admin, { title: 'No kind' })
    t.match({ status: missing.statusCode, body: missing.json() }, { status: 400, body: { error: true, errors: { custom_fields: { kind: ['This field is required.'] } } } }, 'a required field')
    t.match((await create(admin, { title: 'Bad kind', cf_kind: 'email' })).json(), { error: true, errors: { custom_fields: { kind: [/not a valid choice/] } } }, 'a dropdown value outside its options')
    t.match((await create(admin, { title: 'Bad effort', cf_kind: 'call', cf_effort: 'lots' })).json(), { errors: { custom_fields: { effort: ['A valid number is required.'] } } }, 'a value of the wrong type')
    t.match((await create(admin, { title: 'Bad object', custom_fields: '{not json' })).json(), { errors: { custom_fields: [String] } }, 'custom_fields that is no object')
    t.match((await create(admin, { title: 'Typo', cf_kind: 'call', priorty: 'High' })).json(), { errors: { priorty: [/Unknown field/] } }, 'any other unknown body key is still refused')
    const res = await create(bob.headers, { title: 'Call Initech', cf_kind: 'visit', cf_effort: '1.5', cf_nope: 'dropped', custom_fields: { kind: 'call', region: 'a lead field: dropped' } })
    t.equal(res.statusCode, 200, res.body)
    const body = await detail(admin, res.json().id)
    t.same(body.task_obj.custom_fields, { kind: 'call', effort: 1.5 }, 'coerced; the object wins over cf_<key>')
    t.same(body.custom_field_definitions.map((d: { key: string; target_model: string }) => [d.key, d.target_model]), [['billable', 'Task'], ['effort', 'Task'], ['kind', 'Task']], "the organization's active task fields only")
    t.match(body.custom_field_definitions.find((d: { key: string }) => d.key === 'kind'), { field_type: 'dropdown', is_required: true, options: [{ value: 'call', label: 'Call' }, { value: 'visit', label: 'Visit' }] })
  })

  t.test('PATCH merges, a PATCH naming none keeps them, PUT replaces and must carry the required ones', async (t) => {
    const id = (await create(admin, { title: 'Visit Globex', custom_fields: JSON.stringify({ kind: 'visit', effort: 3 }) })).json().id as string
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'visit', effort: 3 }, 'custom_fields as JSON text (a form body)')
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { cf_billable: 'yes', cf_effort: '' })).statusCode, 200)
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'visit', billable: true }, 'merged; blank clears')
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { status: 'In Progress' })).statusCode, 200)
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'visit', billable: true })
    t.match((await inject('PATCH', `${BASE}${id}/`, admin, { cf_kind: null })).json(), { errors: { custom_fields: { kind: [String] } } }, 'a required value cannot be cleared')
    t.match((await inject('PUT', `${BASE}${id}/`, admin, { title: 'Visit Globex' })).json(), { errors: { custom_fields: { kind: [String] } } }, 'a PUT must carry the required ones')
    t.equal((await inject('PUT', `${BASE}${id}/`, admin, { title: 'Visit Globex', cf_kind: 'visit' })).statusCode, 200)
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'visit' }, 'a PUT replaces')
    const history = (await inject('GET', `${BASE}${id}/history/`, admin)).json()
    t.match(history.results.at(-1).changes, { custom_fields: { from: { kind: 'visit', billable: true }, to: { kind: 'visit' } } }, 'the history shows the values before and after')
  })

  t.test('cf_<key>=value filters the list, its totals and the board by typed equality; unknown keys and malformed values match nothing', async (t) => {
    t.same(await titles('?cf_kind=call'), ['Call Initech'])
    t.same(await titles('?cf_kind=visit'), ['Visit Globex'])
    t.same(await titles('?cf_effort=1.50'), ['Call Initech'], 'numbers compare as numbers')
    t.same(await titles('?cf_kind='), ['Call Initech', 'Visit Globex'], 'blank: no filter')
    for (const query of ['?cf_nope=x', '?cf_effort=abc', '?cf_region=x']) t.same(await titles(query), [], query)
    t.same(await titles('?cf_kind=call', bob.headers), ['Call Initech'], "a member's list: their tasks that match")
    t.equal((await list(admin, '?cf_kind=call')).totals.count, 1, 'totals follow')
    t.same((await list(admin, '?cf_kind=call')).tasks[0].custom_fields, { kind: 'call', effort: 1.5 }, 'list rows carry their values')
    const board = (await inject('GET', `${BASE}kanban/?cf_kind=visit`, admin)).json()
    t.equal(board.total_tasks, 1, 'the board narrows the same way')
    t.same(board.columns.flatMap((c: { tasks: { title: string }[] }) => c.tasks.map((task) => task.title)), ['Visit Globex'])
  })

  t.test('the custom field list counts tasks missing a value', async (t) => {
    const fields = (await inject('GET', '/api/custom-fields/?target_model=Task', admin)).json().definitions as { key: string; records_missing_value: number }[]
    t.same(Object.fromEntries(fields.map((d) => [d.key, d.records_missing_value])), { billable: 2, effort: 1, kind: 0 })
  })

  t.test('an inactive definition hides its values and stops filtering; its values stay stored', async (t) => {
    const id = (await list(admin, '?cf_kind=call')).tasks[0].id as string
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { cf_billable: 'false' })).statusCode, 200)
    t.equal((await inject('PUT', `/api/custom-fields/${billable}/`, admin, { label: 'Billable', is_active: false })).statusCode, 200)
    const body = await detail(admin, id)
    t.same(body.task_obj.custom_fields, { kind: 'call', effort: 1.5 })
    t.notOk(body.custom_field_definitions.some((d: { key: string }) => d.key === 'billable'))
    t.same(await titles('?cf_billable=false'), [])
    t.equal((await inject('PUT', `/api/custom-fields/${billable}/`, admin, { label: 'Billable', is_active: true })).statusCode, 200)
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'call', effort: 1.5, billable: false }, 'back on, the value is back')
  })

  t.test('a task stored before custom fields existed (TaskCreated v1) reads with none, and takes them', async (t) => {
    const id = randomUUID()
    const { custom_fields: _none, ...v1 } = { ...emptyTask(), title: 'Legacy task' }
    const { position } = await store.appendToStream(taskStream(id), [{ type: 'TaskCreated', data: { task_id: id, org_id: acme.orgId, ...v1, created_by: acme.admin.profileId, at: new Date().toISOString() }, schemaVersion: 1 }])
    await projections.waitFor(position, 10_000)
    t.same((await detail(admin, id)).task_obj.custom_fields, {})
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { cf_kind: 'call' })).statusCode, 200)
    t.same((await detail(admin, id)).task_obj.custom_fields, { kind: 'call' })
  })

  t.test('the read model rebuilt from the log, custom values included, is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, tasksProjector, { tables: ['tasks'] })
    t.ok(live.tasks!.some((row) => Object.keys(row.custom_fields as object).length > 1), 'rows hold values')
  })
})
