import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { DomainError } from '../../errors.ts'
import { MAGIC_LINK_TTL_MINUTES, MAX_CODE_ATTEMPTS, createMagicLinks } from '../../identity/magic-links.ts'
import type { NewMagicLink } from '../../identity/magic-links.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import type { MailTransport } from '../../identity/mail.ts'
import { createSessions } from '../../identity/sessions.ts'
import type { Deps } from '../../deps.ts'
import { perIpAndEmail } from '../kernel/rate-limit.ts'
import { ErrorBody, Message } from '../kernel/schemas/common.ts'
import { OptionalOrg, SignIn, signInErrors } from './session-schemas.ts'

const Email = z.email().max(254)
const SENT = 'If this address belongs to an account, a sign-in link and code have been sent to it'
const limitedErrors = { 429: ErrorBody, 501: ErrorBody } as const

/**
 * Passwordless sign-in by mail: a link (its token) or the 6-digit code from the same message.
 * Both are single use, expire after 15 minutes and are stored only hashed.
 */
export function magicLinkRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const sessions = createSessions({ ...deps, jwt: app.jwt })
    const links = createMagicLinks({ db: deps.db, clock: deps.clock, codeKey: deps.config.jwtSecret })
    const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
    const config = { auth: 'public' as const, rateLimit: perIpAndEmail(deps.config.authRateLimitMax) }
    const rateNote = ` Limited to ${deps.config.authRateLimitMax} requests a minute per client IP and email (429 with Retry-After). 501 when mail is not configured.`

    const mail = (): MailTransport => {
      if (!transport) throw new DomainError(501, 'Magic-link sign-in is not configured')
      return transport
    }

    app.post(
      '/api/auth/magic-link/request/',
      {
        config,
        schema: {
          tags: ['auth'],
          summary: 'Mail a sign-in link and code',
          description: `Always the same answer, in the same time, whether or not the address belongs to a user with an active profile: the address is looked up, and mail sent only to such a user, after the answer. A new request does not cancel earlier links, but only the newest code is accepted.${rateNote}`,
          body: z.object({
            email: Email,
            delivery: z
              .enum(['link', 'code'])
              .default('link')
              .describe('`code` (the original\'s phone app): the mail carries only the 6-digit code, for POST /api/auth/magic-link/verify-code/; `link`: the link and the code'),
          }),
          response: { 200: Message, 400: ErrorBody, ...limitedErrors },
        },
      },
      async (request) => {
        const to = mail()
        const { email, delivery } = request.body
        // After the answer: looking the address up, storing a link and mailing it take longer for an
        // address with an account than for a stranger, and the answer's timing would tell them apart.
        app.afterReply.run(request.log, 'sign-in link request', async () => {
          const link = await links.create(email)
          if (link) await deliver(to, link, delivery === 'code' ? undefined : deps.config.magicLinkBaseUrl)
        })
        return { error: false as const, message: SENT }
      },
    )

    app.post(
      '/api/auth/magic-link/verify/',
      {
        config,
        schema: {
          tags: ['auth'],
          summary: 'Sign in with the token of a mailed link',
          description: `401 when the link is unknown, expired or used; 403 when \`org_id\` is not an active organization of the user (the link stays usable).${rateNote}`,
          body: OptionalOrg.extend({ token: z.string().min(1).max(200) }),
          response: { 200: SignIn, ...signInErrors, ...limitedErrors },
        },
      },
      async (request) => {
        mail()
        return links.verifyToken(request.body.token, request.body.org_id, (trx, subject) => sessions.signIn(trx, subject))
      },
    )

    app.post(
      '/api/auth/magic-link/verify-code/',
      {
        config,
        schema: {
          tags: ['auth'],
          summary: 'Sign in with the 6-digit code of a mailed link',
          description: `Only the code of the newest live link counts. After ${MAX_CODE_ATTEMPTS} wrong codes the code path is closed for the user until their links expire (the link itself still works).${rateNote}`,
          body: OptionalOrg.extend({ email: Email, code: z.string().regex(/^\d{6}$/, 'Expected the 6-digit code') }),
          response: { 200: SignIn, ...signInErrors, ...limitedErrors },
        },
      },
      async (request) => {
        mail()
        const { email, code, org_id } = request.body
        return links.verifyCode(email, code, org_id, (trx, subject) => sessions.signIn(trx, subject))
      },
    )
  }
}

function linkTo(baseUrl: string, token: string): string {
  const url = new URL(baseUrl)
  url.searchParams.set('token', token)
  return url.href
}

/** The mail of a link; without `baseUrl` (code delivery: a phone app, where a web link would open the wrong place) only the code. */
async function deliver(transport: MailTransport, link: NewMagicLink, baseUrl: string | undefined): Promise<void> {
  const expiry = `expire${baseUrl ? '' : 's'} in ${MAGIC_LINK_TTL_MINUTES} minutes. If you did not ask to sign in, ignore this message.`
  const text = baseUrl
    ? [`Sign in: ${linkTo(baseUrl, link.token)}`, '', `Or enter this code: ${link.code}`, '', `The link and the code work once and ${expiry}`]
    : [`Your sign-in code: ${link.code}`, '', `It works once and ${expiry}`]
  const subject = baseUrl ? 'Your sign-in link' : `Your sign-in code: ${link.code}`
  await transport.send({ to: link.email, subject, text: text.join('\n') })
}
