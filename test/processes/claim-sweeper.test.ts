import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { accountDecider, accountStream, emptyAccount } from '../../src/commands/account/account.ts'
import { ACCOUNT_NAME_SCOPE } from '../../src/commands/account/account.ts'
import { handleCommand } from '../../src/commands/handle-command.ts'
import { legacyClaimStream, nameClaimDecider } from '../../src/commands/name-claim.ts'
import { claimStreamsOf, withClaimedName } from '../../src/commands/unique-name.ts'
import type { CommandRunner } from '../../src/commands/command-runner.ts'
import { createClaimSweeper } from '../../src/processes/claim-sweeper.ts'
import type { SweepOutcome } from '../../src/processes/claim-sweeper.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { freshDatabase } from '../helpers/db.ts'
import { silentLogger, testRunner, testStore } from '../helpers/runner.ts'

const GRACE_MS = 300_000
const orgId = randomUUID()

/**
 * Issue 21: the claim sweeper frees claims no record holds once their grace period has passed,
 * on the projections' leader only, and idempotently. Two processes (two runners and two sweepers
 * on one database); the clock is moved by hand.
 */
t.test('claim sweeper', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const [first, second] = [testRunner(t, database, store, [...allProjectors]), testRunner(t, database, store, [...allProjectors])]
  first.start()
  await first.tablesReady(30_000)
  second.start()
  let now = new Date()
  const sweepers = [first, second].map((projections) => createClaimSweeper({ db: database.db, store, projections, logger: silentLogger, clock: () => now, graceMs: GRACE_MS, intervalMs: 60_000 }))
  const run: CommandRunner = (decider, streamName, command, options) => handleCommand(store, decider, streamName, command, { metadata: { orgId }, ...options })

  // What a process killed between a claim's append and its record's leaves (KurrentDB, or before claims travelled with records),
  // here before claims were keyed: the sweeper frees an unsalted claim as it does a keyed one (below).
  const ghost = legacyClaimStream(ACCOUNT_NAME_SCOPE, orgId, 'Ghost Inc')
  await run(nameClaimDecider, ghost, { type: 'Claim', ownerId: randomUUID(), name: 'Ghost Inc', field: 'name' })
  // A claim its account holds.
  const accountId = randomUUID()
  const created = await withClaimedName(run, { scope: ACCOUNT_NAME_SCOPE, orgId, ownerId: accountId, name: 'Real Inc', field: 'name' }, (withClaim) =>
    withClaim(accountDecider, accountStream(accountId), { type: 'CreateAccount', accountId, orgId, fields: { ...emptyAccount(), name: 'Real Inc' }, actorId: null, at: now.toISOString() }),
  )
  // The read models of these events only, generously: the units are still splitting between the two runners (no notices here, so
  // the first reads the second's progress from the checkpoint table) and the suite may be loaded; the sweep is what this tests.
  await first.waitFor(created.position!, 30_000, new Set(created.eventTypes))
  const releases = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE event_type = 'NameReleased'`.execute(database.db)).rows[0]!.n
  const sweepBoth = () => Promise.all(sweepers.map((s) => s.sweep()))
  const released = (outcomes: SweepOutcome[]) => outcomes.flatMap((o) => (o.swept ? o.released.filter((r) => r.released).map((r) => r.claim.name) : []))

  t.test('only the leader sweeps', async (t) => {
    const outcomes = await sweepBoth()
    t.same(outcomes.map((o) => o.swept).sort(), [false, true], 'one of the two processes swept')
    t.same(outcomes.find((o) => !o.swept), { swept: false, reason: 'not the leader' })
  })

  t.test('within the grace period nothing is released', async (t) => {
    now = new Date(Date.now() + GRACE_MS - 60_000)
    t.same(released(await sweepBoth()), [])
    t.equal(await releases(), 0)
  })

  t.test('past it, the orphan is released once, by the leader, and the held claim stays', async (t) => {
    now = new Date(Date.now() + GRACE_MS + 60_000)
    t.same(released(await sweepBoth()), ['Ghost Inc'])
    t.equal(await releases(), 1)
    t.same((await store.readStream(ghost)).map((e) => [e.type, e.metadata.reason]), [['NameClaimed', undefined], ['NameReleased', 'orphan name claim released by the claim sweeper']])
  })

  t.test('sweeping again releases nothing more (idempotent)', async (t) => {
    t.same(released(await sweepBoth()), [])
    t.equal(await releases(), 1)
  })

  t.test('the leader gone, the other process takes over and sweeps', async (t) => {
    const leader = first.isLeader ? first : second
    const other = leader === first ? second : first
    await leader.stop()
    const deadline = Date.now() + 15_000
    while (!other.isLeader && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    t.ok(other.isLeader, 'the other process leads')
    const { keyed: orphan } = await claimStreamsOf(store, { scope: ACCOUNT_NAME_SCOPE, orgId, name: 'Phantom Inc' })
    await run(nameClaimDecider, orphan, { type: 'Claim', ownerId: randomUUID(), name: 'Phantom Inc', field: 'name' })
    now = new Date(Date.now() + GRACE_MS + 60_000)
    t.same(released(await sweepBoth()), ['Phantom Inc'])
  })
})
