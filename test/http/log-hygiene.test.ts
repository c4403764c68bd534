import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

t.test('no credential appears in the logs, whichever way it is sent', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) })
  const { app, database } = await buildTestApp(t, { logger: pino({ level: 'trace' }, sink) })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const pat = (await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: acme.admin.headers, payload: { name: 'agent' } })).json().token as string
  const key = (await app.inject({ method: 'POST', url: '/api/org/api-key/', headers: acme.admin.headers })).json().api_key as string
  await app.inject({ url: '/api/auth/me/', headers: { authorization: `Bearer ${pat}` } })
  await app.inject({ url: '/api/auth/me/', headers: { token: key } })
  await app.inject({ url: '/api/auth/me/', headers: { authorization: 'Bearer svc_pat_wrong-secret-value' } })
  t.ok(lines.length > 5, `captured ${lines.length} log lines`)
  const log = lines.join('')
  for (const [name, secret] of [['JWT', acme.admin.token], ['PAT', pat], ['API key', key], ['wrong PAT', 'svc_pat_wrong-secret-value']] as const) {
    t.notOk(log.includes(secret), `no ${name} in the logs`)
  }
})
