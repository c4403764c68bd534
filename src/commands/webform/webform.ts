import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { CASE_PRIORITIES } from '../case/fields.ts'
import { streamCategory } from '../streams.ts'

/**
 * A web form (docs/web-forms.md): an admin designs its ordered fields, what each answer fills on
 * the record a submission creates (a lead, a contact or a case), who it is assigned to, the consent text shown, and the
 * sites allowed to post it; publishing switches its public address on, unpublishing off. The
 * design rules are checked here, so every way of designing a form (routes, a future import) keeps them.
 */

export const FIELD_TYPES = ['text', 'email', 'phone', 'textarea', 'select', 'checkbox'] as const
export type FieldType = (typeof FIELD_TYPES)[number]

/** What a submission creates, chosen when the form is designed. */
export const TARGETS = ['lead', 'contact', 'case'] as const
export type Target = (typeof TARGETS)[number]

/**
 * The fields of each target an answer may fill; answers mapped to none are written into the
 * record's description. A case's `email`, `first_name` and `last_name` are its submitter's: the
 * contact found by that email, or created, and named among the case's contacts.
 */
export const MAPPABLE_FIELDS = {
  lead: ['salutation', 'first_name', 'last_name', 'title', 'email', 'phone', 'company_name', 'industry', 'website', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country', 'description'],
  contact: ['first_name', 'last_name', 'title', 'email', 'phone', 'organization', 'department', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country', 'description'],
  case: ['name', 'description', 'priority', 'email', 'first_name', 'last_name'],
} as const satisfies Record<Target, readonly string[]>
export type MappableField = (typeof MAPPABLE_FIELDS)[Target][number]
/** Every field some target has: what a field's `maps_to` may name before its form's target is known. */
export const ALL_MAPPABLE_FIELDS = [...new Set(Object.values(MAPPABLE_FIELDS).flat())] as [MappableField, ...MappableField[]]

/** The field a required answer must fill, so the record has its name (a contact's first name, a case's subject); a lead takes either name. */
const NAMED_BY: Record<Target, readonly MappableField[]> = { lead: ['first_name', 'last_name'], contact: ['first_name'], case: ['name'] }

/** The hidden field people never see and bots fill (the honeypot), and the other keys a submission's body may carry beside the answers. */
export const HONEYPOT_FIELD = 'website_url'
export const RESERVED_KEYS = [HONEYPOT_FIELD, 'consent', 'idempotency_key', 'page_url'] as const

export type FormField = { key: string; label: string; type: FieldType; required: boolean; options: string[]; maps_to: MappableField | null }
/** What a visitor agrees to; `version` grows whenever the text, purpose or legal basis changes, so each submission says which wording it accepted. */
export type Consent = { text: string; purpose: string; legal_basis: string; version: number }
/** A form's design: everything an admin sets. The target is chosen on creation and never changes: the submissions so far created records of it. */
export type FormDesign = { target: Target; name: string; description: string; fields: FormField[]; success_message: string; allowed_origins: string[]; assigned_to: string[]; consent: Omit<Consent, 'version'> | null }
type StoredDesign = Omit<FormDesign, 'consent' | 'target'> & { consent: Consent | null }
export type DesignChange = Partial<Omit<FormDesign, 'target'>>

// Events: the storage contract.
export type WebFormEvent =
  | { type: 'WebFormCreated'; data: StoredDesign & { form_id: string; org_id: string; target: Target; created_by: string | null; at: string } }
  /** Only the parts of the design that changed, each with its new value. */
  | { type: 'WebFormUpdated'; data: Partial<StoredDesign> & { at: string } }
  | { type: 'WebFormPublished'; data: { at: string } }
  | { type: 'WebFormUnpublished'; data: { at: string } }
  | { type: 'WebFormDeleted'; data: { at: string } }

// Fold.
export type WebFormState = { exists: boolean; deleted: boolean; orgId: string | null; published: boolean; target: Target; design: StoredDesign }

const emptyDesign = (): StoredDesign => ({ name: '', description: '', fields: [], success_message: '', allowed_origins: [], assigned_to: [], consent: null })
export const initialWebFormState = (): WebFormState => ({ exists: false, deleted: false, orgId: null, published: false, target: 'lead', design: emptyDesign() })

export function evolveWebForm(state: WebFormState, event: WebFormEvent): WebFormState {
  switch (event.type) {
    case 'WebFormCreated': {
      const { form_id: _id, org_id, target, created_by: _by, at: _at, ...design } = event.data
      return { ...state, exists: true, orgId: org_id, target, design }
    }
    case 'WebFormUpdated': {
      const { at: _at, ...changes } = event.data
      return { ...state, design: { ...state.design, ...changes } }
    }
    case 'WebFormPublished':
      return { ...state, published: true }
    case 'WebFormUnpublished':
      return { ...state, published: false }
    case 'WebFormDeleted':
      return { ...state, deleted: true, published: false }
  }
}

// Decisions. Time, ids and the caller arrive in the command; another organization's form looks missing.
export type WebFormCommand =
  | { type: 'CreateWebForm'; formId: string; orgId: string; design: FormDesign; actorId: string | null; at: string }
  | { type: 'UpdateWebForm'; orgId: string; design: DesignChange; at: string }
  | { type: 'PublishWebForm'; orgId: string; at: string }
  | { type: 'UnpublishWebForm'; orgId: string; at: string }
  | { type: 'DeleteWebForm'; orgId: string; at: string }

function existing(state: WebFormState, orgId: string): void {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw new NotFoundError('Web form not found')
}

/** The design rules zod cannot see field by field: unique keys, options where (and only where) a select needs them, fields the target has, one field per target field, a way to name the record. */
export function designErrors(target: Target, fields: readonly FormField[]): string[] {
  const errors: string[] = []
  const keys = new Set<string>()
  const mapped = new Set<string>()
  const mappable: readonly string[] = MAPPABLE_FIELDS[target]
  for (const field of fields) {
    if (keys.has(field.key)) errors.push(`Field keys must be unique: "${field.key}" appears twice.`)
    keys.add(field.key)
    if ((RESERVED_KEYS as readonly string[]).includes(field.key)) errors.push(`"${field.key}" is reserved for the form itself; use another key.`)
    if (field.type === 'select' && field.options.length === 0) errors.push(`"${field.key}": a select field needs options.`)
    if (field.type !== 'select' && field.options.length > 0) errors.push(`"${field.key}": only a select field has options.`)
    if (field.maps_to === null) continue
    if (!mappable.includes(field.maps_to)) errors.push(`"${field.key}": a ${target} has no field ${field.maps_to} (it has ${mappable.join(', ')}).`)
    if (mapped.has(field.maps_to)) errors.push(`Only one field may fill the ${target}'s ${field.maps_to}.`)
    mapped.add(field.maps_to)
    if (field.type === 'checkbox') errors.push(`"${field.key}": a checkbox cannot fill a ${target} field.`)
    if (field.maps_to === 'email' && field.type !== 'email') errors.push(`"${field.key}": the ${target}'s email needs a field of type email.`)
    if (field.maps_to === 'priority' && !(field.type === 'select' && field.options.every((option) => (CASE_PRIORITIES as readonly string[]).includes(option)))) {
      errors.push(`"${field.key}": a case's priority needs a select field whose options are among ${CASE_PRIORITIES.join(', ')}.`)
    }
  }
  const names = NAMED_BY[target]
  if (!fields.some((field) => field.required && field.maps_to !== null && names.includes(field.maps_to))) {
    errors.push(`A ${target} needs a name: one required field must fill the ${target}'s ${names.join(' or ')}.`)
  }
  // The submitter's contact needs a first name: without it, a case's email or last name would name no one.
  if (target === 'case' && (mapped.has('email') || mapped.has('last_name')) && !fields.some((field) => field.required && field.maps_to === 'first_name')) {
    errors.push("A case's submitter becomes a contact, who needs a first name: with email or last_name, one required field must fill first_name.")
  }
  return errors
}

function checkDesign(target: Target, fields: readonly FormField[]): void {
  const errors = designErrors(target, fields)
  if (errors.length) throw new ValidationError({ fields: errors })
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The consent as stored: a new version when its wording changed, the same one when it did not. */
function storedConsent(next: FormDesign['consent'], current: Consent | null, lastVersion: number): Consent | null {
  if (next === null) return null
  if (current && current.text === next.text && current.purpose === next.purpose && current.legal_basis === next.legal_basis) return current
  return { ...next, version: lastVersion + 1 }
}

function decideUpdate(command: Extract<WebFormCommand, { type: 'UpdateWebForm' }>, state: WebFormState): WebFormEvent[] {
  existing(state, command.orgId)
  const { consent, ...rest } = command.design
  if (rest.fields) checkDesign(state.target, rest.fields)
  const changes: Partial<StoredDesign> = {}
  for (const [key, value] of Object.entries(rest) as [keyof typeof rest, unknown][]) {
    if (value !== undefined && !same(value, state.design[key])) (changes as Record<string, unknown>)[key] = value
  }
  if (consent !== undefined) {
    const next = storedConsent(consent, state.design.consent, state.design.consent?.version ?? 0)
    if (!same(next, state.design.consent)) changes.consent = next
  }
  return Object.keys(changes).length ? [{ type: 'WebFormUpdated', data: { ...changes, at: command.at } }] : []
}

export function decideWebForm(command: WebFormCommand, state: WebFormState): WebFormEvent[] {
  switch (command.type) {
    case 'CreateWebForm': {
      if (state.exists) return []
      const { target, ...rest } = command.design
      checkDesign(target, rest.fields)
      const design = { ...rest, consent: storedConsent(rest.consent, null, 0) }
      return [{ type: 'WebFormCreated', data: { form_id: command.formId, org_id: command.orgId, target, ...design, created_by: command.actorId, at: command.at } }]
    }
    case 'UpdateWebForm':
      return decideUpdate(command, state)
    case 'PublishWebForm':
      existing(state, command.orgId)
      return state.published ? [] : [{ type: 'WebFormPublished', data: { at: command.at } }]
    case 'UnpublishWebForm':
      existing(state, command.orgId)
      return state.published ? [{ type: 'WebFormUnpublished', data: { at: command.at } }] : []
    case 'DeleteWebForm':
      if (state.exists && state.orgId === command.orgId && state.deleted) return []
      existing(state, command.orgId)
      return [{ type: 'WebFormDeleted', data: { at: command.at } }]
  }
}

export const webFormDecider: Decider<WebFormCommand, WebFormState, WebFormEvent> = { initialState: initialWebFormState, evolve: evolveWebForm, decide: decideWebForm }

export const webFormStreams = streamCategory('webform')
export const webFormStream = webFormStreams.stream

/** The fields a lead or contact form starts with when its designer names none: a contact form. */
export const DEFAULT_FIELDS: readonly FormField[] = [
  { key: 'first_name', label: 'First name', type: 'text', required: true, options: [], maps_to: 'first_name' },
  { key: 'last_name', label: 'Last name', type: 'text', required: false, options: [], maps_to: 'last_name' },
  { key: 'email', label: 'Email', type: 'email', required: true, options: [], maps_to: 'email' },
  { key: 'phone', label: 'Phone', type: 'phone', required: false, options: [], maps_to: 'phone' },
  { key: 'message', label: 'Message', type: 'textarea', required: false, options: [], maps_to: 'description' },
]

/** A case form's fields when its designer names none: the subject and the message, and who sends them (their contact). */
const CASE_FIELDS: readonly FormField[] = [
  { key: 'first_name', label: 'First name', type: 'text', required: true, options: [], maps_to: 'first_name' },
  { key: 'email', label: 'Email', type: 'email', required: true, options: [], maps_to: 'email' },
  { key: 'subject', label: 'Subject', type: 'text', required: true, options: [], maps_to: 'name' },
  { key: 'message', label: 'Message', type: 'textarea', required: false, options: [], maps_to: 'description' },
]
export const defaultFields = (target: Target): readonly FormField[] => (target === 'case' ? CASE_FIELDS : DEFAULT_FIELDS)
