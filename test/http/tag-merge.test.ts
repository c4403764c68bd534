import t from 'tap'
import { accountStream } from '../../src/commands/account/account.ts'
import { contactStream } from '../../src/commands/contact/contact.ts'
import { tagStream } from '../../src/commands/tag/tag.ts'
import { comparePositions } from '../../src/eventstore/event-store.ts'
import { opportunityStreams } from '../../src/commands/opportunity/opportunity.ts'
import { retagged } from '../../src/commands/record.ts'
import { taskStream } from '../../src/commands/task/task.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

type Headers = Record<string, string>

t.test('retagged: the source becomes the target, held once', async (t) => {
  t.same(retagged(['a', 'c'], { from: 'a', into: 'b' }), ['b', 'c'])
  t.same(retagged(['a', 'b'], { from: 'a', into: 'b' }), ['b'])
  t.same(retagged(['c'], { from: 'a', into: 'b' }), ['c'])
})

t.test('POST /api/tags/{id}/merge/ retags the records carrying the source, as events', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, payload })
  const created = async (headers: Headers, url: string, payload: object): Promise<string> => (await inject('POST', url, headers, payload)).json().id
  const tag = (headers: Headers, name: string) => created(headers, '/api/tags/', { name })
  const history = async (stream: string) => (await store.readStream(stream)).map(({ type, data, position }) => ({ type, data, position }))

  const [source, target, other] = [await tag(alice.headers, 'Prospect'), await tag(alice.headers, 'Lead'), await tag(alice.headers, 'Other')]
  const account = await created(alice.headers, '/api/accounts/', { name: 'Initech', tags: [source, other] })
  const contact = await created(alice.headers, '/api/contacts/', { first_name: 'Peter', tags: [source, target] })
  const deal = await created(alice.headers, '/api/opportunities/', { name: 'Initech renewal', tags: [source, other] })
  const lead = await created(alice.headers, '/api/leads/', { first_name: 'Bill', tags: [source] })
  const task = await created(alice.headers, '/api/tasks/', { title: 'Call Bill', tags: [other, source] })
  const deletedTask = await created(alice.headers, '/api/tasks/', { title: 'Gone too', tags: [source] })
  await inject('DELETE', `/api/tasks/${deletedTask}/`, alice.headers)
  const untagged = await created(alice.headers, '/api/accounts/', { name: 'Hooli', tags: [other] })
  const deleted = await created(alice.headers, '/api/contacts/', { first_name: 'Gone', tags: [source] })
  await inject('DELETE', `/api/contacts/${deleted}/`, acme.admin.headers)
  const foreignTag = await tag(globex.admin.headers, 'Prospect')
  const foreign = await created(globex.admin.headers, '/api/accounts/', { name: 'Globex Corp', tags: [foreignTag] })
  const before = { untagged: await history(accountStream(untagged)), deleted: await history(contactStream(deleted)), deletedTask: await history(taskStream(deletedTask)), foreign: await history(accountStream(foreign)) }

  const merged = await inject('POST', `/api/tags/${source}/merge/`, acme.admin.headers, { into: target })
  t.equal(merged.statusCode, 200)
  t.match(merged.json(), { error: false, tag: { id: target }, into: { id: target }, moved: 5 }, 'the live account, contact, deal, lead and task moved')

  t.test('the records read back tagged with the target, once, their other tags kept', async (t) => {
    t.same((await inject('GET', `/api/accounts/${account}/`, alice.headers)).json().account_obj.tags.map((tag: { id: string }) => tag.id).sort(), [target, other].sort())
    t.same((await inject('GET', `/api/contacts/${contact}/`, alice.headers)).json().contact_obj.tags.map((tag: { id: string }) => tag.id), [target])
    t.same((await inject('GET', `/api/opportunities/${deal}/`, alice.headers)).json().opportunity_obj.tags.map((tag: { id: string }) => tag.id).sort(), [target, other].sort())
    t.same((await inject('GET', `/api/leads/?tags=${target}`, alice.headers)).json().open_leads.open_leads.map((l: { id: string }) => l.id), [lead], 'leads too')
    t.same((await inject('GET', `/api/tasks/${task}/`, alice.headers)).json().task_obj.tags.map((tag: { id: string }) => tag.id).sort(), [other, target].sort(), 'and tasks')
    t.same((await inject('GET', `/api/tasks/?tags=${source}`, alice.headers)).json().count, 0, 'no task carries the source any more')
    t.same((await inject('GET', `/api/accounts/?tags=${source}`, alice.headers)).json().count, 0, 'no account carries the source any more')
    t.same((await inject('GET', `/api/contacts/?tags=${target}`, alice.headers)).json().results.map((r: { id: string }) => r.id), [contact])
  })

  t.test('each stream records one update event, before the source is merged', async (t) => {
    const accountEvents = await history(accountStream(account))
    const contactEvents = await history(contactStream(contact))
    t.same(accountEvents.map((e) => e.type), ['AccountCreated', 'AccountUpdated'])
    t.match(accountEvents[1]!.data, { tags: [target, other], at: String })
    t.same(contactEvents.map((e) => e.type), ['ContactCreated', 'ContactUpdated'])
    t.same(contactEvents[1]!.data, { tags: [target], at: '2026-11-22T09:00:00.000Z' })
    const dealEvents = await history(opportunityStreams.stream(deal))
    t.same(dealEvents.map((e) => e.type), ['OpportunityCreated', 'OpportunityUpdated'])
    t.same(dealEvents[1]!.data, { changes: { tags: { from: [source, other], to: [target, other] } }, at: '2026-11-22T09:00:00.000Z' })
    const taskEvents = await history(taskStream(task))
    t.same(taskEvents.map((e) => e.type), ['TaskCreated', 'TaskUpdated'])
    t.match(taskEvents[1]!.data, { changes: { tags: { from: [other, source], to: [other, target] } }, task: { title: 'Call Bill' } })
    const mergedEvent = (await history(tagStream(source))).at(-1)!
    t.match(mergedEvent, { type: 'TagMerged', data: { into_tag_id: target } })
    t.same((await inject('GET', `/api/tags/${source}/`, alice.headers)).json().is_active, false, 'the source is archived, not gone')
    for (const update of [accountEvents[1]!, contactEvents[1]!, dealEvents[1]!, taskEvents[1]!]) t.ok(comparePositions(update.position, mergedEvent.position) < 0, 'retagged before TagMerged')
  })

  t.test('records without the source, deleted ones and other organizations are untouched', async (t) => {
    t.same(await history(accountStream(untagged)), before.untagged)
    t.same(await history(contactStream(deleted)), before.deleted)
    t.same(await history(taskStream(deletedTask)), before.deletedTask, 'a deleted task keeps its tags')
    t.same(await history(accountStream(foreign)), before.foreign)
    t.same((await inject('GET', `/api/accounts/${foreign}/`, globex.admin.headers)).json().account_obj.tags.map((tag: { id: string }) => tag.id), [foreignTag])
  })
})
