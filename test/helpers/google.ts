/**
 * Google sign-in, offline: an RSA key pair made with jose, its public key set served from
 * 127.0.0.1 as Google's JWKS endpoint would, and ID tokens signed with it.
 */
import { createServer } from 'node:http'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import type { JWTPayload } from 'jose'
import type { Test } from 'tap'
import { FIXED_NOW } from './app.ts'

export const GOOGLE_CLIENT_ID = 'crm-web.apps.googleusercontent.com'
const ISSUER = 'https://accounts.google.com'
const nowSeconds = Math.floor(FIXED_NOW.getTime() / 1000)

export type IdTokenOverrides = { claims?: JWTPayload; audience?: string; issuer?: string; expires?: number; key?: CryptoKey }

/** Google's keys for one test: `jwksUrl` for GOOGLE_JWKS_URL, and `idToken` to sign a token for an email. */
export async function googleKeys(t: Test) {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }
  const server = createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })))
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
  t.teardown(() => new Promise<void>((closed) => server.close(() => closed())))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('Expected a TCP address')
  const idToken = (email: string, o: IdTokenOverrides = {}) =>
    new SignJWT({ email, email_verified: true, name: 'Someone', ...o.claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'JWT' })
      .setIssuer(o.issuer ?? ISSUER)
      .setAudience(o.audience ?? GOOGLE_CLIENT_ID)
      .setSubject('1122334455')
      .setIssuedAt(nowSeconds - 60)
      .setExpirationTime(o.expires ?? nowSeconds + 3600)
      .sign(o.key ?? privateKey)
  return { jwksUrl: `http://127.0.0.1:${address.port}/oauth2/v3/certs`, idToken }
}
