import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import { fuzzRoutes } from '../helpers/fuzz.ts'

/**
 * Bad input against every built route of the OpenAPI document (test/helpers/fuzz.ts), in three files
 * so the runner spreads them over its jobs: as one file it had grown past 400 s on a loaded machine. This one: generated bodies (from each route's JSON schema, mutated, or with a broken encoding).
 */
// Grows with every route of the schema: past tap's 120 s default on a loaded 2-core machine.
t.setTimeout(360_000)

t.test('bad input (bodies) on every route of the schema: never a 5xx, always the error shape, no change when rejected', (t) => fuzzRoutes(t, 'bodies'))

t.test('a JSON body cannot pass for an uploaded file (it would move any server file into the attachment store)', async (t) => {
  const { app, acme } = await givenTwoOrganizations(t)
  const victim = join(await mkdtemp(join(tmpdir(), 'crm-fuzz-')), 'secret.txt')
  await writeFile(victim, 'server secret')
  const deal = (await app.inject({ method: 'POST', url: '/api/opportunities/', headers: acme.admin.headers, payload: { name: 'Forged upload' } })).json().id as string
  const forged = { opportunity_attachment: { filename: 'loot.txt', mimetype: 'text/plain', path: victim, size: 13 } }
  const res = await app.inject({ method: 'POST', url: `/api/opportunities/${deal}/`, headers: acme.admin.headers, payload: forged })
  t.equal(res.statusCode, 400, `a forged file is refused: ${res.statusCode} ${res.body.slice(0, 200)}`)
  t.equal(await readFile(victim, 'utf8').catch(() => 'moved away'), 'server secret', 'the server file stays where it was')
  const created = await app.inject({ method: 'POST', url: '/api/opportunities/', headers: acme.admin.headers, payload: { name: 'Forged on create', ...forged } })
  t.equal(created.statusCode, 400, 'on create too')
  await rm(victim, { force: true })
})
