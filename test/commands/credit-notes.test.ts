import fc from 'fast-check'
import t from 'tap'
import type { Actor } from '../../src/commands/caller.ts'
import { fold } from '../../src/commands/decider.ts'
import type { LineItem } from '../../src/commands/invoice/fields.ts'
import { hoursOf } from '../../src/commands/invoice/from-time-entries.ts'
import { amountsOf, invoiceDecider, statusOf } from '../../src/commands/invoice/invoice.ts'
import type { InvoiceCommand, InvoiceEvent } from '../../src/commands/invoice/invoice.ts'
import { cents, invoiceAmounts, money } from '../../src/commands/invoice/money.ts'
import type { DiscountType } from '../../src/commands/invoice/money.ts'
import { timesheetDecider } from '../../src/commands/time-entry/time-entry.ts'
import type { TimeEntryEvent } from '../../src/commands/time-entry/time-entry.ts'
import { ConflictError, DomainError, ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { checkEn16931 } from '../../src/http/invoices/ubl/en16931-rules.ts'
import { ublDocument } from '../../src/http/invoices/ubl/ubl-document.ts'
import type { UblDocument, UblSource } from '../../src/http/invoices/ubl/ubl-document.ts'
import { escapeXml, ublXml } from '../../src/http/invoices/ubl/ubl-xml.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const at = '2026-11-22T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const facts = { orgId: org, actor: creator, at }

const line = (id: string, fields: Partial<LineItem> = {}): LineItem => ({ id, product: null, name: 'Consulting', description: '', quantity: '2.00', unit_price: '100.00', discount_type: null, discount_value: '0.00', tax_rate: null, order: 0, ...fields })
const create = (lines: LineItem[], terms: object = {}): InvoiceCommand => ({ type: 'CreateInvoice', invoiceId: 'i1', ...facts, input: { invoice_title: 'November', account: 'acc', contact: 'con', tax_rate: '10.00', ...terms }, lines, today: '2026-11-22' })
const send: InvoiceCommand = { type: 'SendInvoice', ...facts }
const credit = (id: string, lines?: { line_id: string; quantity: string }[], actor = creator): InvoiceCommand => ({ type: 'IssueCreditNote', creditNoteId: id, reason: '', lines, ...facts, actor })
const pay = (id: string, amount: string): InvoiceCommand => ({ type: 'RecordPayment', ...facts, payment: { payment_id: id, amount, payment_date: '2026-11-23', payment_method: 'CASH', reference_number: '', notes: '' } })

function history(...commands: InvoiceCommand[]): InvoiceEvent[] {
  const events: InvoiceEvent[] = []
  for (const command of commands) events.push(...invoiceDecider.decide(command, fold(invoiceDecider, events)))
  return events
}

t.test('credit notes: only of an issued invoice, by lines or whole, at most what is left and what is due; once', async (t) => {
  const invoice = spec(t, invoiceDecider)
  const issued = history(create([line('l1'), line('l2', { unit_price: '50.00', tax_rate: '20.00' })]), send)
  t.equal(amountsOf(fold(invoiceDecider, issued)).total_amount, '340.00')
  invoice.given(history(create([line('l1')]))).when(credit('c1')).thenRejects(ValidationError, { errors: /issued invoice/ })
  invoice.given(history(create([line('l1')]), send, { type: 'CancelInvoice', ...facts })).when(credit('c1')).thenRejects(ValidationError, { errors: /cancelled/ })
  invoice.given(issued).when(credit('c1', undefined, stranger)).thenRejects(ForbiddenError)
  invoice.given(issued).when({ ...credit('c1'), orgId: 'other' } as InvoiceCommand).thenRejects(NotFoundError)
  invoice.given(issued).when(credit('c1', [{ line_id: 'l1', quantity: '2.01' }])).thenRejects(ValidationError, { errors: { 'lines.0.quantity': ['At most 2.00 of this line is left to credit.'] } })
  invoice.given(issued).when(credit('c1', [{ line_id: 'nope', quantity: '1' }])).thenRejects(ValidationError, { errors: { 'lines.0.line_id': [String] } })
  const [partial] = invoiceDecider.decide(credit('c1', [{ line_id: 'l1', quantity: '0.5' }]), fold(invoiceDecider, issued))
  t.match(partial, { type: 'CreditNoteIssued', data: { credit_note_id: 'c1', org_id: org, currency: 'USD', lines: [{ line_id: 'l1', quantity: '0.50', net: '50.00', tax_rate: '10.00' }], subtotal: '50.00', tax_breakdown: [{ tax_rate: '10.00', taxable_amount: '50.00', tax_amount: '5.00' }], total_amount: '55.00', by: 'creator' } })
  const after = [...issued, partial!]
  invoice.given(after).when(credit('c1', [{ line_id: 'l1', quantity: '0.5' }])).then([], 'the same credit note twice: nothing new')
  t.match(amountsOf(fold(invoiceDecider, after)), { amount_credited: '55.00', amount_due: '285.00' })
  const [rest] = invoiceDecider.decide(credit('c2'), fold(invoiceDecider, after))
  t.match(rest, { data: { lines: [{ line_id: 'l1', quantity: '1.50' }, { line_id: 'l2', quantity: '2.00' }], total_amount: '285.00' } }, 'a full credit takes all that is left')
  t.equal(statusOf(fold(invoiceDecider, [...after, rest!])), 'Paid', 'nothing is due: settled')
  invoice.given([...after, rest!]).when(credit('c3')).thenRejects(ValidationError, { errors: { lines: ['Nothing is left to credit on this invoice.'] } })
  invoice.given([...issued, ...invoiceDecider.decide(pay('p1', '300.00'), fold(invoiceDecider, issued))]).when(credit('c2')).thenRejects(ValidationError, { errors: { lines: [/exceeds the amount due \(40\.00\)/] } })
  invoice.given(issued).when({ type: 'UpdateInvoice', ...facts, input: { tax_rate: '0.00' } }).thenRejects(ValidationError, { errors: { tax_rate: [/issued/] } })
})

// Any invoice: lines with their discounts and rates, a document discount, shipping.
const decimal = (min: number, max: number) => fc.integer({ min, max }).map((n) => money(BigInt(n)))
const anyLine = fc.record({
  quantity: decimal(1, 2_000), unit_price: decimal(0, 500_000), discount_type: fc.constantFrom<DiscountType | null>(null, 'PERCENTAGE', 'FIXED'), discount_value: decimal(0, 10_000),
  tax_rate: fc.option(fc.constantFrom('0.00', '5.50', '19.00', '20.00'), { nil: null }),
})
const anyTerms = fc.record({ discount_type: fc.constantFrom<DiscountType | null>(null, 'PERCENTAGE', 'FIXED'), discount_value: decimal(0, 10_000), tax_rate: fc.constantFrom('0.00', '8.25', '20.00'), shipping_amount: decimal(0, 5_000) })
const anyStep = fc.oneof(
  fc.record({ pay: fc.integer({ min: 1, max: 200_000 }) }),
  fc.record({ reverse: fc.nat(5) }),
  fc.record({ creditLine: fc.nat(7), quantity: fc.integer({ min: 1, max: 2_000 }) }),
  fc.record({ creditAll: fc.constant(true) }),
)
const party = { name: 'Acme', street: '1 Main St', city: 'Berlin', postcode: '10115', subdivision: '', country: 'DE', taxId: 'DE123456789', email: '' }
const header = { number: 'X-1', issueDate: '2026-11-22', dueDate: '2026-12-22', paymentTerms: '', currency: 'EUR', note: '', buyerReference: '', seller: party, buyer: { ...party, name: 'Initech', taxId: '' } }
/** A refusal (a domain error: too much, nothing left, …) is a step that did not happen. */
function refusedAsNull<T>(decide: () => T): T | null {
  try {
    return decide()
  } catch (error) {
    if (error instanceof DomainError) return null
    throw error
  }
}
const sum = (amounts: readonly string[]) => amounts.reduce((s, a) => s + cents(a), 0n)
const signed = (a: string) => (a.startsWith('-') ? -cents(a.slice(1)) : cents(a))

t.test('for any lines, discounts, taxes, payments and credit notes: credits and what is due add up to the total; each credit note and its invoice keep EN 16931', async (t) => {
  let creditNotes = 0
  fc.assert(
    fc.property(fc.array(anyLine, { minLength: 1, maxLength: 6 }), anyTerms, fc.array(anyStep, { maxLength: 10 }), (lines, terms, steps) => {
      const items = lines.map((l, i) => line(`l${i}`, { ...l, order: i }))
      let events = history(create(items, terms), send)
      const paid: string[] = []
      steps.forEach((s, i) => {
        const command: InvoiceCommand = 'pay' in s ? pay(`p${i}`, money(BigInt(s.pay))) : 'reverse' in s ? { type: 'ReversePayment', ...facts, paymentId: paid[s.reverse % Math.max(paid.length, 1)] ?? 'none' } : credit(`c${i}`, 'creditAll' in s ? undefined : [{ line_id: `l${s.creditLine % items.length}`, quantity: money(BigInt(s.quantity)) }])
        const decided = refusedAsNull(() => invoiceDecider.decide(command, fold(invoiceDecider, events)))
        if (decided) events = [...events, ...decided]
        if (decided && 'pay' in s) paid.push(`p${i}`)
      })
      const state = fold(invoiceDecider, events)
      const a = amountsOf(state)
      const notes = events.flatMap((e) => (e.type === 'CreditNoteIssued' ? [e.data] : []))
      creditNotes += notes.length
      const invoiceDoc = ublDocument({ ...header, kind: 'Invoice', precedingInvoice: null, lines: items.map((l, i) => ({ ...l, ...invoiceAmounts(items, state.fields).lines[i]! })), tax_breakdown: a.tax_breakdown, shipping_amount: a.shipping_amount, paid: a.amount_paid })
      const problems = [...checkEn16931(invoiceDoc), ...notes.flatMap((n) => checkEn16931(ublDocument({ ...header, kind: 'CreditNote', dueDate: null, precedingInvoice: { number: 'X-1', issueDate: '2026-11-22' }, ...n, paid: '0.00' })))]
      const noteAddsUp = notes.every((n) => sum(n.lines.map((l) => l.net)) === signed(n.subtotal) && signed(n.taxable_amount) === signed(n.subtotal) - signed(n.discount_amount) && n.tax_breakdown.reduce((s, c) => s + signed(c.tax_amount), 0n) === signed(n.tax_amount) && signed(n.total_amount) === signed(n.taxable_amount) + signed(n.tax_amount) + signed(n.shipping_amount) && signed(n.total_amount) > 0n)
      const fullyCredited = [...state.lines].every((l) => notes.flatMap((n) => n.lines).filter((c) => c.line_id === l.id).reduce((s, c) => s + cents(c.quantity), 0n) === cents(l.quantity))
      const holds = problems.length === 0 && noteAddsUp &&
        cents(a.amount_due) >= 0n && cents(a.amount_paid) + cents(a.amount_credited) + cents(a.amount_due) === cents(a.total_amount) &&
        (!fullyCredited || a.amount_credited === a.total_amount) &&
        (statusOf(state) === 'Paid') === (cents(a.amount_due) === 0n)
      if (!holds) t.comment(JSON.stringify({ problems, a, notes }))
      return holds
    }),
    { numRuns: 250 },
  )
  t.pass(`250 random invoices, ${creditNotes} credit notes: every amount adds up, every document keeps the rules checked`)
})

t.test('the EN 16931 check fails a document that breaks a rule (it is no rubber stamp)', async (t) => {
  const source: UblSource = { ...header, kind: 'Invoice', precedingInvoice: null, lines: [{ name: 'A & B', description: '', quantity: '1.00', unit_price: '100.00', tax_rate: '20.00', discount_amount: '0.00', net: '100.00' }], tax_breakdown: [{ tax_rate: '20.00', taxable_amount: '100.00', tax_amount: '20.00' }], shipping_amount: '0.00', paid: '0.00' }
  const good = ublDocument(source)
  t.same(checkEn16931(good), [])
  const rules = (doc: UblDocument) => checkEn16931(doc).map((v) => v.rule)
  t.same(rules({ ...good, totals: { ...good.totals, taxInclusive: '119.00' } }), ['BR-CO-15', 'BR-CO-16'])
  t.same(rules({ ...good, taxSubtotals: [{ ...good.taxSubtotals[0]!, tax: '19.99' }], taxTotal: '19.99' }), ['BR-CO-15', 'BR-CO-17'])
  t.same(rules({ ...good, seller: { ...good.seller, country: '', taxId: '' } }), ['BR-09', 'BR-S-02'])
  t.same(rules({ ...good, kind: 'CreditNote' }), ['BR-55'])
  t.same(rules({ ...good, lines: [] }), ['BR-16', 'BR-CO-10', 'BR-S-08'])
  t.same(rules({ ...good, totals: { ...good.totals, payable: '120.001' } }), ['BR-DEC'])
  t.match(ublXml(good), '<cbc:Name>A &amp; B</cbc:Name>')
  t.equal(escapeXml(`<a b="c">'&\u0001`), '&lt;a b=&quot;c&quot;&gt;&apos;&amp;', 'markup escaped, forbidden control characters dropped')
})

t.test('billing time: entries billed once, only stopped and billable ones, as the invoice read them; a billed entry no longer changes', async (t) => {
  const sheet = spec(t, timesheetDecider)
  const owner = (id: string) => ({ time_entry_id: id, org_id: org, case_id: 'case', profile_id: 'ann' })
  const fields = { description: 'Repair', billable: true, hourly_rate: '80.5', currency: 'USD' }
  const logged = (id: string, extra: object = {}): TimeEntryEvent => ({ type: 'TimeLogged', data: { ...owner(id), ...fields, started_at: '2026-11-20T09:00:00.000Z', ended_at: '2026-11-20T09:20:00.000Z', duration_minutes: 20, by: 'ann', at, ...extra } })
  const bill = (ids: string[], invoiceId = 'i1', extra: object = {}) => ({ type: 'BillTimeEntries' as const, orgId: org, invoiceId, billed: ids.map((id) => ({ id, minutes: 20, hourlyRate: '80.50', currency: 'USD', ...extra })), by: 'ann', at })
  const billed = (id: string, invoiceId = 'i1'): TimeEntryEvent => ({ type: 'TimeEntryBilled', data: { time_entry_id: id, invoice_id: invoiceId, by: 'ann', at } })
  sheet.given([logged('e1'), logged('e2')]).when(bill(['e1', 'e2'])).then([billed('e1'), billed('e2')], 'one event per entry; "80.5" and "80.50" are one rate')
  sheet.given([logged('e1'), billed('e1')]).when(bill(['e1'])).then([], 'a retried decision of the same invoice: nothing new')
  sheet.given([logged('e1'), billed('e1')]).when(bill(['e1'], 'i2')).thenRejects(ValidationError, { errors: 'Time entry e1 has already been invoiced.' })
  sheet.given([logged('e1', { billable: false })]).when(bill(['e1'])).thenRejects(ValidationError, { errors: /not marked billable/ })
  sheet.given([logged('e1')]).when(bill(['e1'], 'i1', { minutes: 30 })).thenRejects(ConflictError)
  sheet.given([logged('e1')]).when(bill(['e9'])).thenRejects(NotFoundError)
  sheet.given([logged('e1'), billed('e1')]).when({ type: 'ChangeTimeEntry', orgId: org, entryId: 'e1', changes: { description: 'x' }, by: 'ann', at }).thenRejects(ValidationError)
  sheet.given([logged('e1'), billed('e1')]).when({ type: 'DeleteTimeEntry', orgId: org, entryId: 'e1', by: 'ann', at }).thenRejects(ValidationError)
  t.same([0, 1, 20, 30, 90, 100].map(hoursOf), ['0.00', '0.02', '0.33', '0.50', '1.50', '1.67'], 'hours to the hundredth, half away from zero')
})
