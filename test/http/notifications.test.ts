import t from 'tap'
import { notificationStreams } from '../../src/commands/notification/notification.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import { openSseClient } from '../helpers/sse-client.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { projectorNamed, rebuildEqualsLive } from '../helpers/read-models.ts'

type Note = { id: string; verb: string; entity_type: string; entity_id: string; entity_name: string; link: string; read_at: string | null; actor: { id: string } | null; data: Record<string, unknown> }
type Entry = { entity_type: string; entity_id: string; entity_name: string | null; action: string; description: string; link: string; user: { id: string } | null }

t.test('notifications and the activity feed: projections of the event log', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => {
    const res = await call(method, url, headers, payload)
    if (res.statusCode >= 300) t.fail(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.statusCode === 204 ? null : res.json()
  }
  const inbox = async (headers: Headers, query = '') => (await ok('GET', `/api/notifications/${query}`, headers)) as { count: number; unread_count: number; results: Note[] }
  const feed = async (headers: Headers, query = '') => (await ok('GET', `/api/activities/${query}`, headers)) as { count: number; next_offset: number | null; activities: Entry[] }

  // The admin assigns a lead to Alice and an account to Alice and Bob; Bob assigns himself a deal.
  const lead = (await ok('POST', '/api/leads/', admin, { first_name: 'Ada', last_name: 'Lovelace', assigned_to: [alice.profileId] })).id as string
  const account = (await ok('POST', '/api/accounts/', admin, { name: 'Initech', assigned_to: [alice.profileId, bob.profileId] })).id as string
  const deal = (await ok('POST', '/api/opportunities/', bob.headers, { name: 'Bob deal', stage: 'PROSPECTING', assigned_to: [bob.profileId] })).id as string

  t.test('a record assigned to a member notifies them, not the one who assigned it; a change notifies new assignees only', async (t) => {
    const alices = await inbox(alice.headers)
    t.equal(alices.unread_count, 2)
    t.same(alices.results.map((n) => [n.verb, n.entity_name, n.link]), [['account.assigned', 'Initech', `/accounts/${account}`], ['lead.assigned', 'Ada Lovelace', `/leads/${lead}`]], 'newest first')
    t.match(alices.results[0], { entity_type: 'Account', entity_id: account, actor: { id: acme.admin.profileId, user_details: { email: 'admin@acme.test' } }, read_at: null, created_at: FIXED_NOW.toISOString(), data: {} })
    t.same((await inbox(bob.headers)).results.map((n) => n.verb), ['account.assigned'], 'assigning himself the deal told Bob nothing')

    await ok('PATCH', `/api/leads/${lead}/`, admin, { assigned_to: [alice.profileId, bob.profileId] })
    await ok('PUT', `/api/accounts/${account}/`, admin, { name: 'Initech', assigned_to: [bob.profileId] })
    t.same((await inbox(bob.headers)).results.map((n) => n.verb), ['lead.assigned', 'account.assigned'], 'Bob is new on the lead; still on the account')
    t.equal((await inbox(alice.headers)).count, 2, 'Alice, kept on the lead and taken off the account, hears of neither')
    t.same((await inbox(globex.admin.headers)).results, [], "another organization's member has none")
  })

  t.test('a comment mentioning a member by the part of their email before the @ notifies them, if they may see the record', async (t) => {
    const ping = 'Ping @alice and @ALICE, @nobody, @bob and mail admin@acme.test'
    await ok('POST', `/api/opportunities/comment/${deal}/`, bob.headers, { comment: ping })
    t.notOk((await inbox(alice.headers)).results.some((n) => n.verb === 'opportunity.mentioned'), "named on Bob's deal, which Alice may not see (visibility policy): she is not shown it")
    const [event] = (await store.readStream(`opportunity-${deal}`)).filter((e) => e.type === 'OpportunityCommentAdded')
    t.same((event!.data as { mentions: string[] }).mentions, [alice.profileId, bob.profileId], 'the comment event records whom it named, resolved when written')
    await ok('POST', `/api/accounts/${account}/`, bob.headers, { comment: ping })
    const mention = (await inbox(alice.headers)).results[0]!
    t.match(mention, { verb: 'account.mentioned', entity_type: 'Account', entity_id: account, entity_name: 'Initech', link: `/accounts/${account}`, actor: { id: bob.profileId }, data: { comment_excerpt: ping } })
    t.equal((await inbox(alice.headers)).results.filter((n) => n.verb === 'account.mentioned').length, 1, 'once however often named')
    t.notOk((await inbox(bob.headers)).results.some((n) => n.verb.endsWith('.mentioned')), 'mentioning oneself notifies no one')
    t.notOk((await inbox(admin)).results.some((n) => n.verb.endsWith('.mentioned')), 'an email address is not a mention')
    await ok('POST', `/api/accounts/${account}/`, admin, { comment: 'No names here' })
    const plain = (await store.readStream(`account-${account}`)).filter((e) => e.type === 'AccountCommentAdded').at(-1)
    t.notOk('mentions' in (plain!.data as object), 'a comment naming no one keeps its first shape')
  })

  t.test('filters: unread, since, limit; count against unread_count', async (t) => {
    t.same(await inbox(alice.headers, '?limit=1'), { count: 3, unread_count: 3, results: [(await inbox(alice.headers)).results[0]] })
    t.match(await inbox(alice.headers, `?since=${encodeURIComponent(FIXED_NOW.toISOString())}`), { count: 0, unread_count: 3, results: [] }, 'nothing after now (the fixed clock)')
    t.equal((await inbox(alice.headers, '?since=2026-11-21T00:00:00Z&limit=500')).count, 3, 'a limit above 100 is read as 100')
    t.equal((await call('GET', '/api/notifications/?since=yesterday', alice.headers)).statusCode, 400)
    t.equal((await call('GET', '/api/notifications/?limit=0', alice.headers)).statusCode, 400)
  })

  t.test('read one, read all, delete: events of the member\'s notification stream; another\'s id is a 404', async (t) => {
    const [first, second, third] = (await inbox(alice.headers)).results as [Note, Note, Note]
    const read = await call('POST', `/api/notifications/${first.id}/read/`, alice.headers)
    t.equal(read.statusCode, 204)
    t.match(read.headers['x-event-position'], /^\d+-\d+$/)
    t.equal((await call('POST', `/api/notifications/${first.id}/read/`, alice.headers)).statusCode, 204, 'again: no change')
    t.match(await inbox(alice.headers), { unread_count: 2, results: [{ id: first.id, read_at: FIXED_NOW.toISOString() }] })
    t.same((await inbox(alice.headers, '?unread=true')).results.map((n) => n.id), [second.id, third.id])
    for (const [method, url] of [['POST', `/api/notifications/${second.id}/read/`], ['DELETE', `/api/notifications/${second.id}/`]] as const) {
      t.equal((await call(method, url, bob.headers)).statusCode, 404, `${method} ${url} by another member`)
      t.equal((await call(method, url, globex.admin.headers)).statusCode, 404, `${method} ${url} from another organization`)
    }
    t.equal((await call('DELETE', `/api/notifications/${second.id}/`, alice.headers)).statusCode, 204)
    t.equal((await call('DELETE', `/api/notifications/${second.id}/`, alice.headers)).statusCode, 404, 'a deleted one is gone')
    t.equal((await call('POST', `/api/notifications/${second.id}/read/`, alice.headers)).statusCode, 404)
    t.match(await inbox(alice.headers), { count: 2, unread_count: 1 })
    t.equal((await call('POST', '/api/notifications/read-all/', alice.headers, { before: '2026-11-01T00:00:00Z' })).statusCode, 204)
    t.equal((await inbox(alice.headers)).unread_count, 1, 'none was created before `before`')
    t.equal((await call('POST', '/api/notifications/read-all/', alice.headers, { after: 'x' })).statusCode, 400, 'unknown fields are refused')
    t.equal((await app.inject({ method: 'POST', url: '/api/notifications/read-all/', headers: alice.headers })).statusCode, 204, 'no body: all of them')
    t.equal((await inbox(alice.headers)).unread_count, 0)
    t.equal((await inbox(bob.headers)).unread_count, 2, "Bob's are his own")
    t.same((await store.readStream(notificationStreams.stream(alice.profileId))).map((e) => e.type), ['NotificationRead', 'NotificationDeleted', 'NotificationsReadAll'])
  })

  t.test('the activity feed: every change of the records the caller may see, with actor, verb, record and link', async (t) => {
    const adminFeed = await feed(admin, '?limit=50')
    t.match(adminFeed.activities[0], { entity_type: 'Account', entity_id: account, entity_name: 'Initech', action: 'COMMENT', description: 'Added a comment', link: `/accounts/${account}`, user: { id: acme.admin.profileId } })
    t.same(adminFeed.activities.map((a) => a.entity_type).sort(), ['Account', 'Account', 'Account', 'Account', 'Lead', 'Lead', 'Opportunity', 'Opportunity'].sort())
    const aliceFeed = await feed(alice.headers, '?limit=50')
    t.notOk(aliceFeed.activities.some((a) => a.entity_id === deal), "Alice does not see Bob's deal, as her deal list does not")
    t.ok(aliceFeed.activities.some((a) => a.entity_id === lead), 'she sees the lead assigned to her')
    t.same((await feed(admin, `?entity_id=${deal}`)).activities.map((a) => a.action), ['COMMENT', 'CREATE'])
    t.same((await feed(admin, '?entity_type=Lead')).activities.map((a) => a.description), ['Changed assigned_to', 'Created the lead'])
    t.same((await feed(admin, `?actor=${bob.profileId}`)).activities.map((a) => a.entity_id), [account, deal, deal])
    const page = await feed(admin, '?limit=2&offset=1')
    t.match(page, { count: 2, next_offset: 3 })
    t.same(page.activities, adminFeed.activities.slice(1, 3))
    t.equal((await feed(admin, '?limit=2&offset=6')).next_offset, null)
    t.equal((await feed(admin, '?limit=999')).count, 8, 'a limit above 50 is read as 50')
    t.same((await feed(globex.admin.headers)).activities, [])
    t.equal((await call('GET', '/api/activities/?entity_type=Planet', admin)).statusCode, 400)
    t.equal((await call('GET', '/api/activities/?entity_id=nope', admin)).statusCode, 400)
  })

  t.test('GET /api/stream/notifications/: the caller\'s new notifications, live, resumable', async (t) => {
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const live = await openSseClient(`${base}/api/stream/notifications/`, alice.headers)
    t.teardown(() => live.close())
    t.equal(live.status, 200)
    await live.until((frames) => frames.some((f) => f.event === 'ready'))
    await ok('POST', '/api/leads/', admin, { first_name: 'Live', last_name: 'One', assigned_to: [bob.profileId] })
    const created = (await ok('POST', '/api/leads/', admin, { first_name: 'Live', last_name: 'Two', assigned_to: [alice.profileId] })).id as string
    const [frame] = (await live.until((frames) => frames.some((f) => f.event === 'notification'))).filter((f) => f.event === 'notification')
    t.match(frame, { id: /^\d+-\d+$/, data: { verb: 'lead.assigned', entity_id: created, entity_name: 'Live Two', actor: { id: acme.admin.profileId } } }, "Bob's is not in Alice's stream")
    t.same(frame!.data, (await inbox(alice.headers)).results[0], 'as the list answers it')
    // Resumed from where the first stream started: the same frame again, once, and nothing of Bob's.
    const from = live.frames.find((f) => f.event === 'ready')!.id!
    const resumed = await openSseClient(`${base}/api/stream/notifications/`, { ...alice.headers, 'last-event-id': from })
    t.teardown(() => resumed.close())
    await resumed.until((frames) => frames.some((f) => f.event === 'notification'))
    t.same(resumed.frames.filter((f) => f.event === 'notification'), [frame])
  })

  t.test('tasks: assigned and mentioned, with the task page as link; the feed shows tasks to those who may see them', async (t) => {
    const task = (await ok('POST', '/api/tasks/', admin, { title: 'Prepare demo', assigned_to: [alice.profileId] })).id as string
    await ok('POST', `/api/tasks/${task}/`, alice.headers, { comment: 'Can @bob help?' })
    t.match((await inbox(alice.headers)).results[0], { verb: 'task.assigned', entity_type: 'Task', entity_id: task, entity_name: 'Prepare demo', link: `/tasks/${task}` })
    t.notOk((await inbox(bob.headers)).results.some((n) => n.verb === 'task.mentioned'), 'mentioned in a task he may not see: not shown it (visibility policy)')
    t.same((await feed(alice.headers, '?entity_type=Task')).activities.map((a) => a.description), ['Added a comment', 'Created the task'])
    t.same((await feed(bob.headers, '?entity_type=Task')).activities, [], 'mentioned in it, but not his task: as his task list')
    await ok('PATCH', `/api/tasks/${task}/`, admin, { assigned_to: [alice.profileId, bob.profileId] })
    t.match((await inbox(bob.headers)).results.find((n) => n.verb === 'task.mentioned'), { entity_id: task, entity_name: 'Prepare demo', actor: { id: alice.profileId }, data: { comment_excerpt: 'Can @bob help?' } }, 'handed the task, he sees the mention')
  })

  t.test('rebuild = live: both read models replay to the same rows and answers', async (t) => {
    const answers = async () => ({ alice: await inbox(alice.headers), bob: await inbox(bob.headers), feed: await feed(admin, '?limit=50') })
    const live = await rebuildEqualsLive(t, { db: database.db, store }, [projectorNamed('notifications'), projectorNamed('dashboard_activity')], { answers })
    t.ok(live.notifications!.length >= 5)
  })
})
