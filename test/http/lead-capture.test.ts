import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

const URL = '/api/leads/create-from-site/'

t.test('POST /api/leads/create-from-site/', async (t) => {
  const { app, acme, globex, alice } = await givenTwoOrganizations(t, { env: { AUTH_RATE_LIMIT_MAX: '3' } })
  const admin = acme.admin.headers
  const leads = collectionClient(app, '/api/leads/')
  const rotate = async (headers: Record<string, string>) => (await leads.inject('POST', '/api/org/api-key/', headers)).json().api_key as string
  const acmeKey = await rotate(admin)
  const globexKey = await rotate(globex.admin.headers)
  let ip = 0
  // A fresh client address per request, so the per-IP budget only matters where a test means it.
  const post = (payload: Record<string, string> | string, headers: Record<string, string> = {}, remoteAddress = `10.0.0.${++ip}`) =>
    app.inject({ method: 'POST', url: URL, remoteAddress, headers: typeof payload === 'string' ? { ...headers, 'content-type': 'application/x-www-form-urlencoded' } : headers, payload })

  t.test('a form post with the key in the body creates an unassigned lead in the key\'s organization', async (t) => {
    const res = await post(new URLSearchParams({ apikey: acmeKey, first_name: 'Web', last_name: 'Visitor', email: 'web@visitor.test', phone: '555', company: 'Visitors Inc', message: 'Call me', submit: 'Send' }).toString())
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { error: false, message: 'Lead created', id: String })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const lead = (await leads.detail(admin, res.json().id)).lead_obj
    t.match(lead, { first_name: 'Web', last_name: 'Visitor', email: 'web@visitor.test', phone: '555', company_name: 'Visitors Inc', description: 'Call me', status: 'assigned', source: 'other', created_by: null, assigned_to: [] })
    t.equal((await leads.inject('GET', `/api/leads/${res.json().id}/`, alice.headers)).statusCode, 403, 'a member sees it once assigned')
    t.equal((await leads.inject('GET', `/api/leads/${res.json().id}/`, globex.admin.headers)).statusCode, 404)
  })

  t.test('the key in the Token header works too; the lead rules apply', async (t) => {
    const res = await post({ first_name: 'Json', email: 'json@visitor.test', source: 'email', title: 'CTO' }, { token: globexKey })
    t.equal(res.statusCode, 200, res.body)
    t.match((await leads.detail(globex.admin.headers, res.json().id)).lead_obj, { source: 'email', title: 'CTO', job_title: 'CTO' })
    const dup = await post({ apikey: acmeKey, first_name: 'Again', email: 'WEB@visitor.test' })
    t.equal(dup.statusCode, 400)
    t.match(dup.json(), { error: true, errors: { email: [/already in use/] } })
    t.match((await post({ apikey: acmeKey, first_name: 'No mail' })).json(), { errors: { email: [String] } })
    t.match((await post({ apikey: acmeKey, email: 'x@y.test' })).json(), { errors: { first_name: [String] } })
    t.match((await post({ apikey: acmeKey, first_name: 'Bad', email: 'nope', source: 'tv' })).json(), { errors: { email: [String], source: [String] } })
    t.match((await post({ apikey: acmeKey, first_name: 'Sly', email: 'sly@visitor.test', status: 'converted' })).json(), { error: false }, 'a status is not the form\'s to set')
  })

  t.test('no key is 401; a wrong, rotated or non-API key is 403, in the error shape', async (t) => {
    const form = { first_name: 'K', email: 'k@visitor.test' }
    t.match((await post(form)).json(), { error: true, errors: String })
    t.equal((await post(form)).statusCode, 401)
    t.equal((await post({ ...form, apikey: 'svc_key_wrong' })).statusCode, 403)
    t.equal((await post({ ...form, apikey: 'junk' })).statusCode, 403)
    t.equal((await post(form, { authorization: admin.authorization! })).statusCode, 401, 'a sign-in is not a key')
    const old = acmeKey
    await rotate(admin)
    const refused = await post({ ...form, apikey: old })
    t.equal(refused.statusCode, 403)
    t.match(refused.json(), { error: true, errors: /API key/ })
  })

  t.test('rate limits: per client IP, then per key, with Retry-After', async (t) => {
    const form = { first_name: 'R', email: 'not-an-email' }
    const sameIp = [] as number[]
    for (let i = 0; i < 7; i++) sameIp.push((await post({ ...form, apikey: globexKey }, {}, '10.9.9.9')).statusCode)
    t.same(sameIp, [400, 400, 400, 400, 400, 400, 429], 'AUTH_RATE_LIMIT_MAX × 2 a minute per IP')
    const limited = await post(form, {}, '10.9.9.9')
    t.equal(limited.statusCode, 429)
    t.match(limited.json(), { error: true, errors: /Too many requests/ })
    t.ok(Number(limited.headers['retry-after']) > 0)
    const key = 'svc_key_flooded'
    const statuses = [] as number[]
    for (let i = 0; i < 181; i++) statuses.push((await post({ ...form, apikey: key })).statusCode)
    t.same(statuses.slice(0, 180), Array(180).fill(403))
    t.equal(statuses[180], 429, 'AUTH_RATE_LIMIT_MAX × 60 a minute per key, from any address')
    t.ok(Number((await post({ ...form, apikey: key })).headers['retry-after']) > 0)
    t.equal((await post({ ...form, apikey: globexKey })).statusCode, 400, 'other keys are not limited by it')
  })
})
