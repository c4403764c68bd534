import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A web form (docs/web-forms.md): an admin designs its ordered fields, what each answer fills on
 * the lead a submission creates, who the lead is assigned to, the consent text shown, and the
 * sites allowed to post it; publishing switches its public address on, unpublishing off. The
 * design rules are checked here, so every way of designing a form (routes, a future import) keeps them.
 */

export const FIELD_TYPES = ['text', 'email', 'phone', 'textarea', 'select', 'checkbox'] as const
export type FieldType = (typeof FIELD_TYPES)[number]

/** The lead fields an answer may fill; answers mapped to none are written into the lead's description. */
export const MAPPABLE_LEAD_FIELDS = ['salutation', 'first_name', 'last_name', 'title', 'email', 'phone', 'company_name', 'industry', 'website', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country', 'description'] as const
export type MappableLeadField = (typeof MAPPABLE_LEAD_FIELDS)[number]

/** The hidden field people never see and bots fill (the honeypot), and the other keys a submission's body may carry beside the answers. */
export const HONEYPOT_FIELD = 'website_url'
export const RESERVED_KEYS = [HONEYPOT_FIELD, 'consent', 'idempotency_key', 'page_url'] as const

export type FormField = { key: string; label: string; type: FieldType; required: boolean; options: string[]; maps_to: MappableLeadField | null }
/** What a visitor agrees to; `version` grows whenever the text, purpose or legal basis changes, so each submission says which wording it accepted. */
export type Consent = { text: string; purpose: string; legal_basis: string; version: number }
/** A form's design: everything an admin sets (the target is always a lead for now). */
export type FormDesign = { name: string; description: string; fields: FormField[]; success_message: string; allowed_origins: string[]; assigned_to: string[]; consent: Omit<Consent, 'version'> | null }
type StoredDesign = Omit<FormDesign, 'consent'> & { consent: Consent | null }

// Events: the storage contract.
export type WebFormEvent =
  | { type: 'WebFormCreated'; data: StoredDesign & { form_id: string; org_id: string; target: 'lead'; created_by: string | null; at: string } }
  /** Only the parts of the design that changed, each with its new value. */
  | { type: 'WebFormUpdated'; data: Partial<StoredDesign> & { at: string } }
  | { type: 'WebFormPublished'; data: { at: string } }
  | { type: 'WebFormUnpublished'; data: { at: string } }
  | { type: 'WebFormDeleted'; data: { at: string } }

// Fold.
export type WebFormState = { exists: boolean; deleted: boolean; orgId: string | null; published: boolean; design: StoredDesign }

const emptyDesign = (): StoredDesign => ({ name: '', description: '', fields: [], success_message: '', allowed_origins: [], assigned_to: [], consent: null })
export const initialWebFormState = (): WebFormState => ({ exists: false, deleted: false, orgId: null, published: false, design: emptyDesign() })

export function evolveWebForm(state: WebFormState, event: WebFormEvent): WebFormState {
  switch (event.type) {
    case 'WebFormCreated': {
      const { form_id: _id, org_id, target: _target, created_by: _by, at: _at, ...design } = event.data
      return { ...state, exists: true, orgId: org_id, design }
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
  | { type: 'UpdateWebForm'; orgId: string; design: Partial<FormDesign>; at: string }
  | { type: 'PublishWebForm'; orgId: string; at: string }
  | { type: 'UnpublishWebForm'; orgId: string; at: string }
  | { type: 'DeleteWebForm'; orgId: string; at: string }

function existing(state: WebFormState, orgId: string): void {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw new NotFoundError('Web form not found')
}

/** The design rules zod cannot see field by field: unique keys, options where (and only where) a select needs them, one field per lead field, a way to name the lead. */
export function designErrors(fields: readonly FormField[]): string[] {
  const errors: string[] = []
  const keys = new Set<string>()
  const mapped = new Set<string>()
  for (const field of fields) {
    if (keys.has(field.key)) errors.push(`Field keys must be unique: "${field.key}" appears twice.`)
    keys.add(field.key)
    if ((RESERVED_KEYS as readonly string[]).includes(field.key)) errors.push(`"${field.key}" is reserved for the form itself; use another key.`)
    if (field.type === 'select' && field.options.length === 0) errors.push(`"${field.key}": a select field needs options.`)
    if (field.type !== 'select' && field.options.length > 0) errors.push(`"${field.key}": only a select field has options.`)
    if (field.maps_to === null) continue
    if (mapped.has(field.maps_to)) errors.push(`Only one field may fill the lead's ${field.maps_to}.`)
    mapped.add(field.maps_to)
    if (field.type === 'checkbox') errors.push(`"${field.key}": a checkbox cannot fill a lead field.`)
    if (field.maps_to === 'email' && field.type !== 'email') errors.push(`"${field.key}": the lead's email needs a field of type email.`)
  }
  if (!fields.some((field) => field.required && (field.maps_to === 'first_name' || field.maps_to === 'last_name'))) {
    errors.push("A lead needs a name: one required field must fill the lead's first_name or last_name.")
  }
  return errors
}

function checkDesign(fields: readonly FormField[]): void {
  const errors = designErrors(fields)
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
  if (rest.fields) checkDesign(rest.fields)
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
      checkDesign(command.design.fields)
      const design = { ...command.design, consent: storedConsent(command.design.consent, null, 0) }
      return [{ type: 'WebFormCreated', data: { form_id: command.formId, org_id: command.orgId, target: 'lead', ...design, created_by: command.actorId, at: command.at } }]
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

/** The fields a form starts with when its designer names none: a contact form. */
export const DEFAULT_FIELDS: readonly FormField[] = [
  { key: 'first_name', label: 'First name', type: 'text', required: true, options: [], maps_to: 'first_name' },
  { key: 'last_name', label: 'Last name', type: 'text', required: false, options: [], maps_to: 'last_name' },
  { key: 'email', label: 'Email', type: 'email', required: true, options: [], maps_to: 'email' },
  { key: 'phone', label: 'Phone', type: 'phone', required: false, options: [], maps_to: 'phone' },
  { key: 'message', label: 'Message', type: 'textarea', required: false, options: [], maps_to: 'description' },
]
