import { streamCategory } from '../streams.ts'
import { recordDecider } from '../record.ts'
import type { RecordCommand, RecordEvent, RecordState } from '../record.ts'

/** A contact: a person, optionally at an account. Deleting is soft. */
export type ContactFields = {
  first_name: string
  last_name: string | null
  /** Unique per organization, case-insensitively, when given (a name claim of scope `contact_email`). */
  email: string | null
  phone: string | null
  title: string | null
  /** Issue 22, the original's contact form: the company as typed (free text, not the account link), department, LinkedIn, flat address. */
  organization: string | null
  department: string | null
  linkedin_url: string | null
  address_line: string | null
  city: string | null
  state: string | null
  postcode: string | null
  country: string | null
  /** A rule about how the person may be reached. */
  do_not_call: boolean
  /** Whether the person still works there; default true. */
  is_active: boolean
  /** An account id of the contact's organization, checked by the route before the command. */
  account: string | null
  description: string | null
  assigned_to: string[]
  tags: string[]
}

// Events: the storage contract (never change a type name or data shape). Commands name the decisions.
export const contactNames = {
  events: { created: 'ContactCreated', updated: 'ContactUpdated', deleted: 'ContactDeleted', idKey: 'contact_id' },
  commands: { create: 'CreateContact', update: 'UpdateContact', delete: 'DeleteContact', idKey: 'contactId' },
  // ContactCommentAdded … ContactAttachmentRemoved (commands/notes.ts).
  notes: 'Contact',
} as const
export type ContactEvent = RecordEvent<ContactFields, typeof contactNames>
export type ContactCommand = RecordCommand<ContactFields, typeof contactNames>
export type ContactState = RecordState<ContactFields>

export const emptyContact = (): ContactFields => ({
  first_name: '', last_name: null, email: null, phone: null, title: null,
  organization: null, department: null, linkedin_url: null, address_line: null, city: null, state: null, postcode: null, country: null, do_not_call: false, is_active: true,
  account: null, description: null, assigned_to: [], tags: [],
})

export const contactDecider = recordDecider(emptyContact, contactNames)

export const contactStreams = streamCategory('contact')

/** A contact's personal fields (docs/personal-data.md); the rest (flags, account, assignees, tags) stays in clear. */
export const CONTACT_PERSONAL_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'title', 'description', 'organization', 'department', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country'] as const
export const contactStream = contactStreams.stream

/** Contact emails, when given, are unique per organization, case-insensitively (name claims of this scope). */
export const CONTACT_EMAIL_SCOPE = 'contact_email'
