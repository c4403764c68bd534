import type { FastifyInstance } from 'fastify'
import type { LogTransport, MailMessage } from '../../src/identity/mail.ts'
import type { TokenPair } from '../../src/identity/sessions.ts'

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

/** Signs in through the real magic-link routes (request, then the mailed code). */
export async function signIn(app: FastifyInstance, mail: LogTransport, email: string, orgId?: string): Promise<TokenPair> {
  const requested = await app.inject({ method: 'POST', url: '/api/auth/magic-link/request/', payload: { email } })
  if (requested.statusCode !== 200) throw new Error(`magic-link request: ${requested.statusCode} ${requested.body}`)
  const { code } = secretsOf(lastMailTo(mail, email))
  const verified = await app.inject({ method: 'POST', url: '/api/auth/magic-link/verify-code/', payload: { email, code, ...(orgId && { org_id: orgId }) } })
  if (verified.statusCode !== 200) throw new Error(`magic-link verify-code: ${verified.statusCode} ${verified.body}`)
  return verified.json()
}

export const bearer = (pair: Pick<TokenPair, 'access_token'>) => ({ authorization: `Bearer ${pair.access_token}` })
