import t from 'tap'
import { postCsv } from '../helpers/csv-upload.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'

t.test('POST /api/leads/upload/', async (t) => {
  // The thousand-row upload answers once its read models show every row; beside other test files that can pass the 5 s default.
  const { app, acme, globex, alice } = await givenTwoOrganizations(t, { env: { MAX_UPLOAD_BYTES: String(1024 * 1024), READ_YOUR_WRITES_TIMEOUT_MS: '30000' } })
  const admin = acme.admin.headers
  const leads = collectionClient(app, '/api/leads/')
  const upload = (headers: Headers, csv: string, field = 'leads_file') => postCsv(app, '/api/leads/upload/', headers, csv, field)
  const search = async (query: string) => [...(await leads.list(admin, query)).open_leads.open_leads, ...(await leads.list(admin, query)).close_leads.close_leads]
  t.equal((await leads.inject('POST', '/api/custom-fields/', admin, { module: 'leads', key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] })).statusCode, 201)
  t.equal((await leads.create(admin, { first_name: 'Old', email: 'old@initech.test' })).statusCode, 200)

  t.test('creates the valid rows as POST /api/leads/ would, and reports the others by row', async (t) => {
    const csv = [
      'First Name,Last Name,Email,Account Name,Status,Source,cf_tier,Message,Shoe Size',
      'Ann,Archer,ann@initech.test,Initech,in process,call,gold,"Wants a demo, soon",42',
      'Ben,Baker,ben@initech.test,,,,,,',
      'Cid,,ANN@initech.test,,,,,,',
      'Dot,,old@INITECH.test,,,,,,',
      'Eve,,eve@initech.test,,sleeping,,,,',
      'Fay,,fay@initech.test,,,,bronze,,',
      ',,nameless@initech.test,,,,,,',
    ].join('\n')
    const res = await upload(alice.headers, csv)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { error: false, created: 2, failed: 5, columns: { recognized: ['first_name', 'last_name', 'email', 'company_name', 'status', 'source', 'cf_tier', 'description'], ignored: ['Shoe Size'] } })
    t.match(res.json().errors, [
      { row: 3, errors: { email: ['Duplicate of row 1 in this file.'] } },
      { row: 4, errors: { email: [/already in use/] } },
      { row: 5, errors: { status: [String] } },
      { row: 6, errors: { custom_fields: { tier: [String] } } },
      { row: 7, errors: { first_name: [String] } },
    ])
    t.match(await search('?search=ann@initech'), [{ first_name: 'Ann', company_name: 'Initech', status: 'in process', source: 'call', description: 'Wants a demo, soon', custom_fields: { tier: 'gold' }, created_by: { id: alice.profileId } }])
    t.match(await search('?search=ben@initech'), [{ status: 'assigned', source: null }])
  })

  t.test('`file` is accepted too; a row can create a converted lead', async (t) => {
    const res = await upload(admin, 'first_name,email,company_name,status\nGus,gus@hooli.test,Hooli,converted\n', 'file')
    t.match(res.json(), { created: 1, failed: 0 })
    t.match(await search('?search=gus@hooli'), [{ status: 'converted', conversion: { account_id: String } }])
  })

  t.test('refused files create nothing', async (t) => {
    const before = (await leads.list(admin)).totals.count
    const noFile = await leads.inject('POST', '/api/leads/upload/', admin, {})
    t.equal(noFile.statusCode, 400)
    t.match(noFile.json(), { error: true, errors: { leads_file: [String] } })
    const malformed = await upload(admin, 'first_name,email\nZed,zed@x.test\nYan,"yan@x.test\n')
    t.equal(malformed.statusCode, 400)
    t.match(malformed.json(), { errors: { file: [/data row 2/] } })
    t.equal((await upload(admin, 'last_name\nNo first names\n')).statusCode, 400)
    t.equal((await upload(admin, 'first_name\n' + 'x'.repeat(999).concat('\n').repeat(1100))).statusCode, 413, 'over MAX_UPLOAD_BYTES')
    const many = await upload(admin, 'first_name\n' + 'A\n'.repeat(50_001))
    t.equal(many.statusCode, 413, 'over MAX_IMPORT_ROWS')
    t.match(many.json(), { error: true, errors: { file: [/50000/] } })
    t.equal((await leads.list(admin)).totals.count, before, 'the valid row before the malformed one was not created')
  })

  t.test('callers: no credential 401, the read-only API key 403; rows go to the caller\'s organization', async (t) => {
    t.equal((await upload({}, 'first_name\nA\n')).statusCode, 401)
    const key = (await leads.inject('POST', '/api/org/api-key/', admin)).json().api_key
    t.equal((await upload({ token: key }, 'first_name\nA\n')).statusCode, 403)
    t.match((await upload(globex.admin.headers, 'first_name,email\nGlo,old@initech.test\n')).json(), { created: 1 }, "another organization's emails do not count")
  })

  t.test('a thousand rows', async (t) => {
    const rows = 1000
    const lines = ['first_name,email,source']
    for (let i = 0; i < rows; i++) lines.push(`Bulk${i},bulk${i}@big.test,email`)
    const started = performance.now()
    const res = await upload(admin, lines.join('\n'))
    const ms = performance.now() - started
    t.match(res.json(), { created: rows, failed: 0 })
    t.equal((await leads.list(admin, '?search=big.test&limit=1')).totals.count, rows, 'readable when answered')
    t.comment(`${rows} leads uploaded in ${Math.round(ms)} ms (${Math.round(rows / (ms / 1000))} rows/s)`)
  })
})
