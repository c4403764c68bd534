import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import { REDOC_CSP } from '../../src/http/kernel/security.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { silentLogger } from '../helpers/runner.ts'
import { requestSignInMail, secretsOf, signIn } from '../helpers/sign-in.ts'

const cspOf = (headers: Record<string, unknown>) => String(headers['content-security-policy'] ?? '')
const directive = (csp: string, name: string) => csp.split(';').map((d) => d.trim()).find((d) => d.startsWith(`${name} `)) ?? ''

t.test('helmet: security headers on API answers, docs pages still load', async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const api = await app.inject({ url: '/api/tags/', headers: acme.admin.headers })
  t.equal(api.statusCode, 200)
  t.match(api.headers, {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'SAMEORIGIN',
    'strict-transport-security': /max-age=\d+/,
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  })
  t.notOk(api.headers['x-powered-by'])
  const csp = cspOf(api.headers)
  t.match(directive(csp, 'default-src'), "'self'")
  t.equal(directive(csp, 'frame-ancestors'), "frame-ancestors 'none'")
  t.notMatch(csp, /upgrade-insecure-requests/, 'plain-HTTP development keeps loading its own assets')
  t.ok((await app.inject({ url: '/healthz' })).headers['x-content-type-options'], 'also outside /api/')
  t.ok((await app.inject({ url: '/api/nothing/' })).headers['content-security-policy'], 'and on a 404')

  t.test('Swagger UI: its page and same-origin assets fit the default policy', async (t) => {
    const page = await app.inject({ url: '/swagger-ui/' })
    t.equal(page.statusCode, 200)
    const scripts = [...page.body.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!)
    t.ok(scripts.length >= 2, `scripts: ${scripts.join(', ')}`)
    t.notMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>\s*\S/, 'no inline script (script-src is self)')
    for (const src of scripts) {
      t.notMatch(src, /^https?:/, `${src} is same-origin`)
      const url = src.startsWith('/') ? src : `/swagger-ui/${src.replace(/^\.\//, '')}`
      t.equal((await app.inject({ url })).statusCode, 200, `${url} is served`)
    }
    t.match(directive(cspOf(page.headers), 'script-src'), "'self'")
    t.match(directive(cspOf(page.headers), 'style-src'), "'unsafe-inline'", 'swagger-ui sets inline styles')
    t.match(directive(cspOf(page.headers), 'img-src'), 'data:', 'and data: icons')
  })

  t.test('ReDoc: only its page gets a policy that admits its CDN bundle and worker', async (t) => {
    const page = await app.inject({ url: '/api/schema/redoc/' })
    t.equal(page.statusCode, 200)
    t.equal(cspOf(page.headers), REDOC_CSP)
    const cdn = /<script src="(https:\/\/[^/]+)\//.exec(page.body)?.[1]
    t.ok(cdn && directive(REDOC_CSP, 'script-src').includes(cdn), `script-src admits ${cdn}`)
    t.match(directive(REDOC_CSP, 'worker-src'), 'blob:')
    t.notMatch(directive(csp, 'script-src'), /redoc/, 'the API policy stays strict')
  })
})

t.test('CORS: no headers without CORS_ORIGINS', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/healthz', headers: { origin: 'https://evil.example' } })
  t.notOk(res.headers['access-control-allow-origin'])
  const preflight = await app.inject({ method: 'OPTIONS', url: '/api/tags/', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
  t.notOk(preflight.headers['access-control-allow-origin'])
  t.ok(preflight.statusCode >= 400 && preflight.statusCode < 500, `preflight ${preflight.statusCode}`)
})

t.test('CORS: the allow-list of CORS_ORIGINS only', async (t) => {
  const { app, database } = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://app.example, https://admin.example' } })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const allowed = await app.inject({ url: '/api/tags/', headers: { ...acme.admin.headers, origin: 'https://admin.example' } })
  t.equal(allowed.statusCode, 200)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://admin.example')
  t.match(allowed.headers['access-control-expose-headers'], /ETag/i)
  t.notOk(allowed.headers['access-control-allow-credentials'], 'credentials are headers, not cookies')
  const other = await app.inject({ url: '/api/tags/', headers: { ...acme.admin.headers, origin: 'https://evil.example' } })
  t.notOk(other.headers['access-control-allow-origin'], 'another origin gets no CORS header')
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/tags/',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type, if-match' },
  })
  t.equal(preflight.statusCode, 204, 'a preflight needs no credential')
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example')
  t.match(preflight.headers['access-control-allow-methods'], /PATCH/)
  t.match(preflight.headers['access-control-allow-headers'], /authorization/i)
  const evilPreflight = await app.inject({ method: 'OPTIONS', url: '/api/tags/', headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' } })
  t.notOk(evilPreflight.headers['access-control-allow-origin'])
})

t.test('body size limits: JSON over 1 MiB is 413 on a real route, in the error shape', async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const res = await app.inject({ method: 'POST', url: '/api/tags/', headers: acme.admin.headers, payload: { name: 'x'.repeat(1024 * 1024 + 10) } })
  t.equal(res.statusCode, 413)
  t.match(res.json(), { error: true, errors: String })
  const form = await app.inject({ method: 'POST', url: '/api/tags/', headers: { ...acme.admin.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: `name=${'x'.repeat(1024 * 1024 + 10)}` })
  t.equal(form.statusCode, 413, 'urlencoded too')
})

t.test('no secret sent in a body (refresh token, magic-link token and code) reaches the logs', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) })
  const mail = logTransport(silentLogger)
  const { app, database } = await buildTestApp(t, { mail, logger: pino({ level: 'trace' }, sink) })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const pair = await signIn(app, mail, acme.admin.email)
  const refreshed = await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh_token: pair.refresh_token } })
  t.equal(refreshed.statusCode, 200, refreshed.body)
  const next = refreshed.json()
  await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh_token: pair.refresh_token } })
  await app.inject({ method: 'POST', url: '/api/auth/logout/', headers: { authorization: `Bearer ${next.access_token}` }, payload: { refresh_token: next.refresh_token } })
  const link = secretsOf(await requestSignInMail(app, mail, acme.admin.email))
  await app.inject({ method: 'POST', url: '/api/auth/magic-link/verify/', payload: { token: link.token } })
  t.ok(lines.length > 5, `captured ${lines.length} log lines`)
  const log = lines.join('')
  const secrets = { 'refresh token': pair.refresh_token, 'access token': pair.access_token, 'rotated refresh token': next.refresh_token, 'rotated access token': next.access_token, 'magic-link token': link.token }
  for (const [name, secret] of Object.entries(secrets)) {
    t.ok(typeof secret === 'string' && secret.length > 10, `${name} present`)
    t.notOk(log.includes(secret), `no ${name} in the logs`)
  }
  t.notMatch(log, new RegExp(`code\\W+${link.code}`), 'no sign-in code in the logs')
})

t.test('sign-in routes without an email are rate-limited per client IP (429 with Retry-After)', async (t) => {
  const { app } = await buildTestApp(t, { env: { AUTH_RATE_LIMIT_MAX: '1' } })
  for (const url of ['/api/auth/refresh-token/', '/api/auth/google/']) {
    const answers = []
    for (let i = 0; i < 13; i++) answers.push(await app.inject({ method: 'POST', url, payload: { refresh_token: 'svc_rt_nope', id_token: 'nope' } }))
    t.ok(answers.slice(0, 12).every((res) => res.statusCode !== 429), `${url}: twelve a minute pass to the route`)
    const limited = answers.at(-1)!
    t.equal(limited.statusCode, 429, `${url}: the thirteenth is refused`)
    t.ok(limited.headers['retry-after'], 'with Retry-After')
    t.match(limited.json(), { error: true, errors: String })
  }
})

t.test('text PostgreSQL cannot store is a 400 before anything is decided: NUL and unpaired surrogates', async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const post = (payload: string) => app.inject({ method: 'POST', url: '/api/tags/', headers: { ...acme.admin.headers, 'content-type': 'application/json' }, payload })
  for (const [name, raw] of [['NUL', '"a\\u0000b"'], ['a lone high surrogate', '"a\\ud800b"'], ['a lone low surrogate', '"\\udc00"'], ['a surrogate in a key', '"ok", "\\ud800": 1']]) {
    const res = await post(`{"name": ${raw}}`)
    t.equal(res.statusCode, 400, `${name}: ${res.body}`)
    t.match(res.json(), { error: true, errors: { non_field_errors: [String] } })
  }
  const fine = await post('{"name": "\\ud83e\\udd84 unicorn"}')
  t.equal(fine.statusCode, 201, `a paired surrogate (an emoji) is text like any other: ${fine.body}`)
  t.equal((await app.inject({ method: 'GET', url: '/api/tags/', headers: acme.admin.headers })).json().count, 1, 'only the valid tag was created')
})
