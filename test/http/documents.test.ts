import { randomUUID } from 'node:crypto'
import t from 'tap'
import { documentsProjector } from '../../src/projections/document/documents.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const PDF = '%PDF-1.4\nacme plan\n'

t.test('/api/documents/', async (t) => {
  const { app, database, store } = await buildTestApp(t, { env: { MAX_UPLOAD_BYTES: '4096' } })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const carol = await acme.addMember('carol@acme.test')
  const gina = await globex.addMember('gina@globex.test')
  const admin = acme.admin.headers
  type Headers = Record<string, string>
  type File = { name: string; type: string; content: string }
  const send = async (method: 'POST' | 'PUT' | 'PATCH', url: string, headers: Headers, fields: Record<string, string | File>) => {
    const form = await multipartBody(fields)
    return app.inject({ method, url, headers: { ...headers, 'content-type': form.contentType }, payload: form.payload })
  }
  const upload = (headers: Headers, fields: Record<string, string | File>) => send('POST', '/api/documents/', headers, fields)
  const get = (url: string, headers: Headers = admin) => app.inject({ url, headers })
  const listed = async (headers: Headers, query = '') => {
    const body = (await get(`/api/documents/${query}`, headers)).json()
    return [...body.documents_active.documents_active, ...body.documents_inactive.documents_inactive].map((d: { title: string }) => d.title).sort()
  }

  const team = (await app.inject({ method: 'POST', url: '/api/teams/', headers: admin, payload: { name: 'Reviewers', users: [carol.profileId] } })).json()

  t.test('POST uploads a file (any member, multipart); its type is read from the bytes', async (t) => {
    const res = await upload(alice.headers, { title: 'Plan', shared_to: JSON.stringify([bob.profileId]), document_file: { name: 'plan.pdf', type: 'text/html', content: PDF } })
    t.equal(res.statusCode, 201, res.body)
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const detail = (await get(`/api/documents/${res.json().id}/`, alice.headers)).json()
    t.match(detail.doc_obj, { title: 'Plan', document_file: 'plan.pdf', content_type: 'application/pdf', status: 'active', size_bytes: PDF.length, shared_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }], teams: [], created_by: { profile_id: alice.profileId, id: alice.userId, email: 'alice@acme.test' } })
    t.equal(detail.file_type_code, 'fa fa-file-pdf')
    t.same(detail.users.map((u: { email: string }) => u.email), ['admin@acme.test'], 'a member may share with the admins')

    const teamShared = await upload(admin, { title: 'Review notes', status: 'inactive', teams: JSON.stringify([team.id]), document_file: { name: 'notes.txt', type: 'application/pdf', content: 'plain words' } })
    t.equal(teamShared.statusCode, 201, teamShared.body)
    t.match((await get(`/api/documents/${teamShared.json().id}/`)).json().doc_obj, { content_type: 'text/plain', status: 'inactive', teams: [{ id: team.id, name: 'Reviewers', member_count: 1 }] })
  })

  t.test('bad uploads: 400 in the error shape, 413 over the size limit, and nothing stored', async (t) => {
    t.match((await upload(alice.headers, { title: 'No file' })).json(), { error: true, errors: { document_file: [String] } })
    t.match((await upload(alice.headers, { title: 'PLAN', document_file: { name: 'x.pdf', type: 'application/pdf', content: PDF } })).json(), { error: true, errors: { title: [String] } }, 'a title is unique in the organization, any case')
    const foreign = await upload(alice.headers, { title: 'Foreign', shared_to: JSON.stringify([gina.profileId]), document_file: { name: 'x.pdf', type: 'application/pdf', content: PDF } })
    t.match(foreign.json(), { error: true, errors: { shared_to: [new RegExp(gina.profileId)] } }, "another organization's profile is refused")
    t.equal((await upload(alice.headers, { title: 'Big', document_file: { name: 'big.bin', type: 'application/octet-stream', content: 'x'.repeat(5000) } })).statusCode, 413)
    t.equal((await upload(alice.headers, { title: 'Foreign', document_file: { name: 'x.pdf', type: 'application/pdf', content: PDF } })).statusCode, 201, 'the refused title stayed free')
    t.equal((await app.inject({ method: 'POST', url: '/api/documents/', headers: alice.headers, payload: { title: 'JSON', document_file: { path: '/etc/passwd' } } })).statusCode, 400, 'a JSON look-alike of a file is no file')
  })

  t.test('who reads: the uploader, whoever it is shared with (directly or through a team), admins', async (t) => {
    t.same(await listed(admin), ['Foreign', 'Plan', 'Review notes'])
    t.same(await listed(alice.headers), ['Foreign', 'Plan'])
    t.same(await listed(bob.headers), ['Plan'])
    t.same(await listed(carol.headers), ['Review notes'], "a team's member reads what the team is given")
    t.same(await listed(gina.headers), [])
    const list = (await get('/api/documents/?status=active', bob.headers)).json()
    t.match(list, { search: true, documents_active: { documents_active_count: 1, offset: null }, documents_inactive: { documents_inactive_count: 0, documents_inactive: [] } })
    t.same(await listed(admin, '?title=rev'), ['Review notes'])
    t.same(await listed(admin, `?shared_to=${bob.profileId}`), ['Plan'])
    const paged = await listed(admin, '?limit=1')
    t.equal(paged.length, 2, 'each envelope is paged: one active, one inactive')
    t.ok(paged.includes('Review notes'))
    t.equal((await get('/api/documents/?status=nope')).statusCode, 400)
    const plan = (await get('/api/documents/?title=plan')).json().documents_active.documents_active[0]
    t.equal((await get(`/api/documents/${plan.id}/`, carol.headers)).statusCode, 403)
    t.equal((await get(`/api/documents/${plan.id}/`, gina.headers)).statusCode, 404, 'another organization: as if missing')
    t.equal((await get(`/api/documents/${randomUUID()}/`)).statusCode, 404)
  })

  t.test('the download: the stored bytes under the sniffed type and the uploaded name, to readers only', async (t) => {
    const plan = (await get('/api/documents/?title=plan')).json().documents_active.documents_active[0]
    t.equal(plan.download_url, `/api/documents/${plan.id}/download/`)
    const res = await get(plan.download_url, bob.headers)
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/pdf')
    t.match(res.headers['content-disposition'], /attachment; filename\*=UTF-8''plan\.pdf/)
    t.equal(res.body, PDF)
    t.equal((await get(plan.download_url, carol.headers)).statusCode, 403)
    t.equal((await get(plan.download_url, gina.headers)).statusCode, 404)
  })

  t.test('PUT, PATCH and DELETE: the uploader or an admin; a share reads, it does not write', async (t) => {
    const plan = (await get('/api/documents/?title=plan')).json().documents_active.documents_active[0]
    const url = `/api/documents/${plan.id}/`
    t.equal((await app.inject({ method: 'PUT', url, headers: bob.headers, payload: { title: 'Mine', status: 'active', shared_to: [], teams: [] } })).statusCode, 403)
    t.equal((await app.inject({ method: 'DELETE', url, headers: bob.headers })).statusCode, 403)
    const put = await app.inject({ method: 'PUT', url, headers: alice.headers, payload: { title: 'Plan v2', status: 'active', teams: [team.id] } })
    t.equal(put.statusCode, 200, put.body)
    t.match((await get(url)).json().doc_obj, { title: 'Plan v2', shared_to: [], teams: [{ id: team.id }] }, 'PUT replaces the share lists: one left out is emptied')
    t.same(await listed(bob.headers), [], 'the unshared member no longer reads it')
    t.equal((await get(url, carol.headers)).statusCode, 200, 'the team now does')

    const replaced = await send('PUT', url, alice.headers, { title: 'Plan v2', status: 'active', teams: JSON.stringify([team.id]), document_file: { name: 'plan-v2.csv', type: 'image/png', content: 'a,b\n1,2\n' } })
    t.equal(replaced.statusCode, 200, replaced.body)
    t.match((await get(url)).json().doc_obj, { document_file: 'plan-v2.csv', content_type: 'text/csv', size_bytes: 8, teams: [{ id: team.id }] }, 'a new file keeps the record and its shares')
    t.equal((await get(`${url}download/`, carol.headers)).body, 'a,b\n1,2\n')

    t.equal((await app.inject({ method: 'PATCH', url, headers: admin, payload: { status: 'inactive' } })).statusCode, 200)
    t.same(await listed(alice.headers, '?status=inactive'), ['Plan v2'])
    t.equal((await app.inject({ method: 'PATCH', url, headers: admin, payload: { title: 'review NOTES' } })).statusCode, 400, 'a rename onto a taken title')
    t.equal((await app.inject({ method: 'PATCH', url, headers: admin, payload: { owner: 'x' } })).statusCode, 400, 'an unknown field')

    t.equal((await app.inject({ method: 'DELETE', url, headers: alice.headers })).statusCode, 200)
    t.equal((await get(url)).statusCode, 404)
    t.equal((await get(`${url}download/`)).statusCode, 404)
    t.equal((await upload(alice.headers, { title: 'Plan v2', document_file: { name: 'p.pdf', type: 'application/pdf', content: PDF } })).statusCode, 201, 'its title is free again')
  })

  t.test('a rebuild from the log equals the live read model', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, documentsProjector, { oneByOne: true })
  })
})
