import t from 'tap'
import { emptyAccount } from '../../src/commands/account/account.ts'
import type { AccountEvent } from '../../src/commands/account/account.ts'
import { emptyContact } from '../../src/commands/contact/contact.ts'
import type { ContactEvent } from '../../src/commands/contact/contact.ts'
import { NotFoundError } from '../../src/errors.ts'
import { retagAccount, retagContact } from '../../src/commands/tag/retag.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const at = '2026-11-22T09:00:00.000Z'
const retag = { orgId: org, from: 'tA', into: 'tB', at }
const account: AccountEvent = { type: 'AccountCreated', data: { account_id: 'a1', org_id: org, ...emptyAccount(), name: 'Initech', tags: ['tA'], created_by: 'p1', at } }
const contact: ContactEvent = { type: 'ContactCreated', data: { contact_id: 'c1', org_id: org, ...emptyContact(), first_name: 'Peter', tags: ['tA', 'tB'], created_by: 'p1', at } }

t.test("retagging decides the ordinary update on the stream's own state", async (t) => {
  const accounts = spec(t, retagAccount)
  accounts.given([account]).when(retag).then([{ type: 'AccountUpdated', data: { tags: ['tB'], at } }])
  accounts.given([account, { type: 'AccountUpdated', data: { tags: ['tA', 'tC'], at } }]).when(retag).then([{ type: 'AccountUpdated', data: { tags: ['tB', 'tC'], at } }], 'a tag added after the read model was read is kept')
  accounts.given([account, { type: 'AccountUpdated', data: { tags: ['tB'], at } }]).when(retag).then([], 'already retagged: no event')
  accounts.given([account, { type: 'AccountDeleted', data: { at } }]).when(retag).then([], 'a record deleted meanwhile is left alone')
  accounts.given([account]).when({ ...retag, orgId: '00000000-0000-4000-8000-00000000000b' }).thenRejects(NotFoundError)
  spec(t, retagContact).given([contact]).when(retag).then([{ type: 'ContactUpdated', data: { tags: ['tB'], at } }], 'the target is held once')
})
