/**
 * The original phone app against this API (issue 30). Its calls are read from its Dart source
 * (app-calls.ts), so a screen added there shows up here: every call to a built route must have a
 * scenario below, sent as the app sends it (Content-Type: application/json on every request,
 * bodiless DELETEs included, X-Organization-ID, its body keys and casing), answer 2xx, and satisfy
 * the `fromJson` casts of the model the app parses the answer with (a missing non-nullable key or a
 * string where it casts `as num` fails). Calls to modules not built yet (their routes answer 501,
 * or no route exists) and to the vendor's own help desk are counted by module, never skipped
 * silently. Both sign-in flows are walked to the token the app stores.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import { routerPath } from '../../src/http/kernel/not-built.ts'
import { buildTestApp } from '../helpers/app.ts'
import { GOOGLE_CLIENT_ID, googleKeys } from '../helpers/google.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { silentLogger } from '../helpers/runner.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { lastMailTo } from '../helpers/sign-in.ts'
import { castFailures, distinctCalls, modelCasts } from './app-calls.ts'
import type { AppCall } from './app-calls.ts'

const casts = modelCasts()
const VENDOR = '/api/support/'

type Answer = { status: number; body: unknown }
type Json = Record<string, unknown>

/** The app's ApiService: its default headers, the bearer token and organization it holds, JSON on every request. */
function phone(app: FastifyInstance) {
  const session = { access: undefined as string | undefined, refresh: undefined as string | undefined, orgId: undefined as string | undefined }
  async function send(method: AppCall['method'], url: string, body?: Json, auth = true): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
    if (auth && session.access) headers.authorization = `Bearer ${session.access}`
    if (session.orgId) headers['x-organization-id'] = session.orgId
    const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    // As the app's _parseResponse: JSON when it parses, else nothing (a download's bytes).
    const isJson = /json/.test(String(res.headers['content-type'] ?? ''))
    return { status: res.statusCode, body: isJson && res.body ? res.json() : null }
  }
  return { session, send }
}

/** The value at a dotted path (`open_leads.open_leads`), as the app's listFromEnvelope walks it. */
const at = (body: unknown, path: string): unknown => path.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Json)[key] : undefined), body)

t.test("the original phone app's calls against this API", async (t) => {
  const mail = logTransport(silentLogger)
  const googleKeySet = await googleKeys(t)
  const { app, database } = await buildTestApp(t, { mail, env: { AUTH_RATE_LIMIT_MAX: '1000', GOOGLE_CLIENT_ID, GOOGLE_JWKS_URL: googleKeySet.jwksUrl } })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const bob = await acme.addMember('bob@acme.test')
  const { session, send } = phone(app)
  const failures: string[] = []
  const checked = new Set<string>()
  const failing = new Set<string>()
  const fail = (call: string, why: string) => {
    failing.add(call)
    failures.push(`${call}${why}`)
  }

  /** The answer of one call, checked: 2xx, and `fromJson` of `model` accepts what the app reads at each `path` (a list: every item). */
  async function check(call: string, answer: Answer, reads: [model: string, path?: string][] = []): Promise<Json> {
    checked.add(call)
    if (answer.status < 200 || answer.status > 299) {
      fail(call, `: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
      return {}
    }
    for (const [model, path] of reads) {
      const modelCasts = casts.get(model)
      if (!modelCasts) throw new Error(`No fromJson for ${model} in the app's models`)
      // `a|b`: the app reads the first of these that the answer has.
      const found = path?.split('|').find((candidate) => at(answer.body, candidate) !== undefined)
      const node = path ? found && at(answer.body, found) : answer.body
      if (node === undefined) fail(call, `: no ${path} (where the app reads ${model})`)
      const items = Array.isArray(node) ? node : node === undefined ? [] : [node]
      for (const item of items) for (const why of castFailures(modelCasts, item, found ? `${found}.` : '')) fail(call, ` → ${model}: ${why}`)
    }
    return (answer.body ?? {}) as Json
  }

  t.test('code sign-in, as auth_service.dart does it, to the token the app stores', async (t) => {
    await check('POST /api/auth/magic-link/request/', await send('POST', '/api/auth/magic-link/request/', { email: acme.admin.email, delivery: 'code' }, false))
    await app.afterReply.settled() // the mail goes out after the answer (issue 35)
    const code = /code: (\d{6})/.exec(lastMailTo(mail, acme.admin.email).text)?.[1]
    t.ok(code, 'a code was mailed')
    const signedIn = await check('POST /api/auth/magic-link/verify-code/', await send('POST', '/api/auth/magic-link/verify-code/', { email: acme.admin.email, code }, false), [
      ['AuthUser', 'user'],
      ['Organization', 'organizations'],
      ['Organization', 'current_org'],
    ])
    t.type(signedIn.access_token, 'string', 'access_token: what the app stores')
    // ApiService refreshes ahead of expiry by JwtDecoder.getExpirationDate: the token must carry `exp`.
    const claims = JSON.parse(Buffer.from(String(signedIn.access_token).split('.')[1]!, 'base64url').toString())
    t.type(claims.exp, 'number', 'the access token says when it expires (exp)')
    t.type(signedIn.refresh_token, 'string')
    session.access = signedIn.access_token as string
    session.refresh = signedIn.refresh_token as string
    session.orgId = (signedIn.current_org as Json).id as string
  })

  t.test('Google sign-in with idToken, then switch-org, refresh and its own logout', async (t) => {
    const answer = await check('POST /api/auth/google/', await send('POST', '/api/auth/google/', { idToken: await googleKeySet.idToken(bob.email) }, false), [['Organization', 'organizations']])
    t.type(answer.JWTtoken, 'string', 'JWTtoken: the access token the app stores')
    t.match(answer.user, { id: bob.userId, email: bob.email, name: String, profileImage: String }, 'what _handleAuthResponse reads')
    const google = phone(app)
    google.session.access = answer.JWTtoken as string
    const switched = await check('POST /api/auth/switch-org/', await google.send('POST', '/api/auth/switch-org/', { org_id: acme.orgId, refresh: answer.refresh_token }))
    t.type(switched.access_token, 'string')
    const refreshed = await check('POST /api/auth/refresh-token/', await google.send('POST', '/api/auth/refresh-token/', { refresh: switched.refresh_token }, false))
    t.type(refreshed.access, 'string', 'refreshAccessToken reads access')
    await check('POST /api/auth/logout/', await google.send('POST', '/api/auth/logout/', { refresh: refreshed.refresh }, false))
  })

  /** attachment_upload.dart: a multipart POST of a file in the record kind's field, with the session's headers; the new attachment's id. */
  async function upload(plural: string, id: string, field: string): Promise<string> {
    const form = await multipartBody({ [field]: { name: 'route.txt', type: 'text/plain', content: 'Second floor' } })
    const res = await app.inject({ method: 'POST', url: `/api/${plural}/${id}/`, headers: { authorization: `Bearer ${session.access}`, 'x-organization-id': session.orgId!, 'content-type': form.contentType }, payload: form.payload })
    const body = await check(`POST /api/${plural}/{id}/`, { status: res.statusCode, body: res.json() }, [['Attachment', 'attachments']])
    const attachments = (at(body, 'attachments') as Json[] | undefined) ?? []
    if (!attachments.some((a) => a.file_name === 'route.txt' || JSON.stringify(a).includes('route.txt'))) fail(`POST /api/${plural}/{id}/`, ': the uploaded file is not among the attachments')
    return String(attachments.at(-1)?.id ?? '')
  }

  /** ApiService.postMultipart: text fields and one file, with the session's headers. */
  async function multipart(method: 'POST' | 'PUT', url: string, fields: Parameters<typeof multipartBody>[0]): Promise<Answer> {
    const form = await multipartBody(fields)
    const res = await app.inject({ method, url, headers: { authorization: `Bearer ${session.access}`, 'x-organization-id': session.orgId!, 'content-type': form.contentType }, payload: form.payload })
    return { status: res.statusCode, body: res.json() }
  }

  // What the scenarios create, for the calls that name a record.
  const ids: Record<string, string> = {}
  const created = (body: Json, key = 'id') => String(body[key] ?? '')

  /** Every built call the app makes, sent as the app sends it, keyed `METHOD path` as app-calls.ts derives them. */
  const scenarios: Record<string, () => Promise<unknown>> = {
    'GET /api/auth/profile/': async () => check('GET /api/auth/profile/', await send('GET', '/api/auth/profile/'), [['Profile'], ['AuthUser', 'user'], ['Organization', 'org']]),
    'PATCH /api/profile/': async () => check('PATCH /api/profile/', await send('PATCH', '/api/profile/', { name: 'Ada Admin', phone: '+1 555 0100' })),
    'GET /api/org/timezones/': async () => check('GET /api/org/timezones/', await send('GET', '/api/org/timezones/'), [['TimezoneOption', 'timezones']]),
    'POST /api/org/': async () => {
      const body = await check('POST /api/org/', await send('POST', '/api/org/', { name: 'Acme Field', timezone: 'Europe/Paris' }), [['Organization', 'org']])
      ids.newOrg = (body.org as Json | undefined)?.id as string
    },
    'GET /api/org/settings/': async () => check('GET /api/org/settings/', await send('GET', '/api/org/settings/'), [['OrgSettings']]),
    'PATCH /api/org/settings/': async () => {
      // orgSettingsPayload: every field, blanks as empty text (csat_enabled and auto_close_children_on_parent_close are case settings).
      const body = { name: 'Acme', company_name: 'Acme Inc.', address_line: '', city: 'Austin', state: '', postcode: '', country: 'US', phone: '', email: 'hello@acme.test', website: '', tax_id: '', default_currency: 'USD', default_country: 'US', timezone: 'America/Chicago', csat_enabled: false, auto_close_children_on_parent_close: false }
      return check('PATCH /api/org/settings/', await send('PATCH', '/api/org/settings/', body))
    },
    'GET /api/dashboard/': async () => {
      const body = await check('GET /api/dashboard/', await send('GET', '/api/dashboard/'), [
        ['DashboardData'],
        ['UrgentCounts', 'urgent_counts'],
        ['RevenueMetrics', 'revenue_metrics'],
        ['PipelineStage', 'pipeline_by_stage.PROSPECTING'],
        ['HotLead', 'hot_leads'],
        ['DashboardTask', 'tasks'],
        ['DashboardActivity', 'activities'],
      ])
      if (at(body, 'urgent_counts.followups_today') !== 1 || at(body, 'hot_leads.0.next_follow_up') !== '2026-11-22') fail('GET /api/dashboard/', ": the hot lead's follow-up today is not shown")
    },
    'GET /api/tags/': async () => check('GET /api/tags/', await send('GET', '/api/tags/?limit=100'), [['Tag', 'tags']]),
    'POST /api/tags/': async () => {
      ids.tag = created(await check('POST /api/tags/', await send('POST', '/api/tags/', { name: 'field' })))
      ids.otherTag = created(await check('POST /api/tags/', await send('POST', '/api/tags/', { name: 'visit' })))
    },
    'POST /api/tags/{id}/merge/': async () => check('POST /api/tags/{id}/merge/', await send('POST', `/api/tags/${ids.otherTag}/merge/`, { into: ids.tag })),
    'DELETE /api/tags/{id}/': async () => check('DELETE /api/tags/{id}/', await send('DELETE', `/api/tags/${ids.tag}/`)),
    'POST /api/tags/{id}/restore/': async () => check('POST /api/tags/{id}/restore/', await send('POST', `/api/tags/${ids.tag}/restore/`, {})),
    'GET /api/custom-fields/': async () => check('GET /api/custom-fields/', await send('GET', '/api/custom-fields/?target_model=Lead'), [['CustomFieldDefinition', 'definitions']]),
    'POST /api/custom-fields/': async () => {
      const body = { target_model: 'Lead', key: 'region', label: 'Region', field_type: 'text', is_required: false, is_filterable: true, display_order: 0 }
      ids.field = created(await check('POST /api/custom-fields/', await send('POST', '/api/custom-fields/', body)))
    },
    'PUT /api/custom-fields/{id}/': async () => check('PUT /api/custom-fields/{id}/', await send('PUT', `/api/custom-fields/${ids.field}/`, { label: 'Sales region', is_required: false, is_filterable: true, display_order: 1 })),
    'GET /api/users/': async () => check('GET /api/users/', await send('GET', '/api/users/'), [['TeamMember', 'active_users.active_users']]),
    'POST /api/users/': async () => check('POST /api/users/', await send('POST', '/api/users/', { email: 'carol@acme.test', role: 'USER' })),
    'PATCH /api/user/{id}/': async () => check('PATCH /api/user/{id}/', await send('PATCH', `/api/user/${bob.userId}/`, { role: 'USER' })),
    'POST /api/user/{id}/status/': async () => check('POST /api/user/{id}/status/', await send('POST', `/api/user/${bob.userId}/status/`, { status: 'Active' })),
    'GET /api/users/get-teams-and-users/': async () => check('GET /api/users/get-teams-and-users/', await send('GET', '/api/users/get-teams-and-users/'), [['UserLookup', 'profiles'], ['TeamLookup', 'teams']]),
    'POST /api/accounts/': async () => {
      const body = { name: 'Initech', email: 'info@initech.test', phone: null, website: null, industry: null, number_of_employees: 40, annual_revenue: null, currency: null, address_line: null, city: 'Austin', state: null, postcode: null, country: 'US', description: null, assigned_to: [], tags: [], contacts: [], custom_fields: {} }
      ids.account = created(await check('POST /api/accounts/', await send('POST', '/api/accounts/', body)))
    },
    'GET /api/accounts/': async () => check('GET /api/accounts/', await send('GET', '/api/accounts/?limit=20&offset=0'), [['Account', 'active_accounts.open_accounts'], ['AccountRollups', 'active_accounts.open_accounts.0.rollups']]),
    'PUT /api/accounts/{id}/': async () => {
      const body = { name: 'Initech', email: 'info@initech.test', city: 'Austin', country: 'US', number_of_employees: 45, assigned_to: [], tags: [ids.tag], contacts: [{ id: ids.contact }], custom_fields: {} }
      return check('PUT /api/accounts/{id}/', await send('PUT', `/api/accounts/${ids.account}/`, body))
    },
    'GET /api/accounts/{id}/': async () => {
      const body = await check('GET /api/accounts/{id}/', await send('GET', `/api/accounts/${ids.account}/`), [['Account', 'account_obj']])
      for (const list of ['contacts', 'opportunities', 'tasks']) if (!(at(body, `account_obj.${list}`) as unknown[] | undefined)?.length) fail('GET /api/accounts/{id}/', `: account_obj.${list} is empty (the app's detail lists read it there)`)
    },
    'POST /api/contacts/': async () => {
      const body = { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', phone: null, organization: 'Initech', title: 'Engineer', department: null, do_not_call: false, linkedin_url: null, address_line: null, city: null, state: null, postcode: null, country: null, description: null, account: ids.account, is_active: true }
      ids.contact = created(await check('POST /api/contacts/', await send('POST', '/api/contacts/', body)))
    },
    'GET /api/contacts/': async () => check('GET /api/contacts/', await send('GET', '/api/contacts/?limit=20&offset=0'), [['Contact', 'results|contact_obj_list']]),
    'GET /api/contacts/{id}/': async () => check('GET /api/contacts/{id}/', await send('GET', `/api/contacts/${ids.contact}/`), [['Contact', 'contact_obj']]),
    'PUT /api/contacts/{id}/': async () => check('PUT /api/contacts/{id}/', await send('PUT', `/api/contacts/${ids.contact}/`, { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', account: ids.account, do_not_call: true, is_active: true })),
    'POST /api/leads/': async () => {
      const body = { title: null, salutation: 'Mr', first_name: 'Sam', last_name: 'Hot', email: 'sam@lead.test', phone: null, job_title: 'CTO', website: null, linkedin_url: 'https://linkedin.com/in/sam', company_name: 'Hotco', status: 'assigned', source: 'call', rating: 'HOT', industry: null, opportunity_amount: 1200.5, currency: 'USD', probability: 50, close_date: null, address_line: null, city: null, state: null, postcode: null, country: null, last_contacted: '2026-11-20', next_follow_up: '2026-11-22', description: null, is_active: true, assigned_to: [], tags: [] }
      ids.lead = created(await check('POST /api/leads/', await send('POST', '/api/leads/', body)))
    },
    'GET /api/leads/': async () => {
      const body = await check('GET /api/leads/', await send('GET', '/api/leads/?rating=HOT&next_follow_up=2026-11-22&limit=20&offset=0'), [['Lead', 'open_leads.open_leads']])
      const [lead] = (at(body, 'open_leads.open_leads') as Json[] | undefined) ?? []
      if (lead?.linkedin_url !== 'https://linkedin.com/in/sam' || lead.last_contacted !== '2026-11-20') fail('GET /api/leads/', `: ?rating=HOT&next_follow_up=2026-11-22 does not find the lead as it was sent: ${JSON.stringify(lead)?.slice(0, 200)}`)
    },
    'GET /api/leads/{id}/': async () => check('GET /api/leads/{id}/', await send('GET', `/api/leads/${ids.lead}/`), [['Lead', 'lead_obj'], ['CustomFieldDefinition', 'custom_field_definitions'], ['Comment', 'comments']]),
    'PUT /api/leads/{id}/': async () => check('PUT /api/leads/{id}/', await send('PUT', `/api/leads/${ids.lead}/`, { first_name: 'Sam', last_name: 'Hot', email: 'sam@lead.test', company_name: 'Hotco', status: 'in process', source: 'call', rating: 'WARM', opportunity_amount: 1200.5, currency: 'USD', probability: 50, tags: [], assigned_to: [] })),
    'PATCH /api/leads/{id}/': async () => check('PATCH /api/leads/{id}/', await send('PATCH', `/api/leads/${ids.lead}/`, { rating: 'HOT' })),
    'POST /api/leads/{id}/': async () => {
      const body = await check('POST /api/leads/{id}/', await send('POST', `/api/leads/${ids.lead}/`, { comment: 'Called, interested' }), [['Comment', 'comments']])
      ids.leadComment = String((at(body, 'comments') as Json[] | undefined)?.at(-1)?.id ?? '')
    },
    'PATCH /api/leads/comment/{id}/': async () => check('PATCH /api/leads/comment/{id}/', await send('PATCH', `/api/leads/comment/${ids.leadComment}/`, { comment: 'Called twice' })),
    'DELETE /api/leads/comment/{id}/': async () => check('DELETE /api/leads/comment/{id}/', await send('DELETE', `/api/leads/comment/${ids.leadComment}/`)),
    'GET /api/cases/solutions/': async () => check('GET /api/cases/solutions/', await send('GET', '/api/cases/solutions/'), [['Solution', 'solutions|results']]),
    'POST /api/cases/solutions/': async () => {
      ids.solution = created(await check('POST /api/cases/solutions/', await send('POST', '/api/cases/solutions/', { title: 'Reset a password', description: 'Use the sign-in code.', status: 'draft', is_published: false })))
    },
    'GET /api/cases/solutions/{id}/': async () => check('GET /api/cases/solutions/{id}/', await send('GET', `/api/cases/solutions/${ids.solution}/`), [['Solution']]),
    'PUT /api/cases/solutions/{id}/': async () => check('PUT /api/cases/solutions/{id}/', await send('PUT', `/api/cases/solutions/${ids.solution}/`, { title: 'Reset a password', description: 'Ask for a code.', status: 'approved', is_published: false })),
    'POST /api/cases/solutions/{id}/publish/': async () => check('POST /api/cases/solutions/{id}/publish/', await send('POST', `/api/cases/solutions/${ids.solution}/publish/`, {})),
    'POST /api/cases/solutions/{id}/unpublish/': async () => check('POST /api/cases/solutions/{id}/unpublish/', await send('POST', `/api/cases/solutions/${ids.solution}/unpublish/`, {})),
    'DELETE /api/cases/solutions/{id}/': async () => check('DELETE /api/cases/solutions/{id}/', await send('DELETE', `/api/cases/solutions/${ids.solution}/`)),
    'POST /api/cases/mailboxes/': async () => {
      ids.mailbox = created(await check('POST /api/cases/mailboxes/', await send('POST', '/api/cases/mailboxes/', { address: 'help@acme.test', provider: 'ses', default_priority: 'High', default_case_type: 'Question', default_assignee_id: null, is_active: true }), [['Mailbox']]))
    },
    'GET /api/cases/mailboxes/': async () => check('GET /api/cases/mailboxes/', await send('GET', '/api/cases/mailboxes/'), [['Mailbox', 'mailboxes']]),
    'PUT /api/cases/mailboxes/{id}/': async () => check('PUT /api/cases/mailboxes/{id}/', await send('PUT', `/api/cases/mailboxes/${ids.mailbox}/`, { is_active: false }), [['Mailbox']]),
    'DELETE /api/cases/mailboxes/{id}/': async () => check('DELETE /api/cases/mailboxes/{id}/', await send('DELETE', `/api/cases/mailboxes/${ids.mailbox}/`)),
    'GET /api/cases/reopen-policy/': async () => check('GET /api/cases/reopen-policy/', await send('GET', '/api/cases/reopen-policy/'), [['ReopenPolicy']]),
    'PUT /api/cases/reopen-policy/': async () => check('PUT /api/cases/reopen-policy/', await send('PUT', '/api/cases/reopen-policy/', { is_enabled: true, reopen_window_days: 5, reopen_to_status: 'New', notify_assigned: true }), [['ReopenPolicy']]),
    'GET /api/business-hours/calendar/': async () => {
      ids.calendar = created(await check('GET /api/business-hours/calendar/', await send('GET', '/api/business-hours/calendar/'), [['BusinessCalendar'], ['BusinessHoliday', 'holidays']]))
    },
    'PUT /api/business-hours/calendar/{id}/': async () => {
      // businessHoursPayload: the name, the zone and the fourteen flat fields ("HH:MM", null for a closed day).
      const days = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].flatMap((day, i) => [[`${day}_open`, i < 5 ? '09:30' : null], [`${day}_close`, i < 5 ? '18:00' : null]]))
      return check('PUT /api/business-hours/calendar/{id}/', await send('PUT', `/api/business-hours/calendar/${ids.calendar}/`, { name: 'Support', timezone: 'Asia/Kolkata', ...days }), [['BusinessCalendar'], ['BusinessHoliday', 'holidays']])
    },
    'POST /api/business-hours/calendar/{id}/holidays/': async () => {
      ids.holiday = created(await check('POST /api/business-hours/calendar/{id}/holidays/', await send('POST', `/api/business-hours/calendar/${ids.calendar}/holidays/`, { date: '2026-12-25', name: 'Christmas' }), [['BusinessHoliday']]))
    },
    'DELETE /api/business-hours/calendar/{id}/holidays/{id}/': async () =>
      check('DELETE /api/business-hours/calendar/{id}/holidays/{id}/', await send('DELETE', `/api/business-hours/calendar/${ids.calendar}/holidays/${ids.holiday}/`)),
    'POST /api/opportunities/': async () => {
      const body = { name: 'Initech renewal', stage: 'PROSPECTING', probability: 10, amount: '1100.00', account: ids.account, closed_on: '2026-12-15', description: null, assigned_to: [], contacts: [ids.contact], tags: [], teams: [], opportunity_type: null, lead_source: 'NONE', currency: 'USD', custom_fields: {} }
      ids.deal = created(await check('POST /api/opportunities/', await send('POST', '/api/opportunities/', body)))
    },
    'GET /api/opportunities/': async () => check('GET /api/opportunities/', await send('GET', '/api/opportunities/?limit=20&offset=0'), [['Deal', 'opportunities|results']]),
    'GET /api/opportunities/{id}/': async () => check('GET /api/opportunities/{id}/', await send('GET', `/api/opportunities/${ids.deal}/`), [['Deal', 'opportunity_obj'], ['CustomFieldDefinition', 'custom_field_definitions']]),
    'PUT /api/opportunities/{id}/': async () => check('PUT /api/opportunities/{id}/', await send('PUT', `/api/opportunities/${ids.deal}/`, { name: 'Initech renewal', stage: 'QUALIFICATION', probability: 25, amount: '1100.00', account: ids.account, closed_on: '2026-12-15', assigned_to: [], contacts: [ids.contact], tags: [], teams: [], lead_source: 'NONE', currency: 'USD', custom_fields: {} })),
    'PATCH /api/opportunities/{id}/': async () => check('PATCH /api/opportunities/{id}/', await send('PATCH', `/api/opportunities/${ids.deal}/`, { stage: 'PROPOSAL' })),
    'POST /api/opportunities/{id}/': async () => {
      const body = await check('POST /api/opportunities/{id}/', await send('POST', `/api/opportunities/${ids.deal}/`, { comment: 'Sent the proposal' }), [['Comment', 'comments']])
      ids.dealComment = String((at(body, 'comments') as Json[] | undefined)?.at(-1)?.id ?? '')
    },
    'PATCH /api/opportunities/comment/{id}/': async () => check('PATCH /api/opportunities/comment/{id}/', await send('PATCH', `/api/opportunities/comment/${ids.dealComment}/`, { comment: 'Sent the proposal (v2)' })),
    'DELETE /api/opportunities/comment/{id}/': async () => check('DELETE /api/opportunities/comment/{id}/', await send('DELETE', `/api/opportunities/comment/${ids.dealComment}/`)),
    'POST /api/tasks/': async () => {
      // task_form_screen.dart: one parent set, the others sent as null (case too).
      const task = (parent: 'account' | 'lead', id: string, title: string) => ({ title, description: null, status: 'New', priority: 'High', due_date: '2026-11-25', assigned_to: [], custom_fields: {}, account: null, lead: null, opportunity: null, case: null, [parent]: id })
      ids.task = created(await check('POST /api/tasks/', await send('POST', '/api/tasks/', task('account', ids.account!, 'Visit Initech'))))
      ids.leadTask = created(await check('POST /api/tasks/', await send('POST', '/api/tasks/', task('lead', ids.lead!, 'Call Sam'))))
    },
    'GET /api/tasks/': async () => {
      const body = await check('GET /api/tasks/', await send('GET', '/api/tasks/?limit=20&offset=0'), [['Task', 'tasks|results']])
      const leadTask = (at(body, 'tasks') as Json[] | undefined)?.find((task) => task.id === ids.leadTask)
      if (at(leadTask, 'lead.first_name') !== 'Sam') fail('GET /api/tasks/', ': a task linked to a lead does not carry the lead\'s first_name (the app shows "Unknown")')
    },
    'GET /api/tasks/{id}/': async () => check('GET /api/tasks/{id}/', await send('GET', `/api/tasks/${ids.task}/`), [['Task', 'task_obj']]),
    'PATCH /api/tasks/{id}/': async () => {
      // updateTask sends the form's whole payload; the detail screen's quick edits send status or priority alone.
      const body = { title: 'Visit Initech', description: 'Bring the contract', status: 'In Progress', priority: 'High', due_date: '2026-11-26', assigned_to: [], custom_fields: {}, account: ids.account, lead: null, opportunity: null, case: null }
      await check('PATCH /api/tasks/{id}/', await send('PATCH', `/api/tasks/${ids.task}/`, body))
      return check('PATCH /api/tasks/{id}/', await send('PATCH', `/api/tasks/${ids.task}/`, { status: 'In Progress' }))
    },
    'POST /api/tasks/{id}/': async () => {
      const body = await check('POST /api/tasks/{id}/', await send('POST', `/api/tasks/${ids.task}/`, { comment: 'On my way' }), [['Comment', 'comments']])
      ids.taskComment = String((at(body, 'comments') as Json[] | undefined)?.at(-1)?.id ?? '')
    },
    'POST /api/tasks/{id}/ (attachment)': async () => {
      ids.taskAttachment = await upload('tasks', ids.task!, 'task_attachment')
      await upload('leads', ids.lead!, 'lead_attachment')
      await upload('opportunities', ids.deal!, 'opportunity_attachment')
    },
    'GET /api/attachments/{id}/download/': async () => {
      const answer = await send('GET', `/api/attachments/${ids.taskAttachment}/download/`)
      if (answer.status !== 200) fail('GET /api/attachments/{id}/download/', `: ${answer.status}`)
      checked.add('GET /api/attachments/{id}/download/')
    },
    'DELETE /api/tasks/attachment/{id}/': async () => check('DELETE /api/tasks/attachment/{id}/', await send('DELETE', `/api/tasks/attachment/${ids.taskAttachment}/`)),
    'DELETE /api/tasks/comment/{id}/': async () => check('DELETE /api/tasks/comment/{id}/', await send('DELETE', `/api/tasks/comment/${ids.taskComment}/`)),
    'GET /api/opportunities/goals/': async () => check('GET /api/opportunities/goals/', await send('GET', '/api/opportunities/goals/'), [['SalesGoal', 'goals']]),
    'POST /api/opportunities/goals/': async () => {
      const body = { name: 'November', goal_type: 'REVENUE', target_value: '5000', period_type: 'MONTHLY', period_start: '2026-11-01', period_end: '2026-11-30', is_active: true, assigned_to: bob.profileId }
      ids.goal = created(await check('POST /api/opportunities/goals/', await send('POST', '/api/opportunities/goals/', body)))
    },
    'GET /api/opportunities/goals/{id}/': async () => check('GET /api/opportunities/goals/{id}/', await send('GET', `/api/opportunities/goals/${ids.goal}/`), [['SalesGoal']]),
    'PUT /api/opportunities/goals/{id}/': async () => check('PUT /api/opportunities/goals/{id}/', await send('PUT', `/api/opportunities/goals/${ids.goal}/`, { name: 'November', goal_type: 'REVENUE', target_value: '6000', period_type: 'MONTHLY', period_start: '2026-11-01', period_end: '2026-11-30', is_active: true, assigned_to: bob.profileId })),
    'GET /api/opportunities/goals/leaderboard/': async () => check('GET /api/opportunities/goals/leaderboard/', await send('GET', '/api/opportunities/goals/leaderboard/?period_type=MONTHLY'), [['GoalLeaderRow', 'leaderboard']]),
    // The Tickets tab (tickets_provider.dart, ticket_form_screen.dart): the form's payload, the list's filter chips, replies and internal notes.
    'POST /api/cases/': async () => {
      const ticket = { name: 'Printer on fire', status: 'New', priority: 'Urgent', case_type: 'Incident', assigned_to: [], tags: [], contacts: [], custom_fields: {}, description: 'Smoke', account: ids.account }
      ids.case = created(await check('POST /api/cases/', await send('POST', '/api/cases/', ticket)))
      ids.childCase = created(await check('POST /api/cases/', await send('POST', '/api/cases/', { ...ticket, name: 'Second printer', priority: 'Normal' })))
    },
    'GET /api/cases/': async () => {
      const body = await check('GET /api/cases/', await send('GET', '/api/cases/?limit=20&offset=0&search=printer&status=New&status=Assigned&status=Pending'), [['Ticket', 'cases']])
      if (body.cases_count !== 2 || !('offset' in body)) fail('GET /api/cases/', ': the list answers cases_count and offset (the next page, or null)')
      await check('GET /api/cases/', await send('GET', `/api/cases/?limit=6&slim=true&account=${ids.account}&status=New`), [['Ticket', 'cases']])
      await check('GET /api/cases/', await send('GET', '/api/cases/?limit=20&offset=0&sla_breached=true&created_at__gte=2026-11-01T00:00:00.000Z'), [['Ticket', 'cases']])
    },
    'GET /api/cases/{id}/': async () => check('GET /api/cases/{id}/', await send('GET', `/api/cases/${ids.case}/`), [['Ticket', 'cases_obj'], ['Comment', 'comments'], ['Comment', 'internal_notes'], ['Attachment', 'attachments']]),
    'PATCH /api/cases/{id}/': async () => {
      await check('PATCH /api/cases/{id}/', await send('PATCH', `/api/cases/${ids.case}/`, { name: 'Printer on fire', status: 'Assigned', priority: 'Urgent', case_type: 'Incident', assigned_to: [], tags: [], contacts: [], custom_fields: {}, description: null }))
      return check('PATCH /api/cases/{id}/', await send('PATCH', `/api/cases/${ids.case}/`, { status: 'Closed', closed_on: '2026-11-22' }))
    },
    'POST /api/cases/{id}/': async () => {
      await check('POST /api/cases/{id}/', await send('POST', `/api/cases/${ids.case}/`, { comment: 'Checked the logs', is_internal: true }), [['Comment', 'internal_notes']])
      const body = await check('POST /api/cases/{id}/', await send('POST', `/api/cases/${ids.case}/`, { comment: 'We are on it', is_internal: false }), [['Comment', 'comments'], ['Ticket', 'cases_obj']])
      if (!at(body, 'cases_obj.first_response_at')) fail('POST /api/cases/{id}/', ': the first public reply stamps first_response_at')
    },
    'POST /api/cases/{id}/ (attachment)': async () => upload('cases', ids.case!, 'case_attachment'),
    // The analytics screen (analytics_provider.dart): its filters as AnalyticsQuery.toParams sends them, and the keys ticket_analytics_screen.dart reads.
    ...Object.fromEntries((['frt', 'mttr', 'backlog', 'agents', 'sla'] as const).map((metric) => {
      const key = `GET /api/cases/analytics/${metric}/`
      const reads = { frt: ['median_hours', 'p90_hours', 'count', 'breach_count'], mttr: ['median_hours', 'p90_hours', 'count'], backlog: ['series'], agents: ['results'], sla: ['frt_breach_rate', 'resolution_breach_rate'] }[metric]
      return [key, async () => {
        await check(key, await send('GET', `/api/cases/analytics/${metric}/`))
        const body = await check(key, await send('GET', `/api/cases/analytics/${metric}/?from=2026-11-01&to=2026-11-22&priority=Urgent&agent=${bob.profileId}`))
        for (const read of reads) if (!(read in body)) fail(key, `: the screen reads ${read}`)
      }]
    })),
    'POST /api/cases/{id}/watch/': async () => check('POST /api/cases/{id}/watch/', await send('POST', `/api/cases/${ids.case}/watch/`, {})),
    'GET /api/cases/{id}/watchers/': async () => {
      const body = await check('GET /api/cases/{id}/watchers/', await send('GET', `/api/cases/${ids.case}/watchers/`))
      if (body.is_current_user_watching !== true) fail('GET /api/cases/{id}/watchers/', ': is_current_user_watching after watching')
    },
    'GET /api/cases/watching/': async () => check('GET /api/cases/watching/', await send('GET', '/api/cases/watching/?limit=20&offset=0'), [['Ticket', 'cases']]),
    'DELETE /api/cases/{id}/watch/': async () => check('DELETE /api/cases/{id}/watch/', await send('DELETE', `/api/cases/${ids.case}/watch/`)),
    // ticket_solutions_panel.dart: a solution linked to the ticket (whose detail then lists it), the suggester, and the unlink.
    'POST /api/cases/{id}/solutions/': async () => {
      ids.caseSolution = created(await check('POST /api/cases/solutions/', await send('POST', '/api/cases/solutions/', { title: 'Clear a paper jam', description: 'Open the tray.', status: 'approved', is_published: true })))
      await check('POST /api/cases/{id}/solutions/', await send('POST', `/api/cases/${ids.case}/solutions/`, { solution_id: ids.caseSolution }), [['Solution', 'solution']])
      const detail = await check('GET /api/cases/{id}/', await send('GET', `/api/cases/${ids.case}/`), [['Solution', 'solutions']])
      if (at(detail, 'solutions.0.id') !== ids.caseSolution) fail('GET /api/cases/{id}/', ': solutions lists the linked solution')
    },
    // The app reads `suggestions` (or `solutions`), a key the original never answered (it answers `results`, which the web app reads): we answer both.
    'GET /api/cases/{id}/solution-suggestions/': async () => {
      const body = await check('GET /api/cases/{id}/solution-suggestions/', await send('GET', `/api/cases/${ids.case}/solution-suggestions/`), [['Solution', 'suggestions']])
      if (at(body, 'suggestions.0.id') !== ids.caseSolution) fail('GET /api/cases/{id}/solution-suggestions/', ': suggestions lists the published solution')
    },
    'DELETE /api/cases/{id}/solutions/{id}/': async () => check('DELETE /api/cases/{id}/solutions/{id}/', await send('DELETE', `/api/cases/${ids.case}/solutions/${ids.caseSolution}/`)),
    'POST /api/cases/{id}/link/': async () => check('POST /api/cases/{id}/link/', await send('POST', `/api/cases/${ids.childCase}/link/`, { parent_id: ids.case })),
    'GET /api/cases/{id}/tree/': async () => {
      const body = await check('GET /api/cases/{id}/tree/', await send('GET', `/api/cases/${ids.childCase}/tree/`))
      if (at(body, 'root.id') !== ids.case || at(body, 'focus_id') !== ids.childCase) fail('GET /api/cases/{id}/tree/', ': the tree answers the root above the ticket and focus_id')
    },
    'POST /api/cases/{id}/close-with-children/': async () => {
      const body = await check('POST /api/cases/{id}/close-with-children/', await send('POST', `/api/cases/${ids.case}/close-with-children/`, { cascade: true, resolution_comment: 'Fixed upstream' }))
      if (JSON.stringify(body.cascaded_case_ids) !== JSON.stringify([ids.childCase])) fail('POST /api/cases/{id}/close-with-children/', ': the open child is closed with its parent')
    },
    // ticket_detail_screen.dart: a duplicate merged into the ticket (which then lists it), and unmerged.
    'POST /api/cases/{id}/merge/{id}/': async () => {
      ids.duplicateCase = created(await check('POST /api/cases/', await send('POST', '/api/cases/', { name: 'Printer smokes', priority: 'High' })))
      const body = await check('POST /api/cases/{id}/merge/{id}/', await send('POST', `/api/cases/${ids.duplicateCase}/merge/${ids.case}/`, {}), [['Ticket', 'target_case']])
      if (body.redirected_url !== `/tickets/${ids.case}`) fail('POST /api/cases/{id}/merge/{id}/', ': the answer names where the duplicate went')
      const detail = await check('GET /api/cases/{id}/', await send('GET', `/api/cases/${ids.case}/`), [['Ticket', 'cases_obj']])
      if (at(detail, 'merged_from_cases.0.id') !== ids.duplicateCase) fail('GET /api/cases/{id}/', ': merged_from_cases lists the duplicate')
    },
    'POST /api/cases/{id}/unmerge/': async () => check('POST /api/cases/{id}/unmerge/', await send('POST', `/api/cases/${ids.duplicateCase}/unmerge/`, {}), [['Ticket', 'source_case']]),
    // ticket_time_panel.dart and timesheet_screen.dart: a timer started and stopped, time logged by hand, the ticket's entries and summary, the week.
    'POST /api/cases/{id}/time-entries/start/': async () => {
      ids.timer = created(await check('POST /api/cases/{id}/time-entries/start/', await send('POST', `/api/cases/${ids.case}/time-entries/start/`, { billable: true, description: 'On site' }), [['TimeEntry']]))
    },
    'POST /api/time-entries/{id}/stop/': async () => check('POST /api/time-entries/{id}/stop/', await send('POST', `/api/time-entries/${ids.timer}/stop/`, {}), [['TimeEntry']]),
    'POST /api/cases/{id}/time-entries/': async () => check('POST /api/cases/{id}/time-entries/', await send('POST', `/api/cases/${ids.case}/time-entries/`, { started_at: '2026-11-21T09:00:00.000Z', ended_at: '2026-11-21T10:30:00.000Z', billable: true, description: 'Diagnosis' }), [['TimeEntry']]),
    'GET /api/cases/{id}/time-entries/': async () => {
      const answer = await send('GET', `/api/cases/${ids.case}/time-entries/`)
      await check('GET /api/cases/{id}/time-entries/', answer, [['TimeEntry']])
      if (!Array.isArray(answer.body) || answer.body.length !== 2) fail('GET /api/cases/{id}/time-entries/', ': the app reads a bare list of the two entries (getList)')
    },
    'GET /api/cases/{id}/time-summary/': async () => {
      const body = await check('GET /api/cases/{id}/time-summary/', await send('GET', `/api/cases/${ids.case}/time-summary/`), [['TimeSummary'], ['TimeSummaryByProfile', 'by_profile']])
      if (body.total_minutes !== 90 || body.billable_minutes !== 90) fail('GET /api/cases/{id}/time-summary/', `: 90 minutes logged, ${String(body.total_minutes)} summed`)
    },
    'GET /api/time-entries/timesheet/': async () => {
      const body = await check('GET /api/time-entries/timesheet/', await send('GET', '/api/time-entries/timesheet/?start=2026-11-16&end=2026-11-22'), [['TimesheetWeek'], ['TimesheetDay', 'days'], ['TimeEntry', 'days.5.entries']])
      if ((body.days as unknown[] | undefined)?.length !== 7 || body.total_minutes !== 90) fail('GET /api/time-entries/timesheet/', ': seven days, the 90 minutes of Saturday')
    },
    // settings_provider.dart: saved replies, made, listed, edited, turned back on, applied to a ticket and removed.
    'POST /api/macros/': async () => {
      ids.macro = created(await check('POST /api/macros/', await send('POST', '/api/macros/', { title: 'Thanks', body: 'Hi %customer_name%, about %case_subject%. %priority%', scope: 'personal' }), [['Macro']]))
    },
    'GET /api/macros/': async () => {
      const body = await check('GET /api/macros/', await send('GET', '/api/macros/'), [['Macro', 'results']])
      await check('GET /api/macros/', await send('GET', '/api/macros/?active=true'), [['Macro', 'results']])
      if ((body.placeholders as unknown[] | undefined)?.length !== 7) fail('GET /api/macros/', ': the seven placeholders for the reference card')
    },
    'PATCH /api/macros/{id}/': async () => {
      await check('PATCH /api/macros/{id}/', await send('PATCH', `/api/macros/${ids.macro}/`, { title: 'Thank you', body: 'Hi %customer_name%, about %case_subject%. %priority%', scope: 'org' }), [['Macro']])
      return check('PATCH /api/macros/{id}/', await send('PATCH', `/api/macros/${ids.macro}/`, { is_active: true }), [['Macro']])
    },
    'POST /api/macros/{id}/render/': async () => {
      const body = await check('POST /api/macros/{id}/render/', await send('POST', `/api/macros/${ids.macro}/render/`, { case_id: ids.case }))
      if (typeof body.rendered_body !== 'string' || !body.rendered_body.includes('Printer on fire') || !body.rendered_body.includes('%priority%')) fail('POST /api/macros/{id}/render/', `: rendered_body ${JSON.stringify(body.rendered_body)}`)
    },
    'DELETE /api/macros/{id}/': async () => check('DELETE /api/macros/{id}/', await send('DELETE', `/api/macros/${ids.macro}/`)),
    'GET /api/boards/': async () => check('GET /api/boards/', await send('GET', '/api/boards/'), [['BoardSummary', 'results']]),
    'POST /api/boards/': async () => {
      ids.board = created(await check('POST /api/boards/', await send('POST', '/api/boards/', { name: 'Field visits' })))
    },
    'POST /api/boards/{id}/columns/': async () => {
      ids.lane = created(await check('POST /api/boards/{id}/columns/', await send('POST', `/api/boards/${ids.board}/columns/`, { name: 'To visit', order: 0 })))
    },
    'GET /api/boards/{id}/columns/': async () => {
      const answer = await send('GET', `/api/boards/${ids.board}/columns/`)
      await check('GET /api/boards/{id}/columns/', answer, [['BoardLane']])
      if (!Array.isArray(answer.body)) fail('GET /api/boards/{id}/columns/', ': the app reads a bare list (getList)')
    },
    'POST /api/boards/columns/{id}/tasks/': async () => {
      ids.card = created(await check('POST /api/boards/columns/{id}/tasks/', await send('POST', `/api/boards/columns/${ids.lane}/tasks/`, { title: 'Initech', order: 0, description: 'Second floor', priority: 'high' })))
    },
    'PUT /api/boards/tasks/{id}/': async () => check('PUT /api/boards/tasks/{id}/', await send('PUT', `/api/boards/tasks/${ids.card}/`, { column: ids.lane, order: 0 })),
    'DELETE /api/boards/tasks/{id}/': async () => check('DELETE /api/boards/tasks/{id}/', await send('DELETE', `/api/boards/tasks/${ids.card}/`)),
    'GET /api/notifications/': async () => {
      // Bob assigns the signed-in admin a lead: a notification for the app's feed.
      const assigned = await app.inject({ method: 'POST', url: '/api/leads/', headers: bob.headers, payload: { first_name: 'For', last_name: 'Admin', assigned_to: [acme.admin.profileId] } })
      if (assigned.statusCode !== 200) throw new Error(assigned.body)
      const body = await check('GET /api/notifications/', await send('GET', '/api/notifications/?limit=50'), [['AppNotification', 'results']])
      const [first] = (at(body, 'results') as Json[] | undefined) ?? []
      if (first?.verb !== 'lead.assigned') fail('GET /api/notifications/', ': the lead Bob assigned to the signed-in admin is not in the feed')
      ids.notification = String(first?.id ?? '')
    },
    'POST /api/notifications/{id}/read/': async () => check('POST /api/notifications/{id}/read/', await send('POST', `/api/notifications/${ids.notification}/read/`, {})),
    'POST /api/notifications/read-all/': async () => check('POST /api/notifications/read-all/', await send('POST', '/api/notifications/read-all/', {})),
    'GET /api/profile/tokens/': async () => check('GET /api/profile/tokens/', await send('GET', '/api/profile/tokens/'), [['AccessToken', 'tokens']]),
    'POST /api/profile/tokens/': async () => {
      const body = await check('POST /api/profile/tokens/', await send('POST', '/api/profile/tokens/', { name: 'Phone export', scopes: ['*:read'], expires_at: '2027-01-01T00:00:00.000Z' }))
      ids.token = String(at(body, 'id') ?? at(body, 'token_obj.id') ?? '')
    },
    'GET /api/org/tokens/': async () => check('GET /api/org/tokens/', await send('GET', '/api/org/tokens/'), [['AccessToken', 'tokens']]),
    'DELETE /api/profile/tokens/{id}/': async () => check('DELETE /api/profile/tokens/{id}/', await send('DELETE', `/api/profile/tokens/${ids.token}/`)),
    'DELETE /api/org/tokens/{id}/': async () => {
      const token = await check('POST /api/profile/tokens/', await send('POST', '/api/profile/tokens/', { name: 'Second', scopes: [], expires_at: null }))
      return check('DELETE /api/org/tokens/{id}/', await send('DELETE', `/api/org/tokens/${String(token.id ?? '')}/`))
    },
    // documents_provider.dart: uploads and file replacements are multipart (shared_to and teams as JSON text), renames JSON.
    'POST /api/documents/': async () => {
      const res = await multipart('POST', '/api/documents/', { title: 'Site survey', status: 'active', shared_to: JSON.stringify([bob.profileId]), teams: '[]', document_file: { name: 'survey.pdf', type: 'application/pdf', content: '%PDF-1.4 survey' } })
      ids.document = created(await check('POST /api/documents/', res))
    },
    'GET /api/documents/': async () => {
      const body = await check('GET /api/documents/', await send('GET', '/api/documents/?limit=1000&status=active'), [['CrmDocument', 'documents_active.documents_active'], ['CrmDocument', 'documents_inactive.documents_inactive']])
      if (!(at(body, 'documents_active.documents_active') as Json[] | undefined)?.some((doc) => doc.id === ids.document)) fail('GET /api/documents/', ': the uploaded document is not listed')
    },
    'PUT /api/documents/{id}/': async () => {
      await check('PUT /api/documents/{id}/', await send('PUT', `/api/documents/${ids.document}/`, { title: 'Site survey (final)', status: 'active', shared_to: [bob.profileId], teams: [] }))
      return check('PUT /api/documents/{id}/', await multipart('PUT', `/api/documents/${ids.document}/`, { title: 'Site survey (final)', status: 'inactive', shared_to: '[]', teams: '[]', document_file: { name: 'survey-v2.pdf', type: 'application/pdf', content: '%PDF-1.4 survey v2' } }))
    },
    'GET /api/documents/{id}/download/': async () => {
      const answer = await send('GET', `/api/documents/${ids.document}/download/`)
      if (answer.status !== 200) fail('GET /api/documents/{id}/download/', `: ${answer.status}`)
      checked.add('GET /api/documents/{id}/download/')
    },
    'GET /api/packs/': async () => check('GET /api/packs/', await send('GET', '/api/packs/'), [['VerticalPack', 'packs']]),
    'POST /api/packs/{id}/apply/': async () => check('POST /api/packs/{id}/apply/', await send('POST', '/api/packs/software-sales/apply/', {}), [['PackApplyReport']]),
    'DELETE /api/packs/sample-data/': async () => {
      const body = await check('DELETE /api/packs/sample-data/', await send('DELETE', '/api/packs/sample-data/'))
      if (typeof body.deleted !== 'number' || typeof body.retained_by_type !== 'object') fail('DELETE /api/packs/sample-data/', ': clearSampleData reads deleted (a number) and retained_by_type')
    },
    // invoice_extras_provider.dart (products) and invoices_provider.dart, with new_invoice_screen.dart's body.
    'GET /api/invoices/products/': async () => check('GET /api/invoices/products/', await send('GET', '/api/invoices/products/?limit=100'), [['Product', 'results']]),
    'POST /api/invoices/products/': async () => {
      const body = await check('POST /api/invoices/products/', await send('POST', '/api/invoices/products/', { name: 'Site visit', description: 'Half a day', sku: 'SV-1', price: '120.00', currency: 'USD', category: 'Services', is_active: true }), [['Product', 'product']])
      ids.product = String(at(body, 'product.id') ?? '')
    },
    'PUT /api/invoices/products/{id}/': async () => check('PUT /api/invoices/products/{id}/', await send('PUT', `/api/invoices/products/${ids.product}/`, { name: 'Site visit', price: '130.00', is_active: true })),
    'POST /api/invoices/': async () => {
      const payload = { account_id: ids.account, contact_id: ids.contact, invoice_title: 'Visit', currency: 'USD', issue_date: '2026-11-22', payment_terms: 'NET_30', line_items: [{ name: 'Site visit', description: '', quantity: '2.0', unit_price: '130.00', order: 0, product: ids.product }], notes: 'Thanks' }
      const body = await check('POST /api/invoices/', await send('POST', '/api/invoices/', payload), [['Invoice', 'invoice'], ['InvoiceLineItem', 'invoice.line_items']])
      ids.invoice = String(at(body, 'invoice.id') ?? '')
    },
    'GET /api/invoices/': async () => check('GET /api/invoices/', await send('GET', '/api/invoices/?limit=20&offset=0&sort=due_date&search=Visit'), [['Invoice', 'results'], ['InvoiceTotals', 'totals']]),
    'GET /api/invoices/{id}/': async () => check('GET /api/invoices/{id}/', await send('GET', `/api/invoices/${ids.invoice}/`), [['Invoice', 'invoice']]),
    'POST /api/invoices/{id}/send/': async () => check('POST /api/invoices/{id}/send/', await send('POST', `/api/invoices/${ids.invoice}/send/`, {})),
    'POST /api/invoices/{id}/mark-paid/': async () => {
      await check('POST /api/invoices/{id}/mark-paid/', await send('POST', `/api/invoices/${ids.invoice}/mark-paid/`, { amount: '100.00', payment_method: 'CASH', reference_number: 'R-1' }))
      const body = await check('GET /api/invoices/{id}/', await send('GET', `/api/invoices/${ids.invoice}/`), [['Invoice', 'invoice'], ['Payment', 'invoice.payments']])
      if (at(body, 'invoice.status') !== 'Partially_Paid') fail('POST /api/invoices/{id}/mark-paid/', `: a part payment leaves ${String(at(body, 'invoice.status'))}`)
    },
    'POST /api/invoices/{id}/cancel/': async () => check('POST /api/invoices/{id}/cancel/', await send('POST', `/api/invoices/${ids.invoice}/cancel/`, {})),
    'POST /api/invoices/estimates/{id}/send/': async () => {
      // The app lists, sends and converts estimates; it makes none (the web app does).
      const made = await send('POST', '/api/invoices/estimates/', { title: 'Visit quote', account_id: ids.account, contact_id: ids.contact, line_items: [{ name: 'Site visit', quantity: '1', unit_price: '130.00' }] })
      ids.estimate = String(at(made.body, 'estimate.id') ?? '')
      return check('POST /api/invoices/estimates/{id}/send/', await send('POST', `/api/invoices/estimates/${ids.estimate}/send/`, {}))
    },
    'GET /api/invoices/estimates/': async () => check('GET /api/invoices/estimates/', await send('GET', '/api/invoices/estimates/?limit=50'), [['Estimate', 'results']]),
    'POST /api/invoices/estimates/{id}/convert/': async () => check('POST /api/invoices/estimates/{id}/convert/', await send('POST', `/api/invoices/estimates/${ids.estimate}/convert/`, {}), [['Invoice', 'invoice']]),
    // recurring_list_screen.dart and new_recurring_screen.dart's body (next_generation_date sent as the start date).
    'POST /api/invoices/recurring/': async () => {
      const payload = { title: 'Monthly visit', account_id: ids.account, contact_id: ids.contact, frequency: 'MONTHLY', start_date: '2026-11-30', next_generation_date: '2026-11-30', payment_terms: 'NET_30', currency: 'USD', auto_send: false, line_items: [{ name: 'Site visit', description: '', quantity: '1.0', unit_price: '130.00', order: 0 }] }
      const body = await check('POST /api/invoices/recurring/', await send('POST', '/api/invoices/recurring/', payload), [['RecurringInvoice', 'recurring_invoice']])
      ids.recurring = String(at(body, 'recurring_invoice.id') ?? '')
    },
    'GET /api/invoices/recurring/': async () => check('GET /api/invoices/recurring/', await send('GET', '/api/invoices/recurring/?limit=50&is_active=true'), [['RecurringInvoice', 'results']]),
    'POST /api/invoices/recurring/{id}/toggle/': async () => check('POST /api/invoices/recurring/{id}/toggle/', await send('POST', `/api/invoices/recurring/${ids.recurring}/toggle/`, {})),
    // invoice_reports_screen.dart: the admin's reports.
    'GET /api/invoices/reports/dashboard/': async () => check('GET /api/invoices/reports/dashboard/', await send('GET', '/api/invoices/reports/dashboard/'), [['InvoiceDashboard']]),
    'GET /api/invoices/reports/aging/': async () => check('GET /api/invoices/reports/aging/', await send('GET', '/api/invoices/reports/aging/'), [['AgingReport']]),
    // invoice_templates_screen.dart and invoice_template_form_screen.dart (the JSON path: no logo).
    'POST /api/invoices/templates/': async () => {
      const body = await check('POST /api/invoices/templates/', await send('POST', '/api/invoices/templates/', { name: 'Plain', primary_color: '#112233', secondary_color: '#445566', default_notes: 'Thanks', default_terms: 'Net 30', footer_text: 'Acme Ltd', is_default: true }), [['InvoiceTemplate', 'template']])
      ids.template = String(at(body, 'template.id') ?? '')
    },
    'GET /api/invoices/templates/': async () => check('GET /api/invoices/templates/', await send('GET', '/api/invoices/templates/?limit=50'), [['InvoiceTemplate', 'results']]),
    'PUT /api/invoices/templates/{id}/': async () => check('PUT /api/invoices/templates/{id}/', await send('PUT', `/api/invoices/templates/${ids.template}/`, { is_default: true })),
    'DELETE /api/invoices/products/{id}/': async () => check('DELETE /api/invoices/products/{id}/', await send('DELETE', `/api/invoices/products/${ids.product}/`)),
    // The deletes last, each with the app's Content-Type: application/json and no body.
    'DELETE /api/custom-fields/{id}/': async () => check('DELETE /api/custom-fields/{id}/', await send('DELETE', `/api/custom-fields/${ids.field}/`)),
    'DELETE /api/opportunities/goals/{id}/': async () => check('DELETE /api/opportunities/goals/{id}/', await send('DELETE', `/api/opportunities/goals/${ids.goal}/`)),
    // Case settings and approvals (settings_provider.dart, approvals_provider.dart), as their payload builders send them.
    'GET /api/cases/routing-rules/': async () => check('GET /api/cases/routing-rules/', await send('GET', '/api/cases/routing-rules/'), [['RoutingRule', 'rules']]),
    'POST /api/cases/routing-rules/': async () => {
      ids.routingRule = created(await check('POST /api/cases/routing-rules/', await send('POST', '/api/cases/routing-rules/', { name: 'Low tickets', priority_order: 5, strategy: 'round_robin', stop_processing: true, conditions: [{ field: 'priority', op: 'eq', value: 'Low' }], is_active: true, target_assignee_ids: [bob.profileId] }), [['RoutingRule']]))
    },
    'PUT /api/cases/routing-rules/{id}/': async () => check('PUT /api/cases/routing-rules/{id}/', await send('PUT', `/api/cases/routing-rules/${ids.routingRule}/`, { is_active: true }), [['RoutingRule']]),
    'DELETE /api/cases/routing-rules/{id}/': async () => check('DELETE /api/cases/routing-rules/{id}/', await send('DELETE', `/api/cases/routing-rules/${ids.routingRule}/`)),
    'GET /api/cases/escalation-policies/': async () => check('GET /api/cases/escalation-policies/', await send('GET', '/api/cases/escalation-policies/'), [['EscalationPolicy', 'policies']]),
    'POST /api/cases/escalation-policies/': async () => {
      const body = { priority: 'High', first_response_action: 'notify', resolution_action: 'reassign', first_response_target_id: bob.profileId, resolution_target_id: null, notify_team_id: null, is_active: true }
      ids.escalationPolicy = created(await check('POST /api/cases/escalation-policies/', await send('POST', '/api/cases/escalation-policies/', body), [['EscalationPolicy']]))
    },
    'PUT /api/cases/escalation-policies/{id}/': async () => check('PUT /api/cases/escalation-policies/{id}/', await send('PUT', `/api/cases/escalation-policies/${ids.escalationPolicy}/`, { first_response_action: 'notify_and_reassign', resolution_action: 'notify', first_response_target_id: bob.profileId, resolution_target_id: null, notify_team_id: null }), [['EscalationPolicy']]),
    'DELETE /api/cases/escalation-policies/{id}/': async () => check('DELETE /api/cases/escalation-policies/{id}/', await send('DELETE', `/api/cases/escalation-policies/${ids.escalationPolicy}/`)),
    'GET /api/cases/approval-rules/': async () => check('GET /api/cases/approval-rules/', await send('GET', '/api/cases/approval-rules/'), [['ApprovalRule', 'rules']]),
    'POST /api/cases/approval-rules/': async () => {
      const body = { name: 'Low tickets', approver_role: 'ADMIN', approver_ids: [], trigger_event: 'pre_close', match_priority: 'Low', match_case_type: null, match_team_id: null, is_active: true }
      ids.approvalRule = created(await check('POST /api/cases/approval-rules/', await send('POST', '/api/cases/approval-rules/', body), [['ApprovalRule']]))
    },
    'PUT /api/cases/approval-rules/{id}/': async () => check('PUT /api/cases/approval-rules/{id}/', await send('PUT', `/api/cases/approval-rules/${ids.approvalRule}/`, { is_active: true }), [['ApprovalRule']]),
    'POST /api/cases/{id}/request-approval/': async () => {
      // A ticket of bob's that the rule gates: the app's user (an admin) asks, and later withdraws it.
      ids.gatedCase = created(await check('POST /api/cases/', await send('POST', '/api/cases/', { name: 'Refund', status: 'New', priority: 'Low', assigned_to: [bob.profileId], tags: [], contacts: [], custom_fields: {} })))
      ids.ownApproval = created(await check('POST /api/cases/{id}/request-approval/', await send('POST', `/api/cases/${ids.gatedCase}/request-approval/`, { note: 'Refund approved by finance' }), [['Approval']]))
    },
    'POST /api/cases/approvals/{id}/cancel/': async () => check('POST /api/cases/approvals/{id}/cancel/', await send('POST', `/api/cases/approvals/${ids.ownApproval}/cancel/`, {}), [['Approval']]),
    'GET /api/cases/approvals/': async () => {
      const asked = await app.inject({ method: 'POST', url: `/api/cases/${ids.gatedCase}/request-approval/`, headers: bob.headers, payload: { note: 'Please' } })
      ids.bobsApproval = String(asked.json().id)
      await check('GET /api/cases/approvals/', await send('GET', '/api/cases/approvals/?mine=true&state=pending'), [['Approval', 'approvals']])
      await check('GET /api/cases/approvals/', await send('GET', `/api/cases/approvals/?state=all&case=${ids.gatedCase}`), [['Approval', 'approvals']])
    },
    'POST /api/cases/approvals/{id}/reject/': async () => {
      await check('POST /api/cases/approvals/{id}/reject/', await send('POST', `/api/cases/approvals/${ids.bobsApproval}/reject/`, { reason: 'Not yet' }), [['Approval']])
      ids.bobsApproval = String((await app.inject({ method: 'POST', url: `/api/cases/${ids.gatedCase}/request-approval/`, headers: bob.headers, payload: {} })).json().id)
    },
    'POST /api/cases/approvals/{id}/approve/': async () => check('POST /api/cases/approvals/{id}/approve/', await send('POST', `/api/cases/approvals/${ids.bobsApproval}/approve/`, {}), [['Approval']]),
    'DELETE /api/cases/approval-rules/{id}/': async () => {
      const body = await check('DELETE /api/cases/approval-rules/{id}/', await send('DELETE', `/api/cases/approval-rules/${ids.approvalRule}/`))
      if (body.is_active !== false) fail('DELETE /api/cases/approval-rules/{id}/', ': a rule with requests is turned off, and the answer says so')
    },
    'DELETE /api/cases/{id}/': async () => check('DELETE /api/cases/{id}/', await send('DELETE', `/api/cases/${ids.childCase}/`)),
    'DELETE /api/tasks/{id}/': async () => check('DELETE /api/tasks/{id}/', await send('DELETE', `/api/tasks/${ids.task}/`)),
    'DELETE /api/opportunities/{id}/': async () => check('DELETE /api/opportunities/{id}/', await send('DELETE', `/api/opportunities/${ids.deal}/`)),
    'DELETE /api/leads/{id}/': async () => check('DELETE /api/leads/{id}/', await send('DELETE', `/api/leads/${ids.lead}/`)),
    'DELETE /api/contacts/{id}/': async () => check('DELETE /api/contacts/{id}/', await send('DELETE', `/api/contacts/${ids.contact}/`)),
    'DELETE /api/accounts/{id}/': async () => check('DELETE /api/accounts/{id}/', await send('DELETE', `/api/accounts/${ids.account}/`)),
    'DELETE /api/documents/{id}/': async () => check('DELETE /api/documents/{id}/', await send('DELETE', `/api/documents/${ids.document}/`)),
  }

  /** Calls the app makes whose scenario is another call's: an order constraint, never a skip. */
  const ORDER = ['POST /api/custom-fields/', 'POST /api/tags/', 'POST /api/accounts/', 'POST /api/contacts/', 'PUT /api/accounts/{id}/', 'POST /api/leads/', 'POST /api/opportunities/', 'POST /api/tasks/', 'POST /api/cases/', 'GET /api/accounts/{id}/', 'POST /api/documents/', 'POST /api/invoices/products/', 'POST /api/invoices/']

  t.test('every call of the app to a built route passes; the others are counted by module', async (t) => {
    const calls = distinctCalls()
    const notBuilt = new Map<string, number>()
    const built: string[] = []
    let vendor = 0
    for (const call of calls) {
      const key = `${call.method} ${call.path}`
      if (call.path.startsWith(VENDOR)) {
        vendor++
        continue
      }
      let n = 0
      const url = routerPath(call.path).replace(/:id/g, () => `:p${n++}`)
      const routed = [url, url.replace(/\/$/, '')].some((candidate) => app.hasRoute({ method: call.method, url: candidate }))
      const probe = routed && !scenarios[key] && !checked.has(key) ? await send(call.method, call.path.replace(/\{id\}/g, () => randomUUID()), call.method === 'GET' || call.method === 'DELETE' ? undefined : {}) : undefined
      if (!routed || probe?.status === 501) {
        const module = call.path.split('/')[2]!
        notBuilt.set(module, (notBuilt.get(module) ?? 0) + 1)
      } else built.push(key)
    }
    const uncovered = built.filter((key) => !scenarios[key] && !checked.has(key))
    t.same(uncovered, [], 'every call the app makes to a built route has a scenario here (a new screen adds its call)')

    const order = [...ORDER, ...Object.keys(scenarios).filter((key) => !ORDER.includes(key))].filter((key) => built.includes(key.replace(/ \(.*\)$/, '')))
    for (const key of order) await scenarios[key]!()
    t.same(failures, [], 'each answer is 2xx and parses with the model the app reads it with')

    const notBuiltCount = [...notBuilt.values()].reduce((a, b) => a + b, 0)
    const passing = built.filter((key) => !failing.has(key)).length
    const byModule = [...notBuilt].sort((a, b) => b[1] - a[1]).map(([module, n]) => `${module} ${n}`).join(', ')
    t.comment(`phone app: ${calls.length} distinct calls; ${built.length} to built routes checked, ${passing} passing; ${notBuiltCount} not built (${byModule}); ${vendor} to the vendor's help desk (/api/support/)`)
    t.equal(built.length + notBuiltCount + vendor, calls.length, 'every call is checked or counted')
  })

  t.test('the session ends as the app signs out', async () => {
    await check('POST /api/auth/logout/', await send('POST', '/api/auth/logout/', { refresh: session.refresh }, false))
    t.same(failures, [])
  })
})
