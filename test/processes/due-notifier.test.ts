import t from 'tap'
import { createDueNotifier } from '../../src/processes/due-notifier.ts'
import type { NotifyOutcome } from '../../src/processes/due-notifier.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { projectorNamed, rebuildEqualsLive } from '../helpers/read-models.ts'
import { silentLogger } from '../helpers/runner.ts'

const DAY = 86_400_000

/**
 * Issue 19: the notifications time causes (a task due today or overdue, a deal turned red) are
 * raised by a process on the projections' leader, once per cause and person, whatever how often it
 * runs. The clock is moved by hand; FIXED_NOW is Sunday 2026-11-22, 09:00 UTC.
 */
t.test('due notifier', async (t) => {
  let now = FIXED_NOW
  const { app, database, store, projections, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now })
  const deps = { db: database.db, store, clock: () => now, logger: silentLogger, intervalMs: 60_000 }
  const leader = createDueNotifier({ ...deps, projections })
  const standby = createDueNotifier({ ...deps, projections: { isLeader: false } })
  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, payload?: object) => {
    const res = await app.inject({ method, url, headers, payload })
    if (res.statusCode >= 300) t.fail(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.statusCode === 204 ? null : res.json()
  }
  const task = async (headers: Headers, payload: object) => (await ok('POST', '/api/tasks/', headers, payload)).id as string
  const verbs = async (headers: Headers) => ((await ok('GET', '/api/notifications/', headers)).results as { verb: string; entity_id: string }[]).map((n) => `${n.verb} ${n.entity_id}`).sort()
  const notify = async (): Promise<number> => {
    const outcome = (await leader.notify()) as Extract<NotifyOutcome, { ran: true }>
    if (outcome.position) await projections.waitFor(outcome.position, 30_000)
    return outcome.raised
  }

  const dueToday = await task(acme.admin.headers, { title: 'Call back', due_date: '2026-11-22', assigned_to: [bob.profileId] })
  const dueTomorrow = await task(acme.admin.headers, { title: 'Send quote', due_date: '2026-11-23', assigned_to: [alice.profileId] })
  const overdueOwn = await task(alice.headers, { title: 'Unassigned, late', due_date: '2026-11-20' })
  await task(acme.admin.headers, { title: 'Done already', due_date: '2026-11-20', status: 'Completed', assigned_to: [bob.profileId] })
  await task(acme.admin.headers, { title: 'Someday', assigned_to: [bob.profileId] })
  await task(globex.admin.headers, { title: 'Globex late', due_date: '2026-11-01' })
  // A deal created 30 days ago in the first stage, assigned to Alice: red by now (§3.2).
  now = new Date(FIXED_NOW.getTime() - 30 * DAY)
  const deal = (await ok('POST', '/api/opportunities/', acme.admin.headers, { name: 'Quiet deal', stage: 'PROSPECTING', assigned_to: [alice.profileId] })).id as string
  now = FIXED_NOW
  const assignments = { alice: await verbs(alice.headers), bob: await verbs(bob.headers) }

  t.test('a task assigned by someone else notifies its assignees, as other records do', async (t) => {
    t.same(assignments.bob.filter((v) => v.startsWith('task.')).length, 3)
    t.ok(assignments.alice.includes(`task.assigned ${dueTomorrow}`))
    t.notOk(assignments.alice.includes(`task.assigned ${overdueOwn}`), 'her own unassigned task: nothing')
  })

  t.test('only the leader notifies', async (t) => {
    t.same(await standby.notify(), { ran: false, reason: 'not the leader' })
  })

  t.test('today: due today, overdue (the creator of an unassigned task), red deals; not completed or undated tasks', async (t) => {
    t.equal(await notify(), 4)
    t.same(await verbs(alice.headers), [...assignments.alice, `opportunity.rotten ${deal}`, `task.overdue ${overdueOwn}`].sort())
    t.same(await verbs(bob.headers), [...assignments.bob, `task.due_today ${dueToday}`].sort())
    t.same(await verbs(globex.admin.headers), [`task.overdue ${(await ok('GET', '/api/tasks/', globex.admin.headers)).results[0].id}`])
    const rotten = (await ok('GET', '/api/notifications/', alice.headers)).results.find((n: { verb: string }) => n.verb === 'opportunity.rotten')
    t.match(rotten, { entity_type: 'Opportunity', entity_name: 'Quiet deal', link: `/pipeline/${deal}`, actor: null, data: { stage: 'PROSPECTING' } })
  })

  t.test('running again, by either process, raises nothing twice; nor after the member deleted one', async (t) => {
    const bobs = (await ok('GET', '/api/notifications/', bob.headers)).results as { id: string; verb: string }[]
    await ok('POST', '/api/notifications/read-all/', bob.headers, {})
    t.equal((await app.inject({ method: 'DELETE', url: `/api/notifications/${bobs.find((n) => n.verb === 'task.due_today')!.id}/`, headers: bob.headers })).statusCode, 204)
    t.equal(await notify(), 0)
    t.same((await Promise.all([leader.notify(), standby.notify()])).map((o) => (o.ran ? o.raised : o.reason)), [0, 'not the leader'])
  })

  t.test('a day later: today\'s task is overdue, tomorrow\'s due today; a new due date is a new cause, completing ends it', async (t) => {
    now = new Date(FIXED_NOW.getTime() + DAY)
    t.equal(await notify(), 2)
    t.ok((await verbs(bob.headers)).includes(`task.overdue ${dueToday}`))
    t.ok((await verbs(alice.headers)).includes(`task.due_today ${dueTomorrow}`))
    await ok('PATCH', `/api/tasks/${dueTomorrow}/`, acme.admin.headers, { due_date: '2026-11-20' })
    await ok('PATCH', `/api/tasks/${dueToday}/`, bob.headers, { status: 'Completed' })
    t.equal(await notify(), 1, 'the moved due date: overdue now')
    t.ok((await verbs(alice.headers)).includes(`task.overdue ${dueTomorrow}`))
  })

  t.test('the raised notifications replay: rebuild = live', async (t) => {
    const answers = async () => ({ alice: await ok('GET', '/api/notifications/', alice.headers), bob: await ok('GET', '/api/notifications/', bob.headers) })
    await rebuildEqualsLive(t, { db: database.db, store }, projectorNamed('notifications'), { answers })
  })
})
