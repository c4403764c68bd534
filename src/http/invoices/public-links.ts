import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { linkToken, openInvoiceLink, useEstimateLink } from '../../commands/invoice/public-links.ts'
import type { LinkKind } from '../../commands/invoice/public-links.ts'
import { todayOf } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { EstimateView } from '../../projections/invoice/estimates.ts'
import type { InvoiceView } from '../../projections/invoice/queries.ts'
import { settle } from '../kernel/commands.ts'
import { perIpFirst } from '../kernel/rate-limit.ts'
import { ErrorBody } from '../kernel/schemas/common.ts'
import { LineItemView, lineItemView } from './views.ts'

/** The client's link to a document, as the detail answers it. */
export const publicUrl = (deps: Pick<Deps, 'config' | 'clock'>, kind: LinkKind, id: string): string => `/api/public/${kind}/${linkToken(deps.config.jwtSecret, kind, id, todayOf(deps.clock()))}/`

const Decimal = z.string()
const Shared = {
  status: z.string(), currency: z.string(), issue_date: z.string(), client_name: z.string(), client_email: z.string(),
  line_items: z.array(LineItemView.omit({ product: true, product_name: true })), subtotal: Decimal, discount_amount: Decimal, tax_amount: Decimal,
  tax_breakdown: z.array(z.object({ tax_rate: Decimal, taxable_amount: Decimal, tax_amount: Decimal })), total_amount: Decimal, notes: z.string(), terms: z.string(),
}
const PublicInvoice = z.object({ invoice_number: z.string().nullable(), invoice_title: z.string(), due_date: z.string().nullable(), shipping_amount: Decimal, amount_paid: Decimal, amount_due: Decimal, is_overdue: z.boolean(), ...Shared })
const PublicEstimate = z.object({ estimate_number: z.string().nullable(), title: z.string(), expiry_date: z.string().nullable(), is_expired: z.boolean(), ...Shared })
export const TokenParams = z.object({ token: z.string().max(200) })
const Answer = z.object({ name: z.string().trim().min(1, 'This field may not be blank.').max(255), email: z.email('Enter a valid email address.').max(254) })
const errors = { 404: ErrorBody, 429: ErrorBody } as const

const lines = (row: InvoiceView | EstimateView) => row.line_items.map((line) => {
  const { product: _p, product_name: _n, ...shown } = lineItemView(line, row, new Map())
  return shown
})
const shared = (row: InvoiceView | EstimateView) => ({
  status: row.status, currency: row.currency, issue_date: row.issue_date, client_name: row.client_name, client_email: row.client_email, line_items: lines(row),
  subtotal: row.subtotal, discount_amount: row.discount_amount, tax_amount: row.tax_amount, tax_breakdown: row.tax_breakdown, total_amount: row.total_amount, notes: row.notes, terms: row.terms,
})
const publicInvoice = (row: InvoiceView): z.infer<typeof PublicInvoice> => ({ invoice_number: row.invoice_number, invoice_title: row.invoice_title, due_date: row.due_date, shipping_amount: row.shipping_amount, amount_paid: row.amount_paid, amount_due: row.amount_due, is_overdue: row.is_overdue, ...shared(row) })
const publicEstimate = (row: EstimateView): z.infer<typeof PublicEstimate> => ({ estimate_number: row.estimate_number, title: row.title, expiry_date: row.expiry_date, is_expired: row.is_expired, ...shared(row) })

/** No sign-in, rate-limited per client IP as the other public routes. */
export const publicLinkConfig = (deps: Pick<Deps, 'config'>) => ({ auth: 'public' as const, rateLimit: perIpFirst(deps.config.authRateLimitMax * 6) })

/**
 * The public links (/api/public/invoice/{token}/, /api/public/estimate/{token}/ with accept/ and
 * decline/): no sign-in, the token is the credential (commands/invoice/public-links.ts), rate-limited
 * per client IP as the other public routes. They show only the document the token names, and no
 * internal field (assignees, payments' references, comments). Their PDFs: pdf/pdf-routes.ts.
 */
export function publicLinkRoutes(deps: Deps): FastifyPluginAsyncZod {
  const config = publicLinkConfig(deps)
  const settled = async (reply: FastifyReply, position: Position | null) => settle(deps, reply, position)
  return async (app) => {
    app.get('/api/public/invoice/:token/', { config, schema: { tags: ['public'], summary: "An invoice through its client's link (no sign-in); the first opening marks it Viewed", security: [], params: TokenParams, response: { 200: z.object({ invoice: PublicInvoice }), ...errors } } }, async (request, reply) => {
      const { row, position } = await openInvoiceLink(deps, request.params.token)
      await settled(reply, position)
      return { invoice: publicInvoice({ ...row, status: row.status === 'Sent' ? 'Viewed' : row.status }) }
    })

    app.get('/api/public/estimate/:token/', { config, schema: { tags: ['public'], summary: "An estimate through its client's link (no sign-in); the first opening marks it Viewed", security: [], params: TokenParams, response: { 200: z.object({ estimate: PublicEstimate }), ...errors } } }, async (request, reply) => {
      const { row, position } = await useEstimateLink(deps, request.params.token)
      await settled(reply, position)
      return { estimate: publicEstimate({ ...row, status: row.status === 'Sent' ? 'Viewed' : row.status }) }
    })

    for (const [path, answer] of [['accept', 'Accepted'], ['decline', 'Declined']] as const) {
      app.post(`/api/public/estimate/:token/${path}/`, { config, schema: { tags: ['public'], summary: `${answer === 'Accepted' ? 'Accept' : 'Decline'} an estimate through its client's link (no sign-in), once`, description: 'Records who (name, email), from which IP and with which user agent. 400 once the estimate is answered otherwise, expired or converted.', security: [], params: TokenParams, body: Answer, response: { 200: z.object({ error: z.literal(false), message: z.string(), estimate: PublicEstimate }), 400: ErrorBody, ...errors } } }, async (request, reply) => {
        const respondent = { ...request.body, ip: request.ip ?? null, user_agent: String(request.headers['user-agent'] ?? '').slice(0, 500) }
        const { row, position } = await useEstimateLink(deps, request.params.token, { answer, respondent })
        await settled(reply, position)
        return { error: false as const, message: `Estimate ${answer.toLowerCase()}`, estimate: publicEstimate({ ...row, status: answer }) }
      })
    }
  }
}
