import fastifyJwt from '@fastify/jwt'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.ts'
import type { DisplayClaims } from './session-claims.ts'

/** What authentication reads (`sub`, `org_id`, `typ`) and, on session tokens, what clients display. */
export type AccessClaims = { sub: string; org_id: string; typ: 'access' } & Partial<DisplayClaims>

/** HS256 access tokens: `sub` is the user id, `org_id` the organization they act in. */
export async function registerJwt(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(fastifyJwt, {
    secret: config.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: config.accessTokenTtlSeconds },
    // A few seconds' tolerance past `exp` (fast-jwt takes ms): clocks drift, and a client that checks expiry
    // just before a burst of calls (the web app's server does, with no margin) would otherwise see some 401.
    verify: { algorithms: ['HS256'], clockTolerance: config.accessTokenLeewaySeconds * 1000 },
  })
}

export type AccessTokenSigner = (claims: Omit<AccessClaims, 'typ'>) => string

/** The same signer outside the HTTP app (the admin CLI issues tokens the server accepts). */
export async function createAccessTokenSigner(config: Config): Promise<AccessTokenSigner> {
  const app = Fastify({ logger: false })
  await registerJwt(app, config)
  await app.ready()
  return (claims) => app.jwt.sign({ ...claims, typ: 'access' })
}

export function isAccessClaims(value: unknown): value is AccessClaims {
  const v = value as Partial<AccessClaims> | null
  return typeof v?.sub === 'string' && typeof v.org_id === 'string' && v.typ === 'access'
}
