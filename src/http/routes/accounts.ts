import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { accountDecider, accountStream, emptyAccount } from '../../commands/account/account.ts'
import type { AccountFields } from '../../commands/account/account.ts'
import { replacing } from '../../commands/record.ts'
import { withClaimedName, withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import { isAdmin } from '../../identity/identity.ts'
import { accountOf, listAccounts } from '../../projections/accounts.ts'
import { contactsOfAccount } from '../../projections/contacts.ts'
import type { AppDeps } from '../app.ts'
import { requestCommands } from '../commands.ts'
import { identityOf } from '../plugins/auth.ts'
import { IdFilter, IdList, ProfileRef, TagRef, checkRelations, optionalEmail, optionalText, profileRefs, tagRefs } from '../relations.ts'
import { IdParams, Message, PageQuery, authErrors, pageOf } from '../schemas/common.ts'
import { Account, Contact, Created, recordBody } from '../schemas/records.ts'

const AccountBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255).describe('Unique per organization, case-insensitively'),
  email: optionalEmail(),
  phone: optionalText(50),
  website: optionalText(),
  industry: optionalText(),
  address_line: optionalText(),
  city: optionalText(),
  state: optionalText(),
  postcode: optionalText(20),
  country: optionalText(),
  description: optionalText(10_000),
  is_active: z.boolean().optional().describe('Default true'),
  assigned_to: IdList('active profiles').optional(),
  tags: IdList('live tags').optional(),
})
const AccountPatch = AccountBody.partial()
const ListQuery = PageQuery.extend({
  name: z.string().optional().describe('Case-insensitive contains on the name'),
  search: z.string().optional().describe('Case-insensitive contains on name, email or city'),
  tags: IdFilter('accounts carrying a tag'),
  assigned_to: IdFilter('accounts assigned to a profile'),
})
const AccountList = pageOf(Account).extend({ tags: z.array(TagRef).describe("The organization's tags, for the filter picker") })
const AccountDetail = z.object({
  account_obj: Account,
  contacts: z.array(Contact).describe("The account's contacts"),
  opportunities: z.array(z.object({ id: z.uuid() })).describe('Deals of the account: always empty until the deals module exists'),
  tags: z.array(TagRef),
  assigned_to: z.array(ProfileRef),
})
const SCOPE = 'account'

/**
 * Accounts (issue 4): any member of the organization reads, creates and edits them; deleting
 * (soft, frees the name) is for an admin or the creator. Names are unique per organization,
 * case-insensitively, also under concurrency (name claims).
 */
export function accountRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(accountOf(db, orgId, id))

    app.get('/api/accounts/', { schema: { tags: ['accounts'], summary: 'Accounts of the organization, by name', querystring: ListQuery, response: { 200: AccountList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, search, tags, assigned_to } = request.query
      const [{ count, rows }, orgTags] = await Promise.all([listAccounts(db, orgId, { limit, offset, name, search, tags, assignedTo: assigned_to }), tagRefs(db, orgId)])
      return { count, offset, limit, results: rows.map(recordBody), tags: orgTags }
    })

    app.post('/api/accounts/', { schema: { tags: ['accounts'], summary: 'Create an account', body: AccountBody, response: { 200: Created, ...authErrors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const fields = replacing(emptyAccount(), request.body)
      await checkRelations(db, identity.orgId, fields)
      const commands = requestCommands(deps, request, reply)
      const accountId = randomUUID()
      await withClaimedName(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: accountId, name: fields.name, field: 'name' }, () =>
        commands.run(accountDecider, accountStream(accountId), { type: 'CreateAccount', accountId, orgId: identity.orgId, fields, actorId: identity.profileId, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Account created', id: accountId }
    })

    app.get('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'One account with its contacts, tags and assignees', params: IdParams, response: { 200: AccountDetail, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const account = await found(orgId, request.params.id)
      const [contacts, tags, assigned] = await Promise.all([contactsOfAccount(db, orgId, account.id), tagRefs(db, orgId, account.tags), profileRefs(db, orgId, account.assigned_to)])
      return { account_obj: recordBody(account), contacts: contacts.map(recordBody), opportunities: [], tags, assigned_to: assigned }
    })

    const update = async (request: FastifyRequest, reply: FastifyReply, id: string, requested: Partial<AccountFields>) => {
      const { orgId } = identityOf(request)
      const current = await found(orgId, id)
      await checkRelations(db, orgId, requested, {}, current)
      const commands = requestCommands(deps, request, reply)
      await withRenamedClaim(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: requested.name ?? current.name, previousName: current.name, field: 'name' }, () =>
        commands.run(accountDecider, accountStream(current.id), { type: 'UpdateAccount', orgId, changes: requested, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Account updated' }
    }

    app.put('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'Replace an account', description: 'Every field is replaced: fields left out take their empty value, relation lists left out are cleared.', params: IdParams, body: AccountBody, response: { 200: Message, ...authErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, replacing(emptyAccount(), request.body)),
    )

    app.patch('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'Change the named fields of an account', description: 'Fields and relation lists left out keep their values.', params: IdParams, body: AccountPatch, response: { 200: Message, ...authErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, request.body),
    )

    app.delete('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'Delete an account (soft; admins or its creator). Its name becomes free', params: IdParams, response: { 200: Message, ...authErrors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await found(identity.orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await withReleasedName(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: current.id, name: current.name }, () =>
        commands.run(accountDecider, accountStream(current.id), { type: 'DeleteAccount', orgId: identity.orgId, actor: { profileId: identity.profileId, isAdmin: isAdmin(identity) }, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Account deleted' }
    })
  }
}
