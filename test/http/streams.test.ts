import t from 'tap'
import { START, comparePositions, formatPosition, parsePosition } from '../../src/eventstore/event-store.ts'
import type { EventStore, Position } from '../../src/eventstore/event-store.ts'
import { sseSettings } from '../../src/http/kernel/sse.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { openSseClient } from '../helpers/sse-client.ts'
import type { SseFrame } from '../helpers/sse-client.ts'

sseSettings.heartbeatMs = 100

type FeedPage = { events: { position: string; stream: string; revision: number; type: string; data: unknown; at: string }[]; next: string; is_end: boolean }

/** Positions of the organization's events in the log, in order (optionally of some types). */
async function logOf(store: EventStore, orgId: string, types?: string[], from: Position = START): Promise<string[]> {
  const positions: string[] = []
  let after = from
  for (;;) {
    const page = await store.readAll({ after, maxCount: 1000, eventTypes: types })
    positions.push(...page.events.filter((e) => e.metadata.orgId === orgId).map((e) => formatPosition(e.position)))
    after = page.scannedTo
    if (page.isEnd) return positions
  }
}

t.test('issue 8 §3: event feeds, live deal streams, projections status, min_position', async (t) => {
  // Writers race a reader here, beside other files on a 2-core machine: a 2 s wait for the read models answered 503 there.
  const { app, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { env: { READ_YOUR_WRITES_TIMEOUT_MS: '10000' } })
  const admin = acme.admin.headers
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const get = (url: string, headers: Headers = admin) => app.inject({ method: 'GET', url, headers })
  const post = async (url: string, payload: object, headers: Headers = admin) => {
    const res = await app.inject({ method: 'POST', url, headers, payload })
    if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`)
    return res
  }
  const account = (name: string, headers: Headers = admin) => post('/api/accounts/', { name }, headers)
  const deal = async (payload: object, headers: Headers = admin) => (await post('/api/opportunities/', payload, headers)).json().id as string
  const stream = async (path: string, headers: Headers = admin) => {
    const client = await openSseClient(`${base}${path}`, headers)
    t.teardown(() => client.close())
    return client
  }
  const frameIds = (frames: SseFrame[], event?: string) => frames.filter((f) => f.event !== 'ready' && (!event || f.event === event)).map((f) => f.id!)

  t.test('GET /api/events/: following `next` sees every event of the organization once while writers commit concurrently', async (t) => {
    const seen: string[] = []
    let after = ''
    let writing = true
    const writers = (async () => {
      for (let round = 0; round < 6; round++) {
        await Promise.all([...Array.from({ length: 5 }, (_, i) => account(`Feed ${round}-${i}`)), account(`Other ${round}`, globex.admin.headers)])
      }
      writing = false
    })()
    for (let pages = 0; pages < 2000; pages++) {
      const page: FeedPage = (await get(`/api/events/?limit=4${after ? `&after=${after}` : ''}`)).json()
      t.ok(page.events.length <= 4)
      seen.push(...page.events.map((e) => e.position))
      after = page.next
      if (!writing && page.is_end) break
      if (page.is_end) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await writers
    // A last page after the writers finished, in case the loop ended on the page that saw them finish.
    for (;;) {
      const page: FeedPage = (await get(`/api/events/?after=${after}`)).json()
      seen.push(...page.events.map((e) => e.position))
      after = page.next
      if (page.is_end) break
    }
    t.equal(new Set(seen).size, seen.length, 'no event twice')
    t.same(seen, await logOf(store, acme.orgId), "exactly the organization's events, in log order")

    const typed: FeedPage = (await get('/api/events/?type=AccountCreated&type=AccountDeleted&limit=1000')).json()
    t.same(typed.events.map((e) => e.position), await logOf(store, acme.orgId, ['AccountCreated', 'AccountDeleted']), 'filtered by type')
    t.match(typed.events[0], { stream: String, revision: 0, type: 'AccountCreated', data: { name: String }, at: String })
    t.equal(typed.is_end, true)

    const member = await get('/api/events/', alice.headers)
    t.equal(member.statusCode, 403, 'admins only: the feed shows every change')
    const malformed = await get('/api/events/?after=yesterday')
    t.equal(malformed.statusCode, 400)
    t.match(malformed.json(), { error: true, errors: { after: [String] } })
  })

  t.test('GET /api/stream/events/: SSE, resumed with Last-Event-ID while writes continue', async (t) => {
    const start = (await get('/api/events/?limit=1000&type=AccountCreated')).json().next as string
    const first = await stream(`/api/stream/events/?type=AccountCreated&after=${start}`)
    t.equal(first.status, 200)
    t.match(first.headers.get('content-type'), /^text\/event-stream/)
    let writing = true
    const writers = (async () => {
      for (let i = 0; i < 12; i++) await Promise.all([account(`Live ${i}a`), account(`Live ${i}b`), account(`Globex ${i}`, globex.admin.headers)])
      writing = false
    })()
    await first.until((frames) => frameIds(frames).length >= 5)
    first.close()
    t.ok(writing, 'writes continue while the client reconnects')
    const lastId = frameIds(first.frames).at(-1)!
    const second = await stream('/api/stream/events/?type=AccountCreated', { ...admin, 'last-event-id': lastId })
    await writers
    const expected = await logOf(store, acme.orgId, ['AccountCreated'], parsePosition(start))
    const ids = () => [...frameIds(first.frames), ...frameIds(second.frames)]
    await second.until(() => ids().length >= expected.length)
    t.same(ids(), expected.slice(0, ids().length), 'no gap, no duplicate, in order')
    t.equal(ids().length, expected.length)
    t.match(second.frames[0], { event: 'ready', id: lastId })
    t.match(second.frames[1], { event: 'AccountCreated', data: { type: 'AccountCreated', data: { name: String } } })
    await second.until(() => second.comments.includes('keep-alive'), 2000)
    t.pass('heartbeat comments while idle')

    const member = await fetch(`${base}/api/stream/events/`, { headers: alice.headers })
    t.equal(member.status, 403)
    const malformed = await fetch(`${base}/api/stream/events/`, { headers: { ...admin, 'last-event-id': 'nope' } })
    t.equal(malformed.status, 400)
  })

  t.test("GET /api/stream/opportunities/: a member sees the changes of the deals they created or are assigned to", async (t) => {
    const aliceStream = await stream('/api/stream/opportunities/', alice.headers)
    await aliceStream.until((frames) => frames.some((f) => f.event === 'ready'))
    const assigned = await deal({ name: 'Assigned to Alice', assigned_to: [alice.profileId] })
    await deal({ name: 'Not hers' })
    await deal({ name: "Bob's" }, bob.headers)
    await aliceStream.until((frames) => frames.some((f) => f.event === 'upsert'))
    const row = (await get('/api/opportunities/?name=Assigned', alice.headers)).json().opportunities[0]
    const unassign = await app.inject({ method: 'PATCH', url: `/api/opportunities/${assigned}/`, headers: admin, payload: { assigned_to: [] } })
    t.equal(unassign.statusCode, 200, unassign.body)
    const own = await deal({ name: "Alice's own" }, alice.headers)
    await deal({ name: 'Globex deal' }, globex.admin.headers)
    await aliceStream.until((frames) => frames.some((f) => f.event === 'upsert' && (f.data as { id: string }).id === own))
    const events = aliceStream.frames.filter((f) => f.event !== 'ready').map((f) => [f.event, (f.data as { id: string }).id])
    t.same(events, [['upsert', assigned], ['delete', assigned], ['upsert', own]], 'nothing about deals she may not see')
    t.same(aliceStream.frames.find((f) => f.event === 'upsert')!.data, row, 'the deal as the list shows it')
    const ids = frameIds(aliceStream.frames)
    t.same(ids, [...ids].sort((a, b) => comparePositions(parsePosition(a)!, parsePosition(b)!)), 'ids are positions, increasing')

    // Resumed after the first frame: the rest again, nothing before.
    const resumed = await stream('/api/stream/opportunities/', { ...alice.headers, 'last-event-id': ids[0]! })
    await resumed.until((frames) => frameIds(frames).length >= 2)
    t.same(resumed.frames.filter((f) => f.event !== 'ready').map((f) => [f.event, (f.data as { id: string }).id]), [['delete', assigned], ['upsert', own]])
  })

  t.test("GET /api/stream/opportunities/: every frame's data is the deal as of its id (issue 17 point 4)", async (t) => {
    const rename = async (id: string, name: string) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/opportunities/${id}/`, headers: admin, payload: { name } })
      t.equal(res.statusCode, 200, res.body)
      return res.headers['x-event-position'] as string
    }
    // Away: three changes after the last frame seen. The resume brings the deal once, as it is now, under the third change's position.
    const away = await deal({ name: 'Away v0' })
    const seen = await stream('/api/stream/opportunities/')
    await seen.until((frames) => frames.some((f) => f.event === 'ready'))
    const lastSeen = seen.frames[0]!.id!
    seen.close()
    await rename(away, 'Away v1')
    await rename(away, 'Away v2')
    const third = await rename(away, 'Away v3')
    const resumed = await stream('/api/stream/opportunities/', { ...admin, 'last-event-id': lastSeen })
    await resumed.until((frames) => frames.some((f) => f.id === third))
    const aboutAway = resumed.frames.filter((f) => f.event !== 'ready' && (f.data as { id: string }).id === away)
    t.same(aboutAway.map((f) => [f.id, (f.data as { name: string }).name]), [[third, 'Away v3']], 'one frame, under the latest change, with that change')

    // Concurrent writers on a few deals while a stream reads: each frame shows the name written at its id.
    const live = await stream('/api/stream/opportunities/')
    await live.until((frames) => frames.some((f) => f.event === 'ready'))
    const deals = await Promise.all(['A', 'B', 'C'].map((n) => deal({ name: `Race ${n} 0` })))
    const written = new Map<string, string>()
    await Promise.all(
      deals.map(async (id, d) => {
        for (let i = 1; i <= 5; i++) {
          const name = `Race ${'ABC'[d]} ${i}`
          written.set(await rename(id, name), name)
        }
      }),
    )
    const finals = [...written.entries()].filter(([, name]) => name.endsWith(' 5')).map(([position]) => position)
    await live.until((frames) => finals.every((p) => frames.some((f) => f.id === p)))
    const updates = live.frames.filter((f) => f.event === 'upsert' && written.has(f.id!))
    t.ok(updates.length >= 3, `${updates.length} frames about the renames`)
    for (const frame of updates) t.equal((frame.data as { name: string }).name, written.get(frame.id!), `the frame ${frame.id} shows what was written at it`)
    const ids = frameIds(live.frames)
    t.same(ids, [...ids].sort((a, b) => comparePositions(parsePosition(a)!, parsePosition(b)!)), 'ids still increase')
  })

  t.test('GET /api/stream/opportunities/kanban/: cards of one pipeline only', async (t) => {
    const other = (await post('/api/opportunities/pipelines/', { name: 'Partners' })).json().id as string
    const board = await stream(`/api/stream/opportunities/kanban/?pipeline=${other}`)
    await board.until((frames) => frames.some((f) => f.event === 'ready'))
    await deal({ name: 'Default pipeline deal' })
    const partner = await deal({ name: 'Partner deal', pipeline: other })
    const moved = await app.inject({ method: 'PATCH', url: `/api/opportunities/${partner}/`, headers: admin, payload: { pipeline: (await get('/api/opportunities/kanban/')).json().pipeline.id, stage: 'PROSPECTING' } })
    t.equal(moved.statusCode, 200, moved.body)
    await board.until((frames) => frames.some((f) => f.event === 'delete'))
    const events = board.frames.filter((f) => f.event !== 'ready')
    t.same(events.map((f) => [f.event, (f.data as { id: string }).id]), [['upsert', partner], ['delete', partner]], 'only the deal of that pipeline, and its leaving')
    t.match(events[0]!.data, { id: partner, name: 'Partner deal', pipeline: other, stage: 'PROSPECTING', can_move: true })

    t.equal((await fetch(`${base}/api/stream/opportunities/kanban/?pipeline=not-a-uuid`, { headers: admin })).status, 404)
  })

  t.test('min_position / X-Min-Position: reads wait until the read models reached it', async (t) => {
    const created = await post('/api/accounts/', { name: 'Written elsewhere' })
    const position = created.headers['x-event-position'] as string
    t.match(position, /^\d+-\d+$/)
    const began = Date.now()
    const reached = await app.inject({ method: 'GET', url: `/api/accounts/?min_position=${position}`, headers: admin })
    t.equal(reached.statusCode, 200)
    // Under the read-your-writes timeout (2 s here): a read that waited it out would have answered 503.
    t.ok(Date.now() - began < 2000, 'a reached position answers without waiting out the timeout')
    const viaHeader = await app.inject({ method: 'GET', url: '/api/accounts/', headers: { ...admin, 'x-min-position': position } })
    t.equal(viaHeader.statusCode, 200)

    const ahead = await app.inject({ method: 'GET', url: '/api/opportunities/', headers: { ...admin, 'x-min-position': '999999999999-0' } })
    t.equal(ahead.statusCode, 503, 'a position the read models do not reach in time')
    t.match(ahead.json(), { error: true })
    const malformed = await app.inject({ method: 'GET', url: '/api/accounts/?min_position=latest', headers: admin })
    t.equal(malformed.statusCode, 400)
    t.same(malformed.json(), { error: true, errors: { min_position: ['Expected a position such as 1234-5 (the X-Event-Position of a write)'] } })
    t.equal((await app.inject({ method: 'GET', url: '/api/accounts/?min_position=latest' })).statusCode, 401, 'authentication first')
  })

  t.test('GET /api/projections/: admins see each projection and the leader flag', async (t) => {
    const status = await get('/api/projections/')
    t.equal(status.statusCode, 200)
    const body = status.json()
    t.equal(body.leader, true)
    const deals = body.projections.find((p: { name: string }) => p.name === 'opportunities')
    t.match(deals, { version: Number, stored_version: Number, checkpoint: /^\d+-\d+$/, lag_events: Number, lag_ms: Number, failure: null })
    t.match(body.visibility, { hidden_events: Number, hidden_for_ms: Number })
    t.equal((await get('/api/projections/', alice.headers)).statusCode, 403)
  })

  t.test('open streams end when the app closes', async (t) => {
    const open = await stream('/api/stream/events/')
    await open.until((frames) => frames.some((f) => f.event === 'ready'))
    await app.close()
    await open.ended
    t.pass('closed')
  })
})
