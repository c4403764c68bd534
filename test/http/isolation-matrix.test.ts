import { randomUUID } from 'node:crypto'
import t from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import { MODULES } from '../../src/modules/modules.ts'
import { recordDelivery } from '../../src/webhooks/store.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import { PNG_1X1, multipartBody } from '../helpers/multipart.ts'
import { portalSignIn } from '../helpers/portal.ts'
import { silentLogger } from '../helpers/runner.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { describe, eventCount, fillPath, operationsOf, sampleOf } from '../helpers/route-table.ts'
import type { Operation } from '../helpers/route-table.ts'

// It grows with every route of the schema (or block of the docs): past tap's 120 s default on a loaded 2-core machine.
t.setTimeout(480_000)

/**
 * Tenant isolation and roles, generated from the served OpenAPI document: every built operation
 * with an id in its path is called by another organization's admin on this organization's
 * records; every operation documented as "(admins)" is called by a plain member; every list is
 * read by the other organization before and after this one writes. Nothing here lists routes by
 * hand: the modules' manifests say which record kind a path's id names (an id route of a kind
 * not declared fails), and this file seeds one record of each kind.
 */

/** The kinds of record a path's `{id}` names, as the modules declare them (src/modules/<module>.ts `idKinds`, `idParams`). */
const KIND_BY_PREFIX = MODULES.flatMap((module) => module.idKinds ?? [])
/** Routes with two ids name each by its parameter. */
const KIND_BY_PARAM: Record<string, string> = Object.assign({}, ...MODULES.map((module) => module.idParams ?? {}))

/**
 * Parts of an answer that are global by design, so they move with any organization's writes:
 * `/api/projections/` reports the read models' checkpoints (positions in the one shared log), and a
 * feed's `next` cursor is a global log position. They are still searched for another tenant's data.
 */
const GLOBAL_ROUTES = new Set(['GET /api/projections/'])
const GLOBAL_FIELDS = ['next']
function comparable(op: Operation, body: string): unknown {
  if (GLOBAL_ROUTES.has(describe(op))) return 'global: not compared'
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return parsed
    return Object.fromEntries(Object.entries(parsed).filter(([key]) => !GLOBAL_FIELDS.includes(key)))
  } catch {
    return body
  }
}

const kindOf = (path: string): string | undefined => KIND_BY_PREFIX.find(([pattern]) => pattern.test(path))?.[1]
/** The kind of record each path parameter names, or undefined when one is not mapped. */
const paramKinds = (op: Operation): string[] | undefined => {
  const kinds = op.pathParams.map((name) => KIND_BY_PARAM[name] ?? (name === 'id' || op.pathParams.length === 1 ? kindOf(op.path) : undefined))
  return kinds.every((k) => k !== undefined) ? (kinds as string[]) : undefined
}

/** "(admins)", "(soft; admins)", "(admins, idempotent)", "(admins); ...": only admins. Not "(admins or its creator)", "(admins, or the member themselves)", "(admin, creator or assignee)". */
const isAdminOnly = (op: Operation) => /\badmins\b(?!,? or\b)/.test(op.summary)

/** Writes the spec reserves for admins (§4.5, §4.8): the documents must say so, and a USER must get 403 on each. */
const KNOWN_ADMIN_ONLY = [
  'POST /api/opportunities/pipelines/',
  'PATCH /api/opportunities/pipelines/{id}/',
  'DELETE /api/opportunities/pipelines/{id}/',
  'POST /api/opportunities/pipelines/{id}/stages/',
  'POST /api/opportunities/pipelines/{id}/stages/reorder/',
  'PATCH /api/opportunities/stages/{id}/',
  'DELETE /api/opportunities/stages/{id}/',
  'PUT /api/opportunities/aging-config/',
  'POST /api/custom-fields/',
  'PUT /api/custom-fields/{id}/',
  'DELETE /api/custom-fields/{id}/',
  'DELETE /api/tags/{id}/',
  'POST /api/tags/{id}/merge/',
  'POST /api/tags/{id}/restore/',
  'POST /api/teams/',
  'PUT /api/teams/{id}/',
  'PATCH /api/teams/{id}/',
  'DELETE /api/teams/{id}/',
  'POST /api/leads/pipelines/',
  'PUT /api/leads/pipelines/{id}/',
  'DELETE /api/leads/pipelines/{id}/',
  'POST /api/leads/pipelines/{id}/stages/',
  'POST /api/leads/pipelines/{id}/stages/reorder/',
  'PUT /api/leads/stages/{id}/',
  'DELETE /api/leads/stages/{id}/',
  'POST /api/tasks/pipelines/',
  'PUT /api/tasks/pipelines/{id}/',
  'DELETE /api/tasks/pipelines/{id}/',
  'POST /api/tasks/pipelines/{id}/stages/',
  'POST /api/tasks/pipelines/{id}/stages/reorder/',
  'PUT /api/tasks/stages/{id}/',
  'DELETE /api/tasks/stages/{id}/',
  'POST /api/cases/pipelines/',
  'PUT /api/cases/pipelines/{id}/',
  'DELETE /api/cases/pipelines/{id}/',
  'POST /api/cases/pipelines/{id}/stages/',
  'POST /api/cases/pipelines/{id}/stages/reorder/',
  'PUT /api/cases/stages/{id}/',
  'DELETE /api/cases/stages/{id}/',
]

t.test('tenant isolation and roles, over the whole route table', async (t) => {
  const mail = logTransport(silentLogger)
  const { app, database, acme, globex, alice } = await givenTwoOrganizations(t, { mail })
  const operations = await operationsOf(app)
  t.ok(operations.length > 50, `${operations.length} built operations in the document`)

  const call = async (method: string, url: string, headers: Headers, payload?: object) => {
    const res = await app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined && { payload }) })
    if (res.statusCode >= 500) t.fail(`${method} ${url} answered ${res.statusCode}: ${res.body}`)
    return res
  }
  const created = async (method: string, url: string, headers: Headers, payload: object) => {
    const res = await call(method, url, headers, payload)
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  const lists = operations.filter((op) => op.method === 'GET' && op.pathParams.length === 0 && op.path.startsWith('/api/') && !op.streaming)
  for (const op of operations.filter((op) => op.streaming)) t.comment(`a live stream, not read as a list here: ${describe(op)}`)
  const listAs = async (headers: Headers, query: (op: Operation) => string = () => '') => {
    const bodies: Record<string, unknown> = {}
    for (const op of lists) {
      const res = await call('GET', `${op.path}${query(op)}`, headers)
      bodies[`${describe(op)}${query(op)}`] = { status: res.statusCode, body: res.body, comparable: comparable(op, res.body) }
    }
    return bodies
  }

  // B first: its own records, and how its lists look before A writes anything.
  const bTag = (await created('POST', '/api/tags/', globex.admin.headers, { name: 'globex-tag' })).id as string
  await created('POST', '/api/accounts/', globex.admin.headers, { name: 'Globex account', tags: [bTag] })
  await created('POST', '/api/opportunities/', globex.admin.headers, { name: 'Globex deal', amount: '7.00' })
  // B's default lead and task pipelines are created on first use (as its deal one was by the deal above): before the snapshot, not by its first listing.
  await call('GET', '/api/leads/pipelines/', globex.admin.headers)
  await call('GET', '/api/tasks/pipelines/', globex.admin.headers)
  await call('GET', '/api/cases/pipelines/', globex.admin.headers)
  // B's customer, who signs in to B's portal and asks for A's cases and articles.
  await created('POST', '/api/contacts/', globex.admin.headers, { first_name: 'Globex customer', email: 'customer@globex.test' })
  const bListsBefore = await listAs(globex.admin.headers)

  // A: one record of each kind, names that would show if they leaked.
  const A = acme.admin.headers
  const ids: Record<string, string> = {}
  const idOf = (kind: string): string => {
    const id = ids[kind]
    if (id === undefined) throw new Error(`No record of kind ${kind} is seeded`)
    return id
  }
  ids.org = acme.orgId
  ids.profile = alice.profileId
  ids.user = alice.userId
  ids.tag = (await created('POST', '/api/tags/', A, { name: 'acme-secret-tag' })).id
  const tag2 = (await created('POST', '/api/tags/', A, { name: 'acme-secret-tag-2' })).id as string
  ids.account = (await created('POST', '/api/accounts/', A, { name: 'Acme secret account', tags: [ids.tag], assigned_to: [alice.profileId] })).id
  // Alice's notification of the account assigned to her (a member's own: the admin has no access to it either).
  ids.notification = (await call('GET', '/api/notifications/', alice.headers)).json().results[0].id
  ids.contact = (await created('POST', '/api/contacts/', A, { first_name: 'Acme secret contact', email: 'secret-contact@acme.test', account: ids.account, tags: [ids.tag] })).id
  for (const [record, field] of [['account', 'account_attachment'], ['contact', 'contact_attachment']] as const) {
    const notes = await multipartBody({ comment: `acme secret ${record} comment`, [field]: { name: `acme-secret-${record}.txt`, type: 'text/plain', content: `acme secret ${record} file` } })
    const noted = await app.inject({ method: 'POST', url: `/api/${record}s/${ids[record]}/`, headers: { ...A, 'content-type': notes.contentType }, payload: notes.payload })
    t.equal(noted.statusCode, 200, noted.body)
    ids[`${record}Comment`] = noted.json().comments[0].id
    ids[`${record}Attachment`] = noted.json().attachments[0].id
  }
  ids.team = (await created('POST', '/api/teams/', A, { name: 'Acme secret team', users: [alice.profileId] })).id
  ids.customField = (await created('POST', '/api/custom-fields/', A, { module: 'opportunities', key: 'acme_secret', label: 'Acme secret', type: 'text' })).id
  const pipeline = await created('POST', '/api/opportunities/pipelines/', A, { name: 'Acme secret pipeline' })
  ids.pipeline = pipeline.id
  ids.stage = pipeline.stages[1].id
  ids.deal = (await created('POST', '/api/opportunities/', A, { name: 'Acme secret deal', amount: '12345.67', account: ids.account, contacts: [ids.contact], tags: [ids.tag], teams: [ids.team], assigned_to: [alice.profileId] })).id
  ids.comment = (await created('POST', `/api/opportunities/${ids.deal}/`, A, { comment: 'acme secret comment' })).comments[0].id
  ids.lineItem = (await created('POST', `/api/opportunities/${ids.deal}/line-items/`, A, { name: 'Acme secret line', quantity: '1', unit_price: '5.00' })).id
  const upload = await multipartBody({ opportunity_attachment: { name: 'acme-secret.txt', type: 'text/plain', content: 'acme secret file' } })
  const withFile = await app.inject({ method: 'POST', url: `/api/opportunities/${ids.deal}/`, headers: { ...A, 'content-type': upload.contentType }, payload: upload.payload })
  t.equal(withFile.statusCode, 200, withFile.body)
  ids.attachment = withFile.json().attachments[0].id
  ids.token = (await created('POST', '/api/profile/tokens/', A, { name: 'acme-secret-token' })).id
  ids.lead = (await created('POST', '/api/leads/', A, { first_name: 'Acme secret lead', email: 'secret-lead@acme.test' })).id
  ids.leadComment = (await created('POST', `/api/leads/${ids.lead}/`, A, { comment: 'acme secret lead comment' })).comments[0].id
  const leadFile = await multipartBody({ lead_attachment: { name: 'acme-secret-lead.txt', type: 'text/plain', content: 'acme secret lead file' } })
  const leadWithFile = await app.inject({ method: 'POST', url: `/api/leads/${ids.lead}/`, headers: { ...A, 'content-type': leadFile.contentType }, payload: leadFile.payload })
  t.equal(leadWithFile.statusCode, 200, leadWithFile.body)
  ids.leadAttachment = leadWithFile.json().attachments[0].id
  await call('GET', '/api/leads/pipelines/', A) // A's default lead pipeline, created on first use: before A's view is taken
  const leadPipeline = await created('POST', '/api/leads/pipelines/', A, { name: 'Acme secret lead pipeline' })
  ids.leadPipeline = leadPipeline.id
  ids.leadStage = leadPipeline.stages[1].id
  ids.goal = (await created('POST', '/api/opportunities/goals/', A, { name: 'Acme secret goal', profile: alice.profileId, period_start: '2026-01-01', period_end: '2026-12-31', target_amount: '1000' })).id
  ids.solution = (await created('POST', '/api/cases/solutions/', A, { title: 'Acme secret solution' })).id
  ids.businessCalendar = (await created('PUT', '/api/business-hours/calendar/', A, { name: 'Acme secret hours' })).id
  ids.businessHoliday = (await created('POST', `/api/business-hours/calendar/${ids.businessCalendar}/holidays/`, A, { date: '2026-12-25', name: 'Acme secret holiday' })).id
  ids.webhook = (await created('POST', '/api/webhooks/', A, { url: 'https://hooks.acme.test/secret', event_types: [] })).id
  // Left unpublished: its public address (org_id and form_id) must then answer 404 to anyone, as another organization's would.
  ids.webform = (await created('POST', '/api/webforms/', A, { name: 'Acme secret form' })).id
  // A quarantined submission (the honeypot filled), of a second form published for it: what a release names.
  const heldForm = await created('POST', '/api/webforms/', A, { name: 'Acme secret held form' })
  await created('POST', `/api/webforms/${heldForm.id}/publish/`, A, {})
  ids.webformSubmission = (await created('POST', heldForm.embed.submit_path, {}, { first_name: 'Acme secret visitor', email: 'secret-visitor@acme.test', website_url: 'x' })).submission_id
  // A delivery of A's webhook, as the delivery worker (not running here) records one.
  const deliveredEvent = { id: randomUUID(), type: 'TagCreated', streamName: `tag-${ids.tag}`, revision: 0n, position: { commit: 1n, prepare: 1n } }
  ids.webhookDelivery = (await recordDelivery(database.db, { id: randomUUID(), webhookId: idOf('webhook'), orgId: acme.orgId, event: deliveredEvent, kind: 'delivery', attempt: 1, status: 'failed' })).id
  const board = await created('POST', '/api/boards/', A, { name: 'Acme secret board' })
  ids.board = board.id
  ids.boardColumn = board.columns[0].id
  ids.boardCard = (await created('POST', `/api/boards/columns/${ids.boardColumn}/tasks/`, A, { title: 'Acme secret card' })).id
  ids.task = (await created('POST', '/api/tasks/', A, { title: 'Acme secret task', assigned_to: [alice.profileId] })).id
  ids.taskComment = (await created('POST', `/api/tasks/${ids.task}/`, A, { comment: 'acme secret task comment' })).comments[0].id
  const taskFile = await multipartBody({ task_attachment: { name: 'acme-secret-task.txt', type: 'text/plain', content: 'acme secret task file' } })
  const taskWithFile = await app.inject({ method: 'POST', url: `/api/tasks/${ids.task}/`, headers: { ...A, 'content-type': taskFile.contentType }, payload: taskFile.payload })
  t.equal(taskWithFile.statusCode, 200, taskWithFile.body)
  ids.taskAttachment = taskWithFile.json().attachments[0].id
  ids.case = (await created('POST', '/api/cases/', A, { name: 'Acme secret case', assigned_to: [alice.profileId], contacts: [ids.contact] })).id
  ids.caseComment = (await created('POST', `/api/cases/${ids.case}/`, A, { comment: 'acme secret case comment' })).comments[0].id
  const caseFile = await multipartBody({ case_attachment: { name: 'acme-secret-case.txt', type: 'text/plain', content: 'acme secret case file' } })
  const caseWithFile = await app.inject({ method: 'POST', url: `/api/cases/${ids.case}/`, headers: { ...A, 'content-type': caseFile.contentType }, payload: caseFile.payload })
  t.equal(caseWithFile.statusCode, 200, caseWithFile.body)
  ids.caseAttachment = caseWithFile.json().attachments[0].id
  await call('GET', '/api/tasks/pipelines/', A) // A's default task pipeline, created on first use: before A's view is taken
  const taskPipeline = await created('POST', '/api/tasks/pipelines/', A, { name: 'Acme secret task pipeline' })
  ids.taskPipeline = taskPipeline.id
  ids.taskStage = taskPipeline.stages[1].id
  const documentFile = await multipartBody({ title: 'Acme secret document', shared_to: JSON.stringify([alice.profileId]), document_file: { name: 'acme-secret-document.txt', type: 'text/plain', content: 'acme secret document file' } })
  const uploaded = await app.inject({ method: 'POST', url: '/api/documents/', headers: { ...A, 'content-type': documentFile.contentType }, payload: documentFile.payload })
  t.equal(uploaded.statusCode, 201, uploaded.body)
  ids.document = uploaded.json().id
  ids.api_setting = (await created('POST', '/api/api-settings/', A, { title: 'Acme secret site', website: 'https://acme-secret.example.com' })).id
  // Packs are the server's, not an organization's: no pack is A's, so the path names one nobody has (404 to B, 403 to a member first).
  ids.pack = 'acme-no-such-pack'
  // An erasure receipt of A (issue 31): a person of its own, erased.
  const erased = (await created('POST', '/api/contacts/', A, { first_name: 'Acme secret erased person' })).id
  ids.erasure = (await created('POST', '/api/privacy/erasures/', A, { kind: 'contact', id: erased })).id
  ids.product = (await created('POST', '/api/invoices/products/', A, { name: 'Acme secret product', price: '3.00' })).product.id
  const invoice = (await created('POST', '/api/invoices/', A, { account_id: ids.account, contact_id: ids.contact, invoice_title: 'Acme secret invoice', line_items: [{ name: 'Acme secret invoice line', unit_price: '9.00', product: ids.product }] })).invoice
  ids.invoice = invoice.id
  ids.invoiceLineItem = invoice.line_items[0].id
  await created('POST', `/api/invoices/${ids.invoice}/send/`, A, {})
  ids.invoicePayment = (await created('POST', `/api/invoices/${ids.invoice}/payments/`, A, { amount: '1.00' })).payment.id
  // Seller and buyer addresses, which an e-invoice (ubl/) must name.
  await created('PATCH', '/api/org/settings/', A, { address_line: '1 Main St', country: 'DE', tax_id: 'DE123456789' })
  await created('PUT', `/api/invoices/${ids.invoice}/`, A, { billing_address_line: 'Acme secret street', billing_country: 'FR' })
  ids.creditNote = (await created('POST', `/api/invoices/${ids.invoice}/credit-notes/`, A, { reason: 'Acme secret credit', lines: [{ line_id: ids.invoiceLineItem, quantity: '0.5' }] })).credit_note.id
  ids.invoiceComment = (await created('POST', `/api/invoices/${ids.invoice}/comments/`, A, { comment: 'acme secret invoice comment' })).comment.id
  const invoiceFile = await multipartBody({ file: { name: 'acme-secret-invoice.txt', type: 'text/plain', content: 'acme secret invoice file' } })
  const invoiceWithFile = await app.inject({ method: 'POST', url: `/api/invoices/${ids.invoice}/attachments/`, headers: { ...A, 'content-type': invoiceFile.contentType }, payload: invoiceFile.payload })
  t.equal(invoiceWithFile.statusCode, 201, invoiceWithFile.body)
  ids.invoiceAttachment = invoiceWithFile.json().attachment.id
  ids.estimate = (await created('POST', '/api/invoices/estimates/', A, { title: 'Acme secret estimate', account_id: ids.account, contact_id: ids.contact, line_items: [{ name: 'Acme secret estimate line', unit_price: '8.00' }] })).estimate.id
  ids.macro = (await created('POST', '/api/macros/', A, { title: 'Acme secret macro', body: 'acme secret reply', scope: 'org' })).id
  ids.timeEntry = (await created('POST', `/api/cases/${ids.case}/time-entries/`, A, { started_at: '2026-11-20T09:00:00Z', ended_at: '2026-11-20T10:00:00Z', description: 'acme secret time', billable: true })).id
  ids.approvalRule = (await created('POST', '/api/cases/approval-rules/', A, { name: 'Acme secret approval rule', match_priority: 'Urgent' })).id
  const urgentCase = (await created('POST', '/api/cases/', A, { name: 'Acme secret urgent case', priority: 'Urgent' })).id
  ids.approval = (await created('POST', `/api/cases/${urgentCase}/request-approval/`, A, { note: 'acme secret approval note' })).id
  ids.routingRule = (await created('POST', '/api/cases/routing-rules/', A, { name: 'Acme secret routing rule', conditions: [{ field: 'priority', op: 'eq', value: 'Low' }], target_assignee_ids: [alice.profileId] })).id
  ids.escalationPolicy = (await created('POST', '/api/cases/escalation-policies/', A, { priority: 'Urgent', first_response_target_id: alice.profileId })).id
  ids.recurringInvoice = (await created('POST', '/api/invoices/recurring/', A, { title: 'Acme secret schedule', account_id: ids.account, contact_id: ids.contact, line_items: [{ name: 'Acme secret schedule line', unit_price: '7.00' }] })).recurring_invoice.id
  // With a logo, so that its logo/ route answers A (a 1×1 PNG).
  const templateForm = await multipartBody({ name: 'Acme secret template', footer_text: 'acme secret footer', logo: { name: 'acme-secret-logo.png', type: 'image/png', content: PNG_1X1 } })
  const template = await app.inject({ method: 'POST', url: '/api/invoices/templates/', headers: { ...A, 'content-type': templateForm.contentType }, payload: templateForm.payload })
  t.equal(template.statusCode, 201, template.body)
  ids.invoiceTemplate = template.json().template.id
  await call('GET', '/api/cases/pipelines/', A) // A's default case pipeline, created on first use: before A's view is taken
  const casePipeline = await created('POST', '/api/cases/pipelines/', A, { name: 'Acme secret case pipeline' })
  ids.casePipeline = casePipeline.id
  ids.caseMailbox = (await created('POST', '/api/cases/mailboxes/', A, { address: 'acme-secret@acme.test', webhook_secret: 'acme-secret-mailbox-signing-key-0123456789' })).id
  ids.caseStage = casePipeline.stages[1].id
  const aSecrets = [...Object.values(ids), tag2, 'acme', '12345.67']
  const declared = new Set([...KIND_BY_PREFIX.map(([, kind]) => kind), ...Object.values(KIND_BY_PARAM)])
  t.same([...declared].filter((kind) => !ids[kind]), [], 'a record of A for every kind the modules declare (seed one above for a new kind)')

  // A's view of everything, to compare after every foreign and forbidden call.
  const details = operations.filter((op) => op.method === 'GET' && op.pathParams.length === 1 && op.pathParams[0] === 'id' && kindOf(op.path))
  const aView = async () => {
    const view: Record<string, unknown> = await listAs(A)
    for (const op of details) {
      const url = fillPath(op.path, { id: idOf(kindOf(op.path)!) })
      const res = await call('GET', url, A)
      view[`GET ${url}`] = { status: res.statusCode, body: res.body, comparable: res.body }
    }
    return view
  }
  const aViewBefore = await aView()
  // Every record, by each of its detail routes (a list may need a filter it was not given).
  const unread = Object.entries(aViewBefore).filter(([key, v]) => Object.values(ids).some((id) => key.includes(id)) && (v as { status: number }).status !== 200)
  t.same(unread.map(([key, v]) => `${key}: ${(v as { status: number }).status}`), [], 'A reads each of its records')

  t.test('lists never show another organization’s rows, counts or totals', async (t) => {
    const after = await listAs(globex.admin.headers)
    const seen = (answers: Record<string, unknown>, key: string) => ({ status: (answers[key] as { status: number }).status, body: (answers[key] as { comparable: unknown }).comparable })
    for (const key of Object.keys(bListsBefore)) t.same(seen(after, key), seen(bListsBefore, key), `${key}: B's answer unchanged by A's writes`)
    // Filters naming A's records: still nothing of A.
    const filtered = await listAs(globex.admin.headers, (op) => {
      const params = new URLSearchParams()
      for (const name of Object.keys(op.query)) {
        const kind = ({ account: 'account', tags: 'tag', assigned_to: 'profile', pipeline: 'pipeline', stage: 'stage', team: 'team', teams: 'team', contacts: 'contact' } as Record<string, string>)[name]
        if (kind) params.set(name, idOf(kind))
      }
      return params.size ? `?${params}` : ''
    })
    for (const [key, answer] of Object.entries({ ...after, ...filtered })) {
      const body = String((answer as { body: string }).body).toLowerCase()
      const leaked = aSecrets.filter((secret) => body.includes(secret.toLowerCase()))
      t.same(leaked, [], `${key}: nothing of A`)
    }
    t.comment(`${lists.length} list routes read as B, ${Object.keys(filtered).filter((k) => k.includes('?')).length} of them also with A's ids as filters`)
  })

  t.test('a plain member gets 403 on every admin-only operation', async (t) => {
    const adminOnly = operations.filter(isAdminOnly)
    const names = adminOnly.map(describe)
    for (const known of KNOWN_ADMIN_ONLY) t.ok(names.includes(known), `${known} is documented as admin-only`)
    const events = await eventCount(database.db)
    for (const op of adminOnly) {
      const kinds = paramKinds(op)
      if (!kinds) {
        t.fail(`${describe(op)}: the kind of record an id names is unknown; declare it in its module's manifest (idKinds, idParams)`)
        continue
      }
      const url = fillPath(op.path, Object.fromEntries(op.pathParams.map((name, i) => [name, idOf(kinds[i]!)])))
      const body = op.body ? sampleOf(op.body, '', { into: tag2 }) : undefined
      const res = await call(op.method, url, alice.headers, body as object | undefined)
      const known = KNOWN_ADMIN_ONLY.includes(describe(op))
      if (!known && res.statusCode === 400) {
        // The generated minimal body broke a rule checked before the role: refused all the same, but not proven 403.
        t.comment(`USER ${describe(op)}: 400 before the role check (${res.body.slice(0, 120)})`)
        continue
      }
      t.equal(res.statusCode, 403, `USER ${op.method} ${url}: ${res.statusCode} ${res.statusCode === 403 ? '' : res.body}`)
    }
    t.equal(await eventCount(database.db), events, 'no event appended by a refused member')
    t.comment(`${adminOnly.length} admin-only operations checked`)
  })

  t.test('another organization gets 404 on every id of this one, and changes nothing', async (t) => {
    const B = globex.admin.headers
    let checked = 0
    // A public link's token is its own credential (whoever holds it is answered, as the client is): not an id of a record.
    // The portal's routes take no staff token at all (its sign-in's org id is a public address, as those are): they are proven apart below.
    for (const op of operations.filter((op) => op.pathParams.length && !op.streaming && !op.path.startsWith('/api/public/') && !op.path.startsWith('/api/portal/'))) {
      const kinds = paramKinds(op)
      if (!kinds) {
        t.fail(`${describe(op)}: the kind of record an id names is unknown; declare it in its module's manifest (idKinds, idParams)`)
        continue
      }
      const kind = kinds.join('/')
      const url = fillPath(op.path, Object.fromEntries(op.pathParams.map((name, i) => [name, idOf(kinds[i]!)])))
      // A body that passes validation, naming B's own records, so the path id alone decides.
      const body = op.body ? sampleOf(op.body, '', { into: bTag }) : undefined
      const events = await eventCount(database.db)
      const res = await call(op.method, url, B, body as object | undefined)
      const idempotentNoOp = /idempotent/.test(op.summary) && res.statusCode === 200
      if (idempotentNoOp) t.pass(`${op.method} ${url}: 200, an idempotent no-op (A's token checked below)`)
      else t.equal(res.statusCode, 404, `B ${op.method} ${url} (${kind}): ${res.statusCode} ${res.statusCode === 404 ? '' : res.body}`)
      t.equal(await eventCount(database.db), events, `${op.method} ${url}: no event appended`)
      checked++
    }
    t.comment(`${checked} id routes called across organizations`)
  })

  t.test("the portal: its token is refused on every other route, and another organization's customer gets 404 on A's ids", async (t) => {
    const aCustomer = await portalSignIn(app, mail, acme.orgId, 'secret-contact@acme.test')
    const bCustomer = await portalSignIn(app, mail, globex.orgId, 'customer@globex.test')
    const events = await eventCount(database.db)
    let refused = 0
    // Every staff operation (the public ones take no credential at all, so a token is no reason to refuse them).
    for (const op of operations.filter((op) => op.access === 'staff' && !op.streaming)) {
      const kinds = op.pathParams.map((name) => KIND_BY_PARAM[name] ?? kindOf(op.path))
      const url = fillPath(op.path, Object.fromEntries(op.pathParams.map((name, i) => [name, ids[kinds[i] ?? ''] ?? randomUUID()])))
      const body = op.body ? sampleOf(op.body, '', { into: tag2 }) : undefined
      const res = await call(op.method, url, aCustomer.headers, body as object | undefined)
      t.ok([401, 403].includes(res.statusCode), `portal token on ${op.method} ${url}: ${res.statusCode} ${[401, 403].includes(res.statusCode) ? '' : res.body.slice(0, 200)}`)
      refused++
    }
    // A's customer reads the case that names them (the 404s below are not for want of a record), B's gets 404 on each of A's ids.
    const PORTAL_KINDS: Record<string, string> = { '/api/portal/cases/': 'case', '/api/portal/articles/': 'solution' }
    t.equal((await call('GET', `/api/portal/cases/${ids.case}/`, aCustomer.headers)).statusCode, 200, "A's customer reads their case")
    let checked = 0
    for (const op of operations.filter((op) => op.access === 'portal' && op.pathParams.includes('id'))) {
      const kind = Object.entries(PORTAL_KINDS).find(([prefix]) => op.path.startsWith(prefix))?.[1]
      if (!kind) {
        t.fail(`${describe(op)}: which kind of record its id names is not known here`)
        continue
      }
      const url = fillPath(op.path, { id: idOf(kind) })
      const res = await call(op.method, url, bCustomer.headers, op.body ? (sampleOf(op.body) as object) : undefined)
      t.equal(res.statusCode, 404, `B's customer ${op.method} ${url}: ${res.statusCode}`)
      checked++
    }
    t.equal(await eventCount(database.db), events, 'no event appended by a portal token refused')
    t.comment(`${refused} staff operations refused a portal token; ${checked} portal id routes called across organizations`)
  })

  t.test("A's records are exactly as before", async (t) => {
    const after = await aView()
    const seen = (answers: Record<string, unknown>, key: string) => ({ status: (answers[key] as { status: number }).status, body: (answers[key] as { comparable: unknown }).comparable })
    for (const key of Object.keys(aViewBefore)) t.same(seen(after, key), seen(aViewBefore, key), key)
  })
})
