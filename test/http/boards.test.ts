import t from 'tap'
import { boardsProjector } from '../../src/projections/board/boards.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive, tableRows } from '../helpers/read-models.ts'

type Headers = Record<string, string>
type Column = { id: string; name: string; order: number; tasks: { id: string; title: string; order: number; column: string }[] }

t.test('/api/boards/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, headers: Headers, payload?: object) => {
    const res = await call(method, url, headers, payload)
    t.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.statusCode < 300 ? '' : res.body}`)
    return res.json()
  }
  const columns = async (boardId: string, headers: Headers = alice.headers): Promise<Column[]> => ok('GET', `/api/boards/${boardId}/columns/`, headers)
  const lanes = async (boardId: string) => Object.fromEntries((await columns(boardId)).map((c) => [c.name, c.tasks.map((card) => card.title)]))
  const listed = async (headers: Headers, query = '') => (await ok('GET', `/api/boards/${query}`, headers)).results.map((b: { name: string }) => b.name)

  // The web app's empty state: POST /boards/ {name}; the board starts with three columns.
  const board = await ok('POST', '/api/boards/', alice.headers, { name: 'Launch' })
  const [todo, doing, done] = await columns(board.id)
  const addCard = async (column: string, title: string, headers: Headers = alice.headers, extra: object = {}) => (await ok('POST', `/api/boards/columns/${column}/tasks/`, headers, { title, ...extra })).id as string

  t.test('POST creates a board owned by the caller, with the default columns, visible to its members and the organization admins only', async (t) => {
    t.match(board, { name: 'Launch', description: null, is_archived: false, my_role: 'owner', owner: { id: alice.profileId, user_details: { email: 'alice@acme.test' } }, member_count: 1, column_count: 3, task_count: 0, members: [{ role: 'owner', profile: { id: alice.profileId } }] })
    t.same(board.columns.map((c: Column) => [c.name, c.order]), [['To Do', 1], ['In Progress', 2], ['Done', 3]])
    t.same((await columns(board.id)).map((c) => [c.name, c.tasks.length]), [['To Do', 0], ['In Progress', 0], ['Done', 0]])
    const bare = await ok('POST', '/api/boards/', alice.headers, { name: 'Bare', description: 'No columns', create_default_columns: false })
    t.match(bare, { column_count: 0, columns: [], description: 'No columns' })
    t.same((await listed(alice.headers, '?archived=false')).sort(), ['Bare', 'Launch'])
    t.same(await listed(bob.headers), [], 'not a member: not listed')
    t.equal((await call('GET', `/api/boards/${board.id}/`, bob.headers)).statusCode, 404, 'nor readable')
    t.equal((await call('GET', `/api/boards/${board.id}/columns/`, bob.headers)).statusCode, 404)
    t.match(await ok('GET', `/api/boards/${board.id}/`, acme.admin.headers), { my_role: 'admin' }, 'an organization admin sees every board')
    t.same(await listed(globex.admin.headers), [], 'another organization sees nothing')
    t.same(await listed(alice.headers, '?search=lau'), ['Launch'])
    t.equal((await call('POST', '/api/boards/', alice.headers, { name: ' ' })).statusCode, 400)
    t.equal((await call('POST', '/api/boards/', alice.headers, { name: 'X', owner: bob.profileId })).statusCode, 400, 'unknown fields are refused')
    t.equal((await call('DELETE', `/api/boards/${bare.id}/`, alice.headers)).statusCode, 204)
  })

  t.test('members: the owner adds them; a member works cards but may not add columns or edit the board', async (t) => {
    const changed = await ok('PATCH', `/api/boards/${board.id}/`, alice.headers, { members: [{ profile_id: bob.profileId }] })
    t.match(changed, { member_count: 2, members: [{ role: 'owner' }, { role: 'member', profile: { id: bob.profileId } }] })
    t.same(await listed(bob.headers), ['Launch'])
    t.match(await ok('GET', `/api/boards/${board.id}/`, bob.headers), { my_role: 'member' })
    t.equal((await call('POST', `/api/boards/${board.id}/columns/`, bob.headers, { name: 'Mine' })).statusCode, 403)
    t.equal((await call('PUT', `/api/boards/${board.id}/`, bob.headers, { name: 'Mine' })).statusCode, 403)
    t.equal((await call('DELETE', `/api/boards/${board.id}/`, bob.headers)).statusCode, 403)
    const res = await call('PATCH', `/api/boards/${board.id}/`, alice.headers, { members: [{ profile_id: globex.admin.profileId }] })
    t.equal(res.statusCode, 400, 'a profile of another organization')
    t.match(res.json(), { error: true, errors: { members: [/Expected active profiles/] } })
  })

  t.test("columns: the web app's add-column form; unique names; default order after the last", async (t) => {
    const review = await ok('POST', `/api/boards/${board.id}/columns/`, alice.headers, { name: 'Review', color: '#123456', order: 4 })
    t.match(review, { name: 'Review', order: 4, color: '#123456', limit: null, task_count: 0, tasks: [], board: board.id })
    t.match(await ok('POST', `/api/boards/${board.id}/columns/`, alice.headers, { name: 'Shipped', limit: 5 }), { order: 5, color: '#6B7280', limit: 5 })
    const dup = await call('POST', `/api/boards/${board.id}/columns/`, alice.headers, { name: 'Review' })
    t.equal(dup.statusCode, 400)
    t.same(dup.json(), { error: true, errors: { name: ['A column with this name already exists on this board.'] } })
    t.equal((await call('POST', `/api/boards/${board.id}/columns/`, alice.headers, { name: 'Bad', color: 'red' })).statusCode, 400)
    t.same((await columns(board.id)).map((c) => c.name), ['To Do', 'In Progress', 'Done', 'Review', 'Shipped'])
  })

  t.test('cards: added at the end, moved within and across columns with the order the web app sends', async (t) => {
    for (const title of ['A', 'B', 'C']) await addCard(todo!.id, title, bob.headers, { description: 'Details', priority: 'high' })
    const first = (await columns(board.id))[0]!.tasks
    t.same(first.map((c) => [c.title, c.order]), [['A', 0], ['B', 1], ['C', 2]])
    t.match(first[0], { priority: 'high', description: 'Details', column: todo!.id, is_completed: false, is_overdue: false, assigned_to: [], created_by: bob.profileId })
    const [a, b, c] = first.map((card) => card.id) as [string, string, string]
    t.match(await ok('PUT', `/api/boards/tasks/${c}/`, bob.headers, { column: todo!.id, order: 0 }), { order: 0, column: todo!.id })
    t.same((await lanes(board.id))['To Do'], ['C', 'A', 'B'])
    t.match(await ok('PUT', `/api/boards/tasks/${a}/`, bob.headers, { column: doing!.id, order: 0 }), { order: 0, column: doing!.id })
    t.same(await lanes(board.id), { 'To Do': ['C', 'B'], 'In Progress': ['A'], Done: [], Review: [], Shipped: [] })
    t.match(await ok('GET', `/api/boards/columns/${todo!.id}/tasks/`, bob.headers), [{ title: 'C', order: 0 }, { title: 'B', order: 1 }])
    t.match(await ok('POST', `/api/boards/columns/${todo!.id}/tasks/`, alice.headers, { title: 'Top', order: 0 }), { order: 0 })
    t.same((await lanes(board.id))['To Do'], ['Top', 'C', 'B'])
    t.match(await ok('PUT', `/api/boards/tasks/${b}/`, alice.headers, { title: 'B2', is_completed: true, due_date: '2026-11-01', assigned_to_ids: [bob.profileId] }), { title: 'B2', is_completed: true, completed_at: '2026-11-22T09:00:00.000Z', due_date: '2026-11-01T00:00:00.000Z', is_overdue: false, assigned_to: [{ id: bob.profileId }] })
    t.match(await ok('PUT', `/api/boards/tasks/${b}/`, alice.headers, { is_completed: false }), { is_completed: false, is_overdue: true })
    t.match(await ok('GET', `/api/boards/${board.id}/`, alice.headers), { task_count: 4, columns: [{ name: 'To Do', task_count: 3 }, { name: 'In Progress', task_count: 1 }] })
  })

  t.test('refusals: a column of another board, another organization, strangers; 404 for ids of other organizations', async (t) => {
    const other = await ok('POST', '/api/boards/', alice.headers, { name: 'Other' })
    const card = (await columns(board.id))[0]!.tasks[0]!.id
    const res = await call('PUT', `/api/boards/tasks/${card}/`, alice.headers, { column: other.columns[0].id })
    t.equal(res.statusCode, 400)
    t.same(res.json(), { error: true, errors: { column: ['Invalid column for this board.'] } })
    t.equal((await call('PUT', `/api/boards/tasks/${card}/`, alice.headers, { assigned_to_ids: [globex.admin.profileId] })).statusCode, 400)
    t.equal((await call('PUT', `/api/boards/tasks/${card}/`, alice.headers, { order: -1 })).statusCode, 400)
    const stranger = await acme.addMember('carol@acme.test')
    for (const [method, url, body] of [
      ['PUT', `/api/boards/tasks/${card}/`, { title: 'x' }],
      ['DELETE', `/api/boards/tasks/${card}/`, undefined],
      ['POST', `/api/boards/columns/${todo!.id}/tasks/`, { title: 'x' }],
      ['GET', `/api/boards/columns/${todo!.id}/tasks/`, undefined],
    ] as const) {
      t.equal((await call(method, url, stranger.headers, body)).statusCode, 404, `not on the board: ${method} ${url}`)
      t.equal((await call(method, url, globex.admin.headers, body)).statusCode, 404, `another organization: ${method} ${url}`)
    }
    t.equal((await call('DELETE', `/api/boards/${other.id}/`, alice.headers)).statusCode, 204)
  })

  t.test('many random moves over HTTP keep every column in the order the drops made', async (t) => {
    const lanesNow = await columns(board.id)
    const model = Object.fromEntries(lanesNow.map((c) => [c.id, c.tasks.map((card) => card.id)]))
    const ids = Object.values(model).flat()
    let seed = 11
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let i = 0; i < 30; i++) {
      const card = ids[random(ids.length)]!
      const to = lanesNow[random(lanesNow.length)]!.id
      const from = Object.keys(model).find((k) => model[k]!.includes(card))!
      model[from] = model[from]!.filter((id) => id !== card)
      const index = random(model[to]!.length + 1)
      model[to]!.splice(index, 0, card)
      await ok('PUT', `/api/boards/tasks/${card}/`, bob.headers, { column: to, order: index })
    }
    const after = await columns(board.id)
    t.same(Object.fromEntries(after.map((c) => [c.id, c.tasks.map((card) => card.id)])), model)
    t.ok(after.every((c) => c.tasks.every((card, i) => card.order === i)), 'orders are each column’s 0..n-1')
  })

  t.test('archiving: PATCH is_archived; ?archived=false hides it, ?archived=true shows only archived', async (t) => {
    await ok('PATCH', `/api/boards/${board.id}/`, alice.headers, { is_archived: true })
    t.same(await listed(alice.headers, '?archived=false'), [])
    t.same(await listed(alice.headers, '?archived=true'), ['Launch'])
    t.match(await ok('PUT', `/api/boards/${board.id}/`, alice.headers, { is_archived: false, name: 'Launch 2' }), { is_archived: false, name: 'Launch 2' })
    t.same(await listed(bob.headers, '?archived=false'), ['Launch 2'])
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, boardsProjector)
    t.ok(live.board_cards!.length >= 4, 'cards were projected')
  })

  t.test('deleting a board removes its columns and cards; a card is deleted on its own', async (t) => {
    const card = await addCard(done!.id, 'Doomed')
    t.equal((await call('DELETE', `/api/boards/tasks/${card}/`, bob.headers)).statusCode, 204)
    t.equal((await call('PUT', `/api/boards/tasks/${card}/`, bob.headers, { title: 'x' })).statusCode, 404)
    const survivor = (await columns(board.id)).flatMap((c) => c.tasks)[0]!.id
    t.equal((await call('DELETE', `/api/boards/${board.id}/`, acme.admin.headers)).statusCode, 204, 'an organization admin may delete any board')
    for (const url of [`/api/boards/${board.id}/`, `/api/boards/${board.id}/columns/`, `/api/boards/columns/${todo!.id}/tasks/`]) t.equal((await call('GET', url, alice.headers)).statusCode, 404, url)
    t.equal((await call('PUT', `/api/boards/tasks/${survivor}/`, alice.headers, { title: 'x' })).statusCode, 404)
    t.equal((await call('DELETE', `/api/boards/${board.id}/`, alice.headers)).statusCode, 204, 'deleting twice: nothing more')
    t.same(await listed(alice.headers), [])
    const counts = await Promise.all(boardsProjector.tables.map(async (table) => (await tableRows(database.db, table)).length))
    t.same(counts, [0, 0, 0, 0], 'no rows left behind')
  })
})
