import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { CLAIM_SCOPES, liveNamesOf } from '../../src/names/claim-scopes.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { freshDatabase } from '../helpers/db.ts'
import { testRunner, testStore } from '../helpers/runner.ts'

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name))
}

// Scopes are string constants (`const SCOPE = 'tag'`, `DEAL_NAME_SCOPE = '…'`) or literal `scope: '…'` next to the claim helpers.
const SCOPE_LITERAL = /(?:\b[A-Z_]*SCOPE\s*=\s*|\bscope:\s*)'([^']+)'/g

t.test('every claim scope used in src/ maps to a read model', async (t) => {
  const used = new Set<string>()
  for (const file of await sourceFiles('src')) {
    const text = await readFile(file, 'utf8')
    if (!/with(Claimed|Optional|Renamed|Released)(Name|Claim)|releaseName|unique:\s*\{/.test(text) && !/_SCOPE\b/.test(text)) continue
    for (const match of text.matchAll(SCOPE_LITERAL)) used.add(match[1]!)
  }
  t.ok(used.size >= 6, `found ${[...used].join(', ')}`)
  for (const scope of used) t.ok(CLAIM_SCOPES.has(scope), `scope "${scope}" has a read model in src/names/claim-scopes.ts`)
  t.ok([...CLAIM_SCOPES.keys()].some((s) => s.startsWith('custom_field_key:')), 'custom field keys, one scope per module')
})

t.test('each scope model names a real projector, table and column', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const runner = testRunner(t, database, store, [...allProjectors])
  runner.start()
  // Once every projector has applied an event, every table exists.
  const { position } = await store.appendToStream('probe-1', [{ type: 'Probed', data: {} }])
  await runner.waitFor(position, 10_000)
  const names = new Set(allProjectors.map((p) => p.name))
  for (const [scope, model] of CLAIM_SCOPES) {
    t.ok(names.has(model.projector), `${scope}: projector ${model.projector}`)
    t.same(await liveNamesOf(database.db, model, ['8d1f8a52-3b5e-4c1f-9a0e-0d6f1e2a3b4c', 'not-a-uuid']), new Map(), `${scope}: ${model.table}.${model.column} can be queried`)
  }
})
