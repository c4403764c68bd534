import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { lineItemsOf, opportunityOf } from '../../projections/opportunity/opportunities.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { LineItemInput } from './fields.ts'
import { createInvoice } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

/**
 * POST /api/invoices/from-opportunity/{opportunity_id}/ (the original's InvoiceFromOpportunityView):
 * a draft from a won deal the caller may see, billed to its account and first contact, assigned as
 * the deal is, in its currency, with its line items (a line's tax is the invoice's rate, none until
 * one is set). Unlike the original, the draft has no number until it is sent, like every draft.
 */
export async function invoiceFromOpportunity(deps: InvoiceDeps, caller: Caller, opportunityId: string, session: CommandSession = commandSession(deps.store, caller)): Promise<{ id: string; position: Position | null }> {
  const deal = await opportunityOf(deps.db, caller.orgId, opportunityId)
  if (!deal) throw new NotFoundError('Opportunity not found')
  if (!mayAccess('Opportunity', { createdBy: deal.created_by, assignedTo: deal.assigned_to }, caller)) throw new ForbiddenError('You do not have permission to create invoice from this opportunity')
  if (deal.stage_kind !== 'won') throw new ValidationError('Invoice can only be created from won opportunities')
  const items = await lineItemsOf(deps.db, [deal.id])
  if (!items.length) throw new ValidationError('Opportunity has no products/line items to invoice')
  if (!deal.account) throw new ValidationError('Opportunity must have an account to create an invoice')
  const contact = deal.contacts[0]
  if (!contact) throw new ValidationError('Opportunity must have at least one contact to create an invoice')
  const lines: LineItemInput[] = items.map((item, order) => ({
    product: null, name: item.name, description: item.description ?? '', quantity: item.quantity, unit_price: item.unit_price,
    discount_type: item.discount_type === null ? null : item.discount_type === 'percentage' ? 'PERCENTAGE' : 'FIXED', discount_value: item.discount_value ?? '0.00', tax_rate: null, order,
  }))
  const fields = { invoice_title: `Invoice for ${deal.name}`.slice(0, 100), account: deal.account, contact, opportunity: deal.id, currency: deal.currency ?? undefined, assigned_to: [...deal.assigned_to] }
  return createInvoice(deps, caller, { fields, lines }, session)
}
