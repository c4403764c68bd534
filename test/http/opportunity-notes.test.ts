import { randomUUID } from 'node:crypto'
import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'

const BASE = '/api/opportunities/'

t.test('deal bodies as JSON, urlencoded and multipart (§4.1, §2.1 opportunity_attachment)', async (t) => {
  const { app, acme, alice } = await givenTwoOrganizations(t, { env: { MAX_UPLOAD_BYTES: '2048' } })
  const admin = acme.admin.headers
  const tag = (await app.inject({ method: 'POST', url: '/api/tags/', headers: admin, payload: { name: 'hot' } })).json().id as string
  const tag2 = (await app.inject({ method: 'POST', url: '/api/tags/', headers: admin, payload: { name: 'warm' } })).json().id as string
  const detail = async (id: string, headers: Headers = admin) => (await app.inject({ method: 'GET', url: `${BASE}${id}/`, headers })).json()
  const send = (method: 'POST' | 'PATCH' | 'PUT', url: string, body: { payload: Buffer | string; contentType: string }, headers: Headers = admin) =>
    app.inject({ method, url, headers: { ...headers, 'content-type': body.contentType }, payload: body.payload })

  t.test('urlencoded: numbers, booleans and repeated keys read like their JSON forms', async (t) => {
    const body = new URLSearchParams([['name', 'Form deal'], ['probability', '40'], ['is_active', 'false'], ['tags', tag], ['tags', tag2], ['amount', '12.5'], ['closed_on', '']])
    const res = await send('POST', BASE, { payload: body.toString(), contentType: 'application/x-www-form-urlencoded' })
    t.equal(res.statusCode, 200, res.body)
    t.match((await detail(res.json().id)).opportunity_obj, { name: 'Form deal', probability: 40, is_active: false, amount: '12.50', closed_on: null, tags: [{ id: tag }, { id: tag2 }] })
    const bad = await send('POST', BASE, { payload: 'name=Bad&probability=lots', contentType: 'application/x-www-form-urlencoded' })
    t.match({ status: bad.statusCode, body: bad.json() }, { status: 400, body: { error: true, errors: { probability: [String] } } }, 'the same validation as JSON')
  })

  t.test('multipart: fields and a file in one request; the file downloads unchanged', async (t) => {
    const body = await multipartBody({ name: 'Upload deal', tags: JSON.stringify([tag]), assigned_to: alice.profileId, opportunity_attachment: { name: '../../quote v2.txt', type: 'text/plain', content: 'the quote' } })
    const res = await send('POST', BASE, body)
    t.equal(res.statusCode, 200, res.body)
    const id = res.json().id as string
    const { opportunity_obj, attachments } = await detail(id)
    t.match(opportunity_obj, { name: 'Upload deal', tags: [{ id: tag }], assigned_to: [{ id: alice.profileId }] })
    t.match(attachments, [{ file_name: 'quote v2.txt', content_type: 'text/plain', size: 9, created_by: { id: acme.admin.profileId }, download_url: String }], 'a plain file name, no folders')
    const download = await app.inject({ method: 'GET', url: attachments[0].download_url, headers: alice.headers })
    t.equal(download.statusCode, 200)
    t.equal(download.body, 'the quote')
    t.match(download.headers, { 'content-type': /^text\/plain/, 'content-disposition': /attachment; filename\*=UTF-8''quote%20v2\.txt/ })
    const patched = await send('PATCH', `${BASE}${id}/`, await multipartBody({ description: 'with a second file', opportunity_attachment: { name: 'b.bin', type: 'application/octet-stream', content: 'xyz' } }))
    t.equal(patched.statusCode, 200, patched.body)
    t.equal((await detail(id)).attachments.length, 2)
  })

  t.test('a file over MAX_UPLOAD_BYTES is 413 and records nothing', async (t) => {
    const res = await send('POST', BASE, await multipartBody({ name: 'Too big', opportunity_attachment: { name: 'big.bin', type: 'application/octet-stream', content: 'x'.repeat(4096) } }))
    t.equal(res.statusCode, 413)
    t.match(res.json(), { error: true, errors: String })
    t.equal((await app.inject({ method: 'GET', url: `${BASE}?name=Too%20big`, headers: admin })).json().opportunities_count, 0)
  })

  t.test('a text value where a file belongs is 400', async (t) => {
    const res = await app.inject({ method: 'POST', url: BASE, headers: admin, payload: { name: 'Not a file', opportunity_attachment: 'hello' } })
    t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { errors: { opportunity_attachment: [String] } } })
  })
})

t.test('comments and attachments (where-the-spec-is-silent.md)', async (t) => {
  const { app, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create } = collectionClient(app, BASE)
  const deal = (await create(alice.headers, { name: 'Noted', assigned_to: [bob.profileId] })).json().id as string
  const carol = await acme.addMember('carol@acme.test')

  t.test('POST /{id}/ with a comment answers the deal with its comments and attachments', async (t) => {
    const res = await inject('POST', `${BASE}${deal}/`, bob.headers, { comment: 'Called them' })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { opportunity_obj: { id: deal, name: 'Noted' }, attachments: [], comments: [{ comment: 'Called them', commented_by: { id: bob.profileId } }] })
    t.equal((await inject('POST', `${BASE}${deal}/`, carol.headers, { comment: 'x' })).statusCode, 403, 'no access')
    t.equal((await inject('POST', `${BASE}${deal}/`, globex.admin.headers, { comment: 'x' })).statusCode, 404, 'another org')
    t.equal((await inject('POST', `${BASE}${randomUUID()}/`, admin, { comment: 'x' })).statusCode, 404)
    t.match((await inject('POST', `${BASE}${deal}/`, admin, { comment: '   ' })).json(), { error: true, errors: { comment: [String] } })
    t.match((await inject('POST', `${BASE}${deal}/`, admin, {})).json(), { error: true, errors: { comment: [String] } })
    const viaComment = await inject('POST', `${BASE}comment/${deal}/`, bob.headers, { comment: 'Also via comment/{deal id}/' })
    t.equal(viaComment.statusCode, 200, 'POST comment/{deal id}/ adds one too')
    t.equal(viaComment.json().comments.length, 2)
    const [, second] = viaComment.json().comments
    t.equal((await inject('DELETE', `${BASE}comment/${second.id}/`, bob.headers)).statusCode, 200)
    t.equal((await inject('POST', `${BASE}comment/${deal}/`, carol.headers, { comment: 'x' })).statusCode, 403)
    t.equal((await inject('POST', `${BASE}comment/${deal}/`, admin, { comment: ' ' })).statusCode, 400)
  })

  t.test('editing and deleting a comment: its author or an admin', async (t) => {
    const [comment] = (await inject('GET', `${BASE}${deal}/`, admin)).json().comments
    const url = `${BASE}comment/${comment.id}/`
    t.equal((await inject('PATCH', url, alice.headers, { comment: 'not mine' })).statusCode, 403, 'another member')
    t.equal((await inject('PATCH', url, globex.admin.headers, { comment: 'x' })).statusCode, 404, 'another org')
    t.match((await inject('PUT', url, bob.headers, { comment: '' })).json(), { error: true, errors: { comment: [String] } })
    t.same((await inject('PUT', url, bob.headers, { comment: 'Called them twice' })).json(), { error: false, message: 'Comment updated' })
    t.equal((await inject('PATCH', url, admin, { comment: 'Edited by admin' })).statusCode, 200)
    t.match((await inject('GET', `${BASE}${deal}/`, admin)).json().comments, [{ comment: 'Edited by admin', commented_by: { id: bob.profileId } }])
    t.equal((await inject('DELETE', url, alice.headers)).statusCode, 403)
    t.equal((await inject('DELETE', url, bob.headers)).statusCode, 200)
    t.same((await inject('GET', `${BASE}${deal}/`, admin)).json().comments, [])
    t.equal((await inject('DELETE', url, bob.headers)).statusCode, 404, 'gone')
  })

  t.test('deleting an attachment: its uploader or an admin; the file goes too', async (t) => {
    const form = await multipartBody({ opportunity_attachment: { name: 'a.txt', type: 'text/plain', content: 'A' } })
    const res = await app.inject({ method: 'POST', url: `${BASE}${deal}/`, headers: { ...bob.headers, 'content-type': form.contentType }, payload: form.payload })
    t.equal(res.statusCode, 200, res.body)
    const [attachment] = res.json().attachments
    t.equal((await inject('GET', attachment.download_url, carol.headers)).statusCode, 403, 'downloads follow the deal access rule')
    t.equal((await inject('GET', attachment.download_url, globex.admin.headers)).statusCode, 404)
    const url = `${BASE}attachment/${attachment.id}/`
    t.equal((await inject('DELETE', url, alice.headers)).statusCode, 403, 'another member (even the creator)')
    t.equal((await inject('DELETE', url, globex.admin.headers)).statusCode, 404, 'another org')
    t.equal((await inject('DELETE', url, bob.headers)).statusCode, 200)
    t.equal((await inject('GET', attachment.download_url, admin)).statusCode, 404)
  })
})
