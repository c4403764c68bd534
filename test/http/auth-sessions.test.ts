/**
 * Sessions after sign-in: refresh-token rotation and reuse detection, logout, switch-org. Pairs
 * are obtained through the real magic-link routes.
 */
import t from 'tap'
import { hashSecret } from '../../src/identity/secrets.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { bearer, givenSignInWorld, signIn } from '../helpers/sign-in.ts'

t.test('/api/auth/ sessions', async (t) => {
  const { app, db, mail, clock, acme, beta, alice } = await givenSignInWorld(t)
  const bob = await acme.addMember('bob@acme.test')
  const refresh = (refresh_token: string) => app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh_token } })
  const logout = (refresh_token: string, headers: Record<string, string>) => app.inject({ method: 'POST', url: '/api/auth/logout/', headers, payload: { refresh_token } })
  const switchOrg = (org_id: string, headers: Record<string, string>) => app.inject({ method: 'POST', url: '/api/auth/switch-org/', headers, payload: { org_id } })
  const me = (headers: Record<string, string>) => app.inject({ url: '/api/auth/me/', headers })
  t.teardown(() => {
    clock.now = FIXED_NOW
  })

  t.test("the original service's names: {refresh} in, {access, refresh} out; the access token's display claims; /me's organizations", async (t) => {
    const first = await signIn(app, mail, alice.email, acme.orgId)
    const res = await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh: first.refresh_token } })
    t.equal(res.statusCode, 200)
    const second = res.json()
    t.equal(second.access, second.access_token)
    t.equal(second.refresh, second.refresh_token)
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh: first.refresh_token } })).statusCode, 401, 'reuse detection kept')
    const claims = JSON.parse(Buffer.from(second.access.split('.')[1], 'base64url').toString())
    t.match(claims, {
      sub: alice.userId,
      typ: 'access',
      token_type: 'access',
      jti: /^[0-9a-f-]{36}$/,
      user_id: alice.userId,
      user_email: alice.email,
      user_name: String,
      user_profile_pic: '',
      org_id: acme.orgId,
      org_name: String,
      role: 'USER',
      org_settings: { default_currency: String, currency_symbol: String, default_country: null },
    })
    const adminClaims = JSON.parse(Buffer.from((await signIn(app, mail, acme.admin.email)).access_token.split('.')[1]!, 'base64url').toString())
    t.equal(adminClaims.role, 'ADMIN', "an admin's token says so")
    await db.updateTable('organizations').set({ default_country: 'DE', default_currency: 'EUR' }).where('id', '=', acme.orgId).execute()
    const euro = JSON.parse(Buffer.from((await signIn(app, mail, alice.email, acme.orgId)).access_token.split('.')[1]!, 'base64url').toString())
    t.same(euro.org_settings, { default_currency: 'EUR', currency_symbol: '€', default_country: 'DE' }, "the organization's settings as they are at issue")
    await db.updateTable('organizations').set({ default_country: null, default_currency: 'USD' }).where('id', '=', acme.orgId).execute()
    const detail = (await me(bearer(second))).json()
    t.match(detail, { id: alice.userId, email: alice.email, is_active: true, org_id: acme.orgId, role: 'USER', credential: 'jwt' })
    t.same(detail.organizations.map((o: { id: string }) => o.id).sort(), [acme.orgId, beta.orgId].sort(), 'every active organization of the user')
    t.match(detail.organizations.find((o: { id: string }) => o.id === acme.orgId), { role: 'USER', is_organization_admin: false })
  })

  t.test('POST /api/auth/refresh-token/ rotates: a new pair in the same family, the old token revoked', async (t) => {
    const first = await signIn(app, mail, alice.email)
    t.match(first, { token_type: 'Bearer', expires_in: 900, org_id: acme.orgId, profile_id: alice.profileId, refresh_token: /^svc_rt_/ })
    const res = await refresh(first.refresh_token)
    t.equal(res.statusCode, 200)
    const second = res.json()
    t.match(second, { token_type: 'Bearer', org_id: acme.orgId, profile_id: alice.profileId })
    t.not(second.refresh_token, first.refresh_token)
    t.equal((await me(bearer(second))).json().profile_id, alice.profileId, 'the new access token authenticates')
    const rows = await db.selectFrom('refresh_tokens').selectAll().where('token_hash', 'in', [hashSecret(first.refresh_token), hashSecret(second.refresh_token)]).orderBy('created_at').execute()
    t.equal(rows.length, 2, 'only SHA-256 hashes are stored')
    t.equal(rows[0]!.family_id, rows[1]!.family_id, 'same family')
    t.equal(rows.filter((r) => r.revoked_at).length, 1, 'exactly the presented token is revoked')
  })

  t.test('presenting a rotated refresh token revokes the whole family (reuse detection)', async (t) => {
    const first = await signIn(app, mail, alice.email)
    const other = await signIn(app, mail, alice.email)
    const second = (await refresh(first.refresh_token)).json()
    const reused = await refresh(first.refresh_token)
    t.equal(reused.statusCode, 401)
    t.match(reused.json(), { error: true, errors: /already used.*revoked/ })
    t.equal((await refresh(second.refresh_token)).statusCode, 401, 'the live token of the family is revoked too')
    t.equal((await refresh(other.refresh_token)).statusCode, 200, 'another sign-in of the same user is untouched')
  })

  t.test('unknown, malformed and expired refresh tokens', async (t) => {
    t.same((await refresh('svc_rt_unknown')).json(), { error: true, errors: 'Invalid, expired or revoked refresh token' })
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: {} })).statusCode, 400)
    const pair = await signIn(app, mail, alice.email)
    clock.now = new Date(FIXED_NOW.getTime() + 30 * 86_400_000)
    t.equal((await refresh(pair.refresh_token)).statusCode, 401, 'REFRESH_TOKEN_TTL_DAYS (30) later')
    clock.now = FIXED_NOW
  })

  t.test('an inactive profile or organization cannot refresh; reactivation revives the token', async (t) => {
    const pair = await signIn(app, mail, bob.email)
    await db.updateTable('profiles').set({ is_active: false }).where('id', '=', bob.profileId).execute()
    t.same((await refresh(pair.refresh_token)).json(), { error: true, errors: 'User profile or organization is inactive' })
    await db.updateTable('profiles').set({ is_active: true }).where('id', '=', bob.profileId).execute()
    await db.updateTable('organizations').set({ is_active: false }).where('id', '=', acme.orgId).execute()
    t.equal((await refresh(pair.refresh_token)).statusCode, 401)
    await db.updateTable('organizations').set({ is_active: true }).where('id', '=', acme.orgId).execute()
    t.equal((await refresh(pair.refresh_token)).statusCode, 200)
  })

  t.test('POST /api/auth/logout/: the refresh token is the credential', async (t) => {
    const pair = await signIn(app, mail, bob.email)
    const alicePair = await signIn(app, mail, alice.email)
    const signedOut = { error: false, message: 'Signed out', detail: 'Signed out.' }
    t.same((await logout(alicePair.refresh_token, bearer(pair))).json(), signedOut, "someone else's token beside a bearer: 200")
    t.equal((await refresh(alicePair.refresh_token)).statusCode, 200, '... and left alone')
    const res = await logout(pair.refresh_token, bearer(pair))
    t.equal(res.statusCode, 200)
    t.same(res.json(), signedOut)
    t.equal((await refresh(pair.refresh_token)).statusCode, 401, 'the token is revoked')
    t.equal((await logout(pair.refresh_token, bearer(pair))).statusCode, 200, 'idempotent')
    t.equal((await logout('svc_rt_unknown', bearer(pair))).statusCode, 200, 'unknown token: 200')

    // The web app signs out without a bearer (its access token has often expired): possession of the refresh token suffices.
    const noBearer = await signIn(app, mail, bob.email)
    const res2 = await app.inject({ method: 'POST', url: '/api/auth/logout/', payload: { refresh: noBearer.refresh_token } })
    t.equal(res2.statusCode, 200, '{refresh} without a bearer')
    t.equal((await refresh(noBearer.refresh_token)).statusCode, 401, 'revoked')
    const expired = await signIn(app, mail, bob.email)
    t.equal((await logout(expired.refresh_token, { authorization: 'Bearer expired.or.garbage' })).statusCode, 200, 'an unusable bearer is no reason to refuse')
    t.equal((await refresh(expired.refresh_token)).statusCode, 401)
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/logout/', payload: {} })).statusCode, 400, 'no token: 400')
  })

  t.test('logout revokes the whole sign-in, not only the presented token', async (t) => {
    const first = await signIn(app, mail, bob.email)
    const second = (await refresh(first.refresh_token)).json()
    t.equal((await logout(second.refresh_token, bearer(second))).statusCode, 200)
    const live = await db.selectFrom('refresh_tokens').select('id').where('token_hash', '=', hashSecret(second.refresh_token)).where('revoked_at', 'is', null).execute()
    t.equal(live.length, 0)
  })

  t.test('POST /api/auth/switch-org/', async (t) => {
    const pair = await signIn(app, mail, alice.email, acme.orgId)
    const res = await switchOrg(beta.orgId, bearer(pair))
    t.equal(res.statusCode, 200)
    const switched = res.json()
    t.equal(switched.org_id, beta.orgId)
    t.match((await me(bearer(switched))).json(), { org_id: beta.orgId, user_id: alice.userId, credential: 'jwt' })
    t.equal((await refresh(switched.refresh_token)).json().org_id, beta.orgId, 'its refresh token stays in the new org')
    t.equal((await refresh(pair.refresh_token)).statusCode, 200, 'the previous sign-in stays valid')
    t.match(switched, { current_org: { id: beta.orgId, default_currency: String, currency_symbol: String, timezone: String }, profile: { role: String }, user: { id: alice.userId } })

    const retiring = await signIn(app, mail, alice.email, acme.orgId)
    const retired = await app.inject({ method: 'POST', url: '/api/auth/switch-org/', headers: bearer(retiring), payload: { org_id: beta.orgId, refresh: retiring.refresh_token } })
    t.equal(retired.statusCode, 200)
    t.equal((await refresh(retiring.refresh_token)).statusCode, 401, 'the presented refresh token is retired')
    const bobs = await signIn(app, mail, bob.email)
    await app.inject({ method: 'POST', url: '/api/auth/switch-org/', headers: bearer(pair), payload: { org_id: beta.orgId, refresh: bobs.refresh_token } })
    t.equal((await refresh(bobs.refresh_token)).statusCode, 200, "someone else's refresh token is left alone")

    t.same((await switchOrg(beta.orgId, bearer(await signIn(app, mail, bob.email)))).json(), { error: true, errors: 'You have no active profile in that organization' }, 'not a member: 403')
    t.equal((await switchOrg('6f1c1a8e-0000-4000-8000-000000000000', bearer(pair))).statusCode, 403, 'unknown org: 403')
    t.match((await switchOrg('not-a-uuid', bearer(pair))).json(), { error: true, errors: { org_id: [String] } }, 'malformed: 400')
    t.equal((await switchOrg('not-a-uuid', bearer(pair))).statusCode, 400)
    t.equal((await switchOrg(beta.orgId, {})).statusCode, 401)

    await db.updateTable('profiles').set({ is_active: false }).where('user_id', '=', alice.userId).where('org_id', '=', beta.orgId).execute()
    t.equal((await switchOrg(beta.orgId, bearer(pair))).statusCode, 403, 'inactive profile: 403')
    await db.updateTable('profiles').set({ is_active: true }).where('user_id', '=', alice.userId).where('org_id', '=', beta.orgId).execute()
    await db.updateTable('organizations').set({ is_active: false }).where('id', '=', beta.orgId).execute()
    t.equal((await switchOrg(beta.orgId, bearer(pair))).statusCode, 403, 'inactive organization: 403')
    await db.updateTable('organizations').set({ is_active: true }).where('id', '=', beta.orgId).execute()
  })
})
