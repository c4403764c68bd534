/**
 * `npm run crm -- events export` (issue 17 point 2): one organization's events in commit order,
 * upcast to current shapes, as NDJSON; progress and the resume position on stderr.
 */
import { randomUUID } from 'node:crypto'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { exportEvents } from '../../src/events/export.ts'
import { parsePosition } from '../../src/eventstore/event-store.ts'
import { freshDatabase } from '../helpers/db.ts'
import { runEntry } from '../helpers/process.ts'
import { testStore } from '../helpers/runner.ts'

t.test('events export', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const [acme, globex] = [randomUUID(), randomUUID()]
  const append = (orgId: string, type: string, data: Record<string, unknown>, schemaVersion?: number) =>
    store.appendToStream(`test-${randomUUID()}`, [{ type, data, metadata: { orgId }, ...(schemaVersion && { schemaVersion }) }])
  // A version-1 goal: exported in today's shape (goal_type, period_type, is_active filled in by its upcaster).
  await append(acme, 'GoalSet', { name: 'Old goal' }, 1)
  await append(globex, 'TagCreated', { name: 'Not Acme' })
  await append(acme, 'TagCreated', { name: 'First' })
  await append(acme, 'TagCreated', { name: 'Second' })
  await append(acme, 'AccountCreated', { name: 'Later' })

  const collect = async (options: Parameters<typeof exportEvents>[2]) => {
    const out = new PassThrough()
    const chunks: string[] = []
    out.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
    const done = await exportEvents(store, out, { pageSize: 2, ...options })
    return { done, lines: chunks.join('').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)) }
  }

  const all = await collect({ orgId: acme })
  t.same(all.lines.map((e) => e.type), ['GoalSet', 'TagCreated', 'TagCreated', 'AccountCreated'], "only the organization's, in commit order (pages of 2)")
  t.match(all.lines[0], { type: 'GoalSet', data: { name: 'Old goal', goal_type: 'REVENUE', period_type: 'CUSTOM', is_active: true }, position: /^\d+-\d+$/, stream: String, at: String }, 'upcast')
  t.equal(all.done.exported, 4)

  const types = await collect({ orgId: acme, types: ['TagCreated'] })
  t.same(types.lines.map((e) => e.data.name), ['First', 'Second'], '--type narrows')

  const resumed = await collect({ orgId: acme, after: parsePosition(types.lines[0].position) })
  t.same(resumed.lines.map((e) => e.data.name), ['Second', 'Later'], '--from continues after a position')
  const rest = await collect({ orgId: acme, after: parsePosition(all.done.resume) })
  t.same(rest.lines, [], 'the resume position of a finished export continues with nothing')

  t.test('through the CLI: NDJSON on stdout, progress and the resume position on stderr', async (t) => {
    const env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }
    const { code, stdout, stderr } = await runEntry('src/cli.ts', ['events', 'export', '--org', acme, '--type', 'TagCreated', '--type', 'AccountCreated'], env).finished
    t.equal(code, 0, stderr)
    t.same(stdout.trim().split('\n').map((line) => JSON.parse(line).type), ['TagCreated', 'TagCreated', 'AccountCreated'])
    const last = JSON.parse(stderr.trim().split('\n').at(-1)!)
    t.match(last, { exported: 3, resume: /^\d+-\d+$/ })
    const refused = await runEntry('src/cli.ts', ['events', 'export'], env).finished
    t.equal(refused.code, 1)
    t.match(refused.stderr, /needs --org/)
  })
})
