import t from 'tap'
import { contactDecider, emptyContact } from '../../src/commands/contact/contact.ts'
import type { ContactEvent } from '../../src/commands/contact/contact.ts'
import { replacing } from '../../src/commands/record.ts'
import { ForbiddenError, NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const fields = { ...emptyContact(), first_name: 'Peter', email: 'peter@initech.test', account: 'a1', tags: ['t1'] }
const created: ContactEvent = { type: 'ContactCreated', data: { contact_id: 'c1', org_id: org, ...fields, created_by: 'p1', at } }
const deleted: ContactEvent = { type: 'ContactDeleted', data: { at } }

t.test('contact decider', async (t) => {
  const contact = spec(t, contactDecider)
  contact.given([]).when({ type: 'CreateContact', contactId: 'c1', orgId: org, fields, actorId: 'p1', at }).then([created])
  contact.given([created]).when({ type: 'CreateContact', contactId: 'c1', orgId: org, fields, actorId: 'p1', at }).then([], 'creating again is a no-op')
  contact.given([created]).when({ type: 'UpdateContact', orgId: org, changes: { email: null, title: 'Engineer' }, at }).then([{ type: 'ContactUpdated', data: { email: null, title: 'Engineer', at } }])
  contact.given([created]).when({ type: 'UpdateContact', orgId: org, changes: { first_name: 'Peter', tags: ['t1'] }, at }).then([], 'no change, no event')
  contact.given([created]).when({ type: 'UpdateContact', orgId: org, changes: replacing(emptyContact(), { first_name: 'Peter' }), at }).then([{ type: 'ContactUpdated', data: { email: null, account: null, tags: [], at } }], 'a replacement clears what it leaves out')
  contact.given([created]).when({ type: 'UpdateContact', orgId: otherOrg, changes: { first_name: 'X' }, at }).thenRejects(NotFoundError)
  contact.given([created, deleted]).when({ type: 'UpdateContact', orgId: org, changes: { first_name: 'X' }, at }).thenRejects(NotFoundError)
  contact.given([created]).when({ type: 'DeleteContact', orgId: org, actor: { profileId: 'p1', isAdmin: false }, at }).then([deleted])
  contact.given([created]).when({ type: 'DeleteContact', orgId: org, actor: { profileId: 'p2', isAdmin: false }, at }).thenRejects(ForbiddenError)
  contact.given([created]).when({ type: 'DeleteContact', orgId: org, actor: { profileId: null, isAdmin: false }, at }).thenRejects(ForbiddenError, undefined)
  contact.given([created]).when({ type: 'DeleteContact', orgId: otherOrg, actor: { profileId: 'p1', isAdmin: true }, at }).thenRejects(NotFoundError)
  contact.given([created, deleted]).when({ type: 'DeleteContact', orgId: org, actor: { profileId: 'p1', isAdmin: false }, at }).then([], 'deleting twice is a no-op')
})
