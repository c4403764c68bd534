import t from 'tap'
import { freshDatabase } from '../helpers/db.ts'
import { runEntry } from '../helpers/process.ts'

t.test('npm run crm -- ...', async (t) => {
  const database = await freshDatabase(t, { migrate: false })
  const env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }

  t.test('migrate applies the migrations', async (t) => {
    const { code, stdout } = await runEntry('src/cli.ts', ['migrate'], env).finished
    t.equal(code, 0)
    t.same(JSON.parse(stdout), { migrated: true })
    const tables = await database.pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
    const names = tables.rows.map((r) => r.tablename)
    for (const table of ['events', 'projection_checkpoints', 'organizations', 'profiles', 'personal_access_tokens', 'kysely_migration']) t.ok(names.includes(table), `${table} exists`)
  })
  t.test('projections status prints one JSON document', async (t) => {
    const { code, stdout } = await runEntry('src/cli.ts', ['projections', 'status'], env).finished
    t.equal(code, 0)
    t.match(JSON.parse(stdout), { projectors: Array, visibility: { hiddenEvents: 0 } })
  })
  t.test('rebuilding an unknown projection fails with the known names', async (t) => {
    const { code, stderr } = await runEntry('src/cli.ts', ['projections', 'rebuild', 'nope'], env).finished
    t.equal(code, 1)
    t.match(stderr, /Unknown projection "nope"/)
  })
  t.test('an unknown command prints usage', async (t) => {
    const { code, stderr } = await runEntry('src/cli.ts', ['frobnicate'], env).finished
    t.equal(code, 2)
    t.match(stderr, /Usage: npm run crm/)
  })
})
