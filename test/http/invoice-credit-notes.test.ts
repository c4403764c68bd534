import t from 'tap'
import { creditNotesProjector } from '../../src/projections/invoice/credit-notes.ts'
import { invoicesProjector } from '../../src/projections/invoice/invoices.ts'
import { timeEntriesProjector } from '../../src/projections/time-entry/time-entries.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>
type Json = Record<string, any>

t.test('credit notes, the UBL export and invoices from time entries', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const A = acme.admin.headers
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object, headers: Headers = A) => {
    const res = await app.inject({ method, url, headers, ...(payload && { payload }) })
    const type = String(res.headers['content-type'] ?? '')
    return { status: res.statusCode, body: type.startsWith('application/json') ? (res.json() as Json) : {}, text: res.body, type }
  }
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object, headers: Headers = A) => {
    const res = await call(method, url, payload, headers)
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`)
    return res.body
  }
  await ok('PATCH', '/api/org/settings/', { company_name: 'Acme & Co', address_line: '1 Main St', city: 'Berlin', postcode: '10115', country: 'DE', tax_id: 'DE123456789' })
  const account = (await ok('POST', '/api/accounts/', { name: 'Initech' })).id as string
  const contact = (await ok('POST', '/api/contacts/', { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', account })).id as string
  const issued = async (extra: object = {}) => {
    const draft = (await ok('POST', '/api/invoices/', {
      account_id: account, contact_id: contact, invoice_title: 'Work', currency: 'EUR', issue_date: '2026-11-20', client_name: 'Smith & <Sons>', billing_address_line: '2 Rue', billing_city: 'Paris', billing_postcode: '75001', billing_country: 'FR',
      line_items: [
        { name: 'Consulting', quantity: '3', unit_price: '19.99', discount_type: 'PERCENTAGE', discount_value: '10' },
        { name: 'Licence', quantity: 1, unit_price: '100', discount_type: 'FIXED', discount_value: 5, tax_rate: '5.5' },
        { name: 'Travel', quantity: '2.5', unit_price: 10, tax_rate: 0 },
      ],
      discount_type: 'PERCENTAGE', discount_value: 10, tax_rate: 20, shipping_amount: '7.50', ...extra,
    })).invoice
    return (await ok('POST', `/api/invoices/${draft.id}/send/`, {})).invoice as Json
  }

  t.test('credit notes: partial by lines, then the rest; their own gap-free series, also under concurrent issues; the amount due follows', async (t) => {
    const invoice = await issued()
    t.match(invoice, { invoice_number: 'INV-2026-00001', total_amount: '178.48', amount_due: '178.48' })
    const [consulting, licence] = invoice.line_items.map((l: Json) => l.id as string)
    const first = await call('POST', `/api/invoices/${invoice.id}/credit-notes/`, { reason: 'One hour billed twice', lines: [{ line_id: consulting, quantity: 1 }] })
    t.equal(first.status, 201, first.text)
    t.match(first.body.credit_note, { credit_note_number: 'CN-2026-00001', invoice_id: invoice.id, currency: 'EUR', reason: 'One hour billed twice', lines: [{ line_id: consulting, quantity: '1.00', unit_price: '19.99', net: '17.99' }], subtotal: '17.99' })
    const note = first.body.credit_note
    t.equal(note.total_amount, '19.42', 'what the invoice bills before less after: 17.99 net, less 1.80 of the 10 % discount, plus 3.23 tax (the difference of the 20 % category\'s taxes)')
    t.match(await ok('GET', `/api/invoices/${invoice.id}/`), { invoice: { amount_credited: note.total_amount, amount_due: '159.06', total_amount: '178.48', status: 'Sent' } }, "the invoice's money is unchanged; what is due falls")
    t.match((await call('POST', `/api/invoices/${invoice.id}/credit-notes/`, { lines: [{ line_id: consulting, quantity: 3 }] })).body, { error: true, errors: { 'lines.0.quantity': ['At most 2.00 of this line is left to credit.'] } })
    t.match((await call('POST', `/api/invoices/${invoice.id}/credit-notes/`, { lines: [{ line_id: account, quantity: 1 }] })).body, { errors: { 'lines.0.line_id': [String] } })
    const racers = await Promise.all([1, 2, 3].map(() => ok('POST', `/api/invoices/${invoice.id}/credit-notes/`, { lines: [{ line_id: licence, quantity: '0.25' }] })))
    t.same(racers.map((r) => r.credit_note.credit_note_number).sort(), ['CN-2026-00002', 'CN-2026-00003', 'CN-2026-00004'], 'three concurrent credit notes take the next three numbers')
    await ok('POST', `/api/invoices/${invoice.id}/mark-paid/`, { amount: '50' })
    t.match((await call('POST', `/api/invoices/${invoice.id}/credit-notes/`, {})).body, { errors: { lines: [/exceeds the amount due/] } }, 'no credit above what is due')
    const payment = (await ok('GET', `/api/invoices/${invoice.id}/payments/`))[0].id
    t.equal((await app.inject({ method: 'DELETE', url: `/api/invoices/${invoice.id}/payments/${payment}/`, headers: A })).statusCode, 200, 'the payment reversed')
    const rest = (await ok('POST', `/api/invoices/${invoice.id}/credit-notes/`, { reason: 'Cancelled engagement' })).credit_note
    t.equal(rest.credit_note_number, 'CN-2026-00005', 'a refused credit note took no number')
    t.equal(rest.shipping_amount, '7.50', 'the last of the lines takes the shipping with it')
    const { credit_notes } = await ok('GET', `/api/invoices/${invoice.id}/credit-notes/`)
    const credited = credit_notes.reduce((sum: number, c: Json) => sum + Math.round(Number(c.total_amount) * 100), 0)
    t.equal(credited, 17848, 'the credit notes add up to the total, to the cent')
    t.match(await ok('GET', `/api/invoices/${invoice.id}/`), { invoice: { amount_credited: '178.48', amount_due: '0.00' } })
    t.match((await call('POST', `/api/invoices/${invoice.id}/credit-notes/`, {})).body, { errors: { lines: ['Nothing is left to credit on this invoice.'] } })
    t.match(await ok('GET', `/api/invoices/credit-notes/${note.id}/`), { credit_note: { id: note.id, credit_note_number: 'CN-2026-00001' } })
    t.equal((await call('GET', `/api/invoices/credit-notes/${note.id}/`, undefined, globex.admin.headers)).status, 404, "another organization's credit note is not found")
    const draft = (await ok('POST', '/api/invoices/', { account_id: account, contact_id: contact, invoice_title: 'Draft', line_items: [{ name: 'x', unit_price: 1 }] })).invoice
    t.match((await call('POST', `/api/invoices/${draft.id}/credit-notes/`, {})).body, { errors: /issued invoice/ }, 'a draft is changed, not credited')
  })

  t.test('UBL 2.1: an issued invoice and a credit note, escaped; a draft or a document breaking a rule is refused, naming the rule', async (t) => {
    const invoice = await issued()
    const xml = await call('GET', `/api/invoices/${invoice.id}/ubl/`)
    t.equal(xml.status, 200, xml.text)
    t.match(xml.type, /^application\/xml/)
    t.match(xml.text, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/, 'a UBL 2.1 Invoice')
    t.match(xml.text, `<cbc:ID>${invoice.invoice_number}</cbc:ID>`)
    t.match(xml.text, '<cbc:RegistrationName>Smith &amp; &lt;Sons&gt;</cbc:RegistrationName>', 'text is escaped')
    t.match(xml.text, '<cbc:RegistrationName>Acme &amp; Co</cbc:RegistrationName>')
    t.match(xml.text, `<cbc:PayableAmount currencyID="EUR">${invoice.total_amount}</cbc:PayableAmount>`)
    t.notMatch(xml.text, /[&](?!amp;|lt;|gt;|quot;|apos;)/, 'no bare ampersand')
    const note = (await ok('POST', `/api/invoices/${invoice.id}/credit-notes/`, { reason: 'Price < agreed' })).credit_note
    const credit = await call('GET', `/api/invoices/credit-notes/${note.id}/ubl/`)
    t.equal(credit.status, 200, credit.text)
    t.match(credit.text, /<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/, 'a UBL 2.1 CreditNote')
    t.match(credit.text, `<cac:BillingReference>\n    <cac:InvoiceDocumentReference>\n      <cbc:ID>${invoice.invoice_number}</cbc:ID>`)
    t.match(credit.text, '<cbc:Note>Price &lt; agreed</cbc:Note>')
    t.match(credit.text, '<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>')
    const draft = (await ok('POST', '/api/invoices/', { account_id: account, contact_id: contact, invoice_title: 'Draft', line_items: [{ name: 'x', unit_price: 1 }] })).invoice
    t.match((await call('GET', `/api/invoices/${draft.id}/ubl/`)).body, { errors: /issued invoice/ })
    const countryless = await issued({ billing_country: '' })
    t.match((await call('GET', `/api/invoices/${countryless.id}/ubl/`)).body, { error: true, errors: { ubl: [/^BR-11: /] } }, 'a missing buyer country is named by its rule')
  })

  t.test('from time entries: a draft with a line per entry, the entries billed in the same append; concurrent conversions bill once', async (t) => {
    const printer = (await ok('POST', '/api/cases/', { name: 'Printer on fire', account })).id as string
    const log = async (start: string, end: string, extra: object = {}) => (await ok('POST', `/api/cases/${printer}/time-entries/`, { started_at: start, ended_at: end, description: 'Repair', billable: true, hourly_rate: '80.50', ...extra })).id as string
    const one = await log('2026-11-20T09:00:00Z', '2026-11-20T09:20:00Z')
    const two = await log('2026-11-20T10:00:00Z', '2026-11-20T11:30:00Z', { hourly_rate: '100' })
    const made = await call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [two, one] })
    t.equal(made.status, 201, made.text)
    t.match(made.body, { error: false, invoice_number: null, currency: 'USD', line_count: 2, entry_ids: [one, two] })
    const invoice = (await ok('GET', `/api/invoices/${made.body.invoice_id}/`)).invoice
    t.match(invoice, { status: 'Draft', account: { id: account }, contact: { id: contact }, line_items: [{ name: 'Printer on fire, Repair', quantity: '0.33', unit_price: '80.50', subtotal: '26.57' }, { quantity: '1.50', unit_price: '100.00', subtotal: '150.00' }], subtotal: '176.57' })
    t.same((await ok('GET', '/api/time-entries/unbilled/')), [], 'both entries are billed')
    t.match((await call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [one] })).body, { error: true, errors: `Time entry ${one} has already been invoiced.` })
    t.equal((await call('PUT', `/api/time-entries/${one}/`, { description: 'Changed' })).status, 400, 'a billed entry no longer changes')
    const three = await log('2026-11-21T09:00:00Z', '2026-11-21T10:00:00Z')
    const four = await log('2026-11-21T11:00:00Z', '2026-11-21T12:00:00Z')
    const before = (await ok('GET', '/api/invoices/?limit=1')).count
    const racers = await Promise.all([1, 2, 3].map(() => call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [three, four] })))
    t.same(racers.map((r) => r.status).sort(), [201, 400, 400], 'one conversion wins')
    t.match(racers.find((r) => r.status === 400)!.body, { error: true, errors: /has already been invoiced/ })
    t.equal((await ok('GET', '/api/invoices/?limit=1')).count, before + 1, 'one invoice')
    const running = (await ok('POST', `/api/cases/${printer}/time-entries/start/`, { billable: true })).id
    t.match((await call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [running] })).body, { errors: /still running/ })
    t.equal((await call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [] })).status, 400)
    t.equal((await call('POST', '/api/invoices/from-time-entries/', { account_id: account, entry_ids: [running] }, globex.admin.headers)).status, 404, "another organization's account and entries are not found")
  })

  t.test('the read models rebuilt from the log are identical', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, [invoicesProjector, creditNotesProjector, timeEntriesProjector], { oneByOne: true })
  })
})
