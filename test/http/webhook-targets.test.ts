import t from 'tap'
import type { Test } from 'tap'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import type { Resolver } from '../../src/webhooks/url-policy.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { silentLogger } from '../helpers/runner.ts'
import { eventually, startReceiver } from '../helpers/webhook-receiver.ts'

const BASE = '/api/webhooks/'
const RETRY = { baseMs: 20, maxMs: 100, maxFailures: 2 }
/** The DNS of these tests: `*.acme.test` names point at the loopback receiver; nothing else resolves. */
const loopbackDns: Resolver = async (hostname) => {
  if (hostname.endsWith('.acme.test')) return [{ address: '127.0.0.1', family: 4 }]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
}

t.test('webhook targets: SSRF policy (WEBHOOK_ALLOW_PRIVATE off, the default)', async (t) => {
  const { app, database, store, acme } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const hooks = collectionClient(app, BASE)
  const receiver = await startReceiver(t)
  const createDeal = async (name: string) => t.equal((await hooks.inject('POST', '/api/opportunities/', admin, { name })).statusCode, 200, `deal ${name} created`)
  const deliveries = async (id: string) => (await hooks.inject('GET', `${BASE}${id}/deliveries/?limit=100`, admin)).json().results
  const startDispatcher = (t: Test, allowPrivate: boolean) => {
    const dispatcher = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, retry: RETRY, pollMs: 20, leaderRetryMs: 20, targets: { allowPrivate, resolve: loopbackDns } })
    dispatcher.start()
    onTeardown(t, () => dispatcher.stop())
  }

  t.test('create and change refuse URLs of non-public addresses: 400 naming url', async (t) => {
    const refused = [
      'http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:a9fe:a9fe]/x', 'http://2130706433/x',
      'http://10.0.0.1/', 'http://172.16.5.4/', 'http://192.168.0.1/', 'http://[fd00::1]/', 'http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/',
      'http://100.64.1.1/', 'http://224.0.0.1/', 'http://[ff02::1]/', 'http://0.0.0.0/', 'http://[::]/',
      // IPv6 forms carrying a loopback or metadata IPv4 address (issue 35): NAT64, 6to4, SIIT, Teredo.
      'http://[64:ff9b::7f00:1]/', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'http://[2002:7f00:1::]/', 'http://[::ffff:0:7f00:1]/', 'http://[2001:0:a9fe:a9fe::1]/',
    ]
    for (const url of refused) {
      const res = await hooks.create(admin, { url })
      t.equal(res.statusCode, 400, url)
      t.match(res.json(), { error: true, errors: { url: [/webhook targets must be public$/] } }, `${url}: ${res.json().errors?.url?.[0]}`)
    }
    t.equal((await hooks.list(admin)).count, 0, 'nothing was created')

    const created = await hooks.create(admin, { url: 'https://93.184.216.34/hook' })
    t.equal(created.statusCode, 201, 'a public address')
    const id = created.json().id
    const changed = await hooks.inject('PUT', `${BASE}${id}/`, admin, { url: 'http://192.168.1.20/hook' })
    t.equal(changed.statusCode, 400)
    t.match(changed.json(), { error: true, errors: { url: ['192.168.1.20 is a private address; webhook targets must be public'] } })
    t.match(await hooks.detail(admin, id), { url: 'https://93.184.216.34/hook' }, 'unchanged')
    const unresolved = await hooks.create(admin, { url: 'https://not-yet.acme.test/hook' })
    t.equal(unresolved.statusCode, 201, 'a name that does not resolve yet: judged at delivery')
    for (const hook of [id, unresolved.json().id]) t.equal((await hooks.inject('DELETE', `${BASE}${hook}/`, admin)).statusCode, 200)
  })

  t.test('DNS rebinding: a name that resolves to loopback by delivery time is refused, recorded and disabled, once', async (t) => {
    startDispatcher(t, false)
    // Accepted at create (the system DNS does not know the name); the worker's DNS then answers 127.0.0.1.
    const hook = (await hooks.create(admin, { url: `http://rebind.acme.test:${receiver.port}/rebind` })).json()
    await createDeal('Rebound')
    const disabled = await eventually('the webhook to be disabled', async () => {
      const detail = await hooks.detail(admin, hook.id)
      return !detail.is_active && detail
    })
    const reason = `Refused: rebind.acme.test resolves to 127.0.0.1, a loopback address; webhook targets must be public`
    t.match(disabled, { disabled_reason: `Disabled: ${reason}`, last_error: reason })
    await new Promise((resolve) => setTimeout(resolve, RETRY.maxMs * 3))
    t.match(await deliveries(hook.id), [{ status: 'failed', status_code: null, error: reason, attempt: 1 }], 'one failed delivery: no retries')
    t.equal((await deliveries(hook.id)).length, 1)
    t.same(receiver.requests('/rebind'), [], 'nothing reached the receiver')
  })

  t.test('with private targets allowed, the delivery connects where the checked answer points and follows no redirect', async (t) => {
    startDispatcher(t, true)
    const pinned = (await hooks.create(admin, { url: `http://pinned.acme.test:${receiver.port}/pinned`, event_types: ['Opportunity*'] })).json()
    receiver.behave('/moved', () => 302)
    const moved = (await hooks.create(admin, { url: `http://moved.acme.test:${receiver.port}/moved`, event_types: ['Opportunity*'] })).json()
    await createDeal('Pinned')
    const [arrived] = await eventually('the delivery', () => receiver.delivered('/pinned').length > 0 && receiver.delivered('/pinned'))
    t.equal(arrived!.headers.host, `pinned.acme.test:${receiver.port}`, 'sent to the name, over the address the resolver gave')
    t.equal(arrived!.headers['x-webhook-id'], pinned.id)
    const failed = await eventually('the redirect to fail', async () => (await deliveries(moved.id)).find((d: { status: string }) => d.status === 'failed'))
    t.match(failed, { status_code: 302, error: 'HTTP 302 (redirects are not followed)' })
    t.same(receiver.requests('/redirected'), [], 'the redirect target was never asked')
  })
})
