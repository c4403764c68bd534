import t from 'tap'
import type { EventStore, Position } from '../../src/eventstore/event-store.ts'
import { readCheckpoints } from '../../src/projections/kernel/checkpoints.ts'
import { progressLine } from '../../src/projections/kernel/progress-line.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import type { RebuildProgress } from '../../src/projections/kernel/rebuild.ts'
import { projectionsStatus } from '../../src/projections/kernel/status.ts'
import { counterProjector, counterRows, tamperCounter } from '../helpers/counter-projector.ts'
import { freshDatabase } from '../helpers/db.ts'
import { testRunner, testStore } from '../helpers/runner.ts'
import { eventually } from '../helpers/webhook-receiver.ts'

const STREAMS = 20

async function countOnce(store: EventStore, i: number): Promise<Position> {
  return (await store.appendToStream(`s-${i % STREAMS}`, [{ type: 'Counted', data: { amount: '1' } }])).position
}

/** Version 2 of the counter, slowed down per event so its rebuild takes a while to watch. */
function slowCounter(msPerEvent: number): Projector {
  const v2 = counterProjector({ version: 2 })
  return { ...v2, apply: async (trx, event) => (await new Promise((r) => setTimeout(r, msPerEvent)), v2.apply(trx, event)) }
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0

t.test('blue-green: a new version builds beside the old tables, which serve until the swap (issue 17 point 3)', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const v1 = testRunner(t, database, store, [counterProjector({ version: 1 }), counterProjector({ name: 'other' })])
  v1.start()
  let last: Position | undefined
  for (let i = 0; i < 200; i++) last = await countOnce(store, i)
  await v1.waitFor(last!, 10_000)
  await v1.stop()
  // Tampered by hand: the old version's tables are what serves until the swap, and the rebuild recomputes them.
  await tamperCounter(database.db)

  const v2 = testRunner(t, database, store, [slowCounter(8), counterProjector({ name: 'other' })])
  v2.start()
  // A reader of the read model all along: no query may fail, and no stream's count may go backwards.
  const seen = new Map<string, number>()
  const latencies: number[] = []
  const failures: string[] = []
  let backwards = 0
  let servedOld = 0
  let reading = true
  const reader = (async () => {
    while (reading) {
      const started = performance.now()
      try {
        const rows = await counterRows(database.db)
        latencies.push(performance.now() - started)
        for (const row of rows) {
          if (row.events < (seen.get(row.stream_name) ?? 0)) backwards++
          seen.set(row.stream_name, row.events)
          if (row.total === '999') servedOld++
        }
      } catch (error) {
        failures.push(String(error))
      }
    }
  })()

  const progress = await eventually('rebuild progress', () => v2.rebuilds.get('counter'))
  t.match(progress, { name: 'counter', version: 2, events: Number, eventsPerSecond: Number }, 'progress of the build beside')
  const status = await projectionsStatus(database.db, store, v2.projectors)
  t.match(status.projectors.find((p) => p.name === 'counter'), { version: 2, storedVersion: 1 }, 'both versions: 1 serves, 2 builds')
  // Writes go on meanwhile: read-your-writes holds for the other read model without waiting for the rebuild.
  const started = Date.now()
  const during = await countOnce(store, 3)
  await v2.waitFor(during, 5000)
  t.ok(Date.now() - started < 2000, `a write's wait does not wait for the rebuild (${Date.now() - started} ms)`)
  t.ok(v2.rebuilds.has('counter'), 'still building then')

  await eventually('the swap', () => !v2.rebuilds.has('counter'), 60_000)
  t.equal((await readCheckpoints(database.db)).find((c) => c.name === 'counter')?.version, 2, 'the new version is stored')
  const after = await countOnce(store, 4)
  await v2.waitFor(after, 10_000)
  reading = false
  await reader
  t.same(failures, [], 'no read failed during the build or the swap')
  t.equal(backwards, 0, 'no count went backwards')
  t.ok(servedOld > 0, 'the old tables served while the new version built')
  const rows = await counterRows(database.db)
  t.equal(rows.reduce((n, r) => n + r.events, 0), 202, 'every event, those appended during the build too')
  t.ok(rows.every((r) => r.total === String(r.events)), 'recomputed by the new version')
  t.comment(`reads during the rebuild and swap: ${latencies.length}, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`)
})

t.test('the rebuild command prints events/s, share and ETA, throttled', async (t) => {
  const lines: string[] = []
  const print = progressLine((line) => lines.push(line), 60_000)
  const at = (events: number, done: number): RebuildProgress => ({ name: 'deals', version: 3, startedAt: new Date(), events, eventsPerSecond: 52_000, etaSeconds: 12, done })
  print(at(2000, 0.1))
  print(at(4000, 0.2))
  print(at(20_000, 1))
  t.same(lines, ['deals v3: 2,000 events, 52,000 events/s, 10.0% of the log, ETA 12 s\n', 'deals v3: 20,000 events, 52,000 events/s, 100.0% of the log, ETA 12 s\n'])
})
