/**
 * Spec §5, rule by rule, through the real app: how each credential is sent, what it may reach,
 * and its lifecycle. Test names cite the rule they prove.
 */
import { createHash } from 'node:crypto'
import t from 'tap'
import { auditStream } from '../../src/identity/audit.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import type { Member } from '../helpers/identity.ts'

t.test('§5 credentials', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const me = (headers: Record<string, string>) => app.inject({ url: '/api/auth/me/', headers })
  const createPat = async (owner: Member, body: object = { name: 'agent' }) => {
    const res = await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: owner.headers, payload: body })
    t.equal(res.statusCode, 201, `token created: ${res.body}`)
    return res.json() as { id: string; token: string; token_prefix: string; scopes: string[] }
  }
  const rotateApiKey = async () => (await app.inject({ method: 'POST', url: '/api/org/api-key/', headers: acme.admin.headers })).json().api_key as string

  t.test('no credential, or a malformed, unknown or expired one, is a 401', async (t) => {
    t.equal((await me({})).statusCode, 401)
    t.same((await me({})).json(), { error: true, errors: 'Authentication credentials were not provided' })
    t.equal((await me({ authorization: 'Basic abc' })).statusCode, 401)
    t.equal((await me({ authorization: 'Bearer not.a.jwt' })).statusCode, 401)
    t.equal((await me({ authorization: 'Bearer svc_pat_unknown' })).statusCode, 401)
    t.equal((await me({ token: 'svc_key_unknown' })).statusCode, 401)
    t.equal((await me({ token: 'something-else' })).statusCode, 401)
    const expired = app.jwt.sign({ sub: alice.userId, org_id: alice.orgId, typ: 'access' }, { expiresIn: -10 })
    t.equal((await me({ authorization: `Bearer ${expired}` })).statusCode, 401)
    const justExpired = app.jwt.sign({ sub: alice.userId, org_id: alice.orgId, typ: 'access' }, { expiresIn: -2 })
    t.equal((await me({ authorization: `Bearer ${justExpired}` })).statusCode, 200, 'within ACCESS_TOKEN_LEEWAY_SECONDS (5) of its exp')
    const forged = app.jwt.sign({ sub: alice.userId, org_id: globex.orgId, typ: 'access' })
    t.equal((await me({ authorization: `Bearer ${forged}` })).statusCode, 401, 'a JWT for an org the user is not in')
  })

  t.test('rule 1: a PAT works as Bearer or in the Token header; the API key only in Token', async (t) => {
    const pat = await createPat(alice)
    t.match(pat.token, /^svc_pat_/)
    t.match((await me({ authorization: `Bearer ${pat.token}` })).json(), { profile_id: alice.profileId, credential: 'pat' })
    t.match((await me({ token: pat.token })).json(), { profile_id: alice.profileId, credential: 'pat' })
    const key = await rotateApiKey()
    t.match((await me({ token: key })).json(), { org_id: acme.orgId, credential: 'api_key', profile_id: null })
    t.equal((await me({ authorization: `Bearer ${key}` })).statusCode, 401, 'the API key is not accepted as a bearer token')
  })

  t.test('rule 2: identity and organization come from the credential; an org header has no effect', async (t) => {
    const res = await me({ ...alice.headers, org: globex.orgId })
    t.match(res.json(), { org_id: acme.orgId, profile_id: alice.profileId, role: 'USER' })
  })

  t.test('rule 3: the organization API key is read-only', async (t) => {
    const key = await rotateApiKey()
    t.equal((await me({ token: key })).statusCode, 200)
    const write = await app.inject({ method: 'POST', url: '/api/opportunities/', headers: { token: key }, payload: { name: 'By key' } })
    t.equal(write.statusCode, 403)
    t.same(write.json(), { error: true, errors: 'The organization API key is read-only' })
  })

  t.test('rule 4: scopes are normalised, validated and enforced', async (t) => {
    const scoped = await createPat(alice, { name: 'reader', scopes: ['Opportunities:READ', 'opportunities:read', 'auth:read'] })
    t.same(scoped.scopes, ['opportunities:read', 'auth:read'], 'lower-cased, duplicates collapsed')
    let deals = 0
    const post = (token: string) => app.inject({ method: 'POST', url: '/api/opportunities/', headers: { authorization: `Bearer ${token}` }, payload: { name: `Scoped ${++deals}` } })
    t.equal((await post(scoped.token)).statusCode, 403, 'opportunities:read cannot POST')
    t.equal((await me({ token: scoped.token })).statusCode, 200, 'auth:read can GET /api/auth/me/')
    const writer = await createPat(alice, { name: 'writer', scopes: ['opportunities:write'] })
    t.equal((await post(writer.token)).statusCode, 200, 'opportunities:write can POST')
    t.equal((await me({ token: writer.token })).statusCode, 403, 'write does not imply read, and other resources are denied')
    const everything = await createPat(alice, { name: 'all-reads', scopes: ['*:read'] })
    t.equal((await me({ token: everything.token })).statusCode, 200)
    t.equal((await post(everything.token)).statusCode, 403, '*:read allows only reads')
    const unrestricted = await createPat(alice, { name: 'full' })
    t.equal((await post(unrestricted.token)).statusCode, 200, 'an empty scope list is unrestricted')
    const bad = await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: alice.headers, payload: { name: 'x', scopes: ['deals:read', 'opportunities:delete'] } })
    t.equal(bad.statusCode, 400)
    t.match(bad.json(), { error: true, errors: { scopes: [/deals:read/, /opportunities:delete/] } })
  })

  t.test('rule 5: neither a PAT nor the API key may manage credentials', async (t) => {
    const pat = await createPat(acme.admin)
    const key = await rotateApiKey()
    for (const url of ['/api/profile/tokens/', '/api/org/tokens/', '/api/org/api-key/']) {
      for (const headers of [{ authorization: `Bearer ${pat.token}` }, { token: pat.token }, { token: key }]) {
        const res = await app.inject({ url, headers })
        t.equal(res.statusCode, 403, `GET ${url} with ${Object.keys(headers)[0]}`)
      }
    }
    const created = await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: { token: pat.token }, payload: { name: 'escalate' } })
    t.equal(created.statusCode, 403, 'a PAT cannot mint PATs')
  })

  t.test('rule 6: a PAT stops working while its owner or organization is inactive, and revives', async (t) => {
    const bob = await acme.addMember('bob@acme.test')
    const pat = await createPat(bob)
    const setProfile = (active: boolean) => database.db.updateTable('profiles').set({ is_active: active }).where('id', '=', bob.profileId).execute()
    const setOrg = (active: boolean) => database.db.updateTable('organizations').set({ is_active: active }).where('id', '=', acme.orgId).execute()
    await setProfile(false)
    const inactive = await me({ token: pat.token })
    t.equal(inactive.statusCode, 401)
    t.same(inactive.json(), { error: true, errors: 'Token owner or organization is inactive' })
    await setProfile(true)
    t.equal((await me({ token: pat.token })).statusCode, 200, 'revived with its owner')
    await setOrg(false)
    t.same((await me({ token: pat.token })).json(), { error: true, errors: 'Token owner or organization is inactive' })
    await setOrg(true)
    t.equal((await me({ token: pat.token })).statusCode, 200, 'revived with its organization')
  })

  t.test('rule 7: the raw value is returned once; only its SHA-256 hash is stored', async (t) => {
    const chosen = await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: alice.headers, payload: { name: 'once', token_hash: 'chosen', revoked_at: '2020-01-01T00:00:00Z' } })
    t.equal(chosen.statusCode, 400, 'a client cannot choose the hash or the revocation')
    t.same(Object.keys(chosen.json().errors).sort(), ['revoked_at', 'token_hash'])
    const pat = await createPat(alice, { name: 'once' })
    const row = await database.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', pat.id).executeTakeFirstOrThrow()
    t.same(row.token_hash, createHash('sha256').update(pat.token).digest(), 'the stored hash is SHA-256 of the raw value')
    t.equal(row.revoked_at, null)
    t.equal(pat.token_prefix, pat.token.slice(0, 14))
    const list = await app.inject({ url: '/api/profile/tokens/', headers: alice.headers })
    t.notMatch(list.body, pat.token.slice(14), 'the list never shows the secret part')
    t.notMatch(list.body, /token_hash/)
    for (const bad of [{ name: ' ' }, { name: 'x', expires_at: '2000-01-01T00:00:00Z' }, { name: 'x', scopes: Array.from({ length: 51 }, () => 'auth:read') }]) {
      t.equal((await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: alice.headers, payload: bad })).statusCode, 400, `refused: ${JSON.stringify(bad).slice(0, 60)}`)
    }
  })

  t.test('rule 8: revocation — own tokens, admins for the org, idempotent', async (t) => {
    const carol = await acme.addMember('carol@acme.test')
    const pat = await createPat(carol)
    const revokeOwn = (who: Member, id: string) => app.inject({ method: 'DELETE', url: `/api/profile/tokens/${id}/`, headers: who.headers })
    t.equal((await revokeOwn(alice, pat.id)).statusCode, 404, "another user's token id is a 404")
    t.equal((await revokeOwn(globex.admin, pat.id)).statusCode, 404, "another org's admin gets a 404 too")
    t.equal((await me({ token: pat.token })).statusCode, 200, 'still working after the refused attempts')
    t.same((await revokeOwn(carol, pat.id)).json(), { error: false, message: 'Token revoked' })
    t.equal((await me({ token: pat.token })).statusCode, 401, 'a revoked token is refused')
    const firstRevokedAt = (await database.db.selectFrom('personal_access_tokens').select('revoked_at').where('id', '=', pat.id).executeTakeFirstOrThrow()).revoked_at
    t.equal((await revokeOwn(carol, pat.id)).statusCode, 200, 'a second revocation is a no-op answered 200')
    const after = (await database.db.selectFrom('personal_access_tokens').select('revoked_at').where('id', '=', pat.id).executeTakeFirstOrThrow()).revoked_at
    t.same(after, firstRevokedAt, 'and does not restamp revoked_at')

    const other = await createPat(carol)
    t.equal((await app.inject({ url: '/api/org/tokens/', headers: carol.headers })).statusCode, 403, 'non-admins cannot list org tokens')
    t.equal((await app.inject({ method: 'DELETE', url: `/api/org/tokens/${other.id}/`, headers: carol.headers })).statusCode, 403)
    t.equal((await app.inject({ method: 'DELETE', url: `/api/org/tokens/${other.id}/`, headers: globex.admin.headers })).statusCode, 404, "another org's admin")
    const list = (await app.inject({ url: '/api/org/tokens/', headers: acme.admin.headers })).json()
    t.ok(list.tokens.some((tk: { id: string; owner: { id: string } }) => tk.id === other.id && tk.owner.id === carol.profileId), 'admins see every token with its owner')
    t.match(list.tokens.find((tk: { id: string }) => tk.id === other.id).owner, { name: carol.email, email: carol.email }, "the owner's name: the email while they have none")
    t.match(list.totals, { count: Number, live: Number, orphaned: 0, unused_90d: 0 })
    t.equal((await app.inject({ method: 'DELETE', url: `/api/org/tokens/${other.id}/`, headers: acme.admin.headers })).statusCode, 200)
    t.equal((await me({ token: other.token })).statusCode, 401)
    t.equal((await app.inject({ method: 'DELETE', url: '/api/org/tokens/not-a-uuid/', headers: acme.admin.headers })).statusCode, 404)
  })

  t.test('API key rotation: the old key stops at once; only admins with a JWT', async (t) => {
    const first = await rotateApiKey()
    const second = await rotateApiKey()
    t.equal((await me({ token: first })).statusCode, 401)
    t.equal((await me({ token: second })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/api/org/api-key/', headers: alice.headers })).statusCode, 403, 'non-admin')
    const info = (await app.inject({ url: '/api/org/api-key/', headers: acme.admin.headers })).json()
    t.match(info, { error: false, has_key: true, api_key_prefix: second.slice(0, 14) })
    t.notOk('api_key' in info, 'GET never shows the key')
  })

  t.test('lifecycle events land in the audit stream, without secrets', async (t) => {
    const dave = await acme.addMember('dave@acme.test')
    const pat = await createPat(dave, { name: 'audited' })
    await me({ token: pat.token })
    await me({ token: pat.token })
    // First use is recorded off the request path: wait for it (a busy machine may take a while) before revoking.
    let events = await store.readStream(auditStream(acme.orgId))
    for (let i = 0; i < 250 && !events.some((e) => e.type === 'PersonalAccessTokenFirstUsed' && (e.data as { token_id: string }).token_id === pat.id); i++) {
      await new Promise((r) => setTimeout(r, 20))
      events = await store.readStream(auditStream(acme.orgId))
    }
    await app.inject({ method: 'DELETE', url: `/api/profile/tokens/${pat.id}/`, headers: dave.headers })
    events = await store.readStream(auditStream(acme.orgId))
    const mine = events.filter((e) => (e.data as { token_id?: string }).token_id === pat.id).map((e) => e.type)
    t.same(mine, ['PersonalAccessTokenCreated', 'PersonalAccessTokenFirstUsed', 'PersonalAccessTokenRevoked'], 'first use recorded once')
    t.ok(events.some((e) => e.type === 'OrganizationApiKeyRotated'))
    t.notMatch(JSON.stringify(events.map((e) => e.data)), /svc_pat_[A-Za-z0-9_-]{20}|svc_key_[A-Za-z0-9_-]{20}/, 'no raw credential in the log')
    const listed = (await app.inject({ url: '/api/org/tokens/', headers: acme.admin.headers })).json().tokens.find((tk: { id: string }) => tk.id === pat.id)
    t.match(listed.history, [
      { type: 'PersonalAccessTokenCreated', actor_id: dave.profileId },
      { type: 'PersonalAccessTokenFirstUsed' },
      { type: 'PersonalAccessTokenRevoked', actor_id: dave.profileId },
    ], 'admins read the history on the org token list')
    const keyInfo = (await app.inject({ url: '/api/org/api-key/', headers: acme.admin.headers })).json()
    t.ok(keyInfo.rotations.length >= 2, 'and the key rotations on the api-key route')
    t.match(keyInfo.rotations[0], { type: 'OrganizationApiKeyRotated', actor_id: acme.admin.profileId })
    const used = await database.db.selectFrom('personal_access_tokens').select('last_used_at').where('id', '=', pat.id).executeTakeFirstOrThrow()
    t.ok(used.last_used_at, 'last_used_at is recorded')
  })
})
