import t from 'tap'
import { casesProjector } from '../../src/projections/case/cases.ts'
import { caseMergesProjector, survivingCase } from '../../src/projections/case/merges.ts'
import { postCsv } from '../helpers/csv-upload.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { caseCountsEqualRows } from '../helpers/case-counts.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { figureFactsEqualCases, figuresRebuildEqualsLive } from '../helpers/case-figures.ts'

// Merge and unmerge, bulk update and delete, and the CSV import of cases, on one app.
const BASE = '/api/cases/'
type Row = { id: string } & Record<string, unknown>

t.test('cases: merge → unmerge, bulk, import', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, list } = collectionClient(app, BASE)
  const made = async (headers: Headers, body: object) => {
    const res = await create(headers, body)
    if (res.statusCode !== 200) t.fail(res.body)
    return res.json().id as string
  }
  const call = async (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, headers: Headers, body?: object) => {
    const res = await inject(method, url, headers, body)
    return { status: res.statusCode, body: res.body ? res.json() : null }
  }
  const ok = async (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, headers: Headers, body?: object) => {
    const res = await call(method, url, headers, body)
    if (res.status >= 300) t.fail(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  /** What a case shows: its notes, watchers and state (what an unmerge must restore exactly). */
  const shown = async (id: string) => {
    const detail = await ok('GET', `${BASE}${id}/?show_merged=true`, admin)
    const watchers = await ok('GET', `${BASE}${id}/watchers/`, admin)
    const { status, closed_on } = detail.cases_obj
    return { status, closed_on, comments: detail.comments, internal_notes: detail.internal_notes, attachments: detail.attachments, watchers: watchers.watchers }
  }

  t.test('merge → unmerge restores both cases exactly: comments, notes, attachments, watchers, status', async (t) => {
    const dup = await made(alice.headers, { name: 'Printer smokes' })
    const keep = await made(alice.headers, { name: 'Printer on fire', status: 'Assigned' })
    const other = await made(admin, { name: 'Office on fire' })
    const theirs = await made(globex.admin.headers, { name: 'Theirs' })
    await ok('POST', `${BASE}${dup}/`, alice.headers, { comment: 'Smoke from the tray' })
    await ok('POST', `${BASE}${dup}/`, alice.headers, { comment: 'Team only', is_internal: true })
    const form = await multipartBody({ comment: 'Photo', case_attachment: { name: 'smoke.txt', type: 'text/plain', content: 'grey' } })
    t.equal((await app.inject({ method: 'POST', url: `${BASE}${dup}/`, headers: { ...alice.headers, 'content-type': form.contentType }, payload: form.payload })).statusCode, 200)
    await ok('POST', `${BASE}${dup}/watch/`, admin)
    await ok('POST', `${BASE}${dup}/watch/`, alice.headers)
    await ok('POST', `${BASE}${keep}/watch/`, admin)
    await ok('POST', `${BASE}${keep}/`, alice.headers, { comment: 'On it' })
    const before = { dup: await shown(dup), keep: await shown(keep) }
    t.equal(before.dup.comments.length, 2)

    t.equal((await call('POST', `${BASE}${dup}/merge/${keep}/`, bob.headers)).status, 403, 'bob created neither')
    t.equal((await call('POST', `${BASE}${dup}/merge/${other}/`, alice.headers)).status, 403, 'alice created only one of them')
    t.match(await call('POST', `${BASE}${dup}/merge/${dup}/`, alice.headers), { status: 400, body: { error: true, errors: 'Cannot merge a ticket into itself.' } })
    t.equal((await call('POST', `${BASE}${dup}/merge/${theirs}/`, admin)).status, 404, 'another organization\'s case is no case')
    const merged = await ok('POST', `${BASE}${dup}/merge/${keep}/`, alice.headers)
    t.match(merged, { error: false, message: 'Tickets merged', target_case: { id: keep }, source_case_id: dup, redirected_url: `/tickets/${keep}` })
    t.notOk('already_merged' in merged)
    t.match(await ok('POST', `${BASE}${dup}/merge/${keep}/`, alice.headers), { already_merged: true }, 'again: nothing more')
    t.match(await call('POST', `${BASE}${dup}/merge/${other}/`, admin), { status: 400, body: { errors: 'Source ticket is already merged into a different ticket.' } })
    t.match(await call('POST', `${BASE}${other}/merge/${dup}/`, admin), { status: 400, body: { errors: 'Target ticket has already been merged elsewhere.' } }, 'no chains')

    t.match(await ok('GET', `${BASE}${dup}/`, alice.headers), { redirect_to: keep, merged_into: keep, source_case_id: dup, source_case_name: 'Printer smokes' })
    const survivor = await ok('GET', `${BASE}${keep}/`, alice.headers)
    t.match(survivor, { merged_from_cases: [{ id: dup, name: 'Printer smokes', merged_at: String }] })
    t.same(survivor.comments.map((c: Row) => c.comment).sort(), ['On it', 'Photo', 'Smoke from the tray'])
    t.match(survivor.internal_notes, [{ comment: 'Team only' }])
    t.match(survivor.attachments, [{ file_name: 'smoke.txt' }])
    t.same((await shown(keep)).watchers.map((w: Row) => w.email).sort(), ['admin@acme.test', 'alice@acme.test'], 'the watchers it did not have joined')
    t.match(await shown(dup), { status: 'Duplicate', closed_on: '2026-11-22', comments: [], attachments: [], watchers: [] })
    t.notOk((await list(admin)).cases.some((c: Row) => c.id === dup), 'the list leaves merged duplicates out')
    t.match(await call('PATCH', `${BASE}${dup}/`, alice.headers, { name: 'X' }), { status: 400, body: { errors: /unmerge it first/ } })
    t.equal(await survivingCase(database.db, acme.orgId, dup), keep)
    t.equal(await survivingCase(database.db, acme.orgId, keep), undefined, 'a case not merged is its own survivor')
    t.equal(await survivingCase(database.db, globex.orgId, dup), undefined, 'in its organization only')

    // Edited while merged: the edit comes back with it.
    const smoke = survivor.comments.find((c: Row) => c.comment === 'Smoke from the tray')
    await ok('PATCH', `/api/cases/comment/${smoke.id}/`, alice.headers, { comment: 'Smoke from the paper tray' })

    // A merge of the survivor: the duplicate's id follows to the new survivor, in one lookup.
    await ok('POST', `${BASE}${keep}/merge/${other}/`, admin)
    t.equal(await survivingCase(database.db, acme.orgId, dup), other)
    t.match(await ok('GET', `${BASE}${dup}/`, admin), { redirect_to: other, merged_into: keep })
    t.match(await call('POST', `${BASE}${dup}/unmerge/`, admin), { status: 400, body: { errors: /unmerge that one first/ } })
    t.match(await call('POST', `${BASE}${other}/unmerge/`, admin), { status: 400, body: { errors: 'This ticket is not currently merged.' } })
    t.equal((await call('POST', `${BASE}${theirs}/unmerge/`, admin)).status, 404)
    t.match(await ok('POST', `${BASE}${keep}/unmerge/`, admin), { message: 'Tickets unmerged', source_case: { id: keep, status: 'Assigned' }, unmerged_from: other })
    t.equal(await survivingCase(database.db, acme.orgId, dup), keep, 'the duplicate reaches its first survivor again')
    t.equal((await call('POST', `${BASE}${dup}/unmerge/`, bob.headers)).status, 403)
    t.match(await ok('POST', `${BASE}${dup}/unmerge/`, alice.headers), { source_case: { id: dup, status: 'New', closed_on: null }, unmerged_from: keep })

    const after = { dup: await shown(dup), keep: await shown(keep) }
    const edited = { ...before.dup, comments: before.dup.comments.map((c: Row) => (c.comment === 'Smoke from the tray' ? { ...c, comment: 'Smoke from the paper tray', updated_at: after.dup.comments.find((a: Row) => a.id === c.id)?.updated_at } : c)) }
    t.same(after.dup, edited, 'the duplicate: every comment, note, attachment and watcher back, with the edit, and its status')
    t.same(after.keep, before.keep, 'the survivor: exactly what it had')
    t.same((await ok('GET', `${BASE}${keep}/`, admin)).merged_from_cases, [])
    t.equal(await survivingCase(database.db, acme.orgId, dup), undefined)
  })

  t.test('bulk update and delete: a verdict per case; one refused case hides and rolls back nothing', async (t) => {
    const mine = await made(alice.headers, { name: 'Mine' })
    const notMine = await made(admin, { name: 'Not mine' })
    const missing = '00000000-0000-4000-8000-000000000000'
    const updated = await ok('POST', `${BASE}bulk/update/`, alice.headers, { ids: [mine, notMine, missing, 'nonsense', mine], fields: { priority: 'High', assigned_to: [bob.profileId] } })
    t.match(updated, { error: false, updated: 1, failed: 3, results: [{ id: mine, ok: true }, { id: notMine, ok: false, status: 403 }, { id: missing, ok: false, status: 404 }, { id: 'nonsense', ok: false, status: 404 }] })
    t.match((await ok('GET', `${BASE}${mine}/`, alice.headers)).cases_obj, { priority: 'High', assigned_to: [{ id: bob.profileId }] })
    t.equal((await ok('GET', `${BASE}${notMine}/`, admin)).cases_obj.priority, 'Normal')
    t.match(await ok('POST', `${BASE}bulk/update/`, admin, { ids: [mine, notMine], fields: { status: 'Closed' } }), { updated: 0, failed: 2, results: [{ status: 400, errors: { closed_on: [String] } }, { status: 400 }] }, 'closing needs a date, case by case')
    t.match(await ok('POST', `${BASE}bulk/update/`, admin, { ids: [mine, notMine], fields: { status: 'Closed', closed_on: '2026-11-22' } }), { updated: 2, failed: 0 })
    t.equal((await call('POST', `${BASE}bulk/update/`, admin, { ids: [mine], fields: { name: 'X' } })).status, 400, 'a field the bulk update does not set')
    t.equal((await call('POST', `${BASE}bulk/update/`, admin, { ids: [], fields: {} })).status, 400, 'ids required')
    t.match(await ok('POST', `${BASE}bulk/delete/`, alice.headers, { ids: [mine, notMine] }), { deleted: 1, failed: 1, results: [{ id: mine, ok: true }, { id: notMine, ok: false, status: 403 }] })
    t.equal((await call('GET', `${BASE}${mine}/`, admin)).status, 404)
    t.equal((await call('GET', `${BASE}${notMine}/`, admin)).status, 200)
  })

  t.test('import: preview checks every row and writes nothing; commit creates a case per valid row, reporting the others', async (t) => {
    await ok('POST', '/api/accounts/', admin, { name: 'Initech' })
    await made(admin, { name: 'Already here' })
    const csv = [
      'Name,Status,Priority,Account_Name,Assigned_Emails,Description,Closed_On,Colour',
      'Stapler jammed,new,HIGH,initech,bob@acme.test,Red one,,red',
      'No such account,New,Low,Umbrella,,,,',
      'Bad status,Open,Low,,,,,',
      'Stapler jammed,New,Low,,,,,',
      'Already here,New,Low,,,,,',
      'Closed undated,Closed,Low,,,,,',
      'Closed dated,Closed,Urgent,,nobody@acme.test;bob@acme.test,,2026-11-20,',
    ].join('\n')
    const count = async () => (await list(admin, '?show_merged=true')).cases_count as number
    const before = await count()
    const preview = await postCsv(app, `${BASE}import/preview/`, alice.headers, csv)
    t.equal(preview.statusCode, 200, preview.body)
    const body = preview.json()
    t.match(body, { total_rows: 7, valid_rows: 1, invalid_rows: 6, columns: { ignored: ['Colour'] }, preview: [{ name: 'Stapler jammed', status: 'New', priority: 'High', description: 'Red one', assigned_to: [bob.profileId] }] })
    t.match(body.errors, [
      { row: 2, errors: { account_name: ["No account named 'Umbrella'"] } },
      { row: 3, errors: { status: [/Status must be one of/] } },
      { row: 4, errors: { name: ['Duplicate of row 1 in this file.'] } },
      { row: 5, errors: { name: ['A ticket with this name already exists'] } },
      { row: 6, errors: { closed_on: ['Closed date is required when closing a case'] } },
      { row: 7, errors: { assigned_emails: ["No active member with email 'nobody@acme.test'"] } },
    ])
    t.equal(await count(), before, 'a preview creates nothing')
    t.equal((await call('POST', `${BASE}import/commit/`, bob.headers, { import_id: body.import_id })).status, 404, 'only whoever previewed it commits it')
    const committed = await ok('POST', `${BASE}import/commit/`, alice.headers, { import_id: body.import_id })
    t.match(committed, { error: false, message: '1 cases imported', created: 1, failed: 6 }, 'commit checks each row again')
    t.equal(await count(), before + 1)
    const imported = (await list(admin, '?search=Stapler')).cases as Row[]
    t.match(imported, [{ name: 'Stapler jammed', priority: 'High', account: { name: 'Initech' }, assigned_to: [{ id: bob.profileId }], created_by: { id: alice.profileId } }])
    t.equal((await call('POST', `${BASE}import/commit/`, alice.headers, { import_id: body.import_id })).status, 404, 'committed once')
    t.equal((await postCsv(app, `${BASE}import/preview/`, alice.headers, 'name,priority\nX,Low\n')).statusCode, 400, 'a required column missing')
  })

  t.test('rebuild equals live; the open counts are the rows counted', async (t) => {
    await caseCountsEqualRows(t, database.db)
    await rebuildEqualsLive(t, { db: database.db, store }, [casesProjector, caseMergesProjector], { oneByOne: true })
    await figureFactsEqualCases(t, database.db)
    await figuresRebuildEqualsLive(t, { db: database.db, store })
  })
})
