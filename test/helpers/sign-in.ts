import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import type { LogTransport, MailMessage } from '../../src/identity/mail.ts'
import type { TokenPair } from '../../src/identity/sessions.ts'
import { FIXED_NOW, buildTestApp } from './app.ts'
import { givenOrganization } from './identity.ts'
import { silentLogger } from './runner.ts'

/** The link token and code of a sign-in mail. */
export function secretsOf(message: MailMessage): { token: string; code: string } {
  const token = /[?&]token=([^&\s]+)/.exec(message.text)?.[1]
  const code = /code: (\d{6})/.exec(message.text)?.[1]
  if (!token || !code) throw new Error(`Expected a sign-in link and code in: ${message.text}`)
  return { token: decodeURIComponent(token), code }
}

/** The newest sign-in mail to `email` in the outbox. */
export function lastMailTo(mail: LogTransport, email: string): MailMessage {
  const message = [...mail.outbox].reverse().find((m) => m.to.toLowerCase() === email.toLowerCase())
  if (!message) throw new Error(`Expected a mail to ${email}`)
  return message
}

/** Asks for a sign-in link and answers the mail it sends: the link is made and mailed after the answer, so this waits for that work. */
export async function requestSignInMail(app: FastifyInstance, mail: LogTransport, email: string): Promise<MailMessage> {
  const requested = await app.inject({ method: 'POST', url: '/api/auth/magic-link/request/', payload: { email } })
  if (requested.statusCode !== 200) throw new Error(`magic-link request: ${requested.statusCode} ${requested.body}`)
  await app.afterReply.settled()
  return lastMailTo(mail, email)
}

/** Signs in through the real magic-link routes (request, then the mailed code). */
export async function signIn(app: FastifyInstance, mail: LogTransport, email: string, orgId?: string): Promise<TokenPair> {
  const { code } = secretsOf(await requestSignInMail(app, mail, email))
  const verified = await app.inject({ method: 'POST', url: '/api/auth/magic-link/verify-code/', payload: { email, code, ...(orgId && { org_id: orgId }) } })
  if (verified.statusCode !== 200) throw new Error(`magic-link verify-code: ${verified.statusCode} ${verified.body}`)
  return verified.json()
}

export const bearer = (pair: Pick<TokenPair, 'access_token'>) => ({ authorization: `Bearer ${pair.access_token}` })

/** The sign-in tests' world: a readable mail outbox, a clock they can move, and Alice in two organizations. */
export async function givenSignInWorld(t: Test) {
  const mail = logTransport(silentLogger)
  const clock = { now: FIXED_NOW }
  const { app, database } = await buildTestApp(t, { mail, clock: () => clock.now, env: { AUTH_RATE_LIMIT_MAX: '1000' } })
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const beta = await givenOrganization(app, db, 'Beta')
  const alice = await acme.addMember('alice@acme.test')
  await beta.addMember('alice@acme.test')
  return { app, db, mail, clock, acme, beta, alice }
}
