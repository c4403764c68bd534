import { randomUUID } from 'node:crypto'
import t from 'tap'
import { handleCommand } from '../../src/commands/handle-command.ts'
import { nameClaimDecider } from '../../src/commands/name-claim.ts'
import { claimStreamsOf } from '../../src/commands/unique-name.ts'
import { findOrphanClaims, releaseOrphans } from '../../src/names/orphan-claims.ts'
import { namesOrphans } from '../../src/names/orphans-command.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

/** Event timestamps are the database's: "later" is real time plus more than the grace period. */
const later = () => new Date(Date.now() + 6 * 60_000)

t.test('names orphans: a claim left by a create that died before its record', async (t) => {
  const { app, database, store, projections, acme, globex } = await givenTwoOrganizations(t)
  const runtime = { db: database.db, store, projections }
  const accounts = collectionClient(app, '/api/accounts/')
  const admin = acme.admin.headers
  // What a process killed between the two steps of withClaimedName leaves behind: the claim, no account.
  const claimStream = async (orgId: string, name: string) => (await claimStreamsOf(store, { scope: 'account', orgId, name })).keyed
  const claimWithoutRecord = async (orgId: string, name: string, ownerId = randomUUID()) =>
    handleCommand(store, nameClaimDecider, await claimStream(orgId, name), { type: 'Claim', ownerId, name, field: 'name' }, { metadata: { orgId } })

  await claimWithoutRecord(acme.orgId, 'Ghost Inc')
  const healthy = await accounts.create(admin, { name: 'Real Inc' })
  t.equal(healthy.statusCode, 200)
  const removed = await accounts.create(admin, { name: 'Gone Inc' })
  t.equal((await accounts.inject('DELETE', `/api/accounts/${removed.json().id}/`, admin)).statusCode, 200, 'a deleted account released its name')
  // A rename cut short after claiming the new name: the account lives on under its old one.
  await claimWithoutRecord(acme.orgId, 'Real Inc Renamed', healthy.json().id)
  const blocked = await accounts.create(admin, { name: 'ghost inc' })
  t.equal(blocked.statusCode, 400, 'the orphan keeps the name taken')
  t.match(blocked.json(), { error: true, errors: { name: [/already in use/] } })

  t.test('within the grace period nothing is judged', async (t) => {
    const report = await namesOrphans(runtime, { json: true })
    t.match(report, { orphans: [], too_recent: 3, older_than_seconds: 300 })
  })

  t.test('lists only the orphans, as JSON or as a table', async (t) => {
    const report = await namesOrphans(runtime, { json: true }, later())
    t.match(report, { held: 1, too_recent: 0, unknown_scopes: [] })
    t.match((report as { orphans: unknown[] }).orphans, [
      { scope: 'account', org_id: acme.orgId, name: 'Ghost Inc', owner_id: String, claimed_at: String },
      { scope: 'account', org_id: acme.orgId, name: 'Real Inc Renamed', owner_id: healthy.json().id },
    ])
    t.notOk('released' in (report as object), 'nothing released without --release')
    t.match(await namesOrphans(runtime, { json: true, org: globex.orgId }, later()), { orphans: [], held: 0 }, '--org narrows the scan')
    const text = await namesOrphans(runtime, {}, later())
    t.match(text, /^scope\s+org_id\s+name\s+owner_id\s+claimed_at\n/)
    t.match(text, /account\s+\S+\s+Ghost Inc\s/)
    t.match(text, /2 orphan\(s\); 1 held by live records/)
    await t.rejects(namesOrphans(runtime, { 'older-than': 'soon' }), /Expected --older-than/)
    await t.rejects(namesOrphans(runtime, { org: 'acme' }), /Expected --org/)
  })

  t.test('a claim that changed since it was read is left alone', async (t) => {
    const ownerId = randomUUID()
    await claimWithoutRecord(acme.orgId, 'Moving Inc', ownerId)
    const { orphans } = await findOrphanClaims(runtime, { now: later(), graceMs: 300_000 })
    const moving = orphans.find((c) => c.name === 'Moving Inc')!
    await handleCommand(store, nameClaimDecider, moving.streamName, { type: 'Release', ownerId }, { metadata: { orgId: acme.orgId } })
    await handleCommand(store, nameClaimDecider, moving.streamName, { type: 'Claim', ownerId: randomUUID(), name: 'Moving Inc', field: 'name' }, { metadata: { orgId: acme.orgId } })
    t.match(await releaseOrphans(store, [moving]), [{ released: false, reason: /changed since/ }])
    t.equal((await store.readStream(moving.streamName)).length, 3, 'nothing appended')
  })

  t.test('--release frees the orphans, and only them; the name can be used again', async (t) => {
    const report = (await namesOrphans(runtime, { json: true, release: true, 'older-than': '300' }, later())) as { orphans: { name: string; released: boolean }[]; released: number }
    t.same(report.orphans.map((o) => [o.name, o.released]).sort(), [['Ghost Inc', true], ['Moving Inc', true], ['Real Inc Renamed', true]])
    const ghostStream = await store.readStream(await claimStream(acme.orgId, 'Ghost Inc'))
    t.match(ghostStream.at(-1), { type: 'NameReleased', metadata: { actorId: null, orgId: acme.orgId, reason: /orphan/ } })
    t.match((await store.readStream(await claimStream(acme.orgId, 'Real Inc'))).map((e) => e.type), ['NameClaimed'], 'the healthy claim is untouched')
    const reused = await accounts.create(admin, { name: 'GHOST INC' })
    t.equal(reused.statusCode, 200, reused.body)
    t.equal((await accounts.inject('PATCH', `/api/accounts/${healthy.json().id}/`, admin, { name: 'Real Inc Renamed' })).statusCode, 200, 'the rename can now happen')
    t.equal((await accounts.create(admin, { name: 'Real Inc' })).statusCode, 200, 'the rename freed the old name')
    t.match(await namesOrphans(runtime, { json: true }, later()), { orphans: [], held: 3 })
  })
})
