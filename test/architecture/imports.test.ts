import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import madge from 'madge'
import t from 'tap'
import { REPO } from '../helpers/repo.ts'

/**
 * The layout's rules (docs/adding-a-module.md), checked on the import graph of src/:
 * - an import circle stays inside one module (`src/<layer>/<module>/`, or a layer's own files);
 * - the HTTP kernel (`src/http/kernel/`) imports no module of `src/http/`;
 * - an HTTP module imports another module's schemas or views, never its routes (the kernel's route
 *   factories, such as record-routes.ts, are for every module): only app.ts
 *   wires routes (a routes file is one that exports a `…Routes` function);
 * - only `src/http/` (and the JWT plugin in `src/identity/jwt.ts`) imports fastify, also enforced by eslint;
 * - the projection kernel (`src/projections/kernel/`) imports no module (of projections, commands or
 *   http) and not the module list;
 * - only the composition roots (app.ts, runtime.ts, the event catalogue) import `src/modules/` (the manifests and their list);
 * - a projection module reads another module's read model only through that module's `queries.ts`
 *   (the exceptions below are the ones that predate the rule, each named);
 * - the HTTP kernel imports no module read model (`src/projections/<module>/`), exceptions named;
 * - the command kernel (`src/commands/*.ts`) imports nothing of `src/projections/`.
 */
const SRC = resolve(REPO, 'src')
const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: resolve(REPO, 'tsconfig.json') })
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

const KERNEL = 'projections/kernel/'
/** `projections/lead/leads.ts` → `lead`; undefined outside a projection module (the kernel included). */
const projectionModule = (file: string) => (file.startsWith('projections/') && !file.startsWith(KERNEL) ? file.split('/')[1] : undefined)
const edges = (keep: (file: string, dep: string) => boolean) => Object.entries(imports).flatMap(([file, deps]) => deps.filter((dep) => keep(file, dep)).map((dep) => `${file} → ${dep}`))

t.test('the projection kernel imports no module', async (t) => {
  const wrong = edges((file, dep) => file.startsWith(KERNEL) && (projectionModule(dep) !== undefined || /^commands\/[^/]+\//.test(dep) || dep.startsWith('http/') || dep.startsWith('modules/')))
  t.same(wrong, [])
  t.ok(Object.keys(imports).filter((file) => file.startsWith(KERNEL)).length >= 15, 'the kernel is in the graph')
})

/**
 * Reads of another projection module that do not go through its `queries.ts`: each is a function or
 * row type kept in the other module's projector file (or a cross-module helper), to move into that
 * module's queries.ts when it is next changed. Adding to this list needs a reason here.
 */
const READS_AROUND_QUERIES = [
  // The dashboard's goal and lead widgets reuse the goals' and leads' own conditions, kept in their projector files.
  'projections/dashboard/dashboard.ts → projections/goal/goals.ts',
  'projections/dashboard/dashboard.ts → projections/lead/leads.ts',
  // Whether pg_trgm is installed, asked of search's projector file by the deals' name index.
  'projections/opportunity/opportunities.ts → projections/search/search.ts',
  // The kinds of record (names, links, visibility) the activity feed and notifications speak of.
  'projections/activity/dashboard-activity.ts → projections/record/record-kinds.ts',
  'projections/notification/notifications.ts → projections/record/record-kinds.ts',
  // The existence checks of relation ids (tags, contacts, teams) before a command decides.
  'projections/record/relations.ts → projections/contact/contacts.ts',
  'projections/record/relations.ts → projections/tag/tags.ts',
  'projections/record/relations.ts → projections/team/teams.ts',
]

/** The erasure wrapper every read model holding personal data uses (issue 31): shared machinery, as the kernel, not another module's rows. */
const ERASING = 'projections/privacy/erasing.ts'

t.test("a projection module reads another module only through its queries.ts", async (t) => {
  const around = edges((file, dep) => {
    const [from, to] = [projectionModule(file), projectionModule(dep)]
    return from !== undefined && to !== undefined && from !== to && dep !== `projections/${to}/queries.ts` && dep !== ERASING
  })
  t.same(around.sort(), [...READS_AROUND_QUERIES].sort(), 'reads around queries.ts: only the listed ones (a fixed one leaves the list too)')
})

/** The HTTP kernel's reads of module read models that predate the rule, each a row type or lookup a kernel helper shares. */
const HTTP_KERNEL_READS = [
  // The tag references (id, name, color) every module's records embed (kernel/relations.ts tagRefs).
  'http/kernel/relations.ts → projections/tag/tags.ts',
  // The account and contact records other modules' answers embed.
  'http/kernel/schemas/records.ts → projections/account/accounts.ts',
  'http/kernel/schemas/records.ts → projections/contact/contacts.ts',
]

t.test('the HTTP kernel imports no module read model', async (t) => {
  const wrong = edges((file, dep) => file.startsWith('http/kernel/') && projectionModule(dep) !== undefined)
  t.same(wrong.sort(), [...HTTP_KERNEL_READS].sort(), 'only the listed ones (a fixed one leaves the list too)')
})

t.test('only the composition roots import the module list and manifests (src/modules/)', async (t) => {
  // The app, the runtime, the event catalogue (only the app's event-schema route reads it) and the list itself: a module that imported the list would close a circle through every other module.
  const roots = ['http/app.ts', 'runtime.ts', 'events/catalogue.ts']
  const wrong = edges((file, dep) => dep.startsWith('modules/') && !file.startsWith('modules/') && !roots.includes(file))
  t.same(wrong, [])
})

t.test('the command kernel imports nothing of src/projections', async (t) => {
  const wrong = edges((file, dep) => /^commands\/[^/]+\.ts$/.test(file) && dep.startsWith('projections/'))
  t.same(wrong, [])
})
