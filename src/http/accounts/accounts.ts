import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ACCOUNT_NAME_SCOPE, accountDecider, accountNames, accountStream, emptyAccount } from '../../commands/account/account.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { ACCOUNT_NOTES, accountOf, listAccounts } from '../../projections/accounts.ts'
import type { AccountRow } from '../../projections/accounts.ts'
import { contactsOfAccount } from '../../projections/contacts.ts'
import type { Deps } from '../../deps.ts'
import { NoteLists, memberNoteRoutes } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { identityOf } from '../kernel/auth.ts'
import { recordWriteRoutes } from '../kernel/record-routes.ts'
import { IdFilter, IdList, ProfileRef, TagRef, optionalEmail, optionalText, profileRefs, tagRefs } from '../kernel/relations.ts'
import { checkRelations } from '../../projections/relations.ts'
import { IdParams, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { Account, Contact, recordBody } from '../kernel/schemas/records.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'

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
  is_active: formBoolean(z.boolean()).optional().describe('Default true'),
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
  ...NoteLists,
})

/**
 * Accounts (issue 4): any member of the organization reads, creates and edits them; deleting
 * (soft, frees the name) is for an admin or the creator. Names are unique per organization,
 * case-insensitively, also under concurrency (name claims).
 */
export function accountRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(accountOf(db, orgId, id))

    app.get('/api/accounts/', { schema: { tags: ['accounts'], summary: 'Accounts of the organization, by name', querystring: ListQuery, response: { 200: AccountList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, search, tags, assigned_to } = request.query
      const [{ count, rows }, orgTags] = await Promise.all([listAccounts(db, orgId, { limit, offset, name, search, tags, assignedTo: assigned_to }), tagRefs(db, orgId)])
      return { count, offset, limit, results: rows.map(recordBody), tags: orgTags }
    })

    app.get('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'One account with its contacts, tags and assignees', params: IdParams, response: { 200: AccountDetail, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const account = await found(orgId, request.params.id)
      const [contacts, tags, assigned, notes] = await Promise.all([contactsOfAccount(db, orgId, account.id), tagRefs(db, orgId, account.tags), profileRefs(db, orgId, account.assigned_to), notesView(db, orgId, ACCOUNT_NOTES, 'accounts', account.id)])
      return { account_obj: recordBody(account), contacts: contacts.map(recordBody), opportunities: [], tags, assigned_to: assigned, ...notes }
    })

    recordWriteRoutes(app, deps, {
      plural: 'accounts',
      noun: { title: 'Account', indefinite: 'an account' },
      body: AccountBody,
      patch: AccountPatch,
      empty: emptyAccount,
      decider: accountDecider,
      commands: accountNames.commands,
      stream: accountStream,
      found,
      checkRelations: (orgId, requested, current) => checkRelations(db, orgId, requested, {}, current),
      unique: { scope: ACCOUNT_NAME_SCOPE, field: 'name' },
    })
  }
}

/** An account's comments and attachments (note-routes.ts), the file in `account_attachment`; events on the account's stream. */
export const accountNoteRoutes = (deps: Deps, files: FileStore) =>
  memberNoteRoutes<AccountRow>(deps, files, { singular: 'account', tables: ACCOUNT_NOTES, schema: Account, bodyOf: recordBody, rowOf: (orgId, id) => accountOf(deps.db, orgId, id) }, (commands, id, command) =>
    commands.run(accountDecider, accountStream(id), command),
  )
