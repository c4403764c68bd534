import type { FastifyInstance } from 'fastify'
import type { LogTransport } from '../../src/identity/mail.ts'
import { lastMailTo, secretsOf } from './sign-in.ts'

export type PortalSession = { access_token: string; contact: { id: string; email: string }; organization: { id: string; name: string } }

/** Asks for a portal sign-in mail for `email` in the organization and answers its link token and code (made and mailed after the answer). */
export async function requestPortalMail(app: FastifyInstance, mail: LogTransport, orgId: string, email: string): Promise<{ token: string; code: string }> {
  const before = mail.outbox.length
  const res = await app.inject({ method: 'POST', url: `/api/portal/login/${orgId}/request/`, payload: { email } })
  if (res.statusCode !== 200) throw new Error(`portal request: ${res.statusCode} ${res.body}`)
  await app.afterReply.settled()
  if (mail.outbox.length === before) throw new Error(`Expected a portal sign-in mail to ${email}`)
  return secretsOf(lastMailTo(mail, email))
}

/** Signs a contact in to the portal through its real routes (request, then the mailed link's token); answers the session and its headers. */
export async function portalSignIn(app: FastifyInstance, mail: LogTransport, orgId: string, email: string): Promise<PortalSession & { headers: { authorization: string } }> {
  const { token } = await requestPortalMail(app, mail, orgId, email)
  const res = await app.inject({ method: 'POST', url: `/api/portal/login/${orgId}/verify/`, payload: { token } })
  if (res.statusCode !== 200) throw new Error(`portal verify: ${res.statusCode} ${res.body}`)
  const session = res.json() as PortalSession
  return { ...session, headers: { authorization: `Bearer ${session.access_token}` } }
}
