import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * An invoice template (the original's InvoiceTemplate): the organization's look of its invoices
 * (colours, its own HTML and CSS, default notes and terms, a footer), one of them the default.
 * Every member reads the catalogue; only an admin changes it or reads the markup (the original's
 * template views). The PDFs take the default template's colours, footer, notes and terms. Its logo is
 * a file of the file store, named by the event that set it.
 */
export type TemplateFields = {
  name: string
  /** #RRGGBB. */
  primary_color: string
  secondary_color: string
  template_html: string
  template_css: string
  default_notes: string
  default_terms: string
  footer_text: string
  /** At most one per organization: a template made the default unsets the others (in the read model). */
  is_default: boolean
}

/** A logo already moved into the file store (kernel/uploads.ts adoptUpload); its type sniffed from its bytes: PNG, JPEG, GIF or WebP. */
export type TemplateLogo = { storage_key: string; file_name: string; content_type: string; size: number }

export const emptyTemplate: TemplateFields = { name: '', primary_color: '#3B82F6', secondary_color: '#1E40AF', template_html: '', template_css: '', default_notes: '', default_terms: '', footer_text: '', is_default: false }

export type TemplateEvent =
  | { type: 'InvoiceTemplateCreated'; data: TemplateFields & { template_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'InvoiceTemplateUpdated'; data: Partial<TemplateFields> & { by: string | null; at: string } }
  | { type: 'InvoiceTemplateLogoSet'; data: TemplateLogo & { by: string | null; at: string } }
  | { type: 'InvoiceTemplateDeleted'; data: { by: string | null; at: string } }

export type TemplateState = { exists: boolean; orgId: string | null; deleted: boolean; fields: TemplateFields }

type Facts = { orgId: string; actor: Actor; at: string }
export type TemplateCommand =
  | ({ type: 'CreateTemplate'; templateId: string; fields: Partial<TemplateFields>; logo?: TemplateLogo } & Facts)
  | ({ type: 'UpdateTemplate'; fields: Partial<TemplateFields>; logo?: TemplateLogo } & Facts)
  | ({ type: 'DeleteTemplate' } & Facts)

function adminOnly(actor: Actor): void {
  if (!actor.isAdmin) throw new ForbiddenError('Only an administrator can change invoice templates.')
}

function decide(command: TemplateCommand, state: TemplateState): TemplateEvent[] {
  adminOnly(command.actor)
  if (command.type === 'CreateTemplate') {
    if (state.exists) return []
    const fields = { ...emptyTemplate, ...Object.fromEntries(Object.entries(command.fields).filter(([, value]) => value !== undefined)) }
    return [{ type: 'InvoiceTemplateCreated', data: { template_id: command.templateId, org_id: command.orgId, ...fields, created_by: command.actor.profileId, at: command.at } }, ...logoSet(command)]
  }
  if (!state.exists || state.deleted || state.orgId !== command.orgId) throw new NotFoundError('Template not found')
  const by = command.actor.profileId
  if (command.type === 'DeleteTemplate') return [{ type: 'InvoiceTemplateDeleted', data: { by, at: command.at } }]
  // Another template made the default since unset this one in the read model only: asking for the default again always counts.
  const changes = Object.fromEntries(Object.entries(command.fields).filter(([key, value]) => value !== undefined && (value !== state.fields[key as keyof TemplateFields] || (key === 'is_default' && value === true))))
  const updated: TemplateEvent[] = Object.keys(changes).length ? [{ type: 'InvoiceTemplateUpdated', data: { ...changes, by, at: command.at } }] : []
  return [...updated, ...logoSet(command)]
}

/** A logo sent with a create or an update: always a new file (a new key), so always an event. */
const logoSet = (command: { logo?: TemplateLogo; actor: Actor; at: string }): TemplateEvent[] =>
  command.logo ? [{ type: 'InvoiceTemplateLogoSet', data: { ...command.logo, by: command.actor.profileId, at: command.at } }] : []

function evolve(state: TemplateState, event: TemplateEvent): TemplateState {
  switch (event.type) {
    case 'InvoiceTemplateCreated': {
      const { template_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, deleted: false, fields }
    }
    case 'InvoiceTemplateUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'InvoiceTemplateLogoSet':
      return state
    case 'InvoiceTemplateDeleted':
      return { ...state, deleted: true }
  }
}

export const templateDecider: Decider<TemplateCommand, TemplateState, TemplateEvent> = { initialState: () => ({ exists: false, orgId: null, deleted: false, fields: emptyTemplate }), evolve, decide }

export const templateStreams = streamCategory('invoice_template')
export const templateStream = templateStreams.stream
