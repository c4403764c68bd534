import t from 'tap'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { verifyDelivery } from '../../src/webhooks/signing.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { silentLogger } from '../helpers/runner.ts'
import { eventually, startReceiver } from '../helpers/webhook-receiver.ts'

const BASE = '/api/webhooks/'
const OWN_SECRET = 'an-integrator-chosen-secret-0123456789abcdef'

/**
 * Issue 17, webhook secrets: a caller's own secret (at least 32 characters) is accepted, a weaker
 * one refused, none generated; rotation signs with the new and the old secret through a grace
 * period (the dispatcher's clock is moved by hand), then with the new one alone.
 */
t.test('webhook signing secrets', async (t) => {
  const { app, database, store, acme } = await givenTwoOrganizations(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } })
  const admin = acme.admin.headers
  const hooks = collectionClient(app, BASE)
  const receiver = await startReceiver(t)
  // The app's clock is FIXED_NOW; the dispatcher's starts there and is moved by hand.
  let now = FIXED_NOW
  const dispatcher = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, retry: { baseMs: 20, maxMs: 200, maxFailures: 4 }, pollMs: 50, leaderRetryMs: 50, targets: { allowPrivate: true }, clock: () => now })
  dispatcher.start()
  onTeardown(t, () => dispatcher.stop())
  let deals = 0
  /** Creates a tag and answers the delivery of its TagCreated to `path`. */
  const deliveredAfterAnEvent = async (path: string) => {
    const before = receiver.delivered(path).length
    t.equal((await hooks.inject('POST', '/api/tags/', admin, { name: `Signed ${++deals}` })).statusCode, 201)
    return eventually(`a delivery to ${path}`, () => receiver.delivered(path).length > before && receiver.delivered(path).at(-1)!)
  }
  const verifies = (secret: string, delivery: { headers: Record<string, unknown>; body: string }) =>
    verifyDelivery(secret, String(delivery.headers['x-webhook-timestamp']), delivery.body, String(delivery.headers['x-webhook-signature']))

  t.test('POST /api/webhooks/ with a secret of fewer than 32 characters is 400 on secret, and creates nothing', async (t) => {
    const refused = await hooks.create(admin, { url: receiver.url('/weak'), event_types: ['TagCreated'], secret: 'too-short-0123456789' })
    t.equal(refused.statusCode, 400)
    t.match(refused.json(), { error: true, errors: { secret: [/at least 32 characters/] } })
    t.equal((await hooks.inject('GET', BASE, admin)).json().count, 0)
  })

  t.test("a caller's own secret is kept, answered once, and signs the deliveries", async (t) => {
    const created = await hooks.create(admin, { url: receiver.url('/own'), event_types: ['TagCreated'], secret: OWN_SECRET })
    t.equal(created.statusCode, 201)
    t.equal(created.json().secret, OWN_SECRET)
    t.notOk('secret' in (await hooks.inject('GET', `${BASE}${created.json().id}/`, admin)).json(), 'never shown again')
    const delivery = await deliveredAfterAnEvent('/own')
    t.ok(verifies(OWN_SECRET, delivery), 'verifies with the caller\'s secret')
    t.notOk(verifies('x'.repeat(40), delivery), 'and not with another')
  })

  t.test('without one, a secret is generated', async (t) => {
    const created = await hooks.create(admin, { url: receiver.url('/generated'), event_types: ['TagCreated'] })
    t.match(created.json(), { secret: /^svc_whsec_/ })
    t.ok(verifies(created.json().secret, await deliveredAfterAnEvent('/generated')))
  })

  t.test('rotation: both secrets sign through the grace period, then only the new one', async (t) => {
    const hook = (await hooks.create(admin, { url: receiver.url('/rotated'), event_types: ['TagCreated'], secret: OWN_SECRET })).json()
    const newSecret = 'the-rotated-secret-of-the-integrator-9876543210'
    const rotated = await hooks.inject('POST', `${BASE}${hook.id}/rotate-secret/`, admin, { secret: newSecret, grace_seconds: 3600 })
    t.equal(rotated.statusCode, 200)
    t.equal(rotated.json().secret, newSecret)
    t.equal(rotated.json().previous_valid_until, new Date(FIXED_NOW.getTime() + 3_600_000).toISOString())
    const during = await deliveredAfterAnEvent('/rotated')
    t.match(String(during.headers['x-webhook-signature']), /^sha256=[0-9a-f]{64}, sha256=[0-9a-f]{64}$/, 'two signatures')
    t.ok(verifies(newSecret, during) && verifies(OWN_SECRET, during), 'a receiver with either secret verifies')
    now = new Date(now.getTime() + 3_601_000)
    const after = await deliveredAfterAnEvent('/rotated')
    t.ok(verifies(newSecret, after), 'the new secret verifies')
    t.notOk(verifies(OWN_SECRET, after), 'the old one no longer does')
    const weak = await hooks.inject('POST', `${BASE}${hook.id}/rotate-secret/`, admin, { secret: 'short' })
    t.equal(weak.statusCode, 400, 'a weak secret is refused on rotation too')
  })
})
