import { randomUUID } from 'node:crypto'
import t from 'tap'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenHistoryCast } from '../helpers/history.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'

const BASE = '/api/tasks/'
const DAY = 86_400_000
const later = (days: number) => new Date(FIXED_NOW.getTime() + days * DAY)

t.test('a task\'s history and the task as of an instant (issue 19)', async (t) => {
  const { app, acme, globex, alice, bob, carol, admin, ok, get, hot, cold, aliceRef, bobRef, setNow } = await givenHistoryCast(t, BASE)

  // The task's life: created by Alice (assigned to Bob, due in two days), edited, moved on the board, commented on, a file attached.
  const id = (await ok('POST', BASE, alice.headers, { title: 'Call Initech', due_date: later(2).toISOString().slice(0, 10), tags: [hot], assigned_to: [bob.profileId] })).id as string
  setNow(later(1))
  await ok('PATCH', `${BASE}${id}/`, alice.headers, { title: 'Call Initech back', tags: [cold], priority: 'High' })
  const { pipelines } = (await get(`${BASE}pipelines/`)).json()
  const review = pipelines[0].stages.find((s: { code: string }) => s.code === 'REVIEW')
  setNow(later(3))
  await ok('PATCH', `${BASE}${id}/move/`, bob.headers, { stage_id: review.id })
  const comment = (await ok('POST', `${BASE}${id}/`, bob.headers, { comment: 'On it' })).comments[0].id as string
  const upload = await multipartBody({ task_attachment: { name: 'notes.txt', type: 'text/plain', content: 'notes' } })
  const uploaded = await app.inject({ method: 'POST', url: `${BASE}${id}/`, headers: { ...alice.headers, 'content-type': upload.contentType }, payload: upload.payload })
  t.equal(uploaded.statusCode, 200, uploaded.body)
  const attachment = uploaded.json().attachments[0].id as string
  setNow(later(4))
  await ok('DELETE', `${BASE}comment/${comment}/`, admin)

  t.test('GET /{id}/history/: every event of the task, oldest first, with who and what changed', async (t) => {
    const res = await get(`${BASE}${id}/history/`, bob.headers)
    t.equal(res.statusCode, 200, res.body)
    const page = res.json()
    t.match(page, { count: 6, offset: 0, limit: 50 })
    t.same(page.results.map((e: { type: string }) => e.type), ['TaskCreated', 'TaskUpdated', 'TaskMoved', 'TaskCommentAdded', 'TaskAttachmentAdded', 'TaskCommentDeleted'])
    const [created, updated, moved, commented, attached, uncommented] = page.results
    t.match(created, { revision: 0, position: /^\d+-\d+$/, at: FIXED_NOW.toISOString(), actor: aliceRef, subject: null, changes: { title: { from: null, to: 'Call Initech' }, status: { from: null, to: 'New' }, tags: { added: [hot], removed: [] }, assigned_to: { added: [bob.profileId], removed: [] }, contacts: { added: [], removed: [] } } })
    t.same(updated.changes, { title: { from: 'Call Initech', to: 'Call Initech back' }, priority: { from: 'Medium', to: 'High' }, tags: { added: [cold], removed: [hot] } }, 'only what changed; relations as added and removed ids')
    t.match(updated, { at: later(1).toISOString(), actor: aliceRef })
    t.match(moved, { actor: bobRef, at: later(3).toISOString(), changes: { stage: { from: null, to: 'REVIEW' }, pipeline: { from: null, to: pipelines[0].id }, status: { from: 'New', to: 'In Progress' }, kanban_order: { from: Number, to: Number } } })
    t.match(commented, { actor: bobRef, subject: { kind: 'comment', id: comment, name: null }, changes: { comment: { from: null, to: 'On it' } } })
    t.match(attached, { actor: aliceRef, subject: { kind: 'attachment', id: attachment, name: 'notes.txt' }, changes: { attachment: { from: null, to: 'notes.txt' } } })
    t.match(uncommented, { actor: { id: acme.admin.profileId, name: acme.admin.email }, changes: { comment: { from: 'On it', to: null } } })
  })

  t.test('order=desc, limit and offset; a malformed query is a 400 in the error shape', async (t) => {
    const desc = (await get(`${BASE}${id}/history/?order=desc&limit=2&offset=1`)).json()
    t.match(desc, { count: 6, offset: 1, limit: 2 })
    t.same(desc.results.map((e: { revision: number }) => e.revision), [4, 3])
    const bad = await get(`${BASE}${id}/history/?order=sideways`)
    t.match({ status: bad.statusCode, body: bad.json() }, { status: 400, body: { error: true } })
  })

  t.test('the detail\'s rule: 403 for a member who is neither creator nor assignee, 404 for another organization', async (t) => {
    t.equal((await get(`${BASE}${id}/history/`, carol.headers)).statusCode, 403)
    t.equal((await get(`${BASE}${id}/`, carol.headers)).statusCode, 403, 'as the detail answers her')
    for (const url of [`${BASE}${id}/history/`, `${BASE}${id}/?as_of=${later(2).toISOString()}`, `${BASE}${randomUUID()}/history/`]) {
      t.equal((await get(url, globex.admin.headers)).statusCode, 404, url)
    }
  })

  t.test('GET /{id}/?as_of=: the task as it stood then, folded from its events', async (t) => {
    const at = async (instant: Date | string, headers: Headers = admin) => get(`${BASE}${id}/?as_of=${encodeURIComponent(typeof instant === 'string' ? instant : instant.toISOString())}`, headers)
    const first = await at(later(0.5), alice.headers)
    t.equal(first.statusCode, 200, first.body)
    t.match(first.json().task_obj, { id, title: 'Call Initech', priority: 'Medium', status: 'New', stage: null, tags: [{ id: hot, name: 'hot' }], assigned_to: [{ id: bob.profileId }], created_by: { id: alice.profileId }, created_at: FIXED_NOW.toISOString(), updated_at: FIXED_NOW.toISOString(), days_until_due: 2, is_overdue: false })
    t.match((await at(later(2))).json().task_obj, { title: 'Call Initech back', priority: 'High', tags: [{ id: cold }], status: 'New', updated_at: later(1).toISOString(), days_until_due: 0 })
    t.match((await at('2099-01-01T00:00:00+02:00')).json().task_obj, { status: 'In Progress', stage: review.id, stage_code: 'REVIEW', updated_at: later(3).toISOString() }, 'comments and files leave updated_at, as in the read model')
    t.match((await get(`${BASE}${id}/`)).json().task_obj, { title: 'Call Initech back', status: 'In Progress' }, 'without as_of: now')
    t.equal((await at(new Date(FIXED_NOW.getTime() - 1))).statusCode, 404, 'before it existed')
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-11-22']) {
      const res = await at(bad)
      t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: true } }, bad)
    }
  })

  t.test('a deleted task keeps its history, for admins only; as of after the deletion it is missing', async (t) => {
    setNow(later(5))
    await ok('DELETE', `${BASE}${id}/`, alice.headers)
    const res = await get(`${BASE}${id}/history/?order=desc&limit=1`)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { count: 7, results: [{ type: 'TaskDeleted', actor: aliceRef, at: later(5).toISOString(), changes: {} }] })
    t.equal((await get(`${BASE}${id}/history/`, alice.headers)).statusCode, 404, 'its creator no longer sees it, like the detail')
    t.equal((await get(`${BASE}${id}/?as_of=${later(2).toISOString()}`)).statusCode, 404, 'the detail (and so as_of) follows the task as it is now')
  })
})
