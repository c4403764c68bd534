import { randomUUID } from 'node:crypto'
import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'

/** The two plain record modules with notes: their path, a valid create body, and their names for the file field and the answer's key. */
const MODULES = [
  { plural: 'accounts', singular: 'account', create: { name: 'Initech' } },
  { plural: 'contacts', singular: 'contact', create: { first_name: 'Peter', email: 'peter@initech.test' } },
] as const

const exists = (path: string) => access(path).then(() => true, () => false)

for (const module of MODULES) {
  const base = `/api/${module.plural}/`
  const fileField = `${module.singular}_attachment`
  const objKey = `${module.singular}_obj`

  t.test(`${base}: comments and attachments (where-the-spec-is-silent.md)`, async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'crm-notes-'))
    t.teardown(() => rm(dataDir, { recursive: true, force: true }))
    const { app, acme, globex, alice, bob } = await givenTwoOrganizations(t, { env: { MAX_UPLOAD_BYTES: '2048', DATA_DIR: dataDir } })
    const admin = acme.admin.headers
    const { inject, create, detail } = collectionClient(app, base)
    const id = (await create(alice.headers, module.create)).json().id as string
    const carol = await acme.addMember('carol@acme.test')
    const upload = (url: string, headers: Headers, fields: Parameters<typeof multipartBody>[0]) =>
      multipartBody(fields).then((body) => app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': body.contentType }, payload: body.payload }))

    t.test('POST /{id}/ adds a comment (any member) and answers the record with its notes', async (t) => {
      const res = await inject('POST', `${base}${id}/`, bob.headers, { comment: 'Called them' })
      t.equal(res.statusCode, 200, res.body)
      t.match(res.json(), { [objKey]: { id }, attachments: [], comments: [{ id: String, comment: 'Called them', commented_by: { id: bob.profileId }, commented_on: String }] })
      t.match(res.headers['x-event-position'], /^\d+-\d+$/, 'read-your-writes')
      t.equal((await inject('POST', `${base}${id}/`, globex.admin.headers, { comment: 'x' })).statusCode, 404, 'another org')
      t.equal((await inject('POST', `${base}${randomUUID()}/`, admin, { comment: 'x' })).statusCode, 404, 'a missing record')
      t.match((await inject('POST', `${base}${id}/`, admin, { comment: '   ' })).json(), { error: true, errors: { comment: [String] } }, 'blank')
      const empty = await inject('POST', `${base}${id}/`, admin, {})
      t.match({ status: empty.statusCode, body: empty.json() }, { status: 400, body: { error: true, errors: { comment: [new RegExp(fileField)] } } }, 'neither a comment nor a file')
      const form = await app.inject({ method: 'POST', url: `${base}${id}/`, headers: { ...carol.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'comment=From+a+form' })
      t.equal(form.statusCode, 200, 'a form body')
      // The fixed clock gives both one time, so their order is the tie-break's (ids): compared as a set.
      const shown = (await detail(admin, id)).comments.map((c: { comment: string; commented_by: { id: string } }) => [c.comment, c.commented_by.id]).sort()
      t.same(shown, [['Called them', bob.profileId], ['From a form', carol.profileId]], 'the detail shows them')
    })

    t.test('multipart: a comment and a file in one request; the file downloads unchanged for any member', async (t) => {
      const res = await upload(`${base}${id}/`, bob.headers, { comment: 'The quote', [fileField]: { name: '../quote v2.txt', type: 'text/plain', content: 'the quote' } })
      t.equal(res.statusCode, 200, res.body)
      const { comments, attachments } = res.json()
      t.ok(comments.some((c: { comment: string }) => c.comment === 'The quote'), 'the comment')
      t.match(attachments, [{ file_name: 'quote v2.txt', content_type: 'text/plain', size: 9, created_by: { id: bob.profileId }, download_url: `${base}attachment/${attachments[0].id}/download/` }])
      t.same((await detail(alice.headers, id)).attachments, attachments, 'the detail shows it')
      const download = await inject('GET', attachments[0].download_url, carol.headers)
      t.equal(download.statusCode, 200)
      t.equal(download.body, 'the quote')
      t.match(download.headers, { 'content-type': /^text\/plain/, 'content-length': '9', 'content-disposition': /attachment; filename\*=UTF-8''quote%20v2\.txt/ })
      t.equal((await inject('GET', attachments[0].download_url, globex.admin.headers)).statusCode, 404, 'another org')
      t.equal((await inject('GET', `${base}attachment/${randomUUID()}/download/`, admin)).statusCode, 404)
    })

    t.test('a file over MAX_UPLOAD_BYTES is 413 and records nothing; a text where the file belongs is 400', async (t) => {
      const before = (await detail(admin, id)).attachments.length
      const big = await upload(`${base}${id}/`, admin, { [fileField]: { name: 'big.bin', type: 'application/octet-stream', content: 'x'.repeat(4096) } })
      t.match({ status: big.statusCode, body: big.json() }, { status: 413, body: { error: true, errors: String } })
      t.equal((await detail(admin, id)).attachments.length, before)
      const text = await inject('POST', `${base}${id}/`, admin, { [fileField]: 'hello' })
      t.match({ status: text.statusCode, body: text.json() }, { status: 400, body: { error: true, errors: { [fileField]: [String] } } })
    })

    t.test('comment/{id}/: PUT or PATCH edits, DELETE deletes; its author or an admin', async (t) => {
      const comment = (await detail(admin, id)).comments.find((c: { comment: string }) => c.comment === 'Called them')
      const url = `${base}comment/${comment.id}/`
      t.equal((await inject('PATCH', url, alice.headers, { comment: 'not mine' })).statusCode, 403, 'another member, even the record’s creator')
      t.equal((await inject('PUT', url, globex.admin.headers, { comment: 'x' })).statusCode, 404, 'another org')
      t.equal((await inject('PUT', `${base}comment/${randomUUID()}/`, admin, { comment: 'x' })).statusCode, 404)
      t.match((await inject('PUT', url, bob.headers, { comment: '' })).json(), { error: true, errors: { comment: [String] } })
      t.match((await inject('PATCH', url, bob.headers, {})).json(), { error: true, errors: { comment: [String] } })
      t.same((await inject('PUT', url, bob.headers, { comment: 'Called them twice' })).json(), { error: false, message: 'Comment updated' })
      t.equal((await inject('PATCH', url, admin, { comment: 'Edited by an admin' })).statusCode, 200)
      t.match((await detail(alice.headers, id)).comments.find((c: { id: string }) => c.id === comment.id), { comment: 'Edited by an admin', commented_by: { id: bob.profileId } })
      t.equal((await inject('DELETE', url, alice.headers)).statusCode, 403)
      t.equal((await inject('DELETE', url, globex.admin.headers)).statusCode, 404)
      t.same((await inject('DELETE', url, bob.headers)).json(), { error: false, message: 'Comment deleted' })
      t.notOk((await detail(admin, id)).comments.some((c: { id: string }) => c.id === comment.id))
      t.equal((await inject('DELETE', url, bob.headers)).statusCode, 404, 'gone')
    })

    t.test('attachment/{id}/: DELETE by its uploader or an admin; the file leaves the file store', async (t) => {
      const [attachment] = (await detail(admin, id)).attachments
      const stored = join(dataDir, 'attachments', acme.orgId, attachment.id)
      t.ok(await exists(stored), 'the file is in the store')
      const url = `${base}attachment/${attachment.id}/`
      t.equal((await inject('DELETE', url, alice.headers)).statusCode, 403, 'another member')
      t.equal((await inject('DELETE', url, globex.admin.headers)).statusCode, 404, 'another org')
      t.same((await inject('DELETE', url, bob.headers)).json(), { error: false, message: 'Attachment deleted' })
      t.notOk(await exists(stored), 'the file is gone')
      t.same((await detail(admin, id)).attachments, [])
      t.equal((await inject('GET', attachment.download_url, admin)).statusCode, 404)
      t.equal((await inject('DELETE', url, admin)).statusCode, 404, 'gone')
    })

    t.test('a deleted record takes no notes, and its notes are not reachable', async (t) => {
      const other = (await create(alice.headers, module.plural === 'accounts' ? { name: 'Gone soon' } : { first_name: 'Gone soon' })).json().id as string
      const added = await upload(`${base}${other}/`, bob.headers, { comment: 'Before', [fileField]: { name: 'a.txt', type: 'text/plain', content: 'A' } })
      t.equal(added.statusCode, 200, added.body)
      t.equal((await inject('DELETE', `${base}${other}/`, admin)).statusCode, 200)
      t.equal((await inject('POST', `${base}${other}/`, admin, { comment: 'After' })).statusCode, 404)
      t.equal((await inject('GET', added.json().attachments[0].download_url, admin)).statusCode, 404)
      t.equal((await inject('PUT', `${base}comment/${added.json().comments[0].id}/`, bob.headers, { comment: 'x' })).statusCode, 404)
    })
  })
}
