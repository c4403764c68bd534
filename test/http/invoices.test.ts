import t from 'tap'
import { sql } from 'kysely'
import { invoicesProjector } from '../../src/projections/invoice/invoices.ts'
import { productsProjector } from '../../src/projections/invoice/products.ts'
import { estimatesProjector } from '../../src/projections/invoice/estimates.ts'
import { logTransport } from '../../src/identity/mail.ts'
import { buildTestApp } from '../helpers/app.ts'
import { silentLogger } from '../helpers/runner.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>
type Json = Record<string, any>

t.test('/api/invoices/', async (t) => {
  const mail = logTransport(silentLogger)
  const { app, database, store } = await buildTestApp(t, { mail })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const A = acme.admin.headers
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers = A, payload?: object) => {
    const res = await app.inject({ method, url, headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? (res.json() as Json) : {}, headers: res.headers }
  }
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers: Headers = A) => {
    const res = await call(method, url, headers, payload)
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  const account = (await ok('POST', '/api/accounts/', { name: 'Initech' })).id as string
  const contact = (await ok('POST', '/api/contacts/', { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', account })).id as string
  const otherAccount = (await ok('POST', '/api/accounts/', { name: 'Umbrella' })).id as string
  const globexAccount = (await ok('POST', '/api/accounts/', { name: 'Globex' }, globex.admin.headers)).id as string
  const draft = (extra: object = {}) => ({ account_id: account, contact_id: contact, invoice_title: 'November work', currency: 'EUR', issue_date: '2026-11-20', payment_terms: 'NET_30', line_items: [{ name: 'Consulting', quantity: 3, unit_price: 19.99 }], ...extra })
  const create = async (extra: object = {}, headers: Headers = A) => (await ok('POST', '/api/invoices/', draft(extra), headers)).invoice as Json

  let product = ''
  t.test('products: any member reads the catalogue, an admin changes it', async (t) => {
    const made = await call('POST', '/api/invoices/products/', A, { name: 'Hour of work', sku: 'H-1', price: 50, category: 'Services' })
    t.equal(made.status, 201)
    product = made.body.product.id
    t.match(made.body.product, { name: 'Hour of work', sku: 'H-1', price: '50.00', is_active: true, used_on: 0 })
    t.equal((await call('POST', '/api/invoices/products/', alice.headers, { name: 'Sneaky', price: '1' })).status, 403)
    t.match(await ok('GET', '/api/invoices/products/?limit=100', undefined, alice.headers), { count: 1, next: null, results: [{ id: product, name: 'Hour of work' }] })
    t.match(await ok('PUT', `/api/invoices/products/${product}/`, { price: '55.5' }), { product: { price: '55.50', name: 'Hour of work' } })
    t.match(await ok('GET', `/api/invoices/products/${product}/`), { id: product, price: '55.50' }, 'the detail is the bare product, as the original answers it')
    t.equal((await call('GET', `/api/invoices/products/${product}/`, globex.admin.headers)).status, 404, "another organization's product is not found")
    t.match((await call('POST', '/api/invoices/products/', A, { name: 'Bad', price: '1.234' })).body, { error: true, errors: { price: [String] } })
  })

  t.test('the list the (app) layout reads on every page: the envelope and the totals, empty at first', async (t) => {
    t.same(await ok('GET', '/api/invoices/?limit=1'), { count: 0, next: null, previous: null, results: [], totals: { count: 0, outstanding: '0.00', overdue: '0.00', due_this_month: '0.00', paid_this_quarter: '0.00', draft: '0.00', action_needed: 0 } })
  })

  let id = ''
  t.test('POST creates a draft with no number; the totals come from the lines, their discounts and taxes', async (t) => {
    const res = await call('POST', '/api/invoices/', A, draft({
      line_items: [
        { name: 'Consulting', quantity: '3', unit_price: '19.99', discount_type: 'PERCENTAGE', discount_value: '10' },
        { product, quantity: 1, unit_price: '100', discount_type: 'FIXED', discount_value: 5, tax_rate: '5.5' },
        { name: 'Travel', quantity: '2.5', unit_price: 10, tax_rate: 0 },
      ],
      discount_type: 'PERCENTAGE', discount_value: 10, tax_rate: 20, shipping_amount: '7.50', notes: 'Thanks',
    }))
    t.equal(res.status, 201, JSON.stringify(res.body))
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const invoice = res.body.invoice
    id = invoice.id
    t.match(invoice, { invoice_number: null, status: 'Draft', account: { id: account, name: 'Initech' }, contact: { id: contact, first_name: 'Peter' }, currency: 'EUR', due_date: '2026-12-20', subtotal: '173.97', discount_amount: '17.40', tax_amount: '14.41', shipping_amount: '7.50', total_amount: '178.48', amount_paid: '0.00', amount_due: '178.48', line_items_count: 3 })
    t.match(invoice.line_items[1], { product, product_name: 'Hour of work', name: '', subtotal: '100.00', discount_amount: '5.00', tax_rate: '5.50', tax_amount: '5.23', total: '100.23', order: 1 })
    t.same(invoice.tax_breakdown.map((c: Json) => c.tax_rate), ['0.00', '5.50', '20.00'])
    t.match((await ok('GET', '/api/invoices/')).totals, { count: 1, draft: '178.48', action_needed: 1 })
    t.equal((await ok('GET', `/api/invoices/products/${product}/`)).used_on, 1)
  })

  t.test('bad input: a 400 in the error shape, naming the field; links of another organization are not found', async (t) => {
    t.match((await call('POST', '/api/invoices/', A, { invoice_title: 'x' })).body, { error: true, errors: { account_id: [String], contact_id: [String] } })
    t.match((await call('POST', '/api/invoices/', A, draft({ account_id: globexAccount }))).body, { errors: { account_id: ['Account not found or does not belong to your organization'] } })
    t.match((await call('POST', '/api/invoices/', A, draft({ account_id: otherAccount }))).body, { errors: { contact_id: ['Contact does not belong to the selected account'] } })
    t.match((await call('POST', '/api/invoices/', A, draft({ line_items: [{ name: 'x', unit_price: '-1' }] }))).status, 400)
    t.match((await call('POST', '/api/invoices/', A, draft({ tax_rate: '101' }))).body, { errors: { tax_rate: [String] } })
    t.match((await call('POST', '/api/invoices/', A, draft({ surprise: 1 }))).body, { errors: { surprise: [String] } }, 'an unknown key is refused')
    t.match((await call('POST', '/api/invoices/', globex.admin.headers, draft({ account_id: globexAccount }))).body, { errors: { contact_id: [String] } })
  })

  t.test('GET one, PUT (partial); PATCH and DELETE answer 405 as the spec says', async (t) => {
    t.match(await ok('GET', `/api/invoices/${id}/`), { invoice: { id, invoice_title: 'November work', notes: 'Thanks' }, comments: [], attachments: [] })
    t.match(await ok('PUT', `/api/invoices/${id}/`, { invoice_title: 'November consulting', payment_terms: 'NET_15' }), { invoice: { invoice_title: 'November consulting', due_date: '2026-12-05', notes: 'Thanks', total_amount: '178.48' } })
    t.equal((await call('PATCH', `/api/invoices/${id}/`, A, { notes: 'x' })).status, 405)
    t.equal((await call('DELETE', `/api/invoices/${id}/`)).status, 405)
    t.equal((await call('GET', `/api/invoices/${id}/`, globex.admin.headers)).status, 404)
    t.equal((await call('GET', `/api/invoices/${id}/`, alice.headers)).status, 403, 'a member who neither made it nor is assigned')
  })

  t.test("a draft's lines: add, change, remove; the totals follow", async (t) => {
    const added = await call('POST', `/api/invoices/${id}/line-items/`, A, { name: 'Extra', quantity: '1', unit_price: '10' })
    t.equal(added.status, 201)
    const lineId = added.body.line_item.id
    t.match(await ok('GET', `/api/invoices/${id}/`), { invoice: { line_items_count: 4 } })
    t.match(await ok('PUT', `/api/invoices/${id}/line-items/${lineId}/`, { quantity: 2 }), { line_item: { quantity: '2.00', subtotal: '20.00' } })
    await ok('DELETE', `/api/invoices/${id}/line-items/${lineId}/`)
    t.match(await ok('GET', `/api/invoices/${id}/line-items/`), [{ name: 'Consulting' }, { product }, { name: 'Travel' }])
    t.match(await ok('GET', `/api/invoices/${id}/`), { invoice: { total_amount: '178.48' } })
  })

  t.test('send issues: a number per organization, gap-free, also under concurrent sends; money fixed from then on', async (t) => {
    const sent = await ok('POST', `/api/invoices/${id}/send/`, {})
    t.match(sent, { error: false, message: 'Invoice sent successfully', invoice: { invoice_number: 'INV-2026-00001', status: 'Sent' } })
    await app.afterReply.settled()
    t.match(mail.outbox.at(-1), { to: 'peter@initech.test', subject: 'Invoice INV-2026-00001', text: /Amount due: EUR 178\.48, by 2026-12-05\n.*\/api\/public\/invoice\// }, "the contact is mailed the number, what is due and the invoice's link")
    t.match(await ok('POST', `/api/invoices/${id}/send/`, {}), { invoice: { invoice_number: 'INV-2026-00001' } }, 'a re-send keeps the number')
    const drafts: Json[] = []
    for (let i = 0; i < 5; i++) drafts.push(await create())
    const numbers = (await Promise.all(drafts.map((d) => ok('POST', `/api/invoices/${d.id}/send/`, {})))).map((answer) => answer.invoice.invoice_number).sort()
    t.same(numbers, ['INV-2026-00002', 'INV-2026-00003', 'INV-2026-00004', 'INV-2026-00005', 'INV-2026-00006'], 'five concurrent issues take the next five numbers')
    const globexContact = (await ok('POST', '/api/contacts/', { first_name: 'Hank', account: globexAccount }, globex.admin.headers)).id
    const theirs = await create({ account_id: globexAccount, contact_id: globexContact }, globex.admin.headers)
    t.match(await ok('POST', `/api/invoices/${theirs.id}/send/`, {}, globex.admin.headers), { invoice: { invoice_number: 'INV-2026-00001' } }, "another organization's series starts at 1")
    t.match((await call('PUT', `/api/invoices/${id}/`, A, { tax_rate: '0' })).body, { error: true, errors: { tax_rate: [/issued/] } })
    t.match((await call('POST', `/api/invoices/${id}/line-items/`, A, { name: 'Late', unit_price: '1' })).body, { errors: { line_items: [/issued/] } })
    t.match(await ok('PUT', `/api/invoices/${id}/`, { notes: 'Due by wire' }), { invoice: { notes: 'Due by wire' } }, 'other fields may change')
    const empty = await create({ line_items: [] })
    t.match((await call('POST', `/api/invoices/${empty.id}/send/`, A, {})).body, { errors: { line_items: [String] } }, 'an invoice without lines is not issued')
  })

  t.test('payments: partly paid, paid, a reversal is an event and the status follows; a paid invoice is not edited', async (t) => {
    t.match((await call('POST', `/api/invoices/${id}/mark-paid/`, A, { amount: '500' })).body, { errors: { amount: ['Payment amount exceeds the amount due (178.48).'] } })
    t.match(await ok('POST', `/api/invoices/${id}/mark-paid/`, { amount: '78.48', reference_number: 'W-1' }), { invoice: { status: 'Partially_Paid', amount_paid: '78.48', amount_due: '100.00', payments: [{ amount: '78.48', reference_number: 'W-1', payment_method: 'OTHER' }] } })
    const second = await call('POST', `/api/invoices/${id}/payments/`, A, { amount: '100.00', payment_method: 'BANK_TRANSFER' })
    t.equal(second.status, 201)
    t.match(await ok('GET', `/api/invoices/${id}/`), { invoice: { status: 'Paid', amount_due: '0.00' } })
    t.match((await call('PUT', `/api/invoices/${id}/`, A, { notes: 'x' })).body, { errors: 'A paid invoice cannot be edited.' })
    t.match((await call('POST', `/api/invoices/${id}/cancel/`, A, {})).body, { errors: 'Cannot cancel a paid invoice' })
    await ok('DELETE', `/api/invoices/${id}/payments/${second.body.payment.id}/`)
    t.match(await ok('GET', `/api/invoices/${id}/`), { invoice: { status: 'Partially_Paid', amount_paid: '78.48', amount_due: '100.00' } }, 'no "Paid" with money due')
    t.match(await ok('GET', `/api/invoices/${id}/payments/`), [{ amount: '78.48', is_reversed: false }, { amount: '100.00', is_reversed: true }], 'the reversed payment stays on record')
    t.match((await ok('GET', '/api/invoices/?limit=1')).totals, { outstanding: '399.85' }, 'this one\'s 100.00 due and the five others\' 59.97 each')
  })

  t.test('overdue is read from the clock; the status filter and the header see it', async (t) => {
    const late = await create({ issue_date: '2026-10-01', payment_terms: 'NET_15' })
    await ok('POST', `/api/invoices/${late.id}/send/`, {})
    const list = await ok('GET', '/api/invoices/?status=Overdue')
    t.match(list, { count: 1, results: [{ id: late.id, status: 'Overdue', is_overdue: true, due_date: '2026-10-16' }] })
    t.match(list.totals, { overdue: late.total_amount })
    t.same((await ok('GET', `/api/invoices/?account=${account}&sort=-total_amount&limit=100`)).results.map((r: Json) => r.total_amount).slice(0, 2), ['178.48', '59.97'])
  })

  t.test('cancel, duplicate', async (t) => {
    const other = await create()
    t.match(await ok('POST', `/api/invoices/${other.id}/cancel/`, {}), { invoice: { status: 'Cancelled' } })
    t.match((await call('POST', `/api/invoices/${other.id}/cancel/`, A, {})).body, { errors: 'Invoice is already cancelled' })
    t.match((await call('POST', `/api/invoices/${other.id}/mark-paid/`, A, {})).body, { errors: { non_field_errors: [/cancelled/] } })
    const copy = await call('POST', `/api/invoices/${id}/duplicate/`, A, {})
    t.equal(copy.status, 201)
    t.match(copy.body.invoice, { invoice_title: 'Copy of November consulting', status: 'Draft', invoice_number: null, total_amount: '178.48', amount_paid: '0.00', line_items_count: 3 })
    t.match((await ok('GET', `/api/accounts/${account}/`)).invoices.find((i: Json) => i.id === copy.body.invoice.id), { account_name: 'Initech', status: 'Draft' }, "the account's page lists its invoices")
  })

  t.test('comments and attachments at the original paths', async (t) => {
    const comment = await call('POST', `/api/invoices/${id}/comments/`, A, { comment: 'Chased by phone' })
    t.equal(comment.status, 201)
    t.match(await ok('PUT', `/api/invoices/comments/${comment.body.comment.id}/`, { comment: 'Chased twice' }), { comment: { comment: 'Chased twice' } })
    const form = await multipartBody({ file: { name: 'remittance.txt', type: 'text/plain', content: 'paid' } })
    const uploaded = await app.inject({ method: 'POST', url: `/api/invoices/${id}/attachments/`, headers: { ...A, 'content-type': form.contentType }, payload: form.payload })
    t.equal(uploaded.statusCode, 201, uploaded.body)
    const attachment = uploaded.json().attachment
    t.equal((await app.inject({ method: 'GET', url: attachment.download_url, headers: A })).body, 'paid')
    t.match(await ok('GET', `/api/invoices/${id}/`), { comments: [{ comment: 'Chased twice' }], attachments: [{ file_name: 'remittance.txt' }] })
    t.equal((await call('DELETE', `/api/invoices/comments/${comment.body.comment.id}/`, globex.admin.headers)).status, 404)
    await ok('DELETE', `/api/invoices/comments/${comment.body.comment.id}/`)
    await ok('DELETE', `/api/invoices/attachments/${attachment.id}/`)
    t.match(await ok('GET', `/api/invoices/${id}/`), { comments: [], attachments: [] })
  })

  t.test("a member sees their own and assigned invoices, in the rows and the totals; another organization's list is untouched", async (t) => {
    const own = await create({ invoice_title: 'Alice own' }, alice.headers)
    t.same((await ok('GET', '/api/invoices/', undefined, alice.headers)).results.map((r: Json) => r.id), [own.id])
    await ok('PUT', `/api/invoices/${id}/`, { assigned_to: [alice.profileId] })
    const listed = await ok('GET', '/api/invoices/?limit=100', undefined, alice.headers)
    t.same(listed.results.map((r: Json) => r.id).sort(), [own.id, id].sort())
    t.equal(listed.totals.count, 2)
    t.match(await ok('GET', '/api/invoices/', undefined, globex.admin.headers), { count: 1 })
  })

  t.test('public links: no sign-in; the first opening marks the invoice Viewed; a forged, revoked or draft link is not found', async (t) => {
    const draftOne = await create()
    t.equal(draftOne.public_url, null, 'a draft has no link')
    const sent = (await ok('POST', `/api/invoices/${draftOne.id}/send/`, {})).invoice
    const url = sent.public_url as string
    t.match(url, /^\/api\/public\/invoice\/[\w.-]+\/$/)
    const opened = await app.inject({ method: 'GET', url })
    t.equal(opened.statusCode, 200, opened.body)
    t.match(opened.json(), { invoice: { invoice_number: sent.invoice_number, status: 'Viewed', total_amount: sent.total_amount, line_items: [{ name: 'Consulting' }] } })
    t.notOk('assigned_to' in opened.json().invoice, 'no internal field')
    t.match(await ok('GET', `/api/invoices/${draftOne.id}/`), { invoice: { status: 'Viewed' } })
    const [id_, day, signature] = url.split('/')[4]!.split('.')
    t.equal((await app.inject({ method: 'GET', url: `/api/public/invoice/${id_}.${Number(day) + 10000}.${signature}/` })).statusCode, 404, 'a forged expiry')
    t.equal((await app.inject({ method: 'GET', url: url.replace('/invoice/', '/estimate/') })).statusCode, 404, 'a link names one kind of document')
    await ok('PUT', `/api/invoices/${draftOne.id}/`, { public_link_enabled: false })
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 404, 'switched off: every link to it is revoked')
  })

  t.test('estimates: numbered at creation, sent, converted once in one decision (also under concurrent conversions)', async (t) => {
    const body = { title: 'Website quote', account_id: account, contact_id: contact, expiry_date: '2026-12-31', tax_rate: '10', line_items: [{ name: 'Design', quantity: 2, unit_price: '400' }] }
    const made = await call('POST', '/api/invoices/estimates/', A, body)
    t.equal(made.status, 201, JSON.stringify(made.body))
    const estimate = made.body.estimate
    t.match(estimate, { estimate_number: 'EST-2026-00001', status: 'Draft', total_amount: '880.00', account_name: 'Initech', contact_name: 'Peter Gibbons', converted_to_invoice: null })
    t.match((await call('POST', `/api/invoices/estimates/${estimate.id}/convert/`, A, {})).body, { errors: 'A draft estimate cannot be converted to an invoice.' })
    t.match(await ok('POST', `/api/invoices/estimates/${estimate.id}/send/`, {}), { estimate: { status: 'Sent' } })
    const converted = await call('POST', `/api/invoices/estimates/${estimate.id}/convert/`, A, {})
    t.equal(converted.status, 201)
    t.match(converted.body.invoice, { status: 'Draft', invoice_title: 'Website quote', total_amount: '880.00', line_items: [{ name: 'Design', quantity: '2.00' }] })
    t.match(await ok('GET', `/api/invoices/estimates/${estimate.id}/`), { estimate: { status: 'Accepted', converted_to_invoice: { id: converted.body.invoice.id, invoice_number: null } } })
    t.match((await call('POST', `/api/invoices/estimates/${estimate.id}/convert/`, A, {})).body, { errors: 'Estimate already converted to invoice' })
    t.equal((await call('PUT', `/api/invoices/estimates/${estimate.id}/`, A, { title: 'x' })).status, 400, 'a converted estimate no longer changes')
    const other = (await ok('POST', '/api/invoices/estimates/', body)).estimate
    t.equal(other.estimate_number, 'EST-2026-00002')
    await ok('POST', `/api/invoices/estimates/${other.id}/send/`, {})
    const racers = await Promise.all([1, 2, 3].map(() => call('POST', `/api/invoices/estimates/${other.id}/convert/`, A, {})))
    t.same(racers.map((r) => r.status).sort(), [201, 400, 400], 'concurrent conversions: one invoice')
    t.match(await ok('GET', '/api/invoices/estimates/?status=Accepted'), { count: 2 })
    await ok('DELETE', `/api/invoices/estimates/${other.id}/`)
    t.equal((await call('GET', `/api/invoices/estimates/${other.id}/`)).status, 404)
    t.equal((await call('GET', `/api/invoices/estimates/${estimate.id}/`, alice.headers)).status, 403)
    const third = (await ok('POST', '/api/invoices/estimates/', body)).estimate
    const link = (await ok('POST', `/api/invoices/estimates/${third.id}/send/`, {})).estimate.public_url as string
    t.match((await app.inject({ method: 'GET', url: link })).json(), { estimate: { status: 'Viewed', title: 'Website quote', total_amount: '880.00' } })
    const accepted = await app.inject({ method: 'POST', url: `${link}accept/`, payload: { name: 'Peter Gibbons', email: 'peter@initech.test' }, headers: { 'user-agent': 'TestBrowser/1' } })
    t.equal(accepted.statusCode, 200, accepted.body)
    t.equal((await app.inject({ method: 'POST', url: `${link}decline/`, payload: { name: 'Peter', email: 'peter@initech.test' } })).statusCode, 400, 'answered once')
    t.match(await ok('GET', `/api/invoices/estimates/${third.id}/`), { estimate: { status: 'Accepted' } })
    const events = await store.readStream(`estimate-${third.id}`)
    t.match(events.find((e) => e.type === 'EstimateAccepted')?.data, { name: 'Peter Gibbons', email: 'peter@initech.test', user_agent: 'TestBrowser/1', ip: String }, 'who accepted, from where')
  })

  t.test('the read models rebuilt from the log are identical; the totals kept per group are what the rows sum', async (t) => {
    const grouped = sql`SELECT org_id, status, CASE WHEN status IN ('Sent', 'Viewed', 'Partially_Paid') THEN due_date END, paid_at::date, count(*), sum(amount_due), sum(total_amount), sum(amount_paid) FROM invoices GROUP BY 1, 2, 3, 4`
    const { rows } = await sql`(${grouped}) EXCEPT SELECT * FROM invoice_totals UNION ALL (SELECT * FROM invoice_totals WHERE n <> 0 EXCEPT ${grouped})`.execute(database.db)
    t.same(rows, [], 'after payments, a reversal, a cancellation and views')
    await rebuildEqualsLive(t, { db: database.db, store }, [invoicesProjector, estimatesProjector, productsProjector], { oneByOne: true })
  })
})
