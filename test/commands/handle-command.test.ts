import t from 'tap'
import { handleCommand } from '../../src/commands/handle-command.ts'
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { freshDatabase } from '../helpers/db.ts'
import { spec } from '../helpers/given-when-then.ts'
import { testStore } from '../helpers/runner.ts'
import { tabDecider } from '../helpers/tab-decider.ts'

const opened = { type: 'TabOpened', data: { name: 'Bar' } } as const
const metadata = { actorId: 'profile-1', orgId: 'org-1', requestId: 'req-1' }

t.test('given/when/then on a pure decider', async (t) => {
  const tab = spec(t, tabDecider)
  tab.given([]).when({ type: 'Open', name: 'Bar' }).then([opened])
  tab.given([opened]).when({ type: 'Open', name: 'Bar' }).then([], 'opening an open tab is a no-op')
  tab.given([opened]).when({ type: 'Rename', name: 'Bar' }).then([], 'renaming to the same name is a no-op')
  tab.given([]).when({ type: 'Deposit', cents: 5 }).thenRejects(NotFoundError)
  tab.given([opened]).when({ type: 'Deposit', cents: 0 }).thenRejects(ValidationError, { errors: { cents: [/greater than 0/] } })
})

t.test('handleCommand', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)

  t.test('creates the stream, then appends at the revision it read', async (t) => {
    const first = await handleCommand(store, tabDecider, 'tab-1', { type: 'Open', name: 'Bar' }, { metadata })
    t.same(first.events, [opened])
    t.ok(first.position, 'reports the position to wait for')
    const second = await handleCommand(store, tabDecider, 'tab-1', { type: 'Deposit', cents: 250 }, { metadata })
    t.same(second.state, { open: true, name: 'Bar', balance: 250 })
    const stored = await store.readStream('tab-1')
    t.same(stored.map((e) => [e.type, e.revision]), [['TabOpened', 0n], ['Deposited', 1n]])
    t.match(stored[1]!.metadata, metadata, 'metadata travels with every event')
  })
  t.test('expectNew: a new stream is created without a read; an existing one is read and decided as usual', async (t) => {
    let reads = 0
    const counting = { ...store, readStream: (...args: Parameters<typeof store.readStream>) => (reads++, store.readStream(...args)) }
    const created = await handleCommand(counting, tabDecider, 'tab-new', { type: 'Open', name: 'New' }, { metadata, expectNew: true })
    t.same(created.events, [{ type: 'TabOpened', data: { name: 'New' } }])
    t.equal(reads, 0, 'no read for a stream that did not exist')
    const again = await handleCommand(counting, tabDecider, 'tab-new', { type: 'Open', name: 'New' }, { metadata, expectNew: true })
    t.same(again.events, [], 'the second open is a no-op, decided on the stored stream')
    t.equal(reads, 1, 'one read after the guessed append failed')
    const deposit = await handleCommand(counting, tabDecider, 'tab-new', { type: 'Deposit', cents: 7 }, { metadata, expectNew: true })
    t.same(deposit.state, { open: true, name: 'New', balance: 7 }, 'a command refused on the guessed empty state is decided again on the stream')
    await t.rejects(handleCommand(counting, tabDecider, 'tab-none', { type: 'Deposit', cents: 1 }, { metadata, expectNew: true }), NotFoundError, 'and refused when the stream really is empty')
    t.same((await store.readStream('tab-new')).map((e) => e.type), ['TabOpened', 'Deposited'])
  })
  t.test('an outcome that already holds appends nothing', async (t) => {
    const result = await handleCommand(store, tabDecider, 'tab-1', { type: 'Rename', name: 'Bar' }, { metadata })
    t.same(result.events, [])
    t.equal(result.position, null)
    t.equal((await store.readStream('tab-1')).length, 2)
  })
  t.test('a rejection appends nothing', async (t) => {
    await t.rejects(handleCommand(store, tabDecider, 'tab-1', { type: 'Deposit', cents: -1 }, { metadata }), ValidationError)
    await t.rejects(handleCommand(store, tabDecider, 'tab-missing', { type: 'Deposit', cents: 1 }, { metadata }), NotFoundError)
    t.equal((await store.readStream('tab-1')).length, 2)
    t.same(await store.readStream('tab-missing'), [])
  })
  t.test('concurrent commands are re-decided on fresh state, none lost', async (t) => {
    await handleCommand(store, tabDecider, 'tab-hot', { type: 'Open', name: 'Hot' }, { metadata })
    const deposits = Array.from({ length: 10 }, (_, i) => handleCommand(store, tabDecider, 'tab-hot', { type: 'Deposit', cents: i + 1 }, { metadata, maxRetries: 20 }))
    await Promise.all(deposits)
    const final = await handleCommand(store, tabDecider, 'tab-hot', { type: 'Rename', name: 'Hot' }, { metadata })
    t.equal(final.state.balance, 55)
  })
  t.test('a writer that gets in between read and append forces a re-decision, or a 409 without retries', async (t) => {
    await handleCommand(store, tabDecider, 'tab-busy', { type: 'Open', name: 'Busy' }, { metadata })
    let interlopers = 0
    const racingStore = {
      ...store,
      async readStream(name: string) {
        const events = await store.readStream(name)
        if (interlopers-- > 0) await store.appendToStream(name, [{ type: 'Deposited', data: { cents: 100 } }])
        return events
      },
    }
    interlopers = 1
    const retried = await handleCommand(racingStore, tabDecider, 'tab-busy', { type: 'Deposit', cents: 1 }, { metadata })
    t.equal(retried.state.balance, 101, 'decided again on the state that includes the interloper')
    interlopers = 1
    const refused = handleCommand(racingStore, tabDecider, 'tab-busy', { type: 'Deposit', cents: 1 }, { metadata, maxRetries: 0 })
    await t.rejects(refused, ConflictError)
    await refused.catch((e: ConflictError) => t.equal(e.statusCode, 409))
    const balance = (await handleCommand(store, tabDecider, 'tab-busy', { type: 'Rename', name: 'Busy' }, { metadata })).state.balance
    t.equal(balance, 201, 'the refused deposit was not stored')
  })
})
