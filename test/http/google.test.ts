/**
 * Google sign-in, offline (test/helpers/google.ts: our own key pair, its key set served from
 * 127.0.0.1 as Google's JWKS endpoint would).
 */
import { createServer } from 'node:http'
import { generateKeyPair } from 'jose'
import t from 'tap'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { GOOGLE_CLIENT_ID as CLIENT_ID, googleKeys } from '../helpers/google.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { bearer } from '../helpers/sign-in.ts'

const nowSeconds = Math.floor(FIXED_NOW.getTime() / 1000)

t.test('POST /api/auth/google/ and /api/auth/google/callback/', async (t) => {
  const keys = await googleKeys(t)
  const { app, database } = await buildTestApp(t, { env: { GOOGLE_CLIENT_ID: `${CLIENT_ID}, crm-ios.apps.googleusercontent.com`, GOOGLE_JWKS_URL: keys.jwksUrl } })
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const beta = await givenOrganization(app, db, 'Beta')
  const alice = await acme.addMember('alice@acme.test')
  await beta.addMember('alice@acme.test')
  const { idToken } = keys
  const signIn = async (token: string | Promise<string>, url = '/api/auth/google/', extra: object = {}) => app.inject({ method: 'POST', url, payload: { id_token: await token, ...extra } })

  t.test('a verified Google account of an existing user signs in, on both paths', async (t) => {
    for (const url of ['/api/auth/google/', '/api/auth/google/callback/']) {
      const res = await signIn(idToken('Alice@Acme.test'), url)
      t.equal(res.statusCode, 200, url)
      const pair = res.json()
      t.match(pair, { token_type: 'Bearer', org_id: acme.orgId, profile_id: alice.profileId, refresh_token: /^svc_rt_/ })
      t.match((await app.inject({ url: '/api/auth/me/', headers: bearer(pair) })).json(), { user_id: alice.userId, org_id: acme.orgId })
    }
    const phone = await app.inject({ method: 'POST', url: '/api/auth/google/', payload: { idToken: await idToken(alice.email) } })
    t.equal(phone.statusCode, 200, 'the phone app posts idToken')
    const answer = phone.json()
    t.equal(answer.JWTtoken, answer.access_token, 'JWTtoken is the access token the phone app stores')
    t.match(answer, { user: { id: alice.userId, name: 'alice', profileImage: '' }, organizations: [{ id: acme.orgId, name: 'Acme', default_currency: String }, { id: beta.orgId }] })
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/google/', payload: {} })).statusCode, 400, 'neither id_token nor idToken')
    t.equal((await signIn(idToken(alice.email, { issuer: 'accounts.google.com' }))).statusCode, 200, 'the issuer without scheme is Google too')
    t.equal((await signIn(idToken(alice.email, { audience: 'crm-ios.apps.googleusercontent.com' }))).statusCode, 200, 'any configured client id')
    t.equal((await signIn(idToken(alice.email, { claims: { email_verified: 'true' } }))).statusCode, 200, '"true" as a string')
    t.equal((await signIn(idToken(alice.email), '/api/auth/google/', { org_id: beta.orgId })).json().org_id, beta.orgId, 'org_id')
  })

  t.test('tokens Google did not issue for us are 401', async (t) => {
    const other = await generateKeyPair('RS256')
    const cases: [string, Promise<string> | string, RegExp][] = [
      ['wrong audience', idToken(alice.email, { audience: 'someone-else.apps.googleusercontent.com' }), /`aud`/],
      ['wrong issuer', idToken(alice.email, { issuer: 'https://evil.example' }), /`iss`/],
      ['expired', idToken(alice.email, { expires: nowSeconds - 1 }), /expired/],
      ['signed by another key', idToken(alice.email, { key: other.privateKey }), /^Invalid Google ID token$/],
      ['not a JWT', 'not-a-jwt', /^Invalid Google ID token$/],
    ]
    for (const [name, token, message] of cases) {
      const res = await signIn(token)
      t.equal(res.statusCode, 401, name)
      t.match(res.json(), { error: true, errors: message }, name)
    }
  })

  t.test('an unverified email is 401; an unknown user or one without an active profile is 403', async (t) => {
    const unverified = await signIn(idToken(alice.email, { claims: { email_verified: false } }))
    t.equal(unverified.statusCode, 401)
    t.same(unverified.json(), { error: true, errors: 'Google has not verified the email of this account' })
    const unknown = await signIn(idToken('stranger@gmail.test'))
    t.equal(unknown.statusCode, 403)
    t.match(unknown.json(), { error: true, errors: /No account uses the email of this Google account/ })
    const gone = await acme.addMember('gone@acme.test')
    await db.updateTable('profiles').set({ is_active: false }).where('id', '=', gone.profileId).execute()
    t.same((await signIn(idToken(gone.email))).json(), { error: true, errors: 'Your account has no active profile in an active organization' })
    t.equal((await signIn(idToken(alice.email), '/api/auth/google/', { org_id: (await givenOrganization(app, db, 'Other')).orgId })).statusCode, 403, 'org_id of another organization')
    t.equal((await signIn('')).statusCode, 400, 'missing token')
  })
})

t.test('Google keys that cannot be loaded: 503', async (t) => {
  const closed = createServer()
  await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening))
  const address = closed.address()
  await new Promise<void>((done) => closed.close(() => done()))
  if (!address || typeof address === 'string') throw new Error('Expected a TCP address')
  const { app } = await buildTestApp(t, { env: { GOOGLE_CLIENT_ID: CLIENT_ID, GOOGLE_JWKS_URL: `http://127.0.0.1:${address.port}/certs` } })
  const res = await app.inject({ method: 'POST', url: '/api/auth/google/', payload: { id_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiIxIn0.c2ln' } })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { error: true, errors: /temporarily unavailable/ })
})

t.test('without GOOGLE_CLIENT_ID both routes answer 501', async (t) => {
  const { app } = await buildTestApp(t)
  for (const url of ['/api/auth/google/', '/api/auth/google/callback/']) {
    const res = await app.inject({ method: 'POST', url, payload: { id_token: 'x' } })
    t.equal(res.statusCode, 501)
    t.same(res.json(), { error: true, errors: 'Google sign-in is not configured' })
  }
})
