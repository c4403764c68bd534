import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import madge from 'madge'
import t from 'tap'

/**
 * The layout's rules (docs/adding-a-module.md), checked on the import graph of src/:
 * - an import circle stays inside one module (`src/<layer>/<module>/`, or a layer's own files);
 * - the HTTP kernel (`src/http/kernel/`) imports no module of `src/http/`;
 * - an HTTP module imports another module's schemas or views, never its routes (the kernel's route
 *   factories, such as record-routes.ts, are for every module): only app.ts
 *   wires routes (a routes file is one that exports a `…Routes` function);
 * - only `src/http/` (and the JWT plugin in `src/identity/jwt.ts`) imports fastify, also enforced by eslint.
 */
const SRC = resolve(import.meta.dirname, '../../src')
const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: resolve(import.meta.dirname, '../../tsconfig.json') })
const imports = graph.obj()

/** `http/leads/leads.ts` → `http/leads`; a layer's own file, `commands/record.ts` → `commands`. */
const moduleOf = (file: string) => {
  const parts = file.split('/')
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]!
}
const isRoutes = (file: string) => /^export (async )?function \w+Routes\b/m.test(readFileSync(resolve(SRC, file), 'utf8'))

t.test('import circles stay inside one module', async (t) => {
  const crossing = graph.circular().filter((circle) => new Set(circle.map(moduleOf)).size > 1)
  t.same(crossing, [], 'circles that cross modules')
  t.ok(Object.keys(imports).length > 150, 'the graph covers the source tree')
})

t.test('the HTTP kernel imports no HTTP module', async (t) => {
  const wrong = Object.entries(imports).flatMap(([file, deps]) => (file.startsWith('http/kernel/') ? deps.filter((dep) => dep.startsWith('http/') && !dep.startsWith('http/kernel/')).map((dep) => `${file} → ${dep}`) : []))
  t.same(wrong, [])
})

t.test("an HTTP module never imports another module's routes", async (t) => {
  const wrong = Object.entries(imports).flatMap(([file, deps]) =>
    file.startsWith('http/') && file !== 'http/app.ts' ? deps.filter((dep) => dep.startsWith('http/') && !dep.startsWith('http/kernel/') && moduleOf(dep) !== moduleOf(file) && isRoutes(dep)).map((dep) => `${file} → ${dep}`) : [],
  )
  t.same(wrong, [])
})

t.test('only src/http imports fastify', async (t) => {
  const outside = Object.keys(imports).filter((file) => !file.startsWith('http/') && file !== 'identity/jwt.ts' && /from '(fastify|@fastify\/[\w-]+)'/.test(readFileSync(resolve(SRC, file), 'utf8')))
  t.same(outside, [])
})
