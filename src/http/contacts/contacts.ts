import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { CONTACT_EMAIL_SCOPE, contactDecider, contactNames, contactStream, emptyContact } from '../../commands/contact/contact.ts'
import type { RecordModule } from '../../commands/record-create.ts'
import type { Db } from '../../db/database.ts'
import type { ContactFields } from '../../commands/contact/contact.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { accountOf } from '../../projections/accounts.ts'
import { CONTACT_NOTES, contactOf, listContacts } from '../../projections/contacts.ts'
import type { ContactRow } from '../../projections/contacts.ts'
import type { Deps } from '../../deps.ts'
import { NoteLists, memberNoteRoutes } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { identityOf } from '../kernel/auth.ts'
import { recordWriteRoutes } from '../kernel/record-routes.ts'
import { IdFilter, IdList, ProfileRef, TagRef, optionalEmail, optionalText, profileRefs, tagRefs } from '../kernel/relations.ts'
import { checkRelations } from '../../projections/relations.ts'
import { IdParams, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { Account, Contact, recordBody } from '../kernel/schemas/records.ts'

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
const ContactDetail = z.object({ contact_obj: Contact, account: Account.nullable().describe('The contact\'s account, when it has a live one'), tags: z.array(TagRef), assigned_to: z.array(ProfileRef), ...NoteLists })

/**
 * The contacts module as its use cases see it (create, CSV import): anything that creates contacts,
 * over HTTP or not, takes this, so an imported row obeys the same rules as POST.
 */
export function contactModule(db: Db): RecordModule<ContactFields, 'email', typeof contactNames> {
  return {
    plural: 'contacts',
    body: ContactBody,
    empty: emptyContact,
    decider: contactDecider,
    commands: contactNames.commands,
    stream: contactStream,
    // Like tags and assignees, an account the contact already has may stay after it is deleted.
    checkRelations: async (orgId, requested, current) => {
      const accountMissing = requested.account && requested.account !== current?.account && !(await accountOf(db, orgId, requested.account))
      await checkRelations(db, orgId, requested, accountMissing ? { account: ['Expected an account of this organization.'] } : {}, current)
    },
    unique: { scope: CONTACT_EMAIL_SCOPE, field: 'email' },
  }
}

/**
 * Contacts (issue 4): the same conventions as accounts. Email, when given, is unique per
 * organization, case-insensitively (name claims of scope `contact_email`).
 */
export function contactRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(contactOf(db, orgId, id))

    app.get('/api/contacts/', { schema: { tags: ['contacts'], summary: 'Contacts of the organization, by name', querystring: ListQuery, response: { 200: ContactList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, search, account, tags, assigned_to } = request.query
      const [{ count, rows }, orgTags] = await Promise.all([listContacts(db, orgId, { limit, offset, name, search, account, tags, assignedTo: assigned_to }), tagRefs(db, orgId)])
      return { count, offset, limit, results: rows.map(recordBody), tags: orgTags }
    })

    app.get('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'One contact with its account, tags and assignees', params: IdParams, response: { 200: ContactDetail, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const contact = await found(orgId, request.params.id)
      const [account, tags, assigned, notes] = await Promise.all([
        contact.account ? accountOf(db, orgId, contact.account) : undefined,
        tagRefs(db, orgId, contact.tags),
        profileRefs(db, orgId, contact.assigned_to),
        notesView(db, orgId, CONTACT_NOTES, 'contacts', contact.id),
      ])
      return { contact_obj: recordBody(contact), account: account ? recordBody(account) : null, tags, assigned_to: assigned, ...notes }
    })

    recordWriteRoutes(app, deps, { ...contactModule(db), noun: { title: 'Contact', indefinite: 'a contact' }, patch: ContactPatch, found })
  }
}

/** A contact's comments and attachments (note-routes.ts), the file in `contact_attachment`; events on the contact's stream. */
export const contactNoteRoutes = (deps: Deps, files: FileStore) =>
  memberNoteRoutes<ContactRow>(deps, files, { singular: 'contact', tables: CONTACT_NOTES, schema: Contact, bodyOf: recordBody, rowOf: (orgId, id) => contactOf(deps.db, orgId, id) }, (commands, id, command) =>
    commands.run(contactDecider, contactStream(id), command),
  )
