import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { contactDecider, contactStream, emptyContact } from '../../commands/contact/contact.ts'
import type { ContactFields } from '../../commands/contact/contact.ts'
import { replacing } from '../../commands/record.ts'
import { withOptionalClaim, withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import { isAdmin } from '../../identity/identity.ts'
import { accountOf } from '../../projections/accounts.ts'
import { contactOf, listContacts } from '../../projections/contacts.ts'
import type { ContactRow } from '../../projections/contacts.ts'
import type { AppDeps } from '../app.ts'
import { requestCommands } from '../commands.ts'
import { identityOf } from '../plugins/auth.ts'
import { IdFilter, IdList, ProfileRef, TagRef, checkRelations, optionalEmail, optionalText, profileRefs, tagRefs } from '../relations.ts'
import { IdParams, Message, PageQuery, authErrors, pageOf } from '../schemas/common.ts'
import { Account, Contact, Created, recordBody } from '../schemas/records.ts'

const ContactBody = z.object({
  first_name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  last_name: optionalText(),
  email: optionalEmail().describe('Unique per organization, case-insensitively, when given'),
  phone: optionalText(50),
  title: optionalText(),
  account: z.uuid().transform((id) => id.toLowerCase()).nullable().optional().describe('An account of this organization'),
  description: optionalText(10_000),
  assigned_to: IdList('active profiles').optional(),
  tags: IdList('live tags').optional(),
})
const ContactPatch = ContactBody.partial()
const ListQuery = PageQuery.extend({
  name: z.string().optional().describe('Case-insensitive contains on first or last name'),
  search: z.string().optional().describe('Case-insensitive contains on first name, last name or email'),
  account: IdFilter('contacts of an account'),
  tags: IdFilter('contacts carrying a tag'),
  assigned_to: IdFilter('contacts assigned to a profile'),
})
const ContactList = pageOf(Contact).extend({ tags: z.array(TagRef).describe("The organization's tags, for the filter picker") })
const ContactDetail = z.object({ contact_obj: Contact, account: Account.nullable().describe('The contact\'s account, when it has a live one'), tags: z.array(TagRef), assigned_to: z.array(ProfileRef) })
const SCOPE = 'contact_email'

/**
 * Contacts (issue 4): the same conventions as accounts. Email, when given, is unique per
 * organization, case-insensitively (name claims of scope `contact_email`).
 */
export function contactRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(contactOf(db, orgId, id))
    // Like tags and assignees, an account the contact already has may stay after it is deleted.
    const checkContactRelations = async (orgId: string, requested: Partial<ContactFields>, current?: ContactRow) => {
      const accountMissing = requested.account && requested.account !== current?.account && !(await accountOf(db, orgId, requested.account))
      await checkRelations(db, orgId, requested, accountMissing ? { account: ['Expected an account of this organization.'] } : {}, current)
    }

    app.get('/api/contacts/', { schema: { tags: ['contacts'], summary: 'Contacts of the organization, by name', querystring: ListQuery, response: { 200: ContactList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, search, account, tags, assigned_to } = request.query
      const [{ count, rows }, orgTags] = await Promise.all([listContacts(db, orgId, { limit, offset, name, search, account, tags, assignedTo: assigned_to }), tagRefs(db, orgId)])
      return { count, offset, limit, results: rows.map(recordBody), tags: orgTags }
    })

    app.post('/api/contacts/', { schema: { tags: ['contacts'], summary: 'Create a contact', body: ContactBody, response: { 200: Created, ...authErrors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const fields = replacing(emptyContact(), request.body)
      await checkContactRelations(identity.orgId, fields)
      const commands = requestCommands(deps, request, reply)
      const contactId = randomUUID()
      await withOptionalClaim(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: contactId, name: fields.email, field: 'email' }, () =>
        commands.run(contactDecider, contactStream(contactId), { type: 'CreateContact', contactId, orgId: identity.orgId, fields, actorId: identity.profileId, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Contact created', id: contactId }
    })

    app.get('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'One contact with its account, tags and assignees', params: IdParams, response: { 200: ContactDetail, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const contact = await found(orgId, request.params.id)
      const [account, tags, assigned] = await Promise.all([contact.account ? accountOf(db, orgId, contact.account) : undefined, tagRefs(db, orgId, contact.tags), profileRefs(db, orgId, contact.assigned_to)])
      return { contact_obj: recordBody(contact), account: account ? recordBody(account) : null, tags, assigned_to: assigned }
    })

    const update = async (request: FastifyRequest, reply: FastifyReply, id: string, requested: Partial<ContactFields>) => {
      const { orgId } = identityOf(request)
      const current = await found(orgId, id)
      await checkContactRelations(orgId, requested, current)
      const commands = requestCommands(deps, request, reply)
      const email = requested.email === undefined ? current.email : requested.email
      await withRenamedClaim(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: email, previousName: current.email, field: 'email' }, () =>
        commands.run(contactDecider, contactStream(current.id), { type: 'UpdateContact', orgId, changes: requested, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Contact updated' }
    }

    app.put('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'Replace a contact', description: 'Every field is replaced: fields left out take their empty value, relation lists left out are cleared.', params: IdParams, body: ContactBody, response: { 200: Message, ...authErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, replacing(emptyContact(), request.body)),
    )

    app.patch('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'Change the named fields of a contact', description: 'Fields and relation lists left out keep their values.', params: IdParams, body: ContactPatch, response: { 200: Message, ...authErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, request.body),
    )

    app.delete('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'Delete a contact (soft; admins or its creator). Its email becomes free', params: IdParams, response: { 200: Message, ...authErrors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await found(identity.orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      const remove = () => commands.run(contactDecider, contactStream(current.id), { type: 'DeleteContact', orgId: identity.orgId, actor: { profileId: identity.profileId, isAdmin: isAdmin(identity) }, at: clock().toISOString() })
      await (current.email ? withReleasedName(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: current.id, name: current.email }, remove) : remove())
      await commands.settle()
      return { error: false as const, message: 'Contact deleted' }
    })
  }
}
