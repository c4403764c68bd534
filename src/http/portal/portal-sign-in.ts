import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createPortalLinks } from '../../commands/portal/sign-in-links.ts'
import type { NewPortalLink } from '../../commands/portal/sign-in-links.ts'
import type { Deps } from '../../deps.ts'
import { DomainError, ValidationError } from '../../errors.ts'
import { MAGIC_LINK_TTL_MINUTES, MAX_CODE_ATTEMPTS } from '../../identity/magic-links.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import type { MailTransport } from '../../identity/mail.ts'
import { PORTAL_SESSION_SECONDS } from '../../identity/portal-sessions.ts'
import type { PortalClaims } from '../../identity/portal-sessions.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'
import { perIpAndEmail } from '../kernel/rate-limit.ts'
import { ErrorBody, Message } from '../kernel/schemas/common.ts'
import { PortalSession, contactView } from './schemas.ts'

const TAGS = ['portal']
const Email = z.email().max(254)
const OrgParams = z.object({ org_id: z.uuid() })
const SENT = 'If this address belongs to a contact of the organization, a sign-in link and code have been sent to it'
const signInErrors = { 400: ErrorBody, 401: ErrorBody, 429: ErrorBody, 501: ErrorBody } as const

/**
 * The portal's passwordless sign-in (docs/portal.md): a contact asks for a link by email, then
 * trades the link's token (or the code from the same mail) for a portal token. Public routes,
 * limited per client IP and email; the request's answer never tells whether the address is a
 * contact's.
 */
export function portalSignInRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const links = createPortalLinks({ db: deps.db, clock: deps.clock, codeKey: deps.config.jwtSecret })
    const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
    const config = { auth: 'public' as const, rateLimit: perIpAndEmail(deps.config.authRateLimitMax) }
    const rateNote = ` Limited to ${deps.config.authRateLimitMax} requests a minute per client IP and email (429 with Retry-After). 501 when mail is not configured.`
    const mail = (): MailTransport => {
      if (!transport) throw new DomainError(501, 'Portal sign-in is not configured')
      return transport
    }
    const session = async (orgId: string, contact: ContactRow): Promise<z.infer<typeof PortalSession>> => {
      const claims: PortalClaims = { sub: contact.id, org_id: orgId, typ: 'portal' }
      const org = await deps.db.selectFrom('organizations').select(['id', 'name']).where('id', '=', orgId).executeTakeFirstOrThrow()
      return { access_token: app.jwt.sign(claims, { expiresIn: PORTAL_SESSION_SECONDS }), token_type: 'Bearer', expires_in: PORTAL_SESSION_SECONDS, contact: contactView(contact), organization: org }
    }

    app.post('/api/portal/login/:org_id/request/', {
      config,
      schema: {
        tags: TAGS,
        summary: 'Mail a customer a portal sign-in link and code',
        description: `Always the same answer, in the same time, whether or not the address is a live contact's of an active organization: the contact is looked up and mailed after the answer. The link and code are bound to this organization and contact, work once and expire in ${MAGIC_LINK_TTL_MINUTES} minutes.${rateNote}`,
        params: OrgParams,
        body: z.object({ email: Email, delivery: z.enum(['link', 'code']).default('link').describe('`code`: the mail carries only the 6-digit code; `link`: the link and the code') }),
        response: { 200: Message, 400: ErrorBody, 429: ErrorBody, 501: ErrorBody },
      },
    }, async (request) => {
      const to = mail()
      const { org_id: orgId } = request.params
      const { email, delivery } = request.body
      // After the answer, so its timing does not tell a contact's address from a stranger's.
      app.afterReply.run(request.log, 'portal sign-in link request', async () => {
        const link = await links.create(orgId, email)
        if (link) await deliver(to, link, orgId, delivery === 'code' ? undefined : deps.config.magicLinkBaseUrl)
      })
      return { error: false as const, message: SENT }
    })

    app.post('/api/portal/login/:org_id/verify/', {
      config,
      schema: {
        tags: TAGS,
        summary: "Trade a mailed link's token, or its code, for a portal token",
        description: `Send \`token\` (from the link) or \`email\` and \`code\`. 401 when the link or code is unknown, expired, used, of another organization, or its contact is gone. Only the newest code of a contact counts, and after ${MAX_CODE_ATTEMPTS} wrong codes the code path closes until the links expire.${rateNote}`,
        params: OrgParams,
        body: z.object({ token: z.string().min(1).max(200).optional(), email: Email.optional(), code: z.string().regex(/^\d{6}$/, 'Expected the 6-digit code').optional() }),
        response: { 200: PortalSession, ...signInErrors },
      },
    }, async (request) => {
      mail()
      const { org_id: orgId } = request.params
      const { token, email, code } = request.body
      if (token !== undefined) return session(orgId, await links.verifyToken(orgId, token))
      if (email === undefined || code === undefined) throw new ValidationError({ token: ['Send the link\'s token, or the email and the code.'] })
      return session(orgId, await links.verifyCode(orgId, email, code))
    })
  }
}

/** The portal's sign-in page of the web app, with the organization and the link's token. */
function linkTo(baseUrl: string, orgId: string, token: string): string {
  const url = new URL('/portal/sign-in', baseUrl)
  url.searchParams.set('org', orgId)
  url.searchParams.set('token', token)
  return url.href
}

async function deliver(transport: MailTransport, link: NewPortalLink, orgId: string, baseUrl: string | undefined): Promise<void> {
  const expiry = `expire${baseUrl ? '' : 's'} in ${MAGIC_LINK_TTL_MINUTES} minutes. If you did not ask to sign in, ignore this message.`
  const text = baseUrl
    ? [`Sign in to the support portal: ${linkTo(baseUrl, orgId, link.token)}`, '', `Or enter this code: ${link.code}`, '', `The link and the code work once and ${expiry}`]
    : [`Your support portal sign-in code: ${link.code}`, '', `It works once and ${expiry}`]
  await transport.send({ to: link.email, subject: baseUrl ? 'Your support portal sign-in link' : `Your sign-in code: ${link.code}`, text: text.join('\n') })
}
