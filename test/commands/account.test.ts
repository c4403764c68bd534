import t from 'tap'
import { accountDecider, emptyAccount } from '../../src/commands/account/account.ts'
import type { AccountEvent } from '../../src/commands/account/account.ts'
import { replacing } from '../../src/commands/record.ts'
import { ForbiddenError, NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const fields = { ...emptyAccount(), name: 'Initech', city: 'Austin', tags: ['t1', 't2'], assigned_to: ['p2'] }
const created: AccountEvent = { type: 'AccountCreated', data: { account_id: 'a1', org_id: org, ...fields, created_by: 'p1', at } }
const deleted: AccountEvent = { type: 'AccountDeleted', data: { at } }
const member = { profileId: 'p9', isAdmin: false }

t.test('account decider', async (t) => {
  const account = spec(t, accountDecider)
  account.given([]).when({ type: 'CreateAccount', accountId: 'a1', orgId: org, fields, actorId: 'p1', at }).then([created])
  account.given([created]).when({ type: 'CreateAccount', accountId: 'a1', orgId: org, fields, actorId: 'p1', at }).then([], 'creating again is a no-op')

  account.given([created]).when({ type: 'UpdateAccount', orgId: org, changes: { industry: 'Software', city: 'Austin' }, at }).then([{ type: 'AccountUpdated', data: { industry: 'Software', at } }], 'only what differs')
  account.given([created]).when({ type: 'UpdateAccount', orgId: org, changes: { tags: ['t2', 't1'] }, at }).then([], 'the same set in another order is no change')
  account.given([created]).when({ type: 'UpdateAccount', orgId: org, changes: replacing(emptyAccount(), { name: 'Initech' }), at }).then([{ type: 'AccountUpdated', data: { city: null, assigned_to: [], tags: [], at } }], 'a replacement clears what it leaves out')
  account.given([created]).when({ type: 'UpdateAccount', orgId: otherOrg, changes: { name: 'X' }, at }).thenRejects(NotFoundError)
  account.given([]).when({ type: 'UpdateAccount', orgId: org, changes: { name: 'X' }, at }).thenRejects(NotFoundError)
  account.given([created, deleted]).when({ type: 'UpdateAccount', orgId: org, changes: { name: 'X' }, at }).thenRejects(NotFoundError)
  account.given([created, { type: 'AccountUpdated', data: { name: 'Initrode', at } }]).when({ type: 'UpdateAccount', orgId: org, changes: { name: 'Initrode' }, at }).then([], 'folds earlier updates')

  account.given([created]).when({ type: 'DeleteAccount', orgId: org, actor: { profileId: 'p1', isAdmin: false }, at }).then([deleted], 'the creator may')
  account.given([created]).when({ type: 'DeleteAccount', orgId: org, actor: { profileId: null, isAdmin: true }, at }).then([deleted], 'an admin may')
  account.given([created]).when({ type: 'DeleteAccount', orgId: org, actor: member, at }).thenRejects(ForbiddenError)
  account.given([created]).when({ type: 'DeleteAccount', orgId: otherOrg, actor: { profileId: null, isAdmin: true }, at }).thenRejects(NotFoundError)
  account.given([created, deleted]).when({ type: 'DeleteAccount', orgId: org, actor: member, at }).then([], 'deleting twice is a no-op')
})

t.test('fold, decide, fold again: an applied update decides nothing more', async (t) => {
  const changes = { name: 'Initrode', email: 'x@y.test', tags: ['t3'], is_active: false }
  const state = [created].reduce(accountDecider.evolve, accountDecider.initialState())
  const events = accountDecider.decide({ type: 'UpdateAccount', orgId: org, changes, at }, state)
  const after = events.reduce(accountDecider.evolve, state)
  t.same(accountDecider.decide({ type: 'UpdateAccount', orgId: org, changes, at }, after), [])
  t.match(after.fields, changes)
})
