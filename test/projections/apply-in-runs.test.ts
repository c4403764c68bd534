import t from 'tap'
import type { RecordedEvent } from '../../src/eventstore/event-store.ts'
import { BATCH_FROM, applyInRuns } from '../../src/projections/kernel/projector.ts'

const event = (type: string, n: number) => ({ type, data: { n } }) as unknown as RecordedEvent
const label = (e: RecordedEvent) => `${e.type}${(e.data as { n: number }).n}`

t.test('runs of one type are applied together, everything in log order; a run shorter than BATCH_FROM one by one', async (t) => {
  t.equal(BATCH_FROM, 4, 'the runs below are on either side of it')
  const events = [event('C', 1), event('C', 2), event('C', 3), event('C', 4), event('U', 5), event('C', 6), event('D', 7), event('C', 8), event('C', 9), event('C', 10), event('C', 11), event('C', 12)]
  const calls: string[] = []
  await applyInRuns(events, 'C', async (run) => void calls.push(`run(${run.map(label).join(',')})`), async (e) => void calls.push(label(e)))
  t.same(calls, ['run(C1,C2,C3,C4)', 'U5', 'C6', 'D7', 'run(C8,C9,C10,C11,C12)'])
})

t.test('a long run is split so one statement stays under the bind-parameter limit', async (t) => {
  const sizes: number[] = []
  await applyInRuns(Array.from({ length: 2500 }, (_, i) => event('C', i)), 'C', async (run) => void sizes.push(run.length), async () => {})
  t.same(sizes, [1000, 1000, 500])
})

t.test('a run may gather several types, named by a test of the event', async (t) => {
  const events = [event('C', 1), event('U', 2), event('U', 3), event('C', 4), event('D', 5), event('U', 6), event('C', 7)]
  const calls: string[] = []
  await applyInRuns(events, (e) => e.type !== 'D', async (run) => void calls.push(`run(${run.map(label).join(',')})`), async (e) => void calls.push(label(e)))
  t.same(calls, ['run(C1,U2,U3,C4)', 'D5', 'U6', 'C7'])
})

t.test('a run of anyLength events alone goes to applyRun however short; a run that mixes in others keeps BATCH_FROM', async (t) => {
  const events = [event('C', 1), event('D', 2), event('C', 3), event('U', 4), event('D', 5), event('C', 6), event('C', 7)]
  const calls: string[] = []
  await applyInRuns(events, (e) => e.type !== 'D', async (run) => void calls.push(`run(${run.map(label).join(',')})`), async (e) => void calls.push(label(e)), (e) => e.type === 'C')
  t.same(calls, ['run(C1)', 'D2', 'C3', 'U4', 'D5', 'run(C6,C7)'])
})
