import { createHash } from 'node:crypto'
import t from 'tap'
import { legacyClaimStream } from '../../src/commands/name-claim.ts'
import { claimHolder } from '../../src/commands/unique-name.ts'
import type { EventStore } from '../../src/eventstore/event-store.ts'
import { CLAIM_KEY_SUBJECT } from '../../src/privacy/claim-names.ts'
import type { TestDatabase } from '../helpers/db.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

/**
 * Issue 31 (docs/personal-data.md, "Stream names"): a unique name's claim stream is named by an
 * HMAC under the installation's claim key, never by an unsalted hash of the email that anyone could
 * test a guessed address against; claims made before that still hold their names until released.
 */
const unsalted = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex')

/** The whole event log as text: stream names, data and metadata. */
async function logText(database: TestDatabase): Promise<string> {
  const { rows } = await database.pool.query<{ text: string | null }>(`SELECT string_agg(stream_name || ' ' || data::text || ' ' || metadata::text, E'\\n') AS text FROM events`)
  return rows[0]!.text ?? ''
}

const lastType = async (store: EventStore, stream: string) => (await store.readStream(stream)).at(-1)?.type

t.test('a new claim is keyed: the log holds no unsalted hash of the email', async (t) => {
  const { app, database, store, acme, globex } = await givenTwoOrganizations(t)
  const contacts = collectionClient(app, '/api/contacts/')
  const email = 'Ada.Lovelace@Engine.test'
  const created = await contacts.create(acme.admin.headers, { first_name: 'Ada', email })
  t.equal(created.statusCode, 200, created.body)
  t.equal((await contacts.create(globex.admin.headers, { first_name: 'Ada', email })).statusCode, 200, 'another organization may hold the same address')
  const text = await logText(database)
  t.notOk(text.includes(unsalted(email)), 'no SHA-256 of the address')
  t.notOk(text.includes(unsalted(email).slice(0, 32)), 'nor the 32 digits legacy claims were named by')
  const { rows } = await database.pool.query<{ stream_name: string }>(`SELECT stream_name FROM events WHERE event_type = 'NameClaimed' AND stream_name LIKE 'name_claim-contact_email-%'`)
  t.equal(rows.length, 2)
  for (const { stream_name } of rows) t.match(stream_name, /^name_claim-contact_email-[0-9a-f-]{36}-hmac\.[0-9a-f]{64}$/, 'named by the keyed hash')
  t.not(rows[0]!.stream_name.slice(-64), rows[1]!.stream_name.slice(-64), 'one address in two organizations: no common hash to link them by')
  t.equal(await claimHolder(store, 'contact_email', acme.orgId, ' ada.lovelace@engine.test '), created.json().id, 'found again, ignoring case and spaces')
  t.equal((await contacts.create(acme.admin.headers, { first_name: 'Copy', email: email.toUpperCase() })).statusCode, 400, 'a duplicate is refused')
  const key = await database.pool.query<{ data_key: Buffer }>('SELECT data_key FROM subject_keys WHERE subject = $1', [CLAIM_KEY_SUBJECT])
  t.ok(key.rows[0]!.data_key.length > 32, 'the claim key is stored wrapped by the master key')
})

t.test('a claim made before claims were keyed still holds its name until released', async (t) => {
  const { app, store, projections, acme } = await givenTwoOrganizations(t)
  const contacts = collectionClient(app, '/api/contacts/')
  const admin = acme.admin.headers
  const metadata = { actorId: acme.admin.profileId, orgId: acme.orgId }
  // What the older version wrote: the email set on the contact and claimed under the unsalted hash, in one append.
  const givenOlderClaim = async (firstName: string, email: string): Promise<{ id: string; legacy: string }> => {
    const created = await contacts.create(admin, { first_name: firstName })
    t.equal(created.statusCode, 200, created.body)
    const id: string = created.json().id
    const legacy = legacyClaimStream('contact_email', acme.orgId, email)
    const { position } = await store.appendToStreams([
      { streamName: `contact-${id}`, events: [{ type: 'ContactUpdated', data: { email, at: '2026-11-22T09:00:00.000Z' }, metadata }], expectedRevision: 0n },
      { streamName: legacy, events: [{ type: 'NameClaimed', data: { owner_id: id, name: email }, metadata }], expectedRevision: 'no_stream' },
    ])
    await projections.waitFor(position, 10_000)
    return { id, legacy }
  }
  // Written before the first claim this process looks up (as after an upgrade): the check finds them.
  const deleted = await givenOlderClaim('Dora', 'dora@old.test')
  const renamed = await givenOlderClaim('Rene', 'rene@old.test')
  const erased = await givenOlderClaim('Erin', 'erin@old.test')
  const duplicate = (email: string) => contacts.create(admin, { first_name: 'Copy', email })

  t.test('blocks a duplicate (create and rename) and answers its holder', async (t) => {
    t.match((await duplicate('DORA@old.test')).json(), { error: true, errors: { email: [/already in use/] } })
    t.equal(await claimHolder(store, 'contact_email', acme.orgId, 'dora@old.test'), deleted.id)
    const other = (await contacts.create(admin, { first_name: 'Other' })).json().id
    t.equal((await contacts.inject('PATCH', `/api/contacts/${other}/`, admin, { email: 'erin@old.test' })).statusCode, 400, 'a rename onto it too')
  })

  t.test('a delete releases it', async (t) => {
    t.equal((await contacts.inject('DELETE', `/api/contacts/${deleted.id}/`, admin)).statusCode, 200)
    t.equal(await lastType(store, deleted.legacy), 'NameReleased')
    t.equal((await duplicate('dora@old.test')).statusCode, 200, 'the address may be used again')
  })

  t.test('a rename releases it', async (t) => {
    t.equal((await contacts.inject('PATCH', `/api/contacts/${renamed.id}/`, admin, { email: 'rene@new.test' })).statusCode, 200)
    t.equal(await lastType(store, renamed.legacy), 'NameReleased')
    t.equal((await duplicate('rene@old.test')).statusCode, 200)
    t.equal((await duplicate('rene@new.test')).statusCode, 400, 'the new address is claimed (keyed)')
  })

  t.test('an erasure releases it', async (t) => {
    const res = await app.inject({ method: 'POST', url: '/api/privacy/erasures/', headers: admin, payload: { kind: 'contact', id: erased.id } })
    t.equal(res.statusCode, 201, res.body)
    t.equal(await lastType(store, erased.legacy), 'NameReleased')
    t.equal((await duplicate('erin@old.test')).statusCode, 200)
  })
})
