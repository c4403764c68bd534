import t from 'tap'
import type { RecordedEvent } from '../../src/eventstore/event-store.ts'
import { applyInRuns } from '../../src/projections/projector.ts'

const event = (type: string, n: number) => ({ type, data: { n } }) as unknown as RecordedEvent

t.test('runs of one type are applied together, everything in log order', async (t) => {
  const events = [event('C', 1), event('C', 2), event('U', 3), event('C', 4), event('D', 5), event('C', 6), event('C', 7)]
  const calls: string[] = []
  const label = (e: RecordedEvent) => `${e.type}${(e.data as { n: number }).n}`
  await applyInRuns(events, 'C', async (run) => void calls.push(`run(${run.map(label).join(',')})`), async (e) => void calls.push(label(e)))
  t.same(calls, ['run(C1,C2)', 'U3', 'run(C4)', 'D5', 'run(C6,C7)'])
})

t.test('a long run is split so one statement stays under the bind-parameter limit', async (t) => {
  const sizes: number[] = []
  await applyInRuns(Array.from({ length: 2500 }, (_, i) => event('C', i)), 'C', async (run) => void sizes.push(run.length), async () => {})
  t.same(sizes, [1000, 1000, 500])
})

t.test('a run may gather several types, named by a test of the event', async (t) => {
  const events = [event('C', 1), event('U', 2), event('D', 3), event('U', 4), event('C', 5)]
  const calls: string[] = []
  const label = (e: RecordedEvent) => `${e.type}${(e.data as { n: number }).n}`
  await applyInRuns(events, (e) => e.type !== 'D', async (run) => void calls.push(`run(${run.map(label).join(',')})`), async (e) => void calls.push(label(e)))
  t.same(calls, ['run(C1,U2)', 'D3', 'run(U4,C5)'])
})
