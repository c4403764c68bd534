import t from 'tap'
import { parsePosition } from '../../src/eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../src/eventstore/event-store.ts'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { verifyDelivery } from '../../src/webhooks/signing.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { eventually, startReceiver } from '../helpers/webhook-receiver.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { silentLogger } from '../helpers/runner.ts'

const BASE = '/api/webhooks/'
const RETRY = { baseMs: 20, maxMs: 200, maxFailures: 4 }

/** The organization's events after `after` in log order whose type starts with `prefix`. */
async function orgEvents(store: EventStore, orgId: string, after: Position, prefix: string): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = []
  let cursor = after
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: 500 })
    events.push(...page.events.filter((e) => e.metadata.orgId === orgId && e.type.startsWith(prefix)))
    cursor = page.scannedTo
    if (page.isEnd) return events
  }
}

t.test('webhooks (issue 8)', async (t) => {
  // The receiver listens on loopback, which only WEBHOOK_ALLOW_PRIVATE lets webhooks reach (see webhook-targets.test.ts).
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } })
  const admin = acme.admin.headers
  const hooks = collectionClient(app, BASE)
  const receiver = await startReceiver(t)
  const dispatcher = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, retry: RETRY, pollMs: 50, leaderRetryMs: 50, targets: { allowPrivate: true } })
  dispatcher.start()
  onTeardown(t, () => dispatcher.stop())

  const createHook = async (headers: Headers, payload: object) => {
    const res = await hooks.create(headers, payload)
    if (res.statusCode !== 201) throw new Error(`Expected 201, got ${res.statusCode}: ${res.body}`)
    return { ...res.json(), position: parsePosition(String(res.headers['x-event-position']))! } as { id: string; secret: string; position: Position }
  }
  const createDeal = async (headers: Headers, name: string) => (await hooks.inject('POST', '/api/opportunities/', headers, { name })).json().id as string
  const move = async (id: string, column: string) => {
    const res = await hooks.inject('PATCH', `/api/opportunities/${id}/move/`, admin, { column_id: column })
    if (res.statusCode !== 200) throw new Error(`Expected the move to succeed: ${res.body}`)
  }
  const deliveries = async (id: string, query = '?limit=100') => (await hooks.inject('GET', `${BASE}${id}/deliveries/${query}`, admin)).json()

  t.test('CRUD, admins only; other organizations see nothing; bad URLs are 400', async (t) => {
    t.equal((await hooks.create(alice.headers, { url: receiver.url('/x') })).statusCode, 403, 'members cannot create')
    for (const url of ['ftp://example.com/hook', 'not a url', 'javascript:alert(1)', 'file:///etc/passwd']) {
      const res = await hooks.create(admin, { url })
      t.equal(res.statusCode, 400, url)
      t.match(res.json(), { error: true, errors: { url: [String] } })
    }
    t.equal((await hooks.create(admin, { url: receiver.url('/x'), event_types: ['Opportunity Created'] })).statusCode, 400, 'event types are names or patterns')

    const created = await hooks.create(admin, { url: receiver.url('/x'), event_types: ['Opportunity*', 'TagCreated'] })
    t.equal(created.statusCode, 201)
    const hook = created.json()
    t.match(hook, { url: receiver.url('/x'), event_types: ['Opportunity*', 'TagCreated'], is_active: true, disabled_reason: null, consecutive_failures: 0, created_by: acme.admin.profileId, secret: /^svc_whsec_[\w-]{43}$/ })
    const detail = await hooks.inject('GET', `${BASE}${hook.id}/`, admin)
    t.equal(detail.statusCode, 200)
    t.notOk('secret' in detail.json(), 'the secret is shown once, at creation')
    t.match((await hooks.list(admin)).results, [{ id: hook.id }])
    t.equal((await hooks.inject('GET', BASE, alice.headers)).statusCode, 403, 'members cannot list')
    t.equal((await hooks.inject('GET', `${BASE}${hook.id}/`, alice.headers)).statusCode, 403)
    t.equal((await hooks.list(globex.admin.headers)).count, 0)
    for (const [method, url] of [['GET', `${BASE}${hook.id}/`], ['PUT', `${BASE}${hook.id}/`], ['DELETE', `${BASE}${hook.id}/`], ['GET', `${BASE}${hook.id}/deliveries/`]] as const) {
      t.equal((await hooks.inject(method, url, globex.admin.headers, method === 'PUT' ? { is_active: false } : undefined)).statusCode, 404, `${method} ${url} from another organization`)
    }

    const changed = await hooks.inject('PUT', `${BASE}${hook.id}/`, admin, { url: receiver.url('/y'), event_types: [] })
    t.match(changed.json(), { url: receiver.url('/y'), event_types: [], is_active: true })
    t.match((await hooks.inject('PUT', `${BASE}${hook.id}/`, admin, { is_active: false })).json(), { is_active: false, disabled_reason: null })
    t.equal((await hooks.inject('PUT', `${BASE}${hook.id}/`, admin, { url: 'gopher://x' })).statusCode, 400)
    t.equal((await hooks.inject('PUT', `${BASE}${hook.id}/`, alice.headers, { is_active: true })).statusCode, 403)
    t.equal((await hooks.inject('DELETE', `${BASE}${hook.id}/`, alice.headers)).statusCode, 403)
    t.same((await hooks.inject('DELETE', `${BASE}${hook.id}/`, admin)).json(), { error: false, message: 'Webhook deleted' })
    t.equal((await hooks.inject('GET', `${BASE}${hook.id}/`, admin)).statusCode, 404)
    t.equal((await hooks.list(admin)).count, 0)
  })

  t.test('a receiver that fails, then recovers: every event arrives, in log order per deal, signed', async (t) => {
    const FAILURES = 3
    receiver.behave('/flaky', (n) => (n <= FAILURES ? 500 : 200))
    const hook = await createHook(admin, { url: receiver.url('/flaky'), event_types: ['Opportunity*'] })
    const deals = [await createDeal(admin, 'One'), await createDeal(alice.headers, 'Two'), await createDeal(admin, 'Three')]
    await createDeal(globex.admin.headers, 'Not for Acme')
    for (const column of ['QUALIFICATION', 'PROPOSAL']) for (const id of deals) await move(id, column)
    await move(deals[0]!, 'NEGOTIATION')

    const expected = await orgEvents(store, acme.orgId, hook.position, 'Opportunity')
    t.ok(expected.length >= 10, `${expected.length} events to deliver`)
    const arrived = await eventually('every event to arrive', () => {
      const ids = new Set(receiver.delivered('/flaky').map((r) => r.event.id))
      return expected.every((e) => ids.has(e.id)) && receiver.delivered('/flaky')
    })

    const all = receiver.requests('/flaky')
    t.equal(all.filter((r) => r.status === 500).length, FAILURES, 'the failures happened')
    for (const r of all) {
      const ok = verifyDelivery(hook.secret, String(r.headers['x-webhook-timestamp']), r.body, String(r.headers['x-webhook-signature']))
      if (!ok) t.fail(`signature of ${r.event.id} does not verify`)
      t.equal(r.headers['x-webhook-id'], hook.id)
    }
    t.pass(`${all.length} signatures checked`)
    t.notOk(verifyDelivery('svc_whsec_other', String(all[0]!.headers['x-webhook-timestamp']), all[0]!.body, String(all[0]!.headers['x-webhook-signature'])), 'another secret does not verify')

    const firstArrivals: string[] = []
    for (const r of arrived) if (!firstArrivals.includes(r.event.id)) firstArrivals.push(r.event.id)
    t.same(firstArrivals, expected.map((e) => e.id), 'first arrivals are in log order (so in order per deal)')
    for (const id of deals) {
      const revisions = firstArrivals.map((eventId) => arrived.find((r) => r.event.id === eventId)!.event).filter((e) => e.stream.endsWith(id)).map((e) => e.revision)
      t.same(revisions, [...revisions].sort((a, b) => a - b), `deal ${id}: revisions in order`)
      t.ok(revisions.length >= 3, `deal ${id}: created and moved`)
    }
    t.ok(arrived.every((r) => r.event.type.startsWith('Opportunity') && !JSON.stringify(r.event.data).includes('Not for Acme')), 'only the subscribed types of this organization')
    const sample = arrived.find((r) => r.event.type === 'OpportunityCreated')!.event
    const recorded = expected.find((e) => e.id === sample.id)!
    t.same(sample, { id: recorded.id, type: recorded.type, position: `${recorded.position.commit}-${recorded.position.prepare}`, stream: recorded.streamName, revision: Number(recorded.revision), data: recorded.data, at: recorded.createdAt.toISOString() })

    const log = await eventually('the log to show every delivery', async () => {
      const page = await deliveries(hook.id)
      return page.results.filter((d: { status: string }) => d.status === 'succeeded').length >= expected.length && page
    })
    const oldestFirst = [...log.results].reverse()
    t.match(oldestFirst.slice(0, FAILURES + 1), [
      { status: 'failed', status_code: 500, attempt: 1, error: 'HTTP 500', kind: 'delivery', event_id: expected[0]!.id },
      { status: 'failed', attempt: 2, event_id: expected[0]!.id },
      { status: 'failed', attempt: 3, event_id: expected[0]!.id },
      { status: 'succeeded', status_code: 200, attempt: 4, event_id: expected[0]!.id },
    ])
    const gaps = all.slice(1, FAILURES + 1).map((r, i) => r.at - all[i]!.at)
    gaps.forEach((gap, i) => t.ok(gap >= RETRY.baseMs * 2 ** i, `retry ${i + 1} waited ${gap} ms (backoff ${RETRY.baseMs * 2 ** i} ms)`))
    t.match((await hooks.detail(admin, hook.id)), { is_active: true, consecutive_failures: 0, checkpoint: /^\d+-\d+$/ })
    t.equal((await deliveries(hook.id, '?limit=2&offset=1')).results.length, 2, 'the log is paged')

    t.test('redeliver sends one delivery\'s event once more, from the worker (202)', async (t) => {
      const original = log.results.find((d: { status: string }) => d.status === 'succeeded')
      const before = receiver.delivered('/flaky').filter((r) => r.event.id === original.event_id).length
      const url = `${BASE}${hook.id}/deliveries/${original.id}/redeliver/`
      t.equal((await hooks.inject('POST', url, alice.headers)).statusCode, 403)
      t.equal((await hooks.inject('POST', url, globex.admin.headers)).statusCode, 404)
      t.equal((await hooks.inject('POST', `${BASE}${hook.id}/deliveries/${hook.id}/redeliver/`, admin)).statusCode, 404, 'an unknown delivery')
      const res = await hooks.inject('POST', url, admin)
      t.equal(res.statusCode, 202)
      t.match(res.json(), { kind: 'redelivery', status: 'pending', attempt: 1, redelivery_of: original.id, event_id: original.event_id })
      await eventually('the redelivery', () => receiver.delivered('/flaky').filter((r) => r.event.id === original.event_id).length > before)
      const again = await eventually('the redelivery to be logged', async () => (await deliveries(hook.id)).results.find((d: { id: string; status: string }) => d.id === res.json().id && d.status === 'succeeded'))
      t.match(again, { status_code: 200, completed_at: String })
      const resent = receiver.delivered('/flaky').filter((r) => r.event.id === original.event_id).at(-1)!
      t.equal(resent.headers['x-webhook-delivery-id'], res.json().id)
      t.ok(verifyDelivery(hook.secret, String(resent.headers['x-webhook-timestamp']), resent.body, String(resent.headers['x-webhook-signature'])))
    })
  })

  t.test('a receiver that always fails disables the webhook after N failures in a row; re-enabling resumes where it stopped', async (t) => {
    let down = true
    receiver.behave('/down', () => (down ? 503 : 204))
    const hook = await createHook(admin, { url: receiver.url('/down') })
    const deal = await createDeal(admin, 'Unlucky')
    const disabled = await eventually('the webhook to be disabled', async () => {
      const detail = await hooks.detail(admin, hook.id)
      return !detail.is_active && detail
    })
    t.match(disabled, { is_active: false, disabled_reason: /^Disabled after 4 consecutive failed deliveries \(last: HTTP 503\)$/, consecutive_failures: RETRY.maxFailures, last_error: 'HTTP 503' })
    t.equal(receiver.requests('/down').length, RETRY.maxFailures, 'no attempt after the disable')
    const log = await deliveries(hook.id)
    t.same(log.results.map((d: { attempt: number; status: string; status_code: number }) => [d.attempt, d.status, d.status_code]), [[4, 'failed', 503], [3, 'failed', 503], [2, 'failed', 503], [1, 'failed', 503]], 'newest first')
    const disableEvents = (await store.readStream(`webhook-${hook.id}`)).filter((e) => e.type === 'WebhookDisabled')
    t.equal(disableEvents.length, 1, 'one WebhookDisabled event')

    await move(deal, 'PROPOSAL')
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(receiver.requests('/down').length, RETRY.maxFailures, 'a disabled webhook receives nothing')

    down = false
    t.match((await hooks.inject('PUT', `${BASE}${hook.id}/`, admin, { is_active: true })).json(), { is_active: true, disabled_reason: null, consecutive_failures: 0 })
    const expected = await orgEvents(store, acme.orgId, hook.position, '')
    const types = expected.filter((e) => !e.type.startsWith('Webhook'))
    await eventually('the backlog to arrive', () => {
      const ids = new Set(receiver.delivered('/down').map((r) => r.event.id))
      return types.every((e) => ids.has(e.id))
    })
    t.same(receiver.delivered('/down').map((r) => r.event.id), types.map((e) => e.id), 'the backlog, in log order, webhook events excluded')
    t.match(await hooks.detail(admin, hook.id), { is_active: true, consecutive_failures: 0 })
  })

  t.test('one process delivers: a second dispatcher waits for the lock', async (t) => {
    const second = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, retry: RETRY, leaderRetryMs: 50, targets: { allowPrivate: true } })
    second.start()
    await eventually('the first to lead', () => dispatcher.isLeader)
    await new Promise((resolve) => setTimeout(resolve, 150))
    t.equal(second.isLeader, false)
    await second.stop()
  })
})
