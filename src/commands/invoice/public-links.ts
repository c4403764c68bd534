import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { estimateOf } from '../../projections/invoice/estimates.ts'
import type { EstimateView } from '../../projections/invoice/estimates.ts'
import { invoiceOf, orgOfDocument } from '../../projections/invoice/queries.ts'
import type { InvoiceView } from '../../projections/invoice/queries.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { estimateDecider, estimateStream } from './estimate.ts'
import type { Respondent } from './estimate.ts'
import { invoiceDecider, invoiceStream } from './invoice.ts'
import { todayOf } from './write-invoice.ts'

/**
 * Public links: what a client opens without signing in. A link is a bearer token,
 * `<document id>.<last valid day YYYYMMDD>.<signature>`, the signature an HMAC-SHA256 of the kind,
 * id and day under a key derived from the server's JWT_SECRET: unguessable, checked in constant
 * time, stored nowhere (so no token reaches the log), and it expires LINK_DAYS after it was handed
 * out. Switching the document's `public_link_enabled` off revokes every link to it at once. A link
 * shows only its own document; its first opening moves Sent to Viewed, and an estimate's link
 * accepts or declines it once.
 */
export type LinkKind = 'invoice' | 'estimate'
export const LINK_DAYS = 90

const signature = (secret: string, kind: LinkKind, id: string, lastDay: string) => {
  const key = createHmac('sha256', secret).update('crm public document links').digest()
  return createHmac('sha256', key).update(`${kind}:${id}:${lastDay}`).digest('base64url')
}

const compact = (day: string) => day.replaceAll('-', '')

/** A link to the document, valid for LINK_DAYS from `today` (YYYY-MM-DD). */
export function linkToken(secret: string, kind: LinkKind, id: string, today: string): string {
  const last = new Date(`${today}T00:00:00Z`)
  last.setUTCDate(last.getUTCDate() + LINK_DAYS)
  const lastDay = compact(last.toISOString().slice(0, 10))
  return `${id}.${lastDay}.${signature(secret, kind, id, lastDay)}`
}

/** The document a token names, or null when it is malformed, forged, of another kind or expired. */
export function tokenTarget(secret: string, kind: LinkKind, token: string, today: string): string | null {
  const [id, lastDay, given, ...rest] = token.split('.')
  if (rest.length || !id || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) || !lastDay || !/^\d{8}$/.test(lastDay) || !given) return null
  const expected = Buffer.from(signature(secret, kind, id, lastDay))
  const actual = Buffer.from(given)
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null
  return lastDay < compact(today) ? null : id
}

type LinkDeps = Pick<Deps, 'db' | 'store' | 'clock' | 'config'>
const GONE = 'This link is not valid (it may have expired or been switched off)'

/** The organization's own system caller for a link's events: no member, no API key acts. */
const linkCaller = (orgId: string): Caller => ({ orgId, profileId: null, isAdmin: false })

async function target(deps: LinkDeps, kind: LinkKind, token: string): Promise<{ id: string; caller: Caller; today: string }> {
  const today = todayOf(deps.clock())
  const id = tokenTarget(deps.config.jwtSecret, kind, token, today)
  const orgId = id && (await orgOfDocument(deps.db, kind, id))
  if (!id || !orgId) throw new NotFoundError(GONE)
  return { id, caller: linkCaller(orgId), today }
}

/** Opens an invoice's link: the invoice (an issued one whose link is on), its first opening recorded. */
export async function openInvoiceLink(deps: LinkDeps, token: string): Promise<{ row: InvoiceView; position: Position | null }> {
  const { id, caller, today } = await target(deps, 'invoice', token)
  const row = await invoiceOf(deps.db, caller, id, today)
  if (!row || !row.public_link_enabled || row.status === 'Draft') throw new NotFoundError(GONE)
  const session = commandSession(deps.store, caller)
  await session.run(invoiceDecider, invoiceStream(id), { type: 'RecordInvoiceView', orgId: caller.orgId, at: deps.clock().toISOString() })
  return { row, position: session.position() }
}

/** Opens an estimate's link (a sent one whose link is on), its first opening recorded; or answers it, once. */
export async function useEstimateLink(deps: LinkDeps, token: string, answer?: { answer: 'Accepted' | 'Declined'; respondent: Respondent }): Promise<{ row: EstimateView; position: Position | null }> {
  const { id, caller, today } = await target(deps, 'estimate', token)
  const row = await estimateOf(deps.db, caller, id, today)
  if (!row || !row.public_link_enabled || row.status === 'Draft') throw new NotFoundError(GONE)
  const session = commandSession(deps.store, caller)
  const facts = { orgId: caller.orgId, at: deps.clock().toISOString(), today }
  await session.run(estimateDecider, estimateStream(id), answer ? { type: 'AnswerEstimate', ...answer, ...facts } : { type: 'RecordEstimateView', ...facts })
  return { row, position: session.position() }
}
