import fc from 'fast-check'
import t from 'tap'
import type { Actor } from '../../src/commands/caller.ts'
import { fold } from '../../src/commands/decider.ts'
import type { LineItem } from '../../src/commands/invoice/fields.ts'
import { amountsOf, invoiceDecider, statusOf } from '../../src/commands/invoice/invoice.ts'
import type { InvoiceCommand, InvoiceEvent } from '../../src/commands/invoice/invoice.ts'
import { apportion, cents, invoiceAmounts, money } from '../../src/commands/invoice/money.ts'
import type { DiscountType, PricedLine } from '../../src/commands/invoice/money.ts'
import { numberSequenceDecider } from '../../src/commands/invoice/number-sequence.ts'
import { productDecider } from '../../src/commands/invoice/product.ts'
import { linkToken, tokenTarget } from '../../src/commands/invoice/public-links.ts'
import { estimateDecider, estimateStatus } from '../../src/commands/invoice/estimate.ts'
import type { EstimateCommand, EstimateEvent } from '../../src/commands/invoice/estimate.ts'
import { recurringDecider, recurringInvoiceId } from '../../src/commands/invoice/recurring.ts'
import type { RecurringCommand, RecurringEvent } from '../../src/commands/invoice/recurring.ts'
import { addMonthsClamped, duePeriods, periodDate } from '../../src/commands/invoice/recurring-schedule.ts'
import { periodInvoiceCommand } from '../../src/commands/invoice/write-recurring.ts'
import { emptyTemplate, templateDecider } from '../../src/commands/invoice/template.ts'
import type { TemplateEvent } from '../../src/commands/invoice/template.ts'
import { ConflictError, DomainError, ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }

const line = (id: string, fields: Partial<LineItem> = {}): LineItem => ({ id, product: null, name: 'Consulting', description: '', quantity: '1.00', unit_price: '100.00', discount_type: null, discount_value: '0.00', tax_rate: null, order: 0, ...fields })
const create: InvoiceCommand = { type: 'CreateInvoice', invoiceId: 'i1', orgId: org, actor: creator, input: { invoice_title: 'November', account: 'acc', contact: 'con', tax_rate: '10.00' }, lines: [line('l1')], today: '2026-11-22', at }
const facts = (actor = creator, when = later) => ({ orgId: org, actor, at: when })
const pay = (id: string, amount?: string): InvoiceCommand => ({ type: 'RecordPayment', ...facts(), payment: { payment_id: id, amount, payment_date: '2026-11-23', payment_method: 'CASH', reference_number: '', notes: '' } })

/** The events of accepted commands, decided one after another as handleCommand would. */
function history(...commands: InvoiceCommand[]): InvoiceEvent[] {
  const events: InvoiceEvent[] = []
  for (const command of commands) events.push(...invoiceDecider.decide(command, fold(invoiceDecider, events)))
  return events
}
const stateOf = (...commands: InvoiceCommand[]) => fold(invoiceDecider, history(...commands))
const send: InvoiceCommand = { type: 'SendInvoice', ...facts() }

t.test('money: EN 16931 order; line discounts and taxes reach the total; tax per rate from its base', async (t) => {
  const lines: PricedLine[] = [
    { quantity: '3.00', unit_price: '19.99', discount_type: 'PERCENTAGE', discount_value: '10.00', tax_rate: null },
    { quantity: '1.00', unit_price: '100.00', discount_type: 'FIXED', discount_value: '5.00', tax_rate: '5.50' },
    { quantity: '2.50', unit_price: '10.00', discount_type: null, discount_value: '0.00', tax_rate: '0.00' },
  ]
  const amounts = invoiceAmounts(lines, { discount_type: 'PERCENTAGE', discount_value: '10.00', tax_rate: '20.00', shipping_amount: '7.50' })
  t.same(amounts.lines.map((l) => [l.subtotal, l.discount_amount, l.net, l.tax_rate]), [['59.97', '6.00', '53.97', '20.00'], ['100.00', '5.00', '95.00', '5.50'], ['25.00', '0.00', '25.00', '0.00']], 'each line: gross, its discount, its net rounded to the cent, its rate (the invoice\'s when it has none)')
  t.equal(amounts.subtotal, '173.97', 'the subtotal sums the line nets')
  t.equal(amounts.discount_amount, '17.40', 'the invoice discount: 10% of the subtotal, rounded half away from zero')
  t.same(amounts.tax_breakdown, [
    { tax_rate: '0.00', taxable_amount: '22.50', tax_amount: '0.00' },
    { tax_rate: '5.50', taxable_amount: '85.50', tax_amount: '4.70' },
    { tax_rate: '20.00', taxable_amount: '48.57', tax_amount: '9.71' },
  ], 'each rate\'s base is its nets less its share of the discount (shares add up to it exactly); its tax from that base')
  t.equal(amounts.tax_amount, '14.41')
  t.equal(amounts.total_amount, '178.48', 'subtotal − discount + tax + shipping')
  t.equal(money(cents('0.5') * 3n), '1.50')
  t.same(apportion(1n, [1n, 1n, 1n]), [1n, 0n, 0n], 'a remainder cent goes to the earliest of equals')
})

const decimal = (max: number) => fc.integer({ min: 0, max }).map((n) => money(BigInt(n)))
const pricedLine: fc.Arbitrary<PricedLine> = fc.record({
  quantity: decimal(100_000).filter((q) => q !== '0.00'),
  unit_price: decimal(10_000_000),
  discount_type: fc.constantFrom<DiscountType | null>(null, 'PERCENTAGE', 'FIXED'),
  discount_value: decimal(10_000),
  tax_rate: fc.option(fc.constantFrom('0.00', '5.50', '7.70', '19.00', '20.00', '100.00'), { nil: null }),
})
const terms = fc.record({ discount_type: fc.constantFrom<DiscountType | null>(null, 'PERCENTAGE', 'FIXED'), discount_value: decimal(10_000), tax_rate: fc.constantFrom('0.00', '8.25', '20.00'), shipping_amount: decimal(100_000) })

t.test('money, for any mix of lines, discounts and taxes: the totals add up to the cent', async (t) => {
  fc.assert(
    fc.property(fc.array(pricedLine, { maxLength: 12 }), terms, (lines, document) => {
      const a = invoiceAmounts(lines, document)
      const sum = (values: string[]) => values.reduce((s, v) => s + cents(v), 0n)
      return (
        cents(a.subtotal) === sum(a.lines.map((l) => l.net)) &&
        a.lines.every((l) => cents(l.net) >= 0n && cents(l.net) <= cents(l.subtotal) && cents(l.subtotal) - cents(l.discount_amount) === cents(l.net)) &&
        cents(a.discount_amount) >= 0n && cents(a.discount_amount) <= cents(a.subtotal) &&
        cents(a.taxable_amount) === cents(a.subtotal) - cents(a.discount_amount) &&
        sum(a.tax_breakdown.map((c) => c.taxable_amount)) === cents(a.taxable_amount) &&
        sum(a.tax_breakdown.map((c) => c.tax_amount)) === cents(a.tax_amount) &&
        cents(a.total_amount) === cents(a.taxable_amount) + cents(a.tax_amount) + cents(a.shipping_amount)
      )
    }),
    { numRuns: 300 },
  )
  t.pass('300 random invoices add up')
})

t.test('payments, for any sequence of payments and reversals: never "Paid" with money due, never more paid than owed', async (t) => {
  const step = fc.oneof(fc.record({ pay: fc.integer({ min: 1, max: 15_000 }) }), fc.record({ reverse: fc.nat(10) }))
  fc.assert(
    fc.property(fc.array(step, { maxLength: 15 }), (steps) => {
      let events = history(create, send)
      const paid: string[] = []
      steps.forEach((s, i) => {
        const command: InvoiceCommand = 'pay' in s ? pay(`p${i}`, money(BigInt(s.pay))) : { type: 'ReversePayment', ...facts(), paymentId: paid[s.reverse % Math.max(paid.length, 1)] ?? 'none' }
        try {
          events = [...events, ...invoiceDecider.decide(command, fold(invoiceDecider, events))]
          if ('pay' in s) paid.push(`p${i}`)
        } catch (error) {
          if (!(error instanceof DomainError)) throw error
        }
      })
      const state = fold(invoiceDecider, events)
      const { amount_paid, amount_due, total_amount } = amountsOf(state)
      const status = statusOf(state)
      return cents(amount_due) >= 0n && cents(amount_paid) + cents(amount_due) === cents(total_amount) && (status === 'Paid') === (cents(amount_due) === 0n) && (status === 'Partially_Paid') === (cents(amount_paid) > 0n && cents(amount_due) > 0n)
    }),
    { numRuns: 200 },
  )
  t.pass('200 random payment histories keep the status honest')
})

t.test('create: a draft with its lines, defaults, a due date from the terms; once; the required links', async (t) => {
  const invoice = spec(t, invoiceDecider)
  const [created] = history(create)
  t.match(created, { type: 'InvoiceCreated', data: { invoice_id: 'i1', org_id: org, invoice_title: 'November', currency: 'USD', payment_terms: 'NET_30', issue_date: '2026-11-22', due_date: '2026-12-22', line_items: [{ id: 'l1' }], created_by: 'creator' } })
  t.equal(statusOf(stateOf(create)), 'Draft')
  t.equal(amountsOf(stateOf(create)).total_amount, '110.00', 'the invoice rate applies to a line without its own')
  invoice.given([created!]).when(create).then([], 'created twice, no event')
  invoice.given([]).when({ ...create, input: { invoice_title: ' ' } } as InvoiceCommand).thenRejects(ValidationError, { errors: { invoice_title: [String], account_id: [String], contact_id: [String] } })
  invoice.given([]).when({ ...create, input: { ...(create as { input: object }).input, payment_terms: 'CUSTOM' } } as InvoiceCommand).then([{ ...created!, data: { ...created!.data, payment_terms: 'CUSTOM', due_date: null } } as InvoiceEvent], 'custom terms name no number of days (the original quietly took 30)')
})

t.test('update: only what changed; money fixed once issued; nothing once paid or cancelled', async (t) => {
  const invoice = spec(t, invoiceDecider)
  const update = (input: object, lines?: LineItem[]): InvoiceCommand => ({ type: 'UpdateInvoice', ...facts(), input, lines })
  invoice.given(history(create)).when(update({ notes: 'Thanks', invoice_title: 'November' })).then([{ type: 'InvoiceUpdated', data: { changes: { notes: { from: '', to: 'Thanks' } }, by: 'creator', at: later } }])
  invoice.given(history(create)).when(update({ payment_terms: 'NET_15' })).then([{ type: 'InvoiceUpdated', data: { changes: { due_date: { from: '2026-12-22', to: '2026-12-07' }, payment_terms: { from: 'NET_30', to: 'NET_15' } }, by: 'creator', at: later } }], 'new terms move the due date they gave')
  invoice.given(history(create)).when(update({}, [line('x1', { unit_price: '5.00' })])).then([{ type: 'InvoiceLinesChanged', data: { line_items: [line('x1', { unit_price: '5.00' })], by: 'creator', at: later } }])
  invoice.given(history(create)).when(update({}, [line('new-id')])).then([], 'the same lines under new ids: no change')
  invoice.given(history(create, send)).when(update({ tax_rate: '20.00' })).thenRejects(ValidationError, { errors: { tax_rate: [/issued/] } })
  invoice.given(history(create, send)).when(update({}, [line('x1', { unit_price: '5.00' })])).thenRejects(ValidationError, { errors: { line_items: [/issued/] } })
  invoice.given(history(create, send)).when({ type: 'AddLineItem', ...facts(), lineItemId: 'l2', item: line('l2') }).thenRejects(ValidationError)
  invoice.given(history(create, send)).when(update({ notes: 'Paid by wire' })).then([{ type: 'InvoiceUpdated', data: { changes: { notes: { from: '', to: 'Paid by wire' } }, by: 'creator', at: later } }], 'an issued invoice\'s other fields may change')
  invoice.given(history(create, send, pay('p1'))).when(update({ notes: 'x' })).thenRejects(ValidationError, { errors: 'A paid invoice cannot be edited.' })
  invoice.given(history(create, { type: 'CancelInvoice', ...facts() })).when(update({ notes: 'x' })).thenRejects(ValidationError, { errors: 'A cancelled invoice cannot be edited.' })
})

t.test('lines of a draft: add, change, remove; each records the lines as a whole', async (t) => {
  const invoice = spec(t, invoiceDecider)
  const { id: _id, ...item } = line('l2', { order: 1 })
  invoice.given(history(create)).when({ type: 'AddLineItem', ...facts(), lineItemId: 'l2', item }).then([{ type: 'InvoiceLinesChanged', data: { line_items: [line('l1'), line('l2', { order: 1 })], by: 'creator', at: later } }])
  invoice.given(history(create)).when({ type: 'ChangeLineItem', ...facts(), lineItemId: 'l1', item: { quantity: '2.00' } }).then([{ type: 'InvoiceLinesChanged', data: { line_items: [line('l1', { quantity: '2.00' })], by: 'creator', at: later } }])
  invoice.given(history(create)).when({ type: 'RemoveLineItem', ...facts(), lineItemId: 'nope' }).thenRejects(NotFoundError)
  invoice.given(history(create)).when({ type: 'ChangeLineItem', ...facts(), lineItemId: 'l1', item: { discount_type: 'PERCENTAGE', discount_value: '150.00' } }).thenRejects(ValidationError)
})

t.test('send: the first issues (a draft with lines only), later ones re-send; never a paid or cancelled one', async (t) => {
  const invoice = spec(t, invoiceDecider)
  invoice.given(history(create)).when(send).then([{ type: 'InvoiceIssued', data: { total_amount: '110.00', by: 'creator', at: later } }])
  invoice.given(history(create, send)).when(send).then([{ type: 'InvoiceResent', data: { by: 'creator', at: later } }])
  invoice.given(history({ ...create, lines: [] } as InvoiceCommand)).when(send).thenRejects(ValidationError, { errors: { line_items: [String] } })
  invoice.given(history(create, send, pay('p1'))).when(send).thenRejects(ValidationError, { errors: 'Cannot send a paid invoice' })
  invoice.given(history(create, { type: 'CancelInvoice', ...facts() })).when(send).thenRejects(ValidationError, { errors: 'Cannot send a cancelled invoice' })
  const view: InvoiceCommand = { type: 'RecordInvoiceView', orgId: org, at: later }
  invoice.given(history(create, send)).when(view).then([{ type: 'InvoiceViewed', data: { at: later } }], "the public link's first opening")
  invoice.given(history(create, send, view)).when(view).then([], 'later openings record nothing')
  invoice.given(history(create)).when(view).then([], 'a draft is not viewed')
  t.equal(statusOf(stateOf(create, send, view)), 'Viewed')
  t.equal(statusOf(stateOf(create, send, view, pay('p1', '1.00'))), 'Partially_Paid')
})

t.test('public link tokens: signed, of one kind of document, expiring after 90 days', async (t) => {
  const secret = 'x'.repeat(32)
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e'
  const token = linkToken(secret, 'invoice', id, '2026-11-22')
  t.equal(tokenTarget(secret, 'invoice', token, '2026-11-22'), id)
  t.equal(tokenTarget(secret, 'invoice', token, '2027-02-20'), id, 'the 90th day')
  t.equal(tokenTarget(secret, 'invoice', token, '2027-02-21'), null, 'expired')
  t.equal(tokenTarget(secret, 'estimate', token, '2026-11-22'), null, 'another kind')
  t.equal(tokenTarget('y'.repeat(32), 'invoice', token, '2026-11-22'), null, 'another key')
  t.equal(tokenTarget(secret, 'invoice', token.replace('20270220', '20280220'), '2026-11-22'), null, 'a longer life is a forgery')
  t.equal(tokenTarget(secret, 'invoice', 'not-a-token', '2026-11-22'), null)
})

t.test('payments: recorded and reversed as events; the status follows; the original\'s bounds', async (t) => {
  const invoice = spec(t, invoiceDecider)
  invoice.given(history(create)).when(pay('p1')).thenRejects(ValidationError, { errors: { non_field_errors: [/Send the invoice/] } })
  invoice.given(history(create, send)).when(pay('p1', '110.01')).thenRejects(ValidationError, { errors: { amount: ['Payment amount exceeds the amount due (110.00).'] } })
  invoice.given(history(create, send)).when(pay('p1', '0.00')).thenRejects(ValidationError, { errors: { amount: [String] } })
  invoice.given(history(create, send)).when(pay('p1')).then([{ type: 'InvoicePaymentRecorded', data: { payment_id: 'p1', amount: '110.00', payment_date: '2026-11-23', payment_method: 'CASH', reference_number: '', notes: '', by: 'creator', at: later } }], 'no amount: all that is due')
  invoice.given(history(create, send, pay('p1', '10.00'))).when(pay('p1', '10.00')).then([], 'the same payment twice: no event')
  t.equal(statusOf(stateOf(create, send)), 'Sent')
  t.equal(statusOf(stateOf(create, send, pay('p1', '10.00'))), 'Partially_Paid')
  t.equal(statusOf(stateOf(create, send, pay('p1', '10.00'), pay('p2'))), 'Paid')
  const reversed = stateOf(create, send, pay('p1', '10.00'), pay('p2'), { type: 'ReversePayment', ...facts(), paymentId: 'p2' })
  t.same([statusOf(reversed), amountsOf(reversed).amount_due], ['Partially_Paid', '100.00'], 'reversing the last payment of a paid invoice: money due again, and the status says so')
  invoice.given(history(create, send, pay('p1'), { type: 'ReversePayment', ...facts(), paymentId: 'p1' })).when({ type: 'ReversePayment', ...facts(), paymentId: 'p1' }).then([], 'reversed twice: no event')
  invoice.given(history(create, send)).when({ type: 'ReversePayment', ...facts(), paymentId: 'nope' }).thenRejects(NotFoundError)
  invoice.given(history(create, send, { type: 'CancelInvoice', ...facts() })).when(pay('p9')).thenRejects(ValidationError, { errors: { non_field_errors: [/cancelled/] } })
})

t.test('cancel: a draft or an unpaid invoice; not a paid one, not twice', async (t) => {
  const invoice = spec(t, invoiceDecider)
  invoice.given(history(create)).when({ type: 'CancelInvoice', ...facts() }).then([{ type: 'InvoiceCancelled', data: { by: 'creator', at: later } }])
  invoice.given(history(create, { type: 'CancelInvoice', ...facts() })).when({ type: 'CancelInvoice', ...facts() }).thenRejects(ValidationError, { errors: 'Invoice is already cancelled' })
  invoice.given(history(create, send, pay('p1'))).when({ type: 'CancelInvoice', ...facts() }).thenRejects(ValidationError, { errors: 'Cannot cancel a paid invoice' })
})

t.test('who: an admin, the creator or an assignee; another organization sees nothing', async (t) => {
  const invoice = spec(t, invoiceDecider)
  invoice.given(history(create)).when({ type: 'SendInvoice', ...facts(stranger) }).thenRejects(ForbiddenError)
  invoice.given(history(create)).when({ type: 'SendInvoice', ...facts(admin) }).then([{ type: 'InvoiceIssued', data: { total_amount: '110.00', by: 'admin', at: later } }])
  invoice.given(history(create)).when({ type: 'SendInvoice', orgId: otherOrg, actor: admin, at }).thenRejects(NotFoundError)
  const assigned = history(create, { type: 'UpdateInvoice', ...facts(), input: { assigned_to: ['stranger'] } })
  invoice.given(assigned).when({ type: 'SendInvoice', ...facts(stranger) }).then([{ type: 'InvoiceIssued', data: { total_amount: '110.00', by: 'stranger', at: later } }], 'once assigned')
})

t.test('numbers: the n-th allocation of a series and year is number n; a record is numbered once', async (t) => {
  const numbers = spec(t, numberSequenceDecider)
  const allocate = (recordId: string) => ({ type: 'AllocateNumber' as const, series: 'INV' as const, recordId, year: '2026', at })
  numbers.given([]).when(allocate('a')).then([{ type: 'InvoiceNumberAllocated', data: { record_id: 'a', number: 'INV-2026-00001', sequence: 1, at } }])
  const first = numberSequenceDecider.decide(allocate('a'), fold(numberSequenceDecider, []))
  numbers.given(first).when(allocate('b')).then([{ type: 'InvoiceNumberAllocated', data: { record_id: 'b', number: 'INV-2026-00002', sequence: 2, at } }])
  numbers.given(first).when(allocate('a')).then([], 'a retried issue takes no second number')
})

t.test('products: admins change the catalogue; another organization\'s product is not found', async (t) => {
  const product = spec(t, productDecider)
  const fields = { name: 'Hour', description: null, sku: null, price: '50.00', currency: null, category: null, is_active: true }
  const created = productDecider.decide({ type: 'CreateProduct', productId: 'p1', orgId: org, actor: admin, fields, at }, productDecider.initialState())
  product.given([]).when({ type: 'CreateProduct', productId: 'p1', orgId: org, actor: creator, fields, at }).thenRejects(ForbiddenError)
  product.given(created).when({ type: 'UpdateProduct', orgId: org, actor: admin, fields: { price: '55.00', name: 'Hour' }, at }).then([{ type: 'ProductUpdated', data: { price: '55.00', at } }])
  product.given(created).when({ type: 'DeleteProduct', orgId: otherOrg, actor: admin, at }).thenRejects(NotFoundError)
  product.given(created).when({ type: 'DeleteProduct', orgId: org, actor: creator, at }).thenRejects(ForbiddenError)
})

t.test('estimates: send; convert once, only a sent or accepted one that has not expired; a declined or expired one never', async (t) => {
  const estimate = spec(t, estimateDecider)
  const today = '2026-11-22'
  const run = (...commands: EstimateCommand[]) => {
    const events: EstimateEvent[] = []
    for (const command of commands) events.push(...estimateDecider.decide(command, fold(estimateDecider, events)))
    return events
  }
  const make: EstimateCommand = { type: 'CreateEstimate', estimateId: 'e1', input: { title: 'Quote', account: 'acc', contact: 'con', expiry_date: '2026-11-30' }, lines: [line('l1')], orgId: org, actor: creator, at, today }
  const sendIt: EstimateCommand = { type: 'SendEstimate', orgId: org, actor: creator, at, today }
  const convert = (invoiceId: string, on = today): EstimateCommand => ({ type: 'ConvertEstimate', invoiceId, orgId: org, actor: creator, at: later, today: on })
  const answer = (reply: 'Accepted' | 'Declined'): EstimateCommand => ({ type: 'AnswerEstimate', answer: reply, respondent: { name: 'Peter', email: 'p@x.test', ip: '203.0.113.9', user_agent: 'UA' }, orgId: org, at, today })
  estimate.given(run(make)).when(convert('i1')).thenRejects(ValidationError, { errors: 'A draft estimate cannot be converted to an invoice.' })
  estimate.given(run(make, sendIt)).when(convert('i1')).then([{ type: 'EstimateConverted', data: { invoice_id: 'i1', by: 'creator', at: later } }])
  estimate.given(run(make, sendIt, convert('i1'))).when(convert('i1')).then([], 'the same conversion retried: no event')
  estimate.given(run(make, sendIt, convert('i1'))).when(convert('i2')).thenRejects(ValidationError, { errors: 'Estimate already converted to invoice' })
  estimate.given(run(make, sendIt)).when(convert('i1', '2026-12-01')).thenRejects(ValidationError, { errors: 'An expired estimate cannot be converted to an invoice.' })
  estimate.given(run(make, sendIt, answer('Declined'))).when(convert('i1')).thenRejects(ValidationError, { errors: /declined/ })
  estimate.given(run(make, sendIt, answer('Accepted'))).when(convert('i1', '2026-12-01')).then([{ type: 'EstimateConverted', data: { invoice_id: 'i1', by: 'creator', at: later } }], 'accepted while valid: it converts after its expiry date too')
  estimate.given(run(make, sendIt, answer('Declined'))).when(sendIt).thenRejects(ValidationError, { errors: 'Cannot send a declined estimate' })
  estimate.given(run(make, sendIt, answer('Accepted'))).when({ type: 'UpdateEstimate', input: { title: 'x' }, orgId: org, actor: creator, at, today }).thenRejects(ValidationError)
  estimate.given(run(make)).when({ type: 'SendEstimate', orgId: org, actor: stranger, at, today }).thenRejects(ForbiddenError)
  t.equal(estimateStatus(fold(estimateDecider, run(make, sendIt)), '2026-12-01'), 'Expired', 'expired: read from the clock')
})

t.test('recurring: period n is the start plus n periods, clamped to the month end, never chained (no drift)', async (t) => {
  const monthly = { start_date: '2026-01-31', frequency: 'MONTHLY' as const, custom_days: null }
  t.same([0, 1, 2, 3, 12, 13].map((n) => periodDate(monthly, n)), ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2027-01-31', '2027-02-28'])
  t.same([0, 1, 2].map((n) => periodDate({ start_date: '2024-02-29', frequency: 'YEARLY', custom_days: null }, n)), ['2024-02-29', '2025-02-28', '2026-02-28'])
  t.same([1, 2].map((n) => periodDate({ start_date: '2026-08-31', frequency: 'QUARTERLY', custom_days: null }, n)), ['2026-11-30', '2027-02-28'])
  t.same([1, 2].map((n) => periodDate({ start_date: '2026-12-28', frequency: 'BIWEEKLY', custom_days: null }, n)), ['2027-01-11', '2027-01-25'])
  t.equal(periodDate({ start_date: '2026-01-01', frequency: 'CUSTOM', custom_days: 10 }, 3), '2026-01-31')
  t.equal(addMonthsClamped('2026-10-31', -1), '2026-09-30')
  t.same(duePeriods({ ...monthly, end_date: '2026-03-31' }, 1, '2026-12-01'), [1, 2], 'due up to today, never past the end date')
  t.same(duePeriods({ ...monthly, end_date: null }, 0, '2026-01-30'), [], 'nothing before its date')
  fc.assert(fc.property(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 0, max: 11 }), fc.integer({ min: 0, max: 60 }), (day, month, n) => {
    const start = new Date(Date.UTC(2026, month, day)).toISOString().slice(0, 10)
    return periodDate({ start_date: start, frequency: 'MONTHLY', custom_days: null }, n).endsWith(`-${String(day).padStart(2, '0')}`)
  }), { numRuns: 200 })
})

t.test('recurring: the schedule as events; toggle pauses and resumes past the pause; generation keyed by (schedule, n), caught up in one run', async (t) => {
  const recurring = spec(t, recurringDecider)
  const run = (...commands: RecurringCommand[]) => {
    const events: RecurringEvent[] = []
    for (const command of commands) events.push(...recurringDecider.decide(command, fold(recurringDecider, events)))
    return events
  }
  const on = (today: string) => ({ orgId: org, actor: creator, at: `${today}T09:00:00.000Z`, today })
  const make: RecurringCommand = { type: 'CreateRecurring', recurringId: 'r1', input: { title: 'Hosting', account: 'acc', contact: 'con', start_date: '2026-01-31', tax_rate: '20.00' }, lines: [line('l1')], ...on('2026-01-20') }
  const generate = (today: string, periods: number[]): RecurringCommand => ({ type: 'GenerateDue', orgId: org, periods, today, at: `${today}T10:00:00.000Z` })
  const generated = (period: number, period_date: string, today: string) => ({ type: 'RecurringInvoiceGenerated' as const, data: { period, period_date, invoice_id: recurringInvoiceId('r1', period), at: `${today}T10:00:00.000Z` } })

  t.match(run(make), [{ type: 'RecurringInvoiceCreated', data: { recurring_id: 'r1', frequency: 'MONTHLY', next_period: 0, created_by: 'creator' } }])
  t.match(run({ ...make, input: { ...make.input, start_date: '2025-11-30' } }), [{ data: { next_period: 2 } }], 'periods dated before the schedule was made are not billed: it starts at 2026-01-30')
  recurring.given([]).when({ ...make, input: { title: 'x', account: 'acc', contact: 'con', frequency: 'CUSTOM' } }).thenRejects(ValidationError, { errors: { custom_days: [String] } })
  recurring.given([]).when({ ...make, input: { title: '', account: null } }).thenRejects(ValidationError, { errors: { title: [String], account_id: [String], contact_id: [String] } })

  recurring.given(run(make)).when(generate('2026-01-31', [0])).then([generated(0, '2026-01-31', '2026-01-31')])
  recurring.given(run(make)).when(generate('2026-01-30', [0])).thenRejects(ConflictError)
  recurring.given(run(make, generate('2026-01-31', [0]))).when(generate('2026-01-31', [0])).then([], 'a retry, or a second process: nothing again')
  recurring.given(run(make, generate('2026-01-31', [0]))).when(generate('2026-04-02', [1, 2])).then([generated(1, '2026-02-28', '2026-04-02'), generated(2, '2026-03-31', '2026-04-02'), { type: 'RecurringInvoiceCaughtUp', data: { first_period: 1, last_period: 2, missed: 1, at: '2026-04-02T10:00:00.000Z' } }], 'missed periods caught up in one run, and an event says so')
  recurring.given(run(make, generate('2026-01-31', [0]))).when(generate('2026-04-02', [2])).thenRejects(ConflictError)

  const pause: RecurringCommand = { type: 'ToggleRecurring', ...on('2026-02-10') }
  t.match(run(make, pause), [{}, { type: 'RecurringInvoicePaused' }])
  recurring.given(run(make, pause)).when(generate('2026-03-01', [0])).thenRejects(ConflictError)
  recurring.given(run(make, pause)).when({ type: 'ToggleRecurring', ...on('2026-04-15') }).then([{ type: 'RecurringInvoiceResumed', data: { next_period: 3, by: 'creator', at: '2026-04-15T09:00:00.000Z' } }], 'resumed at its first period dated that day or later (Apr 30): the pause is not billed')
  recurring.given(run(make, generate('2026-01-31', [0]))).when({ type: 'UpdateRecurring', input: { start_date: '2026-02-01' }, ...on('2026-02-01') }).thenRejects(ValidationError, { errors: { start_date: [String] } })
  recurring.given(run(make)).when({ type: 'UpdateRecurring', input: { title: 'Hosting' }, ...on('2026-01-21') }).then([], 'nothing changed: no event')
  recurring.given(run(make)).when({ type: 'DeleteRecurring', orgId: org, actor: stranger, at, today: '2026-01-21' }).thenRejects(ForbiddenError)
  recurring.given(run(make)).when({ type: 'DeleteRecurring', orgId: otherOrg, actor: admin, at, today: '2026-01-21' }).thenRejects(NotFoundError)

  const invoice = periodInvoiceCommand(fold(recurringDecider, run(make)), 1, later)
  t.match(invoice, { invoiceId: recurringInvoiceId('r1', 1), orgId: org, actor: { profileId: 'creator' }, input: { invoice_title: 'Hosting', issue_date: '2026-02-28', billing_period: '2026-02-28 – 2026-03-30', tax_rate: '20.00' }, today: '2026-02-28' })
  t.match(invoiceDecider.decide(invoice, fold(invoiceDecider, [])), [{ type: 'InvoiceCreated', data: { invoice_id: recurringInvoiceId('r1', 1), due_date: '2026-03-30', created_by: 'creator' } }], 'the period\'s draft: its date, due by its terms, its creator the schedule\'s')
})

t.test('templates: a logo sent with a create or an update is its own event, after the fields; a member changes nothing', async (t) => {
  const logo = { storage_key: `${org}/logo-1`, file_name: 'logo.png', content_type: 'image/png', size: 68 }
  const created: TemplateEvent = { type: 'InvoiceTemplateCreated', data: { template_id: 't1', org_id: org, ...emptyTemplate, name: 'Plain', created_by: 'admin', at } }
  spec(t, templateDecider).given([]).when({ type: 'CreateTemplate', templateId: 't1', fields: { name: 'Plain' }, logo, orgId: org, actor: admin, at }).then([created, { type: 'InvoiceTemplateLogoSet', data: { ...logo, by: 'admin', at } }], 'created with its logo, in one append')
  spec(t, templateDecider).given([created]).when({ type: 'UpdateTemplate', fields: { name: 'Plain' }, logo, orgId: org, actor: admin, at: later }).then([{ type: 'InvoiceTemplateLogoSet', data: { ...logo, by: 'admin', at: later } }], 'the same fields and a logo: the logo alone (a new upload is always a new file)')
  spec(t, templateDecider).given([created]).when({ type: 'UpdateTemplate', fields: { footer_text: 'Thanks' }, logo, orgId: org, actor: admin, at: later }).then([{ type: 'InvoiceTemplateUpdated', data: { footer_text: 'Thanks', by: 'admin', at: later } }, { type: 'InvoiceTemplateLogoSet', data: { ...logo, by: 'admin', at: later } }])
  spec(t, templateDecider).given([created]).when({ type: 'UpdateTemplate', fields: {}, logo, orgId: org, actor: creator, at: later }).thenRejects(ForbiddenError)
  spec(t, templateDecider).given([created]).when({ type: 'UpdateTemplate', fields: {}, logo, orgId: otherOrg, actor: admin, at: later }).thenRejects(NotFoundError)
})
