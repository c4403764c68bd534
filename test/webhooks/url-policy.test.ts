import t from 'tap'
import { ForbiddenTargetError, assertLiteralAllowed, forbiddenRange, guardedLookup, refusedWebhookUrl } from '../../src/webhooks/url-policy.ts'
import type { ResolvedAddress, Resolver } from '../../src/webhooks/url-policy.ts'

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 })
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 })
/** A DNS whose n-th answer is `answers[n]` (the last one repeats): what a rebinding attacker runs. */
const dns = (...answers: ResolvedAddress[][]): Resolver & { calls: number } => {
  const resolver = Object.assign(async () => answers[Math.min(resolver.calls++, answers.length - 1)]!, { calls: 0 })
  return resolver
}
const lookupOnce = (resolver: Resolver, allowPrivate: boolean, all = true) =>
  new Promise<{ error: Error | null; result: unknown }>((resolve) =>
    guardedLookup({ allowPrivate, resolve: resolver })('hooks.example.com', { all }, (error, result, family) => resolve({ error, result: all ? result : { address: result, family } })),
  )

/**
 * IPv6 forms carrying a loopback, private or metadata IPv4 address (issue 35): a NAT64 gateway, a
 * 6to4 or Teredo relay on the network would deliver to that address. URL normalizes each form.
 */
const CARRYING: Array<[address: string, kind: string]> = [
  ['64:ff9b::7f00:1', 'NAT64-carried loopback'], ['64:ff9b::a9fe:a9fe', 'NAT64-carried link-local'], ['64:ff9b::a00:1', 'NAT64-carried private'],
  ['2002:7f00:1::', '6to4-carried loopback'], ['2002:a9fe:a9fe::1', '6to4-carried link-local'], ['2002:c0a8:101::', '6to4-carried private'],
  ['::ffff:0:7f00:1', 'SIIT-carried loopback'], ['::ffff:0:a9fe:a9fe', 'SIIT-carried link-local'],
  ['::ffff:7f00:1', 'loopback'], ['::ffff:a9fe:a9fe', 'link-local'],
  ['::7f00:1', 'reserved'], ['::a9fe:a9fe', 'reserved'],
  ['2001:0:7f00:1::1', 'Teredo-carried loopback'], ['2001:0:808:808::80ff:fffe', 'Teredo-carried loopback'], ['2001:0:808:808::5601:5601', 'Teredo-carried link-local'],
  ['64:ff9b:1::7f00:1', 'reserved'],
]

t.test('forbiddenRange', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'],
    ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['fd12:3456::1', 'private'], ['fc00::1', 'private'],
    ['169.254.169.254', 'link-local'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'CGNAT'], ['100.127.255.254', 'CGNAT'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'], ['::', 'unspecified'],
    ['255.255.255.255', 'reserved'], ['240.0.0.1', 'reserved'], ['::7f00:1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.0.0.1', 'private'], ['::ffff:169.254.169.254', 'link-local'], ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['93.184.216.34', null], ['8.8.8.8', null], ['172.32.0.1', null], ['100.128.0.1', null], ['2606:2800:220:1:248:1893:25c8:1946', null], ['::ffff:8.8.8.8', null],
    ['example.com', 'not an IP address'],
    // IPv6 forms that carry an IPv4 address are judged by it; public ones pass.
    ['64:ff9b::808:808', null], ['2002:808:808::1', null], ['::ffff:0:808:808', null], ['2001:0:808:808::f7f7:f7f7', null],
    ['64:ff9b:1::808:808', 'reserved'],
  ]
  for (const [address, expected] of cases) t.equal(forbiddenRange(address), expected, `${address}: ${expected ?? 'public'}`)
  for (const [address, expected] of CARRYING) t.equal(forbiddenRange(address), expected, `${address}: ${expected}`)
})

t.test('IPv6 forms carrying a non-public IPv4 address: refused at create and at delivery alike', async (t) => {
  const policy = { allowPrivate: false, resolve: dns([v4('93.184.216.34')]) }
  for (const [address, kind] of CARRYING) {
    const url = `http://[${address}]/latest/meta-data/`
    const expected = `${address} is a ${kind} address; webhook targets must be public`
    t.equal(await refusedWebhookUrl(url, policy), expected, `create: ${url}`)
    t.throws(() => assertLiteralAllowed(new URL(url), policy), new ForbiddenTargetError(expected), `delivery to the literal: ${url}`)
    const { error } = await lookupOnce(dns([v4('93.184.216.34'), v6(address)]), false)
    t.equal(error?.message, `hooks.example.com resolves to ${address}, a ${kind} address; webhook targets must be public`, `delivery to a name resolving to ${address}`)
    t.equal(await refusedWebhookUrl('https://hooks.example.com/', { allowPrivate: false, resolve: dns([v6(address)]) }), `hooks.example.com resolves to ${address}, a ${kind} address; webhook targets must be public`, `create: a name resolving to ${address}`)
  }
  t.doesNotThrow(() => assertLiteralAllowed(new URL('http://[64:ff9b::808:808]/'), policy), 'a NAT64 form of a public address is delivered to')
  t.equal((await lookupOnce(dns([v6('2002:808:808::1')]), false)).error, null, 'so is a 6to4 one')
  t.doesNotThrow(() => assertLiteralAllowed(new URL('http://[64:ff9b::7f00:1]/'), { ...policy, allowPrivate: true }), 'WEBHOOK_ALLOW_PRIVATE')
})

t.test('refusedWebhookUrl: the check at create and change', async (t) => {
  const publicDns = dns([v4('93.184.216.34')])
  const policy = { allowPrivate: false, resolve: publicDns }
  t.equal(await refusedWebhookUrl('ftp://example.com/', policy), 'Expected an http:// or https:// URL.')
  t.equal(await refusedWebhookUrl('https://hooks.example.com/x', policy), null, 'a host resolving to public addresses')
  t.equal(await refusedWebhookUrl('https://93.184.216.34/x', policy), null, 'a public literal')
  t.equal(await refusedWebhookUrl('http://127.0.0.1:8080/x', policy), '127.0.0.1 is a loopback address; webhook targets must be public')
  t.equal(await refusedWebhookUrl('http://[::ffff:127.0.0.1]/x', policy), '::ffff:7f00:1 is a loopback address; webhook targets must be public', 'IPv4-mapped IPv6, as URL normalizes it')
  t.equal(await refusedWebhookUrl('http://[fe80::1]/x', policy), 'fe80::1 is a link-local address; webhook targets must be public')
  t.equal(await refusedWebhookUrl('http://169.254.169.254/latest/meta-data/', policy), '169.254.169.254 is a link-local address; webhook targets must be public')
  t.equal(await refusedWebhookUrl('http://2130706433/x', policy), '127.0.0.1 is a loopback address; webhook targets must be public', 'numeric hosts are normalized by URL first')
  const mixed = { allowPrivate: false, resolve: dns([v4('93.184.216.34'), v4('10.0.0.7')]) }
  t.equal(await refusedWebhookUrl('https://hooks.example.com/', mixed), 'hooks.example.com resolves to 10.0.0.7, a private address; webhook targets must be public', 'one private answer among public ones refuses it')
  const failing = { allowPrivate: false, resolve: async () => Promise.reject(Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' })) }
  t.equal(await refusedWebhookUrl('https://not-yet.example.com/', failing), null, 'a name that does not resolve yet is left to the delivery-time check')
  const slow = { allowPrivate: false, resolve: () => new Promise<ResolvedAddress[]>(() => {}) }
  t.equal(await refusedWebhookUrl('https://slow.example.com/', slow, 20), null, 'a DNS that does not answer in time does not hold the request')
  t.equal(await refusedWebhookUrl('http://127.0.0.1/x', { ...policy, allowPrivate: true }), null, 'WEBHOOK_ALLOW_PRIVATE')
})

t.test('guardedLookup: what a delivery connection may use', async (t) => {
  t.test('hands the socket the addresses it checked', async (t) => {
    t.same(await lookupOnce(dns([v4('93.184.216.34'), v6('2606:2800:220:1::1')]), false), { error: null, result: [v4('93.184.216.34'), v6('2606:2800:220:1::1')] })
    t.same(await lookupOnce(dns([v4('93.184.216.34')]), false, false), { error: null, result: { address: '93.184.216.34', family: 4 } })
  })
  t.test('DNS rebinding: public when the URL was checked, loopback when the delivery connects', async (t) => {
    const rebinding = dns([v4('93.184.216.34')], [v4('127.0.0.1')])
    t.equal(await refusedWebhookUrl('https://hooks.example.com/', { allowPrivate: false, resolve: rebinding }), null, 'accepted at create')
    const { error } = await lookupOnce(rebinding, false)
    t.type(error, ForbiddenTargetError)
    t.equal(error?.message, 'hooks.example.com resolves to 127.0.0.1, a loopback address; webhook targets must be public')
    t.equal(rebinding.calls, 2, 'resolved again for the connection')
  })
  t.test('private targets allowed: any address, but never none', async (t) => {
    t.same(await lookupOnce(dns([v4('127.0.0.1')]), true), { error: null, result: [v4('127.0.0.1')] })
    t.match((await lookupOnce(dns([]), true)).error, { message: 'hooks.example.com resolves to no address' })
  })
  t.test('a resolver failure is passed on as is (an ordinary, retried delivery failure)', async (t) => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' })
    const { error } = await lookupOnce(async () => Promise.reject(failure), false)
    t.equal(error, failure)
  })
})
