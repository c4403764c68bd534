import t from 'tap'
import { tasksProjector } from '../../src/projections/task/tasks.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const BASE = '/api/tasks/'

// The fixed clock's day is 2026-11-22.
t.test('tasks: /api/tasks/ as the original and its web app use it', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail, list } = collectionClient(app, BASE)
  const made = async (headers: Record<string, string>, body: object) => {
    const res = await create(headers, body)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }
  const account = (await inject('POST', '/api/accounts/', admin, { name: 'Initech' })).json().id as string
  // Alice's: a member links a task only to a lead she may see (visibility/policy.ts).
  const lead = (await inject('POST', '/api/leads/', admin, { first_name: 'Ada', last_name: 'Lovelace', assigned_to: [alice.profileId] })).json().id as string
  const theirAccount = (await inject('POST', '/api/accounts/', globex.admin.headers, { name: 'Theirs' })).json().id as string

  // What the web app's new-task form sends.
  const call = await made(alice.headers, { title: 'Call Initech', status: 'New', priority: 'High', due_date: '2026-11-20', description: '', assigned_to: [bob.profileId], account })
  const today = await made(admin, { title: 'Send offer', status: 'In Progress', priority: 'Medium', due_date: '2026-11-22', lead })
  const done = await made(admin, { title: 'Kick-off', status: 'Completed', priority: 'Low', due_date: '2026-11-10' })
  const undated = await made(admin, { title: 'Someday' })
  await made(globex.admin.headers, { title: 'Not yours' })

  t.test('the list: rows as the app reads them, totals over the filtered set, the pickers unless slim', async (t) => {
    const page = await list(admin, '?limit=50')
    t.equal(page.tasks_count, 4)
    t.same(page.tasks.map((task: { id: string }) => task.id).sort(), [undated, done, today, call].sort(), 'the organization\'s tasks (the fixed clock makes them equally new)')
    t.same(page.totals, { count: 4, open: 3, overdue: 1, due_today: 1, due_this_week: 1, no_due_date: 1, unassigned: 2 })
    const row = page.tasks.find((task: { id: string }) => task.id === call)
    t.match(row, { title: 'Call Initech', status: 'New', priority: 'High', due_date: '2026-11-20', description: null, account: { id: account, name: 'Initech' }, lead: null, case: null, assigned_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }], is_overdue: true, days_until_due: -2 })
    t.match(page.tasks.find((task: { id: string }) => task.id === today), { lead: { id: lead, name: 'Ada Lovelace' }, is_overdue: false, days_until_due: 0 })
    t.same(page.status, [['New', 'New'], ['In Progress', 'In Progress'], ['Completed', 'Completed']])
    t.ok(page.users.some((u: { user__email: string }) => u.user__email === 'bob@acme.test'), 'an admin may assign anyone')
    t.match(page.accounts_list, [{ id: account, name: 'Initech' }])
    t.ok(Array.isArray(page.contacts_list))
    const slim = await list(admin, '?slim=true&limit=1')
    t.notOk('accounts_list' in slim || 'contacts_list' in slim, 'slim leaves the pickers out')
    t.match(slim, { count: 4, limit: 1, offset: 0, next_offset: 1, results: [{ id: String }] })
    t.match(await list(admin, '?slim=true&limit=1&offset=3'), { offset: 3, next_offset: null, results: [{ id: String }] }, 'the last page has no next')
    t.match(await list(admin, '?slim=true&offset=9'), { count: 4, next_offset: null, results: [] }, 'nor has an empty page past the end')
    t.match(await list(admin, '?slim=true&limit=0'), { count: 4, next_offset: null, results: [] }, 'nor an empty page of limit 0 (the same offset again would never end)')
  })

  t.test('filters: status (repeatable), priority, due date range (the calendar), parents, assignee, search', async (t) => {
    const ids = async (query: string) => (await list(admin, query)).tasks.map((task: { id: string }) => task.id).sort()
    t.same(await ids('?status=New&status=In Progress'), [call, today, undated].sort())
    t.same(await ids('?status=Nonsense'), [])
    t.same(await ids('?priority=High'), [call])
    t.same(await ids('?due_date__gte=2026-11-01&due_date__lte=2026-11-21'), [call, done].sort(), 'the calendar\'s grid range, inclusive')
    t.same(await ids('?due_date__gte=2026-11-22&due_date__lte=2026-11-22'), [today])
    t.same(await ids('?due_date__gte=garbage'), [], 'a malformed date matches nothing')
    t.same(await ids(`?account=${account}`), [call])
    t.same(await ids(`?lead=${lead}`), [today])
    t.same(await ids('?account=not-a-uuid'), [])
    t.same(await ids(`?assigned_to=${bob.profileId}`), [call])
    t.same(await ids('?search=OFFER'), [today])
    t.same(await ids('?title=kick'), [done])
    t.equal((await list(admin, '?status=Completed')).totals.count, 1, 'totals follow the filters')
  })

  t.test('visibility: a member sees and counts what they created or were handed; others get 403; another organization 404', async (t) => {
    t.same((await list(bob.headers)).tasks.map((task: { id: string }) => task.id), [call], 'the assignee')
    t.same((await list(alice.headers)).tasks.map((task: { id: string }) => task.id), [call], 'the creator')
    t.equal((await list(bob.headers)).totals.count, 1)
    t.ok((await list(bob.headers)).users.every((u: { user__email: string }) => u.user__email === 'admin@acme.test'), 'a member may assign only admins, as the original offers')
    t.equal((await inject('GET', `${BASE}${today}/`, bob.headers)).statusCode, 403)
    t.equal((await inject('PATCH', `${BASE}${today}/`, bob.headers, { priority: 'Low' })).statusCode, 403)
    t.equal((await inject('GET', `${BASE}${call}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('PATCH', `${BASE}${call}/`, globex.admin.headers, { priority: 'Low' })).statusCode, 404)
  })

  t.test('detail, PATCH (the tick, the edit form), PUT, the one-parent rule and links checked against the organization', async (t) => {
    const shown = await detail(bob.headers, call)
    t.match(shown, { task_obj: { id: call, title: 'Call Initech', created_by: { id: alice.profileId } }, comments: [], attachments: [], assigned_data: [{ id: bob.profileId, user__email: 'bob@acme.test' }] })
    t.equal((await inject('PATCH', `${BASE}${call}/`, bob.headers, { status: 'Completed' })).statusCode, 200, 'the assignee ticks it off')
    t.match((await detail(admin, call)).task_obj, { status: 'Completed', is_overdue: false })
    const edit = { title: 'Call Initech back', status: 'In Progress', priority: 'Medium', due_date: null, description: 'About the renewal', assigned_to: [bob.profileId, alice.profileId] }
    t.equal((await inject('PATCH', `${BASE}${call}/`, alice.headers, edit)).statusCode, 200)
    t.match((await detail(admin, call)).task_obj, { ...edit, assigned_to: [{ id: bob.profileId }, { id: alice.profileId }], account: { id: account } })
    const twoParents = await inject('PATCH', `${BASE}${call}/`, alice.headers, { lead })
    t.equal(twoParents.statusCode, 400)
    t.match(twoParents.json(), { errors: { account: [String] } })
    t.equal((await inject('PATCH', `${BASE}${call}/`, alice.headers, { lead, account: null })).statusCode, 200, 'moving the parent nulls the old one')
    t.match((await inject('PATCH', `${BASE}${call}/`, alice.headers, { account: theirAccount, lead: null })).json(), { errors: { account: [String] } }, 'another organization\'s account is refused')
    t.match((await create(admin, { title: 'X', case: account })).json(), { errors: { case: ['Expected a case of this organization.'] } }, 'an account id is no case')
    t.match((await create(admin, { title: 'X', assigned_to: [globex.admin.profileId] })).json(), { errors: { assigned_to: [String] } })
    t.match((await create(admin, { title: ' ', due_date: '22/11/2026', priority: 'Urgent' })).json(), { errors: { title: [String], due_date: [String], priority: [String] } })
    t.equal((await create(admin, { title: 'X', is_sample: true })).statusCode, 400, 'unknown fields are refused')
    t.equal((await inject('PUT', `${BASE}${undated}/`, admin, { title: 'Someday, maybe' })).statusCode, 200)
    t.match((await detail(admin, undated)).task_obj, { title: 'Someday, maybe', status: 'New', priority: 'Medium', assigned_to: [] })
  })

  t.test('comments and attachments: POST /{id}/ (comment and/or task_attachment), comment/{id}/, attachment/{id}/', async (t) => {
    const res = await inject('POST', `${BASE}${call}/`, bob.headers, { comment: 'On it' })
    t.equal(res.statusCode, 200, res.body)
    const comment = res.json().comments[0]
    t.match(comment, { comment: 'On it', commented_by: { id: bob.profileId, user_details: { email: 'bob@acme.test' } }, commented_on: String })
    t.equal((await inject('POST', `${BASE}${today}/`, bob.headers, { comment: 'Not mine' })).statusCode, 403)
    const body = await multipartBody({ comment: 'The offer', task_attachment: { name: 'offer.pdf', type: 'application/pdf', content: '%PDF-1.4' } })
    const uploaded = await app.inject({ method: 'POST', url: `${BASE}${call}/`, headers: { ...alice.headers, 'content-type': body.contentType }, payload: body.payload })
    t.equal(uploaded.statusCode, 200, uploaded.body)
    const attachment = uploaded.json().attachments[0]
    t.match(attachment, { file_name: 'offer.pdf', download_url: `/api/tasks/attachment/${attachment.id}/download/` })
    // The web app links every record's file as /api/attachments/{id}/download/ (its lib/server/v2/files.js).
    const shared = await inject('GET', `/api/attachments/${attachment.id}/download/`, alice.headers)
    t.equal(shared.statusCode, 200, shared.body)
    t.equal(shared.body, '%PDF-1.4', 'the shared download route finds a task file')
    t.equal((await inject('GET', `/api/attachments/${attachment.id}/download/`, globex.admin.headers)).statusCode, 404, 'not for another organization')
    t.equal((await inject('PATCH', `/api/tasks/comment/${comment.id}/`, alice.headers, { comment: 'Edited' })).statusCode, 403, 'only its author or an admin')
    t.equal((await inject('PUT', `/api/tasks/comment/${comment.id}/`, bob.headers, { comment: 'On it now' })).statusCode, 200)
    t.equal((await inject('DELETE', `/api/tasks/comment/${comment.id}/`, admin)).statusCode, 200)
    t.equal((await inject('DELETE', `/api/tasks/attachment/${attachment.id}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('DELETE', `/api/tasks/attachment/${attachment.id}/`, alice.headers)).statusCode, 200)
    t.match(await detail(admin, call), { comments: [{ comment: 'The offer' }], attachments: [] })
  })

  t.test("an account's and a contact's detail list their tasks (the web app's task rail), with the task list's visibility", async (t) => {
    const contact = (await inject('POST', '/api/contacts/', admin, { first_name: 'Peter' })).json().id as string
    const withContact = await made(admin, { title: 'Meet Peter', contacts: [contact], due_date: '2026-12-01' })
    t.same((await inject('GET', `/api/contacts/${contact}/`, admin)).json().tasks, [{ id: withContact, title: 'Meet Peter', status: 'New', priority: 'Medium', due_date: '2026-12-01' }])
    t.same((await inject('GET', `/api/accounts/${account}/`, admin)).json().tasks, [], 'the call moved to the lead above')
    await inject('PATCH', `${BASE}${call}/`, admin, { lead: null, account })
    t.match((await inject('GET', `/api/accounts/${account}/`, admin)).json().tasks, [{ id: call }])
    t.same((await inject('GET', `/api/contacts/${contact}/`, bob.headers)).json().tasks, [], 'not a task Bob may open')
  })

  t.test('delete: admin or creator, not an assignee', async (t) => {
    t.equal((await inject('DELETE', `${BASE}${call}/`, bob.headers)).statusCode, 403)
    t.equal((await inject('DELETE', `${BASE}${done}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('DELETE', `${BASE}${done}/`, admin)).statusCode, 200)
    t.equal((await inject('GET', `${BASE}${done}/`, admin)).statusCode, 404)
    t.equal((await list(admin)).tasks_count, 4)
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, tasksProjector, { tables: ['tasks'], oneByOne: true })
  })
})
