import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { VISIBLE_KINDS, isRestricted, mayAccess, visibleSql } from '../../src/visibility/policy.ts'
import type { Involvement, Seer, VisibleKind } from '../../src/visibility/policy.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { describe, operationsOf } from '../helpers/route-table.ts'

// Every GET route of the served schema, twice, on a loaded 2-core machine.
t.setTimeout(300_000)

/**
 * The visibility policy against every read path, generated from its kinds and the served OpenAPI
 * document: a member's answers show exactly what src/visibility/policy.ts lets them see. Per kind
 * there are three records, each with a marker in its name: one another member is assigned to
 * (`other`), one the member is assigned to (`mine`), one the member created (`own`); deals point at
 * the shared account and contact, tasks at a deal or lead. Then every GET route (lists, details,
 * search, boards, dashboard, activities, notifications, the rails and rollups on other records'
 * pages) is read as the member and must not show a record the policy hides; the records it shows
 * are on their lists, details and search; counts and rollups add up what it shows; and a request
 * body naming a hidden record is answered as one naming no record. A kind added to the policy
 * needs its line in KINDS (the compiler asks for it) and is walked like the others.
 */

type Role = 'other' | 'mine' | 'own'
const ROLES: readonly Role[] = ['other', 'mine', 'own']
type Ids = Partial<Record<VisibleKind, Record<Role, string>>>

type KindTest = {
  /** The collection; its `{id}/` routes take this kind's ids. */
  path: string
  /** The create body of a record named `marker`, assigned to `assignedTo`; `ids` holds the kinds made before. */
  body: (marker: string, assignedTo: string[], role: Role, ids: Ids) => object
  /** What search answers as `type`; null for a kind search does not hold (documents, invoices). */
  searchType: string | null
  /** A kind created by multipart upload: its file field (the file's content is the marker, so a download shows it). */
  fileField?: string
  /** The field that shares the record with people, when not `assigned_to` (documents: `shared_to`). */
  assignedField?: string
  /** How an admin hands the record to another (default PATCH; invoices have only PUT, §4.1). */
  edit?: 'PUT'
}

// Deal amounts: each role's own, so a rollup tells which deals it summed.
const AMOUNTS: Record<Role, number> = { other: 4242.42, mine: 100, own: 10 }
// A task's parent: the `mine` task points at the hidden deal, the `other` at the hidden lead, the member's own at a lead they may see.
const TASK_PARENT: Record<Role, object> = { mine: { opportunity: 'other' }, other: { lead: 'other' }, own: { lead: 'mine' } }

const KINDS: Record<VisibleKind, KindTest> = {
  Account: { path: '/api/accounts/', searchType: 'account', body: (name, assigned_to) => ({ name, assigned_to }) },
  Case: { path: '/api/cases/', searchType: 'case', body: (name, assigned_to) => ({ name, assigned_to }) },
  Contact: { path: '/api/contacts/', searchType: 'contact', body: (first_name, assigned_to) => ({ first_name, assigned_to }) },
  Document: { path: '/api/documents/', searchType: null, fileField: 'document_file', assignedField: 'shared_to', body: (title, shared_to) => ({ title, shared_to: JSON.stringify(shared_to) }) },
  Lead: { path: '/api/leads/', searchType: 'lead', body: (first_name, assigned_to) => ({ first_name, assigned_to }) },
  Opportunity: {
    path: '/api/opportunities/',
    searchType: 'deal',
    body: (name, assigned_to, role, ids) => ({ name, assigned_to, amount: AMOUNTS[role].toFixed(2), currency: 'USD', account: ids.Account!.other, contacts: [ids.Contact!.other] }),
  },
  Solution: { path: '/api/cases/solutions/', searchType: 'solution', body: (title) => ({ title }) },
  Task: {
    path: '/api/tasks/',
    searchType: 'task',
    body: (title, assigned_to, role, ids) => ({ title, assigned_to, ...Object.fromEntries(Object.entries(TASK_PARENT[role]).map(([field, of]) => [field, ids[field === 'lead' ? 'Lead' : 'Opportunity']![of as Role]])) }),
  },
  Invoice: { path: '/api/invoices/', searchType: null, edit: 'PUT', body: (invoice_title, assigned_to, _role, ids) => ({ invoice_title, assigned_to, account_id: ids.Account!.other, contact_id: ids.Contact!.other }) },
}

/** Request-body references to records: the field, the kind it names, and a body of `path` naming `id`. */
const REFERENCES: { path: string; field: string; kind: VisibleKind; body: (id: string) => object }[] = [
  { path: '/api/tasks/', field: 'opportunity', kind: 'Opportunity', body: (opportunity) => ({ title: 'Ref', opportunity }) },
  { path: '/api/tasks/', field: 'lead', kind: 'Lead', body: (lead) => ({ title: 'Ref', lead }) },
  { path: '/api/tasks/', field: 'account', kind: 'Account', body: (account) => ({ title: 'Ref', account }) },
  { path: '/api/tasks/', field: 'contacts', kind: 'Contact', body: (contact) => ({ title: 'Ref', contacts: [contact] }) },
  { path: '/api/opportunities/', field: 'account', kind: 'Account', body: (account) => ({ name: `Ref ${randomUUID()}`, account }) },
  { path: '/api/opportunities/', field: 'contacts', kind: 'Contact', body: (contact) => ({ name: `Ref ${randomUUID()}`, contacts: [contact] }) },
]

const markerOf = (kind: VisibleKind, role: Role) => `Vizmark${kind}${role}`

t.test('visibility: every read path answers a member what the policy lets them see', async (t) => {
  const { app, database, acme, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const member = alice.headers
  const seer = { profileId: alice.profileId, isAdmin: false }
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, payload })
  /** A record of `kind`: a JSON POST, or a multipart upload whose file holds the marker. */
  const create = async (kind: VisibleKind, headers: Headers, body: object, marker: string) => {
    const { fileField, path } = KINDS[kind]
    if (!fileField) return call('POST', path, headers, body)
    const form = await multipartBody({ ...(body as Record<string, string>), [fileField]: { name: `${marker}.txt`, type: 'text/plain', content: marker } })
    return app.inject({ method: 'POST', url: path, headers: { ...headers, 'content-type': form.contentType }, payload: form.payload })
  }

  t.test("the policy's two derivations agree: the single-record check and the SQL predicate", async (t) => {
    const me = alice.profileId
    // The portal's customer (docs/portal.md) is a contact: their records name them among their contacts, or are published.
    const customer = randomUUID()
    const seers: Seer[] = [{ profileId: me, isAdmin: true }, { profileId: me, isAdmin: false }, { profileId: null, isAdmin: false }, { profileId: null, isAdmin: false, contactId: customer }]
    const involvements: Involvement[] = [
      { createdBy: me, assignedTo: [] },
      { createdBy: bob.profileId, assignedTo: [bob.profileId, me] },
      { createdBy: bob.profileId, assignedTo: [bob.profileId] },
      { createdBy: null, assignedTo: [] },
      { createdBy: bob.profileId, assignedTo: [], contacts: [randomUUID(), customer], isPublished: true },
      { createdBy: bob.profileId, assignedTo: [me], contacts: [randomUUID()], isPublished: false },
    ]
    for (const kind of VISIBLE_KINDS) {
      for (const seer of seers) {
        for (const record of involvements) {
          const row = sql`(SELECT ${record.createdBy}::uuid AS created_by, ${sql.val([...record.assignedTo])}::uuid[] AS assigned_to, ${sql.val([...(record.contacts ?? [])])}::uuid[] AS contacts, ${record.isPublished ?? false}::boolean AS is_published) r`
          const { rows } = await sql<{ visible: boolean }>`SELECT coalesce(${visibleSql(kind, seer, 'r')}, false) AS visible FROM ${row}`.execute(database.db)
          t.equal(rows[0]!.visible, mayAccess(kind, record, seer), `${kind}, ${JSON.stringify(seer)}, ${JSON.stringify(record)}`)
        }
      }
    }
  })

  // The records: `other` is first assigned to the member (a notification), then handed to bob.
  const ids: Ids = {}
  const involvement = new Map<string, Involvement>()
  const records: { kind: VisibleKind; role: Role; id: string; marker: string; visible: boolean }[] = []
  for (const kind of VISIBLE_KINDS) {
    const made = {} as Record<Role, string>
    for (const role of ROLES) {
      const creator = role === 'own' ? alice : acme.admin
      const assignedTo = role === 'own' ? [] : [alice.profileId]
      const body = KINDS[kind].body(markerOf(kind, role), assignedTo, role, ids)
      const res = await create(kind, creator.headers, body, markerOf(kind, role))
      t.ok(res.statusCode < 300, `${kind} ${role}: ${res.body}`)
      made[role] = res.json().id ?? res.json().solution?.id ?? res.json().invoice?.id
      involvement.set(made[role], { createdBy: creator.profileId, assignedTo })
    }
    ids[kind] = made
  }
  const notified = (await call('GET', '/api/notifications/?limit=100', member)).body
  t.ok(VISIBLE_KINDS.filter(isRestricted).some((kind) => notified.includes(markerOf(kind, 'other'))), 'the member was told of a record before it was handed to another')
  for (const kind of VISIBLE_KINDS.filter(isRestricted)) {
    const res = await call(KINDS[kind].edit ?? 'PATCH', `${KINDS[kind].path}${ids[kind]!.other}/`, admin, { [KINDS[kind].assignedField ?? 'assigned_to']: [bob.profileId] })
    t.ok(res.statusCode < 300, `${kind} other to bob: ${res.body}`)
    involvement.set(ids[kind]!.other, { createdBy: acme.admin.profileId, assignedTo: [bob.profileId] })
  }
  for (const kind of VISIBLE_KINDS) for (const role of ROLES) records.push({ kind, role, id: ids[kind]![role], marker: markerOf(kind, role), visible: mayAccess(kind, involvement.get(ids[kind]![role])!, seer) })
  const hidden = records.filter((r) => !r.visible)
  t.ok(hidden.length >= 3, 'the policy hides some records from a member, or there is nothing to test')

  // Every GET route that answers JSON, each `{id}` route of a kind with each record of the kind.
  const operations = (await operationsOf(app)).filter((op) => op.method === 'GET' && !op.streaming)
  const urls = operations.flatMap((op) => {
    if (!op.pathParams.length) return [{ op: describe(op), url: op.path.replace('/api/search/', '/api/search/?q=Vizmark&limit=20') }]
    const kind = VISIBLE_KINDS.find((k) => op.pathParams.length === 1 && op.path.startsWith(`${KINDS[k].path}{id}/`))
    return kind ? records.filter((r) => r.kind === kind).map((r) => ({ op: describe(op), url: op.path.replace(`{${op.pathParams[0]}}`, r.id) })) : []
  })
  t.ok(urls.length > 60, `walked ${urls.length} reads`)

  t.test('no answer shows the member a record the policy hides; the admin sees each of them somewhere', async (t) => {
    const shownToAdmin = new Map(hidden.map((r) => [r.marker, 0]))
    for (const { op, url } of urls) {
      const [asMember, asAdmin] = await Promise.all([call('GET', url, member), call('GET', url, admin)])
      const leaked = hidden.filter((r) => asMember.body.includes(r.marker)).map((r) => r.marker)
      t.same(leaked, [], `${op} (${url})`)
      for (const r of hidden) if (asAdmin.body.includes(r.marker)) shownToAdmin.set(r.marker, shownToAdmin.get(r.marker)! + 1)
    }
    for (const [marker, routes] of shownToAdmin) t.ok(routes >= 3, `${marker}: on ${routes} of the admin's answers, so the member's check can fail`)
  })

  t.test('what the policy shows is on its list, its detail and search', async (t) => {
    const found = (await call('GET', '/api/search/?q=Vizmark&limit=20', member)).json().results as { type: string; title: string }[]
    for (const kind of VISIBLE_KINDS) {
      const list = (await call('GET', `${KINDS[kind].path}?limit=100`, member)).body
      for (const r of records.filter((r) => r.kind === kind)) {
        const detail = await call('GET', `${KINDS[kind].path}${r.id}/`, member)
        t.equal(detail.statusCode === 200, r.visible, `${r.marker}: detail ${detail.statusCode}`)
        t.equal(list.includes(r.marker), r.visible, `${r.marker}: on the list`)
        const searched = KINDS[kind].searchType
        if (searched === null) t.notOk(found.some((hit) => hit.title.includes(r.marker)), `${r.marker}: a kind search does not hold`)
        else t.equal(found.some((hit) => hit.type === searched && hit.title.includes(r.marker)), r.visible, `${r.marker}: in search`)
      }
    }
  })

  t.test('counts and rollups add up what the policy shows', async (t) => {
    const visibleOf = (kind: VisibleKind) => records.filter((r) => r.kind === kind && r.visible)
    const dashboard = (await call('GET', '/api/dashboard/', member)).json()
    t.match(dashboard, { accounts_count: visibleOf('Account').length, contacts_count: visibleOf('Contact').length, leads_count: visibleOf('Lead').length, opportunities_count: visibleOf('Opportunity').length })
    // Every deal is open and points at the shared account.
    const deals = visibleOf('Opportunity')
    const rollups = { open_deal_count: deals.length, open_pipeline: deals.reduce((sum, r) => sum + AMOUNTS[r.role], 0).toFixed(2) }
    const account = ids.Account!.other
    t.match((await call('GET', `/api/accounts/${account}/`, member)).json().account_obj.rollups, rollups, "the account detail's rollups")
    t.match((await call('GET', '/api/accounts/?limit=100', member)).json().results.find((a: { id: string }) => a.id === account).rollups, rollups, "the account list's rollups")
    t.match((await call('GET', `/api/accounts/${account}/`, admin)).json().account_obj.rollups, { open_deal_count: 3 }, 'an admin sums every deal')
  })

  t.test('a request naming a record the member may not see is answered as one naming no record', async (t) => {
    // The answer with the id named replaced: some messages name the ids they refuse.
    const answer = async (path: string, body: object, id: string) => {
      const res = await call('POST', path, member, body)
      return { status: res.statusCode, body: res.body.replaceAll(id, '<id>') }
    }
    for (const ref of REFERENCES) {
      const nobody = randomUUID()
      const unknown = await answer(ref.path, ref.body(nobody), nobody)
      t.equal(unknown.status, 400, `${ref.path} ${ref.field}: an unknown id`)
      for (const r of records.filter((r) => r.kind === ref.kind)) {
        const res = await answer(ref.path, ref.body(r.id), r.id)
        if (r.visible) t.equal(res.status, 200, `${ref.path} ${ref.field} → ${r.marker}: ${res.body}`)
        else t.same(res, unknown, `${ref.path} ${ref.field} → ${r.marker}`)
      }
    }
  })
})
