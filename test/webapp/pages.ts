import type { FastifyInstance } from 'fastify'
import { PNG_1X1, multipartBody } from '../helpers/multipart.ts'

/** A page to visit, and text its HTML must hold to count as rendered with data (a seeded record, a name …). */
export type BuiltPage = { path: string; shows?: string }

/**
 * The web app's pages (src/routes/(app)/…) whose API we serve, checked by pages.webapp.ts. `{key}`
 * is the id of a record seeded below. A page moves here from NOT_OURS_YET when its module lands.
 */
export const BUILT_PAGES: readonly BuiltPage[] = [
  { path: '/', shows: 'Seeded deal' },
  { path: '/leads', shows: 'Seeded' },
  { path: '/leads/new' },
  { path: '/leads/{lead}', shows: 'seeded.lead@example.test' },
  { path: '/leads/{lead}/edit', shows: 'seeded.lead@example.test' },
  { path: '/accounts', shows: 'Seeded Account Ltd' },
  { path: '/accounts/new' },
  { path: '/accounts/{account}', shows: 'Seeded Account Ltd' },
  { path: '/accounts/{account}/edit', shows: 'Seeded Account Ltd' },
  { path: '/contacts', shows: 'Seeded' },
  { path: '/contacts/new', shows: 'Seeded Account Ltd' },
  { path: '/contacts/{contact}', shows: 'Seeded' },
  { path: '/contacts/{contact}/edit', shows: 'Seeded' },
  { path: '/pipeline', shows: 'Seeded deal' },
  { path: '/pipeline?view=board', shows: 'Seeded deal' },
  { path: '/pipeline/new', shows: 'Seeded Account Ltd' },
  { path: '/pipeline/{deal}', shows: 'Seeded deal' },
  { path: '/pipeline/{deal}/edit', shows: 'Seeded deal' },
  { path: '/goals', shows: 'Seeded goal' },
  { path: '/goals/new' },
  { path: '/goals/{goal}/edit', shows: 'Seeded goal' },
  { path: '/solutions', shows: 'Seeded solution' },
  { path: '/solutions/new' },
  { path: '/solutions/{solution}', shows: 'Seeded solution' },
  { path: '/solutions/{solution}/edit', shows: 'Seeded solution' },
  { path: '/team', shows: 'member@acmewebapp.test' },
  { path: '/profile', shows: 'admin@acmewebapp.test' },
  { path: '/profile/tokens' },
  { path: '/settings/tags', shows: 'Seeded tag' },
  { path: '/settings/custom-fields' },
  { path: '/settings/business-hours', shows: 'Seeded holiday' },
  { path: '/settings/macros', shows: 'Seeded macro' },
  { path: '/timesheet', shows: 'Seeded ticket' },
  { path: '/settings/api-tokens' },
  { path: '/settings/organization', shows: 'Acme Webapp' },
  { path: '/settings/organization/edit', shows: 'Acme Webapp' },
  { path: '/tasks/board', shows: 'Seeded card' },
  { path: '/tasks', shows: 'Seeded task' },
  { path: '/tasks/new' },
  { path: '/tasks/{task}', shows: 'Seeded task' },
  { path: '/tasks/{task}/edit', shows: 'Seeded task' },
  { path: '/tasks/calendar', shows: 'Seeded task' },
  { path: '/notifications', shows: 'Task for the admin' },
  { path: '/documents', shows: 'Seeded document' },
  { path: '/documents/new' },
  // A new organization's page: it lists the sample-data packs (GET /api/packs/).
  { path: '/org/new' },
  { path: '/documents/{document}/edit', shows: 'Seeded document' },
  // The list and the detail show an invoice's number, not its title: the seeded one is sent, so it has one.
  { path: '/invoices', shows: '{invoice_number}' },
  { path: '/invoices/new', shows: 'Seeded Account Ltd' },
  { path: '/invoices/{invoice}', shows: 'Seeded line' },
  { path: '/invoices/estimates', shows: 'Seeded estimate' },
  { path: '/invoices/products', shows: 'Seeded product' },
  { path: '/invoices/products/new' },
  { path: '/invoices/products/{product}/edit', shows: 'Seeded product' },
  { path: '/invoices/recurring', shows: 'Seeded schedule' },
  { path: '/invoices/recurring/new', shows: 'Seeded Account Ltd' },
  // The dashboard's invoiced total: the seeded invoice's 2 × 99.00, as the app formats a whole amount.
  { path: '/invoices/reports', shows: '$198' },
  { path: '/invoices/templates', shows: 'Seeded template' },
  { path: '/invoices/templates/new' },
  { path: '/invoices/templates/{template}/edit', shows: 'Seeded template' },
  { path: '/tickets', shows: 'Seeded ticket' },
  { path: '/tickets/new', shows: 'Seeded Account Ltd' },
  { path: '/tickets/{ticket}', shows: 'Seeded ticket' },
  { path: '/tickets/{ticket}/edit', shows: 'Seeded ticket' },
  { path: '/tickets/analytics' },
  { path: '/tickets/approvals' },
  { path: '/settings' },
  { path: '/settings/escalation' },
  { path: '/settings/inbound-email' },
  { path: '/settings/reopen' },
  { path: '/settings/routing' },
  { path: '/settings/ticket-approvals' },
]

/** A record created or edited through one of the app's forms: the fields to fill, and the page that must then show it. */
export type FormCase = {
  form: string
  /** A button to press first, where the form opens in a panel (settings pages). */
  open?: string
  /** Fields by name, or by CSS selector where the form's inputs are bound rather than named (the invoice builder). */
  fill: Record<string, string>
  /** Selects by name whose first choice to pick. */
  select?: string[]
  /** File inputs by name, and the file each uploads (a name, a type and its text or bytes). */
  files?: Record<string, { name: string; mimeType: string; content: string | Uint8Array }>
  /** Selects by CSS selector, in order, and the option value to pick (`{key}`: a seeded record's id). */
  choose?: Record<string, string>
  /** The submit button's label where the page holds several forms; else the last submit button. */
  submit?: string
  list: string
  shows: string
}

export const FORMS: readonly FormCase[] = [
  { form: '/accounts/new', fill: { name: 'Form Account GmbH' }, list: '/accounts', shows: 'Form Account GmbH' },
  { form: '/contacts/new', fill: { first_name: 'Formy', last_name: 'Contactson' }, list: '/contacts', shows: 'Contactson' },
  { form: '/leads/new', fill: { first_name: 'Formy', last_name: 'Leadsworth', job_title: 'Buyer', email: 'formy@example.test' }, list: '/leads', shows: 'Leadsworth' },
  { form: '/pipeline/new', fill: { name: 'Form deal', amount: '2500', closed_on: '2026-12-31' }, select: ['account'], list: '/pipeline', shows: 'Form deal' },
  // Issue 34: a document uploaded through the app's own form (multipart, through its server to ours).
  { form: '/documents/new', fill: { title: 'Form document' }, files: { document_file: { name: 'form-notes.txt', mimeType: 'text/plain', content: 'Uploaded through the web app.' } }, list: '/documents', shows: 'Form document' },
  { form: '/solutions/new', fill: { title: 'Form solution', description: 'Made in the form, with the steps that resolve it.' }, list: '/solutions', shows: 'Form solution' },
  { form: '/goals/new', fill: { name: 'Form goal', target_value: '5000', period_start: '2026-11-01', period_end: '2026-11-30' }, list: '/goals', shows: 'Form goal' },
  { form: '/accounts/{account}/edit', fill: { name: 'Seeded Account Renamed' }, list: '/accounts/{account}', shows: 'Seeded Account Renamed' },
  { form: '/contacts/{contact}/edit', fill: { last_name: 'Recontacted' }, list: '/contacts/{contact}', shows: 'Recontacted' },
  { form: '/leads/{lead}/edit', fill: { last_name: 'Releaded', job_title: 'Head of buying' }, list: '/leads/{lead}', shows: 'Releaded' },
  { form: '/pipeline/{deal}/edit', fill: { name: 'Seeded deal, edited', amount: '1300' }, list: '/pipeline/{deal}', shows: 'Seeded deal, edited' },
  { form: '/solutions/{solution}/edit', fill: { title: 'Seeded solution, edited' }, list: '/solutions/{solution}', shows: 'Seeded solution, edited' },
  { form: '/goals/{goal}/edit', fill: { name: 'Seeded goal, edited' }, list: '/goals', shows: 'Seeded goal, edited' },
  { form: '/settings/organization/edit', fill: { name: 'Acme Webapp Renamed' }, submit: 'Save changes', list: '/settings/organization', shows: 'Acme Webapp Renamed' },
  { form: '/profile', open: 'Edit details', fill: { name: 'Ada Admin' }, submit: 'Save', list: '/profile', shows: 'Ada Admin' },
  { form: '/settings/tags', open: 'New tag', fill: { name: 'Form tag' }, submit: 'Create', list: '/settings/tags', shows: 'Form tag' },
  { form: '/settings/custom-fields', open: 'New field', fill: { label: 'Contract length', key: 'contract_length' }, submit: 'Add field', list: '/settings/custom-fields', shows: 'Contract length' },
  { form: '/tasks/new', fill: { title: 'Form task', due_date: '2026-12-15', description: 'Made in the form' }, list: '/tasks', shows: 'Form task' },
  { form: '/tasks/{task}/edit', fill: { title: 'Seeded task, edited' }, list: '/tasks/{task}', shows: 'Seeded task, edited' },
  { form: '/tickets/new', fill: { name: 'Form ticket', description: 'Raised in the form' }, list: '/tickets', shows: 'Form ticket' },
  { form: '/tickets/{ticket}/edit', fill: { name: 'Seeded ticket, edited' }, list: '/tickets/{ticket}', shows: 'Seeded ticket, edited' },
  { form: '/invoices/products/new', fill: { name: 'Form product', price: '49.50' }, list: '/invoices/products', shows: 'Form product' },
  { form: '/invoices/products/{product}/edit', fill: { name: 'Seeded product, edited' }, list: '/invoices/products', shows: 'Seeded product, edited' },
  // Both with a logo: the app then sends the whole form as multipart (its fields as form fields).
  { form: '/invoices/templates/new', fill: { name: 'Form template' }, files: { logo: { name: 'form-logo.png', mimeType: 'image/png', content: PNG_1X1 } }, submit: 'Create template', list: '/invoices/templates', shows: 'Form template' },
  { form: '/invoices/templates/{template}/edit', fill: { name: 'Seeded template, edited', footer_text: 'Edited footer' }, files: { logo: { name: 'edit-logo.png', mimeType: 'image/png', content: PNG_1X1 } }, submit: 'Save changes', list: '/invoices/templates', shows: 'Seeded template, edited' },
  {
    form: '/invoices/recurring/new',
    choose: { 'label.f:has(> span:text-is("Account")) select': '{account}', 'label.f:has(> span:text-is("Contact")) select': '{contact}' },
    fill: { 'input[placeholder="What this schedule is for"]': 'Form schedule', 'input.line-name': 'Form schedule line', 'label.line-n:has(> span:text-is("Unit price")) input': '120' },
    submit: 'Save schedule',
    list: '/invoices/recurring',
    shows: 'Form schedule',
  },
  {
    // The builder's contact list follows the account picked, so the account goes first.
    form: '/invoices/new',
    choose: { 'label.f:has(> span:text-is("Account")) select': '{account}', 'label.f:has(> span:text-is("Contact")) select': '{contact}' },
    fill: { 'input[placeholder="What this invoice covers"]': 'Form invoice', 'input.line-name': 'Form line', 'label.line-n:has(> span:text-is("Unit price")) input': '250.75' },
    submit: 'Save as draft',
    // The list shows a draft by its account and total (it has no number yet), not its title.
    list: '/invoices',
    shows: '$250.75',
  },
]

/** Pages of modules not built yet: not visited. */
export const NOT_OURS_YET = [
  '/help', // /api/support/: the in-app help desk to the vendor is not built
  '/help/new',
] as const

export type Seeded = {
  lead: string; account: string; contact: string; deal: string; goal: string; solution: string; board: string; task: string; document: string
  product: string; invoice: string; invoice_number: string; estimate: string; schedule: string; template: string; ticket: string
}

/** One record per detail page, created through our API as the admin. */
export async function seedRecords(app: FastifyInstance, headers: Record<string, string>, member: { profileId: string; headers: Record<string, string> }, adminProfileId: string): Promise<Seeded> {
  const memberProfileId = member.profileId
  /** The new record's id: at the top of the answer, or in the record it wraps (`{ invoice: {…} }`). */
  const create = async (url: string, payload: Record<string, unknown>, as = headers, wrappedIn?: string): Promise<string> => {
    const res = await app.inject({ method: 'POST', url, headers: as, payload })
    if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`seeding ${url}: ${res.statusCode} ${res.body}`)
    const body = res.json()
    return (wrappedIn ? body[wrappedIn] : body).id as string
  }
  const account = await create('/api/accounts/', { name: 'Seeded Account Ltd' })
  const contact = await create('/api/contacts/', { first_name: 'Seeded', last_name: 'Contact', account })
  const lead = await create('/api/leads/', { first_name: 'Seeded', last_name: 'Lead', title: 'Seeded lead', email: 'seeded.lead@example.test' })
  // Closing in three days puts it on the landing page's "later this week".
  const closedOn = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
  const deal = await create('/api/opportunities/', { name: 'Seeded deal', amount: '1200.50', account, assigned_to: [memberProfileId], closed_on: closedOn })
  const solution = await create('/api/cases/solutions/', { title: 'Seeded solution', description: 'How to seed: the steps that resolve it, in order.' })
  await create('/api/tags/', { name: 'Seeded tag' })
  const calendar = await app.inject({ method: 'GET', url: '/api/business-hours/calendar/', headers })
  await create(`/api/business-hours/calendar/${calendar.json().id}/holidays/`, { date: '2026-12-25', name: 'Seeded holiday' })
  const goal = await create('/api/opportunities/goals/', { name: 'Seeded goal', goal_type: 'REVENUE', target_value: '10000', period_type: 'MONTHLY', period_start: '2026-11-01', period_end: '2026-11-30', assigned_to: memberProfileId })
  const board = await create('/api/boards/', { name: 'Seeded board' })
  const columns = await app.inject({ method: 'GET', url: `/api/boards/${board}/columns/`, headers })
  await create(`/api/boards/columns/${columns.json()[0].id}/tasks/`, { title: 'Seeded card', priority: 'high' })
  // Due today: on the calendar's month whatever the day. The member's task for the admin notifies the admin.
  const today = new Date().toISOString().slice(0, 10)
  const task = await create('/api/tasks/', { title: 'Seeded task', priority: 'High', due_date: today, account, assigned_to: [memberProfileId] })
  await create('/api/tasks/', { title: 'Task for the admin', assigned_to: [adminProfileId] }, member.headers)
  await create('/api/macros/', { title: 'Seeded macro', body: 'Hello %customer_name%', scope: 'org' })
  // The admin's timer, running since now: on this week's timesheet, named by its ticket.
  const ticket = await create('/api/cases/', { name: 'Seeded ticket', priority: 'High', account, contacts: [contact], description: 'The seeded customer cannot sign in.' })
  await create(`/api/cases/${ticket}/time-entries/start/`, { description: 'Seeded time' })
  const form = await multipartBody({ title: 'Seeded document', document_file: { name: 'seeded.pdf', type: 'application/pdf', content: '%PDF-1.4 seeded' } })
  const uploaded = await app.inject({ method: 'POST', url: '/api/documents/', headers: { ...headers, 'content-type': form.contentType }, payload: form.payload })
  if (uploaded.statusCode !== 201) throw new Error(`seeding /api/documents/: ${uploaded.statusCode} ${uploaded.body}`)
  // With a currency: the products page formats a product's price in its currency and fails on none,
  // which the original allows too (the app's own form always sends one).
  const product = await create('/api/invoices/products/', { name: 'Seeded product', price: '99.00', currency: 'USD', sku: 'SEED-1' }, headers, 'product')
  const lines = [{ product, name: 'Seeded line', quantity: '2', unit_price: '99.00' }]
  const invoice = await create('/api/invoices/', { invoice_title: 'Seeded invoice', account_id: account, contact_id: contact, line_items: lines }, headers, 'invoice')
  // Sending issues it: a draft has no number, and the list shows little else of it.
  const sent = await app.inject({ method: 'POST', url: `/api/invoices/${invoice}/send/`, headers, payload: {} })
  if (sent.statusCode !== 200) throw new Error(`sending the seeded invoice: ${sent.statusCode} ${sent.body}`)
  const estimate = await create('/api/invoices/estimates/', { title: 'Seeded estimate', account_id: account, contact_id: contact, line_items: lines }, headers, 'estimate')
  const schedule = await create('/api/invoices/recurring/', { title: 'Seeded schedule', account_id: account, contact_id: contact, frequency: 'MONTHLY', line_items: lines }, headers, 'recurring_invoice')
  const template = await create('/api/invoices/templates/', { name: 'Seeded template', primary_color: '#aa3300', footer_text: 'Seeded footer', is_default: true }, headers, 'template')
  return { lead, account, contact, deal, goal, solution, board, task, document: uploaded.json().id as string, product, invoice, invoice_number: sent.json().invoice.invoice_number as string, estimate, schedule, template, ticket }
}
