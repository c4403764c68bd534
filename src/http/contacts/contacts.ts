import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { TaskLink, taskLinks } from '../tasks/task-views.ts'
import { contactDecider, contactStream } from '../../commands/contact/contact.ts'
import type { contactNames } from '../../commands/contact/contact.ts'
import { contactCreation } from '../../commands/contact/create-contact.ts'
import type { RecordModule } from '../../commands/record-create.ts'
import type { Db } from '../../db/database.ts'
import type { ContactFields } from '../../commands/contact/contact.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { accountOf, dealsOf } from '../../projections/account/accounts.ts'
import { CONTACT_NOTES, colleaguesOf, contactOf, countContactsByActivity, listContacts } from '../../projections/contact/contacts.ts'
import type { Deps } from '../../deps.ts'
import { NoteLists, memberNoteRoutes } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { identityOf, viewerOf } from '../kernel/auth.ts'
import { recordWriteRoutes } from '../kernel/record-routes.ts'
import { IdFilter, ProfileRef, TagRef, optionalEmail, optionalText, tagRefs } from '../kernel/relations.ts'
import { IdParams, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { countryChoices } from '../accounts/choices.ts'
import { AccountRecord, Choices, DealSummary, RelationList, UserChoice, accountRecords, blankable, dealSummary, userChoices } from '../accounts/schemas.ts'
import { ContactRecord, contactRecords } from './schemas.ts'
import type { ContactRecordBody } from './schemas.ts'

const linkedIn = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? null : typeof v === 'string' ? v.trim() : v),
  z.string().max(255).regex(/^https?:\/\/\S+$/i, 'Enter a valid URL.').nullable(),
)
const ContactBody = z.object({
  first_name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  last_name: optionalText(),
  email: optionalEmail().describe('Unique per organization, case-insensitively, when given'),
  phone: optionalText(50),
  title: optionalText(),
  organization: optionalText().describe('The company as typed (free text; `account` is the link)'),
  department: optionalText(),
  linkedin_url: linkedIn.optional().describe('An http(s) URL'),
  do_not_call: formBoolean(z.boolean()).optional().describe('Default false'),
  address_line: optionalText(),
  city: optionalText(),
  state: optionalText(),
  postcode: optionalText(64),
  country: optionalText().describe('Free text; the list answer offers the `countries` codes'),
  account: blankable(z.uuid().transform((id) => id.toLowerCase())).describe('An account of this organization'),
  description: optionalText(10_000),
  is_active: formBoolean(z.boolean()).optional().describe('Default true'),
  assigned_to: RelationList('active profiles').optional(),
  tags: RelationList('live tags').optional(),
})
const ContactPatch = ContactBody.partial()
const Text = z.string().optional()
const ListQuery = PageQuery.extend({
  name: Text.describe('Case-insensitive contains on first or last name'),
  search: Text.describe('Case-insensitive contains on first name, last name, email or phone'),
  city: Text.describe('Case-insensitive contains'),
  phone: Text.describe('Case-insensitive contains'),
  email: Text.describe('Case-insensitive contains'),
  account: IdFilter('contacts of an account'),
  tags: IdFilter('contacts carrying a tag'),
  assigned_to: IdFilter('contacts assigned to a profile'),
  created_at__gte: Text.describe('YYYY-MM-DD (UTC day); malformed matches nothing'),
  created_at__lte: Text.describe('YYYY-MM-DD, the whole day included'),
  is_active: Text.describe('"true" or "false": only active or inactive contacts; any other value is no filter'),
})
const ContactList = pageOf(ContactRecord)
  .extend({
    tags: z.array(TagRef).describe("The organization's tags, for the filter picker"),
    active_count: z.number().int().describe('How many of the filtered contacts are active, whatever is_active asked'),
    inactive_count: z.number().int().describe('How many are inactive, whatever is_active asked'),
    contacts_count: z.number().int().describe('`count`, under the original\'s other name'),
    contact_obj_list: z.array(ContactRecord).describe('`results`, under the original\'s other name'),
    per_page: z.number().int(),
    page_number: z.number().int(),
    countries: Choices.describe('`[code, name]` pairs'),
    users: z.array(UserChoice).describe('Active members'),
  })
  .describe('One page of the matching contacts, by name')
const DealRef = DealSummary
const ContactDetail = z.object({
  contact_obj: ContactRecord,
  account: AccountRecord.nullable().describe("The contact's account, when it has a live one"),
  tags: z.array(TagRef),
  assigned_to: z.array(ProfileRef),
  address_obj: z.object({ address_line: z.string().nullable(), city: z.string().nullable(), state: z.string().nullable(), postcode: z.string().nullable(), country: z.string().nullable() }),
  opportunities: z.array(DealRef).describe('Deals naming the contact that the caller may see, newest first (at most 10)'),
  cases: z.array(z.object({ id: z.uuid() })).describe('Always empty until cases exist'),
  tasks: z.array(TaskLink).describe('The newest tasks linked to this contact that the caller may open (at most 20)'),
  colleagues: z.array(z.object({ id: z.uuid(), first_name: z.string(), last_name: z.string().nullable(), title: z.string() })).describe('Other contacts of the same account, by name (at most 8)'),
  countries: Choices,
  ...NoteLists,
})

/**
 * The contacts module as its use cases see it (create, CSV import): anything that creates contacts,
 * over HTTP or not, takes this, so an imported row obeys the same rules as POST.
 */
export function contactModule(db: Db): RecordModule<ContactFields, 'email', typeof contactNames> {
  return { plural: 'contacts', body: ContactBody, ...contactCreation(db) }
}

/**
 * Contacts (issue 4): the same conventions as accounts. Email, when given, is unique per
 * organization, case-insensitively (name claims of scope `contact_email`).
 */
export function contactRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(contactOf(db, orgId, id))

    app.get('/api/contacts/', { schema: { tags: ['contacts'], summary: 'Contacts of the organization, by name, with how many are active and inactive', querystring: ListQuery, response: { 200: ContactList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, search, city, phone, email, account, tags, assigned_to, created_at__gte, created_at__lte, is_active } = request.query
      const filter = { limit, offset, name, search, city, phone, email, account, tags, assignedTo: assigned_to, createdFrom: created_at__gte, createdTo: created_at__lte }
      const isActive = is_active === 'true' ? true : is_active === 'false' ? false : undefined
      const [{ count, rows }, activity, orgTags, users] = await Promise.all([listContacts(db, orgId, { ...filter, isActive }), countContactsByActivity(db, orgId, filter), tagRefs(db, orgId), userChoices(db, orgId)])
      const results = await contactRecords(db, orgId, rows)
      return {
        count,
        offset,
        limit,
        results,
        tags: orgTags,
        active_count: activity.active,
        inactive_count: activity.inactive,
        contacts_count: count,
        contact_obj_list: results,
        per_page: limit,
        page_number: limit ? Math.floor(offset / limit) + 1 : 1,
        countries: countryChoices(),
        users,
      }
    })

    app.get('/api/contacts/:id/', { schema: { tags: ['contacts'], summary: 'One contact with its account, deals, colleagues, tags and assignees', params: IdParams, response: { 200: ContactDetail, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { orgId } = viewer
      const contact = await found(orgId, request.params.id)
      const now = deps.clock()
      const [[record], account, notes, deals, colleagues] = await Promise.all([
        contactRecords(db, orgId, [contact]),
        contact.account ? accountOf(db, orgId, contact.account).then((row) => row && accountRecords(db, viewer, [row])) : undefined,
        notesView(db, orgId, CONTACT_NOTES, 'contacts', contact.id),
        dealsOf(db, viewer, { contact: contact.id }, 10),
        colleaguesOf(db, orgId, contact, 8),
      ])
      const { address_line, city, state, postcode, country } = contact
      return {
        contact_obj: record!,
        account: account?.[0] ?? null,
        tags: record!.tags,
        assigned_to: record!.assigned_to,
        address_obj: { address_line, city, state, postcode, country },
        opportunities: deals.map((deal) => dealSummary(deal, now)),
        cases: [],
        tasks: await taskLinks(db, viewer, { contact: contact.id }),
        colleagues: colleagues.map(({ id, first_name, last_name, title }) => ({ id, first_name, last_name, title: title ?? '' })),
        countries: countryChoices(),
        ...notes,
      }
    })

    recordWriteRoutes(app, deps, { ...contactModule(db), noun: { title: 'Contact', indefinite: 'a contact' }, patch: ContactPatch, found })
  }
}

/** A live contact as the contact routes answer it (`contact_obj`), or undefined. */
async function contactBody(db: Db, orgId: string, id: string): Promise<ContactRecordBody | undefined> {
  const row = await contactOf(db, orgId, id)
  return row && (await contactRecords(db, orgId, [row]))[0]
}

/** A contact's comments and attachments (note-routes.ts), the file in `contact_attachment`; events on the contact's stream. The answer's `contact_obj` is the detail's. */
export const contactNoteRoutes = (deps: Deps, files: FileStore) =>
  memberNoteRoutes<ContactRecordBody>(deps, files, { singular: 'contact', tables: CONTACT_NOTES, schema: ContactRecord, bodyOf: (body) => body, rowOf: (viewer, id) => contactBody(deps.db, viewer.orgId, id) }, (commands, id, command) =>
    commands.run(contactDecider, contactStream(id), command),
  )
