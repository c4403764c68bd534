/**
 * Issue 18 point 6: a typed client generated from /schema/ with openapi-typescript, the API guide's
 * first steps written against it with openapi-fetch (examples.ts), type-checked by tsc and run
 * against a live server. A path, parameter or field the document lacks fails here.
 */
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { siblingModule } from '../helpers/repo.ts'

const GENERATED = resolve('test/client/generated')

t.test('a client generated from the document compiles and runs the first steps', async (t) => {
  const { app, database } = await buildTestApp(t, { clock: () => new Date() })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const document = (await app.inject({ url: '/schema/' })).json()
  await mkdir(GENERATED, { recursive: true })
  const types = astToString(await openapiTS(document))
  await writeFile(resolve(GENERATED, 'api.d.ts'), types)
  t.ok(types.includes('"/api/opportunities/{id}/move/"'), `generated ${Math.round(types.length / 1024)} kB of types`)

  // The examples against the generated types, with the project's compiler options.
  const tsc = await promisify(execFile)(resolve('node_modules/.bin/tsc'), ['--noEmit', '-p', resolve('test/client/tsconfig.json')]).then(
    () => ({ code: 0, out: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, out: error.stdout }),
  )
  t.equal(tsc.code, 0, `tsc: ${tsc.out.slice(0, 2000)}`)

  await app.listen({ host: '127.0.0.1', port: 0 })
  // Imported by a computed path: the project's own type-check must not follow it to types generated here.
  const { firstSteps } = (await import(siblingModule(import.meta.url, 'examples').href)) as { firstSteps: (baseUrl: string, token: string) => Promise<{ dealId: string; listed: string[]; total?: number; moved?: string; inProposal: string[] }> }
  const result = await firstSteps(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, acme.admin.token)
  t.same(result.listed, ['Acme renewal'], 'the list filtered by the new tag')
  t.equal(result.total, 1)
  t.match(result.moved, String, 'moved')
  t.ok(result.inProposal.includes(result.dealId), 'the card is in the PROPOSAL column')
})
