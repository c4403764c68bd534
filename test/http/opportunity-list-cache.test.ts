import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { parsePosition } from '../../src/eventstore/event-store.ts'
import { CHECKPOINT_CHANNEL, startNotifications } from '../../src/eventstore/postgres-notifications.ts'
import type { Position } from '../../src/eventstore/event-store.ts'
import { buildApp } from '../../src/http/app.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { singleFlight } from '../../src/projections/kernel/single-flight.ts'
import { stampedCache } from '../../src/projections/kernel/stamped-cache.ts'
import { timeAgo, timeAgoChangesAt } from '../../src/http/opportunities/opportunity-views.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { collectionClient } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { silentLogger, testRunner, testStore } from '../helpers/runner.ts'
import { eventually } from '../reliability/harness.ts'

const BASE = '/api/opportunities/'
const DAY = 86_400_000

t.test('stampedCache: a value is served only at the stamp it was loaded under, and within the instants it holds for', async (t) => {
  const cache = stampedCache(2)
  let loads = 0
  const load = (value: string, from?: number, until?: number) => async () => {
    loads++
    return { value, from, until }
  }
  t.equal(await cache.get('k', 's1', 0, load('a')), 'a')
  t.equal(await cache.get('k', 's1', 0, load('b')), 'a', 'kept at the same stamp')
  t.equal(await cache.get('k', 's2', 0, load('c')), 'c', 'a moved stamp loads again')
  t.equal(await cache.get('k', undefined, 0, load('d')), 'd', 'no stamp: loaded')
  t.equal(await cache.get('k', undefined, 0, load('e')), 'e', 'and never kept')
  t.equal(await cache.get('t', 's1', 10, load('f', 10, 20)), 'f')
  t.equal(await cache.get('t', 's1', 19, load('g')), 'f', 'within [from, until)')
  t.equal(await cache.get('t', 's1', 20, load('h', 20, 30)), 'h', 'at until: loaded again')
  t.equal(await cache.get('t', 's1', 19, load('i')), 'i', 'before from (a clock set back): loaded again')
  await cache.get('x', 's1', 0, load('j'))
  await cache.get('y', 's1', 0, load('k'))
  t.equal(await cache.get('t', 's1', 19, load('l')), 'l', 'the least recently used entry went first')
  t.equal(loads, 10)
  t.equal(await cache.get('big', 's1', 0, async () => ({ value: 'm', keep: false })), 'm')
  t.equal(await cache.get('big', 's1', 0, load('n')), 'n', 'a value loaded with keep: false is answered, not kept')
})

/**
 * The list keeps its totals and pick lists per process between writes (stamped-cache.ts). Every
 * read here comes after a warm read of the same list, so a cache that missed a write would answer
 * the warm (stale) figures: in the process that wrote, and in another process on the same database
 * reading with the write's position (read-your-writes across processes).
 */
t.test('the deal list after a write: totals, counts and pick lists are never the ones kept from before', async (t) => {
  let now = FIXED_NOW
  const clock = () => now
  // Caches are what this checks, not latency: two runners' units move under a loaded suite (leases of 600 ms here), so writes may wait past the default 5 s.
  const env = { JWT_SECRET: 'a secret both processes sign and verify with', READ_YOUR_WRITES_TIMEOUT_MS: '30000' }
  const { app, database, projections: appRunner } = await buildTestApp(t, { clock, env })
  // A second process on the same database: its own caches, its own runner (it applies its share of the units).
  const store = testStore(t, database)
  // It announces what its units reached, as every process does (runtime.ts).
  const notices = startNotifications(database.pool, CHECKPOINT_CHANNEL)
  onTeardown(t, () => notices.close())
  const projections = testRunner(t, database, store, [...allProjectors], { checkpointNotices: notices })
  const { config } = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, ...env })
  const other = await buildApp({ config, db: database.db, store, projections, logger: silentLogger, clock })
  onTeardown(t, () => other.close())
  await other.ready()
  projections.start()
  // Writes begin once the two processes split the units: during the split they wait for the handover.
  await eventually('the two processes split the units', 30_000, async () => projections.held.size > 0 && appRunner.held.size + projections.held.size === allProjectors.length)

  const acme = await givenOrganization(app, database.db, 'Acme')
  const alice = await acme.addMember('alice@acme.test')
  const admin = acme.admin.headers
  const { inject } = collectionClient(app, BASE)
  let position = ''
  const write = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => {
    const res = await inject(method, url, headers, payload)
    t.ok(res.statusCode === 200 || res.statusCode === 201, `${method} ${url}: ${res.statusCode} ${res.statusCode < 300 ? "" : res.body}`)
    position = res.headers['x-event-position'] as string
    return res.json()
  }
  const hot = (await write('POST', '/api/tags/', admin, { name: 'hot' })).id as string
  const deal = async (payload: object, headers: Headers = admin) => (await write('POST', BASE, headers, payload)).id as string
  const listIn = async (server: typeof app, query: string, headers: Headers = admin) => {
    const res = await server.inject({ method: 'GET', url: `${BASE}${query}`, headers: { ...headers, 'x-min-position': position } })
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'listed' : res.body)
    return res.json()
  }
  const FILTERED = `?stage=PRO&amount__gte=100&tags=${hot}`
  // Warm both processes' caches, for each list read below (the rollup path, the filtered scan, a member's).
  const warm = async () => {
    for (const server of [app, other]) for (const [query, headers] of [['', admin], [FILTERED, admin], ['', alice.headers]] as const) await listIn(server, query, headers)
  }

  const first = await deal({ name: 'One', stage: 'PROSPECTING', amount: '100', tags: [hot], assigned_to: [alice.profileId] })
  await warm()
  for (const server of [app, other]) {
    t.match((await listIn(server, '')).totals, { count: 1, amount_sum: '100.00' })
    t.match((await listIn(server, FILTERED)).totals, { count: 1, amount_sum: '100.00' })
    t.match((await listIn(server, '', alice.headers)).totals, { count: 1 })
  }

  t.test('a deal created', async (t) => {
    await deal({ name: 'Two', stage: 'PROPOSAL', amount: '250.50', tags: [hot] })
    for (const server of [app, other]) {
      const all = await listIn(server, '')
      t.match(all, { opportunities_count: 2, totals: { count: 2, amount_sum: '350.50' } })
      t.same(all.page_number, [1])
      t.match((await listIn(server, FILTERED)).totals, { count: 2, amount_sum: '350.50' })
      t.match((await listIn(server, '', alice.headers)).totals, { count: 1 }, "a member's set did not change")
    }
  })

  t.test('a deal changed, assigned, then deleted', async (t) => {
    await warm()
    await write('PATCH', `${BASE}${first}/`, admin, { amount: '40' })
    for (const server of [app, other]) t.match((await listIn(server, FILTERED)).totals, { count: 1, amount_sum: '250.50' }, 'below amount__gte: out of the filtered set')
    await warm()
    const two = (await listIn(app, '?name=Two')).opportunities[0].id as string
    await write('PATCH', `${BASE}${two}/`, admin, { assigned_to: [alice.profileId] })
    for (const server of [app, other]) t.match((await listIn(server, '', alice.headers)).totals, { count: 2 })
    await warm()
    await write('DELETE', `${BASE}${two}/`, admin)
    for (const server of [app, other]) {
      t.match((await listIn(server, '')).totals, { count: 1, amount_sum: '40.00' })
      t.match((await listIn(server, FILTERED)).totals, { count: 0, by_currency: [] })
      t.match((await listIn(server, '', alice.headers)).totals, { count: 1 })
    }
  })

  t.test('pick lists: an account, a tag, a stage', async (t) => {
    await warm()
    await write('POST', '/api/accounts/', admin, { name: 'Initech' })
    await write('POST', '/api/tags/', admin, { name: 'cold' })
    const pipeline = (await inject('GET', '/api/opportunities/pipelines/', admin)).json().pipelines[0]
    await write('POST', `/api/opportunities/pipelines/${pipeline.id}/stages/`, admin, { label: 'Demo', kind: 'open' })
    for (const server of [app, other]) {
      const body = await listIn(server, '')
      t.match(body.accounts_list, [{ name: 'Initech' }])
      t.same(body.tags.map((tag: { name: string }) => tag.name), ['cold', 'hot'])
      t.ok(body.stage.some(([code]: string[]) => code === 'DEMO'), 'the new stage is a choice')
    }
  })

  t.test('the stalled count follows the clock while nothing is written', async (t) => {
    await warm()
    for (const server of [app, other]) t.equal((await listIn(server, '')).totals.stalled_count, 0)
    now = new Date(FIXED_NOW.getTime() + 60 * DAY)
    for (const server of [app, other]) {
      t.equal((await listIn(server, '')).totals.stalled_count, 1, 'the open deal stalled since')
      t.equal((await listIn(server, '?stage=PRO')).totals.stalled_count, 1)
    }
    now = FIXED_NOW
    for (const server of [app, other]) t.equal((await listIn(server, '')).totals.stalled_count, 0, 'a clock set back is not served the later count')
  })

  /**
   * Issue 36: whole list answers and boards are kept too, stamped by every source they show, the
   * identity tables (a trigger's stamp) and teams included, and only while no text in them moves
   * with the clock (days in stage, created_on_arrow).
   */
  t.test('whole answers and boards: a member and a team renamed, a deal created, days passing', async (t) => {
    const boardIn = async (server: typeof app) => {
      const res = await server.inject({ method: 'GET', url: `${BASE}kanban/`, headers: { ...admin, 'x-min-position': position } })
      t.equal(res.statusCode, 200, res.statusCode === 200 ? 'board' : res.body)
      return res.json() as { total_items: number; columns: { items: { name: string; assigned_to: { first_name: string }[]; days_in_stage: number }[] }[] }
    }
    const cardOf = async (server: typeof app, name: string) => (await boardIn(server)).columns.flatMap((column) => column.items).find((card) => card.name === name)
    const rowOf = async (server: typeof app, name: string) => (await listIn(server, '')).opportunities.find((row: { name: string }) => row.name === name)
    const warmAll = async () => {
      await warm()
      for (const server of [app, other]) await boardIn(server)
    }
    const team = (await write('POST', '/api/teams/', admin, { name: 'Red', users: [] })).id as string
    await write('PATCH', `${BASE}${first}/`, admin, { teams: [team] })

    await warmAll()
    const renamed = await inject('PATCH', `/api/user/${alice.profileId}/`, admin, { first_name: 'Alicia' })
    t.equal(renamed.statusCode, 200, renamed.body)
    for (const server of [app, other]) {
      t.match(await rowOf(server, 'One'), { assigned_to: [{ first_name: 'Alicia' }] }, 'the list shows the new name')
      t.match(await cardOf(server, 'One'), { assigned_to: [{ first_name: 'Alicia' }] }, 'the board shows the new name')
    }

    await warmAll()
    await write('PATCH', `/api/teams/${team}/`, admin, { name: 'Blue' })
    for (const server of [app, other]) t.match(await rowOf(server, 'One'), { teams: [{ name: 'Blue' }] }, 'the list shows the team renamed')

    await warmAll()
    const before = await boardIn(app)
    await deal({ name: 'Three', stage: 'PROSPECTING', amount: '5' })
    for (const server of [app, other]) {
      t.equal((await boardIn(server)).total_items, before.total_items + 1, 'the board counts the new deal')
      t.ok(await cardOf(server, 'Three'), 'and shows its card')
    }

    await warmAll()
    const [row, card] = [await rowOf(app, 'One'), await cardOf(app, 'One')]
    now = new Date(FIXED_NOW.getTime() + 3 * DAY)
    for (const server of [app, other]) {
      t.match(await rowOf(server, 'One'), { days_in_stage: row.days_in_stage + 3, created_on_arrow: '3 days ago' }, "the list's texts moved with the clock")
      t.equal((await cardOf(server, 'One'))?.days_in_stage, card!.days_in_stage + 3, "and the board's")
    }
    now = FIXED_NOW
    for (const server of [app, other]) t.match(await rowOf(server, 'One'), { days_in_stage: row.days_in_stage, created_on_arrow: row.created_on_arrow }, 'a clock set back is not served the later answer')
  })
})

t.test('timeAgoChangesAt: the text holds until the instant said, and changes there', async (t) => {
  const then = new Date('2026-01-01T00:00:00.000Z')
  // Seconds after `then`: each unit's counts, the thresholds between units, a year past 12 months.
  for (const seconds of [0, 59, 60, 61, 3599, 3600, 86_399, 86_400, 2_591_999, 2_592_000, 31_535_999, 31_536_000, 33_000_000, 100_000_000]) {
    const now = new Date(then.getTime() + seconds * 1000 + 500)
    const until = timeAgoChangesAt(then, now)
    t.ok(until > now.getTime(), `${seconds} s: later than now`)
    t.equal(timeAgo(then, new Date(until - 1)), timeAgo(then, now), `${seconds} s: the same text until then`)
    t.not(timeAgo(then, new Date(until)), timeAgo(then, now), `${seconds} s: another from then`)
  }
  t.equal(timeAgoChangesAt(then, new Date(then.getTime() - 5000)), then.getTime() + 60_000, 'a future instant is "just now" for a minute after it')
})

t.test('singleFlight: calls of one key while its load runs share it, its error included; a later call loads again', async (t) => {
  const shared = singleFlight()
  let loads = 0
  let finish!: (value: string) => void
  const slow = () => {
    loads++
    return new Promise<string>((resolve) => (finish = resolve))
  }
  const calls = [shared('k', slow), shared('k', slow), shared('k', slow)]
  t.equal(await shared('other', async () => 'o'), 'o', 'another key loads on its own')
  finish('v')
  t.same(await Promise.all(calls), ['v', 'v', 'v'])
  t.equal(loads, 1)
  const failing = [shared('k', () => Promise.reject(new Error('boom'))), shared('k', slow)]
  for (const call of failing) await t.rejects(call, /boom/)
  t.equal(await shared('k', async () => 'again'), 'again', 'settled: loaded again')
})

/**
 * Issue 36: right after a write, N identical requests for the list's totals or the board must
 * compute them once in this process. Counted as SQL statements sent (the totals' and the cards'),
 * not timed. The cold computation is held until every request has read its stamps (the last step
 * before it joins or computes), so each of the N has reached that point while it runs.
 */
t.test('no stampede: N concurrent cold requests for the same totals or board compute them once', async (t) => {
  const N = 12
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const { inject } = collectionClient(app, BASE)
  // Statements sent by this process, by what they compute; a held one waits for `release`.
  const sent = { stamps: 0, totals: 0, cards: 0 }
  let hold: { pattern: string; until: Promise<void> } | undefined
  let stampsRead = 0
  let stampsWanted = Infinity
  let release = () => {}
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => Promise<unknown>
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string }).text ?? '')
    if (text.includes('FROM projection_checkpoints WHERE name = ANY')) {
      sent.stamps++
      return query.apply(this, args).finally(() => {
        if (++stampsRead >= stampsWanted) release()
      })
    }
    if (text.includes('AS weighted_sum')) sent.totals++
    if (text.includes('column_stage(id)')) sent.cards++
    const held = hold && text.includes(hold.pattern) ? hold.until : undefined
    return held ? held.then(() => query.apply(this, args)) : query.apply(this, args)
  } as typeof pg.Client.prototype.query
  t.teardown(() => {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query
  })

  /**
   * Until every read model's checkpoint row has reached the write: a projector with nothing to apply
   * saves its checkpoint only when idle, and requests that read their stamps on either side of that
   * save hold two stamps, so two computations (CI saw the board built twice so).
   */
  const checkpointsReach = async (position: Position) => {
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM projection_checkpoints WHERE (position_commit, position_prepare) < (${position.commit}, ${position.prepare})`.execute(database.db)
      if (rows[0]!.n === 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.fail('the read models saved their checkpoints at the write')
  }

  /** Sends `url` N times at once after a fresh write (so nothing of it is kept), its `pattern` statements held until all N have read their stamps. */
  const stampede = async (url: string, pattern: string) => {
    const position = (await inject('POST', BASE, acme.admin.headers, { name: `Deal ${Math.random()}`, amount: '10', currency: 'USD' })).headers['x-event-position'] as string
    await checkpointsReach(parsePosition(position)!)
    stampsRead = 0
    stampsWanted = N
    hold = { pattern, until: new Promise((resolve) => (release = resolve)) }
    const counted = { ...sent }
    const answers = await Promise.all(Array.from({ length: N }, () => app.inject({ method: 'GET', url, headers: { ...acme.admin.headers, 'x-min-position': position } })))
    hold = undefined
    stampsWanted = Infinity
    t.same(answers.map((a) => a.statusCode), Array(N).fill(200), answers.find((a) => a.statusCode !== 200)?.body ?? 'all answered')
    t.equal(new Set(answers.map((a) => a.body)).size, 1, 'the same answer for all')
    return { stamps: sent.stamps - counted.stamps, totals: sent.totals - counted.totals, cards: sent.cards - counted.cards, body: answers[0]!.json() }
  }

  const list = await stampede(BASE, 'AS weighted_sum')
  t.equal(list.stamps, N, 'every request read its stamps')
  t.equal(list.totals, 1, 'the totals computed once')
  t.match(list.body.totals, { count: 1, amount_sum: '10.00' })
  const board = await stampede(`${BASE}kanban/`, 'column_stage(id)')
  t.equal(board.stamps, N)
  // Under NODE_ENV=test a board is built twice, as text and as the reference it is checked against (board-answer.ts).
  t.equal(board.cards, 2, 'the board built once')
  t.equal(board.body.total_items, 2)
})
