import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import { formatMoney } from '../../src/http/invoices/pdf/pdf-model.ts'
import { printable } from '../../src/http/invoices/pdf/render-pdf.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { PNG_1X1, multipartBody } from '../helpers/multipart.ts'
import { silentLogger } from '../helpers/runner.ts'

type Json = Record<string, any>
const run = promisify(execFile)
const pdftotext = await run('pdftotext', ['-v']).then(() => true, () => false)

t.test('money is grouped on its decimal string; text is narrowed to what the standard fonts draw', async (t) => {
  t.equal(formatMoney('EUR', '1234567.05'), 'EUR 1,234,567.05')
  t.equal(formatMoney('USD', '-17.40'), '-USD 17.40')
  t.equal(formatMoney('JPY', '999'), 'JPY 999')
  t.equal(printable('Łódź Zürich — 5 € 日本'), '?ódz Zürich — 5 € ??', 'Latin-1 and WinAnsi stay; accents go where that makes a letter drawable')
})

t.test('invoice and estimate PDFs, read back with pdftotext', { skip: pdftotext ? false : "pdftotext is missing: install Debian's poppler-utils" }, async (t) => {
  const mail = logTransport(silentLogger)
  const { app, database } = await buildTestApp(t, { mail })
  const folder = await mkdtemp(join(tmpdir(), 'invoice-pdf-'))
  t.teardown(() => rm(folder, { recursive: true, force: true }))
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const A = acme.admin.headers
  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<Json> => {
    const res = await app.inject({ method, url, headers: A, ...(payload && { payload }) })
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  /** The PDF at `url` (signed in as `headers`, or through a public link), its status, and its text laid out as pdftotext reads it. */
  const pdf = async (url: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'GET', url, headers })
    return { status: res.statusCode, type: res.headers['content-type'], disposition: res.headers['content-disposition'], bytes: res.rawPayload, text: res.statusCode === 200 ? await textOf(res.rawPayload) : '' }
  }
  let files = 0
  const textOf = async (bytes: Buffer) => {
    const file = join(folder, `${++files}.pdf`)
    await writeFile(file, bytes)
    return (await run('pdftotext', ['-layout', file, '-'])).stdout
  }
  /** A row of the PDF's text: the cells in order, with any spacing between them. */
  const row = (...cells: string[]) => new RegExp(cells.map((cell) => cell.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'))

  await ok('PATCH', '/api/org/settings/', { company_name: 'Acme Trading GmbH', address_line: 'Hauptstraße 1', city: 'Berlin', postcode: '10115', country: 'DE', tax_id: 'DE123456789' })
  const houseStyle = (await ok('POST', '/api/invoices/templates/', { name: 'House style', primary_color: '#aa3300', is_default: true, footer_text: 'Bank: IBAN DE00 1234 5678', default_terms: 'Payable by bank transfer.' })).template.id as string
  const account = (await ok('POST', '/api/accounts/', { name: 'Initech' })).id as string
  const contact = (await ok('POST', '/api/contacts/', { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', account })).id as string
  const created = await ok('POST', '/api/invoices/', {
    account_id: account, contact_id: contact, invoice_title: 'November work', client_name: 'Initech Ltd', client_city: 'Austin', currency: 'EUR', issue_date: '2026-11-20', payment_terms: 'NET_15',
    line_items: [
      { name: 'Consulting', description: 'Senior, on site', quantity: '3', unit_price: '19.99', discount_type: 'PERCENTAGE', discount_value: '10' },
      { name: 'Licence', quantity: 1, unit_price: '100', discount_type: 'FIXED', discount_value: 5, tax_rate: '5.5' },
      { name: 'Travel', quantity: '2.5', unit_price: 10, tax_rate: 0 },
      { name: 'Big order', quantity: '1000', unit_price: '1234.56', tax_rate: '5.5' },
    ],
    discount_type: 'PERCENTAGE', discount_value: 10, tax_rate: 20, shipping_amount: '7.50', notes: 'Thank you for your business.',
  })
  const id = created.invoice.id as string
  const url = `/api/invoices/${id}/pdf/`

  t.test('a draft prints as a draft: no number, nothing due yet', async (t) => {
    const draft = await pdf(url, A)
    t.equal(draft.status, 200)
    t.equal(draft.type, 'application/pdf')
    t.match(draft.disposition, /^attachment; filename="Invoice_draft-[0-9a-f]{8}\.pdf"$/)
    t.match(draft.text, /INVOICE/)
    t.match(draft.text, /Payment status: Draft: not issued, no number yet/)
  })

  t.test('an issued invoice: seller, client, number, lines, tax per category, totals, payment status; mailed as an attachment', async (t) => {
    const sent = (await ok('POST', `/api/invoices/${id}/send/`, {})).invoice
    t.equal(sent.invoice_number, 'INV-2026-00001')
    // The read model's figures, computed in money.ts (EN 16931's order) and tested there; the PDF prints them as they are.
    t.match(sent, { subtotal: '1234733.97', discount_amount: '123473.40', tax_amount: '61125.13', shipping_amount: '7.50', total_amount: '1172393.20', amount_due: '1172393.20' })
    // The discount's 123473.40 shared by the categories' nets (25.00, 1234655.00, 53.97), largest remainder first: 2.50, 123465.50, 5.40.
    t.same(sent.tax_breakdown, [
      { tax_rate: '0.00', taxable_amount: '22.50', tax_amount: '0.00' },
      { tax_rate: '5.50', taxable_amount: '1111189.50', tax_amount: '61115.42' },
      { tax_rate: '20.00', taxable_amount: '48.57', tax_amount: '9.71' },
    ], 'three categories, each taxed from its own base')
    const issued = await pdf(url, A)
    t.match(issued.disposition, /filename="Invoice_INV-2026-00001\.pdf"/)
    const text = issued.text
    for (const seller of ['Acme Trading GmbH', 'Hauptstraße 1', 'Berlin 10115', 'Tax ID: DE123456789']) t.match(text, seller, `the seller: ${seller}`)
    t.match(text, row('Initech Ltd'))
    t.match(text, 'Austin')
    t.match(text, row('Invoice #', 'INV-2026-00001'))
    t.match(text, row('Due date', '2026-12-05'))
    t.match(text, row('Terms', 'Net 15'))
    t.match(text, row('Consulting', '3', 'EUR 19.99', 'EUR 6.00', '20%', 'EUR 53.97'), 'a line: quantity, unit price, its discount, its rate, its net')
    t.match(text, 'Senior, on site', "a line's description")
    t.match(text, row('Licence', '1', 'EUR 100.00', 'EUR 5.00', '5.5%', 'EUR 95.00'))
    t.match(text, row('Travel', '2.5', 'EUR 10.00', '0%', 'EUR 25.00'))
    t.match(text, row('Big order', '1000', 'EUR 1,234.56', '5.5%', 'EUR 1,234,560.00'))
    for (const c of sent.tax_breakdown as Json[]) t.match(text, row(`${c.tax_rate.replace(/\.?0+$/, '')}%`, formatMoney('EUR', c.taxable_amount), formatMoney('EUR', c.tax_amount)), `the ${c.tax_rate}% category`)
    t.match(text, row('Subtotal', 'EUR 1,234,733.97'))
    t.match(text, row('Discount', '-EUR 123,473.40'))
    t.match(text, row('Tax', 'EUR 61,125.13'))
    t.match(text, row('Shipping', 'EUR 7.50'))
    t.match(text, row('Total', 'EUR 1,172,393.20'))
    t.match(text, row('Amount due', 'EUR 1,172,393.20'))
    t.match(text, 'Payment status: Unpaid: EUR 1,172,393.20 due by 2026-12-05')
    t.match(text, 'Thank you for your business.', "the invoice's notes")
    t.match(text, 'Payable by bank transfer.', "the template's default terms, the invoice having none")
    t.match(text, 'Bank: IBAN DE00 1234 5678', "the template's footer")

    await app.afterReply.settled()
    const message = mail.outbox.at(-1)!
    t.match(message, { to: 'peter@initech.test', subject: 'Invoice INV-2026-00001', text: /Amount due: EUR 1172393\.20, by 2026-12-05\n.*\/api\/public\/invoice\/.*\nThe invoice is attached as a PDF\./ })
    t.match(message.attachments, [{ filename: 'Invoice_INV-2026-00001.pdf', contentType: 'application/pdf' }])
    t.equal(await textOf(message.attachments![0]!.content), text, 'the attachment is the document the route answers')
  })

  t.test('the same facts give the same bytes; the creation date is the last event\'s time', async (t) => {
    const [first, second] = [await pdf(url, A), await pdf(url, A)]
    t.ok(first.bytes.equals(second.bytes), 'byte for byte')
    const file = join(folder, 'dated.pdf')
    await writeFile(file, first.bytes)
    t.match((await run('pdfinfo', ['-isodates', file])).stdout, /CreationDate:\s+2026-11-22T09:00:00Z/, "the fixed clock's time, when the invoice was last written")
  })

  t.test('partly paid, then paid: the status and the payments follow', async (t) => {
    await ok('POST', `/api/invoices/${id}/mark-paid/`, { amount: '1000000.00', payment_method: 'BANK_TRANSFER', payment_date: '2026-11-21', reference_number: 'INTERNAL-REF-7' })
    let text = (await pdf(url, A)).text
    t.match(text, 'Payment status: Partially paid: EUR 1,000,000.00 paid, EUR 172,393.20 due')
    t.match(text, row('2026-11-21', 'Bank transfer', 'EUR 1,000,000.00'))
    t.notMatch(text, 'INTERNAL-REF-7', "a payment's reference stays inside, as on the public link")
    t.match(text, row('Amount paid', 'EUR 1,000,000.00'))
    t.match(text, row('Amount due', 'EUR 172,393.20'))
    await ok('POST', `/api/invoices/${id}/mark-paid/`, {})
    text = (await pdf(url, A)).text
    t.match(text, 'Payment status: Paid in full (EUR 1,172,393.20)')
    t.match(text, row('Amount due', 'EUR 0.00'))
  })

  t.test('who may have it: as the detail', async (t) => {
    t.equal((await pdf(url)).status, 401)
    t.equal((await pdf(url, globex.admin.headers)).status, 404, 'another organization')
    t.equal((await pdf(url, alice.headers)).status, 403, 'a member who neither made it nor is assigned')
    t.equal((await pdf(`/api/invoices/${globex.orgId}/pdf/`, A)).status, 404)
  })

  t.test('through the public link: the same token checks', async (t) => {
    const link = (await ok('GET', `/api/invoices/${id}/`)).invoice.public_url as string
    const opened = await pdf(`${link}pdf/`)
    t.equal(opened.status, 200)
    t.match(opened.text, row('Invoice #', 'INV-2026-00001'))
    const [docId, day, signature] = link.split('/')[4]!.split('.')
    t.equal((await pdf(`/api/public/invoice/${docId}.${Number(day) + 10000}.${signature}/pdf/`)).status, 404, 'a forged expiry')
    t.equal((await pdf(`${link.replace('/invoice/', '/estimate/')}pdf/`)).status, 404, 'a link names one kind of document')
  })

  t.test('an estimate: its PDF, mailed when sent, and through its link', async (t) => {
    const estimate = (await ok('POST', '/api/invoices/estimates/', { title: 'Website quote', account_id: account, contact_id: contact, expiry_date: '2026-12-31', tax_rate: '10', line_items: [{ name: 'Design', quantity: 2, unit_price: '400' }] })).estimate
    const eurl = `/api/invoices/estimates/${estimate.id}/pdf/`
    const sent = (await ok('POST', `/api/invoices/estimates/${estimate.id}/send/`, {})).estimate
    const text = (await pdf(eurl, A)).text
    t.match(text, /ESTIMATE/)
    t.match(text, row('Estimate #', sent.estimate_number))
    t.match(text, row('Valid until', '2026-12-31'))
    t.match(text, row('Design', '2', 'USD 400.00', '10%', 'USD 800.00'))
    t.match(text, row('10%', 'USD 800.00', 'USD 80.00'))
    t.match(text, row('Total', 'USD 880.00'))
    t.match(text, 'Status: Sent')
    await app.afterReply.settled()
    t.match(mail.outbox.at(-1), { to: 'peter@initech.test', subject: `Estimate ${sent.estimate_number}`, text: /Total: USD 880\.00, valid until 2026-12-31/, attachments: [{ filename: `Estimate_${sent.estimate_number}.pdf`, contentType: 'application/pdf' }] })
    t.equal((await pdf(eurl, globex.admin.headers)).status, 404)
    const opened = await pdf(`${sent.public_url}pdf/`)
    t.equal(opened.status, 200)
    t.match(opened.text, 'Status: Viewed')
    t.match((await ok('GET', `/api/invoices/estimates/${estimate.id}/`)).estimate, { status: 'Viewed' }, 'opening the PDF through the link is opening the link')
  })

  t.test("the default template's logo is drawn above the seller when a PDF can draw it (PNG, JPEG); a GIF is left out, not the PDF", async (t) => {
    const images = async (bytes: Buffer) => {
      const file = join(folder, `${++files}.pdf`)
      await writeFile(file, bytes)
      // pdfimages' list: two header lines, then one line per image (page, number, type, width, height, …); a PNG's alpha is an `smask` of its own.
      const rows = (await run('pdfimages', ['-list', file])).stdout.trim().split('\n').slice(2).map((line) => line.trim().split(/\s+/))
      return rows.filter((cells) => cells[2] === 'image').map((cells) => `${cells[3]}x${cells[4]}`)
    }
    t.same(await images((await pdf(url, A)).bytes), [], 'no logo, no image')
    const setLogo = async (name: string, content: Uint8Array<ArrayBuffer>) => {
      const form = await multipartBody({ logo: { name, type: 'application/octet-stream', content } })
      const res = await app.inject({ method: 'PUT', url: `/api/invoices/templates/${houseStyle}/`, headers: { ...A, 'content-type': form.contentType }, payload: form.payload })
      t.equal(res.statusCode, 200, res.body)
    }
    await setLogo('logo.png', PNG_1X1)
    const drawn = await pdf(url, A)
    t.same(await images(drawn.bytes), ['1x1'], 'the 1×1 PNG, once')
    t.match(drawn.text, 'Acme Trading GmbH', 'the seller still printed, below it')
    t.same(await images((await pdf(`/api/invoices/estimates/${(await ok('POST', '/api/invoices/estimates/', { title: 'With a logo', account_id: account, contact_id: contact, line_items: [{ name: 'Design', quantity: 1, unit_price: '1' }] })).estimate.id}/pdf/`, A)).bytes), ['1x1'], 'on estimates too')
    await setLogo('logo.gif', Uint8Array.from(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')))
    const gif = await pdf(url, A)
    t.equal(gif.status, 200)
    t.same(await images(gif.bytes), [], 'a GIF logo: the PDF without it')
  })
})
