import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { contactOf } from '../../projections/contact/contacts.ts'
import { liveProducts } from '../../projections/invoice/products.ts'
import { invoiceOf } from '../../projections/invoice/queries.ts'
import type { InvoiceView } from '../../projections/invoice/queries.ts'
import { opportunityOf } from '../../projections/opportunity/opportunities.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { Companion } from '../handle-command.ts'
import type { LineItem, LineItemInput } from './fields.ts'
import { invoiceDecider, invoiceStream, mayAccessInvoice } from './invoice.ts'
import type { InvoiceInput } from './invoice.ts'

export type InvoiceDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type Written = { id: string; position: Position | null }

export const todayOf = (now: Date): string => now.toISOString().slice(0, 10)

/** An invoice of the caller's organization (404 otherwise) that the caller may act on: admin, creator or assignee (403 otherwise). */
export async function visibleInvoice(deps: Pick<Deps, 'db' | 'clock'>, caller: Caller, id: string): Promise<InvoiceView> {
  const row = await invoiceOf(deps.db, caller, id, todayOf(deps.clock()))
  if (!row) throw new NotFoundError('Invoice not found')
  if (!mayAccessInvoice({ createdBy: row.created_by, fields: row }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this invoice')
  return row
}

/**
 * 400 naming each link that is not a live record of the caller's organization (or one the caller
 * may not see, answered alike): the account, the contact (which must not belong to another
 * account, as the original checks), the deal, the lines' products, assignees and teams. What the
 * invoice already holds (`current`) may stay.
 */
export async function checkLinks(db: Deps['db'], caller: Caller, input: InvoiceInput, lines: readonly LineItemInput[] | undefined, current?: Pick<InvoiceView, 'account' | 'contact' | 'opportunity' | 'assigned_to' | 'teams'>): Promise<void> {
  const errors: Record<string, string[]> = {}
  const changed = <K extends 'account' | 'contact' | 'opportunity'>(key: K) => (input[key] && input[key] !== current?.[key] ? input[key] : undefined)
  const [account, contact, deal, products] = await Promise.all([
    changed('account') && accountOf(db, caller.orgId, changed('account')!),
    changed('contact') && contactOf(db, caller.orgId, changed('contact')!),
    changed('opportunity') && opportunityOf(db, caller.orgId, changed('opportunity')!),
    liveProducts(db, caller.orgId, [...new Set((lines ?? []).flatMap((line) => line.product ?? []))]),
  ])
  if (changed('account') && !account) errors.account_id = ['Account not found or does not belong to your organization']
  if (changed('contact') && !contact) errors.contact_id = ['Contact not found or does not belong to your organization']
  const accountId = input.account ?? current?.account
  if (contact && contact.account && accountId && contact.account !== accountId) errors.contact_id = ['Contact does not belong to the selected account']
  if (changed('opportunity') && !(deal && mayAccess('Opportunity', { createdBy: deal.created_by, assignedTo: deal.assigned_to }, caller))) errors.opportunity_id = ['Opportunity not found or does not belong to your organization']
  if (unknownProduct(lines ?? [], products)) errors.line_items = [NOT_IN_CATALOGUE]
  await checkRelations(db, caller.orgId, { assigned_to: input.assigned_to, teams: input.teams }, errors, { assigned_to: current?.assigned_to, teams: current?.teams })
}

const NOT_IN_CATALOGUE = "A line item references a product that is not in your organization's catalogue."
const unknownProduct = (lines: readonly Partial<LineItemInput>[], products: readonly { id: string }[]) => lines.some((line) => line.product && !products.some((p) => p.id === line.product))

/** 400 when a line names a product that is not a live product of the caller's organization. */
export async function checkLineProduct(db: Deps['db'], caller: Caller, line: Partial<LineItemInput>): Promise<void> {
  if (line.product && unknownProduct([line], await liveProducts(db, caller.orgId, [line.product]))) throw new ValidationError({ product: [NOT_IN_CATALOGUE] })
}

/** Lines as the decider takes them: ids given, ordered as sent unless an order is named. */
export const withIds = (lines: readonly LineItemInput[]): LineItem[] => lines.map((line) => ({ id: randomUUID(), ...line }))

/** Creates a draft (no number: numbers are given when an invoice is issued). POST /api/invoices/ comes here. */
export async function createInvoice(deps: InvoiceDeps, caller: Caller, input: { id?: string; fields: InvoiceInput; lines: readonly LineItemInput[]; duplicatedFrom?: string; also?: readonly Companion[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await checkLinks(deps.db, caller, input.fields, input.lines)
  const id = input.id ?? randomUUID()
  const now = deps.clock()
  // `also`: commands on other streams decided and appended with the creation (time entries billed by it).
  await session.run(invoiceDecider, invoiceStream(id), { type: 'CreateInvoice', invoiceId: id, orgId: caller.orgId, actor: actorOfCaller(caller), input: input.fields, lines: withIds(input.lines), duplicatedFrom: input.duplicatedFrom, today: todayOf(now), at: now.toISOString() }, { expectNew: true, ...(input.also && { also: input.also }) })
  return { id, position: session.position() }
}

/** PUT /api/invoices/{id}/: the fields named (partial, as the original's), and the lines as a whole when `line_items` is sent. */
export async function changeInvoice(deps: InvoiceDeps, caller: Caller, id: string, input: { fields: InvoiceInput; lines?: readonly LineItemInput[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  const current = await visibleInvoice(deps, caller, id)
  await checkLinks(deps.db, caller, input.fields, input.lines, current)
  await session.run(invoiceDecider, invoiceStream(id), { type: 'UpdateInvoice', orgId: caller.orgId, actor: actorOfCaller(caller), input: input.fields, lines: input.lines && withIds(input.lines), at: deps.clock().toISOString() })
  return { id, position: session.position() }
}

/** A new draft copied from an invoice the caller may see: "Copy of <title>", its lines, issued today, no payments and no number. */
export async function duplicateInvoice(deps: InvoiceDeps, caller: Caller, id: string, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  const original = await visibleInvoice(deps, caller, id)
  const { invoice_title, account, contact, opportunity, client_name, client_email, client_phone, currency, discount_type, discount_value, tax_rate, shipping_amount, payment_terms, notes, terms } = original
  const addresses = Object.fromEntries(Object.entries(original).filter(([key]) => /^(billing|client)_(address_line|city|state|postcode|country)$/.test(key)))
  const fields: InvoiceInput = { ...addresses, invoice_title: `Copy of ${invoice_title}`.slice(0, 100), account, contact, opportunity, client_name, client_email, client_phone, currency, discount_type, discount_value, tax_rate, shipping_amount, payment_terms, notes, terms }
  const lines = original.line_items.map(({ id: _id, ...line }) => line)
  return createInvoice(deps, caller, { fields, lines, duplicatedFrom: id }, session)
}
