import { register } from 'node:module'
import t from 'tap'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO, siblingModule } from '../helpers/repo.ts'

/**
 * "Adding a module edits only the list of modules" (docs/adding-a-module.md): a module written
 * wholly outside the shared files (test/modules/example-module.ts) and added to the list in
 * src/modules/modules.ts, by the loader hook below, as its one shared line, is served, catalogued,
 * projected, documented, known to the isolation matrix and searched. Everything is imported after the hook is
 * registered, so every reader sees the list with it.
 */
register(pathToFileURL(join(REPO, 'test/modules/add-module-hook.mjs')), { data: { example: siblingModule(import.meta.url, 'example-module').href } })
const { MODULES, allProjectors } = await import('../../src/modules/modules.ts')
const { EVENT_CATALOGUE } = await import('../../src/events/catalogue.ts')
const { currentVersion } = await import('../../src/events/versions.ts')
const { buildTestApp } = await import('../helpers/app.ts')
const { givenOrganization } = await import('../helpers/identity.ts')
const { operationsOf } = await import('../helpers/route-table.ts')

t.test('a module added to the list is wired everywhere', async (t) => {
  t.ok(MODULES.some((module) => module.name === 'example-memo'), 'the list holds it')
  t.ok(allProjectors.some((projector) => projector.name === 'example_memos'), 'its read model is among those the runner applies and the CLI rebuilds')
  t.match(EVENT_CATALOGUE.find((definition) => definition.type === 'MemoWritten'), { stream: 'memo', version: 1 }, 'its event is catalogued, at version 1')
  t.equal(currentVersion('MemoWritten'), 1)

  // Every read model built by this test's runner (not the shared template, which must not hold the example's table).
  const { app, database } = await buildTestApp(t, { projectors: [...allProjectors] })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')

  // Every read model's tables are built by this app's own runner: its first write waits for them
  // (/readyz), or its read-your-writes budget is spent on their creation under a loaded suite.
  for (const started = Date.now(); (await app.inject({ url: '/readyz' })).statusCode !== 200 && Date.now() - started < 60_000; ) await new Promise((resolve) => setTimeout(resolve, 50))
  const written = await app.inject({ method: 'POST', url: '/api/example-memos/', headers: acme.admin.headers, payload: { text: 'hello' } })
  t.equal(written.statusCode, 200, written.body)
  const url = `/api/example-memos/${written.json().id}/`
  const read = await app.inject({ url, headers: acme.admin.headers })
  t.same(read.json(), { id: written.json().id, text: 'hello' }, 'its route wrote an event and its projector applied it (read your writes)')
  t.equal((await app.inject({ url, headers: globex.admin.headers })).statusCode, 404, "another organization's id is not found")

  const schema = await app.inject({ url: '/api/events/schema/', headers: acme.admin.headers })
  t.ok(schema.json().$defs.MemoWritten, 'its event is in the published event schema')
  const idRoutes = (await operationsOf(app)).filter((op) => op.path.startsWith('/api/example-memos/') && op.pathParams.length)
  t.ok(idRoutes.length, 'its routes are in the OpenAPI document')
  const kinds = MODULES.flatMap((module) => module.idKinds ?? [])
  t.same(idRoutes.filter((op) => !kinds.some(([prefix]) => prefix.test(op.path))), [], 'the isolation matrix knows the kind of its ids')

  const search = allProjectors.find((projector) => projector.name === 'search')!
  t.ok(search.tables.includes('search_documents_memo') && search.eventTypes.includes('MemoWritten'), 'search keeps documents of its kind, from its event')
  t.equal(search.version, 5, "search's version counts the kind that joined it (the base 3, cases 1, the memo 1), so a server rebuilds the documents")
  const found = async (headers: Record<string, string>) => (await app.inject({ url: '/api/search/?q=hello', headers })).json().results
  t.match(await found(acme.admin.headers), [{ type: 'memo', id: written.json().id, title: 'hello' }], 'global search finds the memo, from its manifest alone')
  t.same(await found(globex.admin.headers), [], "not another organization's")
})
