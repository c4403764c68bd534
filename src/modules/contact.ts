import { z } from 'zod'
import { CONTACT_PERSONAL_FIELDS, contactStreams } from '../commands/contact/contact.ts'
import type { ContactEvent } from '../commands/contact/contact.ts'
import { By, Id, Ids, at, eventsOf, noteDefinitions, texts } from '../events/event-schemas.ts'
import { contactsProjector } from '../projections/contact/contacts.ts'
import { email, firstOf, words } from '../projections/search/search-documents.ts'
import { created, deleted, noteReadings, personErased, personName, updatedFlat } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Contacts (contact-<id>): commands/record.ts events.
const contactShape = {
  first_name: z.string(),
  ...texts('last_name', 'email', 'phone', 'title', 'description'),
  // v2 (issue 22): the original's professional, communication and address fields.
  ...texts('organization', 'department', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country'),
  do_not_call: z.boolean(),
  is_active: z.boolean(),
  account: Id.nullable(),
  assigned_to: Ids,
  tags: Ids,
}

const PERSONAL = CONTACT_PERSONAL_FIELDS

/** Contacts: people, their comments and attachments. */
export const contactModule: ModuleManifest = {
  name: 'contact',
  events: eventsOf<ContactEvent>()({
    // contact-<id>
    ContactCreated: { stream: 'contact', description: 'A contact (a person) was created (v2: with organization, department, LinkedIn, address, do_not_call and is_active).', data: z.strictObject({ contact_id: Id, org_id: Id, ...contactShape, created_by: By, ...at }), personal: PERSONAL },
    ContactUpdated: { stream: 'contact', description: 'Fields of a contact changed: the new values of those only.', data: z.strictObject({ ...z.object(contactShape).partial().shape, ...at }), personal: PERSONAL },
    ContactDeleted: { stream: 'contact', description: 'A contact was (soft) deleted.', data: z.strictObject(at), personal: [] },
    ...noteDefinitions('Contact', 'contact', 'contact', { ofAPerson: true }),
  }),
  routes: async (deps, files) => {
    const { contactNoteRoutes, contactRoutes } = await import('../http/contacts/contacts.ts')
    return [contactRoutes(deps), contactNoteRoutes(deps, files)]
  },
  projectors: [contactsProjector],
  subjects: ['contact'],
  search: {
    kind: 'contact',
    order: 4,
    version: 0,
    streams: contactStreams,
    events: { created: 'ContactCreated', updated: 'ContactUpdated', deleted: 'ContactDeleted' },
    changes: 'flat',
    keys: ['first_name', 'last_name', 'email', 'organization'],
    visibility: 'Contact',
    document: (f) => ({
      title: firstOf(words(f.first_name, f.last_name), f.email) || 'Unnamed contact',
      subtitle: firstOf(f.organization, f.email),
      names: words(f.first_name, f.last_name),
      terms: words(email(f.email), f.organization),
    }),
  },
  record: {
    entityType: 'Contact',
    version: 0,
    table: 'contacts',
    name: personName,
    erased: personErased,
    page: '/contacts',
    noun: 'contact',
    activity: { ContactCreated: created, ContactUpdated: updatedFlat, ContactDeleted: deleted, ...noteReadings('Contact') },
    notifiedBy: { created: 'ContactCreated', updated: 'ContactUpdated', commented: 'ContactCommentAdded' },
  },
  idKinds: [
    [/^\/api\/contacts\/comment\/\{id\}/, 'contactComment'],
    [/^\/api\/contacts\/attachment\/\{id\}/, 'contactAttachment'],
    [/^\/api\/contacts\/\{id\}/, 'contact'],
  ],
}
