/**
 * What production runs (issue 20): `npm start` and the image run the compiled dist/src/main.js with
 * the same node flags, and the image installs only the production dependencies, so nothing that
 * src/ or migrations/ imports at run time may be a devDependency. (That the build starts is checked
 * by running the smoke tests against it: `npm run build && CRM_RUN_BUILT=1 npm test -- test/smoke/server.test.ts`.)
 */
import { readFileSync, readdirSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import t from 'tap'
import { startFlags } from '../helpers/process.ts'
import { REPO } from '../helpers/repo.ts'

const ROOT = REPO
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string> }

t.test('npm start and the Dockerfile run the same compiled entry with the same flags', async (t) => {
  t.equal(pkg.scripts.start, `exec node ${[...startFlags(), 'dist/src/main.js'].join(' ')}`)
  t.equal(pkg.scripts.prestart, 'npm run build', 'npm start builds first, so it never runs a stale dist/')
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1]
  t.ok(cmd, 'the Dockerfile has an exec-form CMD')
  t.same(JSON.parse(cmd!), ['node', ...startFlags(), 'dist/src/main.js'])
})

/** Packages a file imports for their values (not `import type`, which the build erases): `@scope/name` or `name`. */
function runtimePackages(source: string): string[] {
  const specifiers = [...source.matchAll(/^import (?!type )[^'"]*?from '([^'.][^']*)'|^export (?!type )[^'"]*?from '([^'.][^']*)'|^import '([^'.][^']*)'|\bimport\('([^'.][^']*)'\)/gm)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]!)
  return specifiers.filter((s) => !s.startsWith('node:') && !builtinModules.includes(s)).map((s) => s.split('/').slice(0, s.startsWith('@') ? 2 : 1).join('/'))
}

t.test('src/ and migrations/ import only production dependencies', async (t) => {
  const files = ['src', 'migrations'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, dir, f)))
  t.ok(files.length > 150, 'walks the source tree')
  const imported = new Set(files.flatMap((file) => runtimePackages(readFileSync(file, 'utf8'))))
  t.ok(imported.has('fastify') && imported.has('kysely'), 'finds package imports')
  t.same([...imported].filter((name) => !(name in pkg.dependencies)).sort(), [], 'imported but not in dependencies (npm ci --omit=dev would leave them out)')
})
