import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import { customValuesAfter } from '../custom-field/values.ts'
import type { CustomValues, CustomValuesInput, CustomValuesMode, Definition } from '../custom-field/values.ts'
import type { Decider } from '../decider.ts'
import { decideLeadMove } from './move.ts'
import type { LeadMoved, LeadPlacement, MoveLead } from './move.ts'
import { decideNote, evolveNotes, isNoteCommand, isNoteEvent, noNotes } from '../notes.ts'
import type { NoteCommand, NoteEvent, Notes } from '../notes.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../caller.ts'
import { changedFields, replacing } from '../record.ts'
import { streamCategory } from '../streams.ts'

/**
 * A lead (§2.5, §3.3): a prospective customer, one stream per lead, decided here whichever route
 * changes it. Conversion is a status change (PATCH `{"status": "converted"}`, or a create as
 * converted): the route first creates the account, contact and deal the lead describes, then this
 * decider records `LeadConverted` with their ids. Rules (where-the-spec-is-silent.md, Leads):
 * conversion needs an email and cannot be undone (a converted lead's status never changes again,
 * converting twice is 400 on `status`); a closed lead may be reopened (any other status).
 */

/** §2.5, exact strings. */
export const LEAD_STATUSES = ['assigned', 'in process', 'converted', 'recycled', 'closed'] as const
/** §2.5, exact strings (`compaign` is the spec's spelling). Lowercase: not the deal's lead_source list. */
export const LEAD_SOURCES = ['call', 'email', 'existing customer', 'partner', 'public relations', 'compaign', 'other'] as const
/** Not enumerated by the spec; our choice. */
export const LEAD_RATINGS = ['hot', 'warm', 'cold'] as const
/** The statuses the list's `close_leads` section holds; the others are `open_leads`. */
export const CLOSED_LEAD_STATUSES: readonly LeadStatus[] = ['closed', 'converted']

export type LeadStatus = (typeof LEAD_STATUSES)[number]

export type LeadFields = {
  salutation: string | null
  /** Blank when the lead has only a last name (it needs one or the other). */
  first_name: string
  last_name: string | null
  /** The person's job title (answered as `job_title`, the original's name, and as `title`). */
  title: string | null
  /** Unique per organization, case-insensitively, when given (a name claim of scope `lead_email`). */
  email: string | null
  phone: string | null
  company_name: string | null
  /** Free text; the original offers its INDCHOICES list (e.g. "SOFTWARE"). */
  industry: string | null
  website: string | null
  /** The person's LinkedIn profile (the original's field). */
  linkedin_url: string | null
  address_line: string | null
  city: string | null
  state: string | null
  postcode: string | null
  country: string | null
  status: LeadStatus
  source: (typeof LEAD_SOURCES)[number] | null
  rating: (typeof LEAD_RATINGS)[number] | null
  description: string | null
  /** Decimal string with 2 places, like a deal's amount. */
  opportunity_amount: string | null
  /** ISO 4217 code of the amount; the organization's default when an amount is set without one. */
  currency: string | null
  probability: number | null
  /** The expected close date, YYYY-MM-DD. */
  close_date: string | null
  /** When the lead was last contacted and is next to be followed up, YYYY-MM-DD (the original's fields; its phone app shows and sets them). */
  last_contacted: string | null
  next_follow_up: string | null
  /** Output-only: the account conversion created. */
  account: string | null
  contacts: string[]
  tags: string[]
  teams: string[]
  assigned_to: string[]
  custom_fields: CustomValues
}

export const emptyLead = (): LeadFields => ({
  salutation: null, first_name: '', last_name: null, title: null, email: null, phone: null, company_name: null, industry: null, website: null, linkedin_url: null, address_line: null, city: null, state: null, postcode: null, country: null,
  status: 'assigned', source: null, rating: null, description: null, opportunity_amount: null, currency: null, probability: null, close_date: null, last_contacted: null, next_follow_up: null, account: null, contacts: [], tags: [], teams: [], assigned_to: [], custom_fields: {},
})

/** What conversion created, recorded on the lead. */
export type Conversion = { account_id: string; contact_id: string; opportunity_id: string }

// Events: the storage contract (never change a type name or data shape).
export type LeadFieldChanges = { [K in keyof LeadFields]?: { from: LeadFields[K]; to: LeadFields[K] } }
export type LeadEvent =
  | { type: 'LeadCreated'; data: LeadFields & { lead_id: string; org_id: string; created_by: string | null; at: string } }
  /** Only the fields that changed, each with its value before and after. */
  | { type: 'LeadUpdated'; data: { changes: LeadFieldChanges; at: string } }
  /** The status becomes `converted`, `account` the new account, and the new contact joins `contacts`. */
  | { type: 'LeadConverted'; data: Conversion & { by: string | null; at: string } }
  | { type: 'LeadDeleted'; data: { at: string } }
  /** A board move (move.ts). */
  | LeadMoved
  | NoteEvent<'Lead'>

/** `kanbanOrder`: the card's position; until a move sets it, the creation time in ms (as a deal's). */
export type LeadState = { exists: boolean; orgId: string | null; createdBy: string | null; deleted: boolean; fields: LeadFields; conversion: Conversion | null; notes: Notes; placement: LeadPlacement | null; kanbanOrder: number }

export const initialLeadState = (): LeadState => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: emptyLead(), conversion: null, notes: noNotes(), placement: null, kanbanOrder: 0 })

/** The fields after a conversion: what `LeadConverted` implies (the projector applies the same). */
export const convertedFields = (fields: LeadFields, conversion: Conversion): LeadFields => ({
  ...fields,
  status: 'converted',
  account: conversion.account_id,
  contacts: fields.contacts.includes(conversion.contact_id) ? fields.contacts : [...fields.contacts, conversion.contact_id],
})

export function evolveLead(state: LeadState, event: LeadEvent): LeadState {
  if (isNoteEvent('Lead', event)) return { ...state, notes: evolveNotes('Lead', state.notes, event) }
  switch (event.type) {
    case 'LeadCreated': {
      const { lead_id: _id, org_id, created_by, at, ...fields } = event.data
      return { ...initialLeadState(), exists: true, orgId: org_id, createdBy: created_by, fields, kanbanOrder: Date.parse(at) }
    }
    case 'LeadUpdated': {
      const fields = { ...state.fields }
      for (const [key, change] of Object.entries(event.data.changes)) (fields as Record<string, unknown>)[key] = change.to
      return { ...state, fields }
    }
    case 'LeadConverted': {
      const { account_id, contact_id, opportunity_id } = event.data
      const conversion = { account_id, contact_id, opportunity_id }
      return { ...state, fields: convertedFields(state.fields, conversion), conversion }
    }
    case 'LeadDeleted':
      return { ...state, deleted: true }
    case 'LeadMoved':
      return { ...state, placement: event.data.to, kanbanOrder: event.data.kanban_order }
  }
}

/** What a client may set: every field but `account` (conversion sets it), custom values as sent. */
export type LeadInput = Partial<Omit<LeadFields, 'account' | 'custom_fields'>> & { custom?: CustomValuesInput }

/** `defaultCurrency`: the organization's, for an amount set without a currency. */
type WriteFacts = { orgId: string; actor: Actor; at: string; customFields: readonly Definition[]; conversion?: Conversion; defaultCurrency?: string }

/** An amount is in a currency: the one sent, else the organization's default (as the original stamps it). */
const withCurrency = (fields: LeadFields, defaultCurrency: string | undefined): LeadFields =>
  fields.opportunity_amount !== null && fields.currency === null && defaultCurrency ? { ...fields, currency: defaultCurrency } : fields
export type LeadCommand =
  | ({ type: 'CreateLead'; leadId: string; input: LeadInput } & WriteFacts)
  /** PUT (`replace`: fields left out take their empty value, except status, which is kept) or PATCH. */
  | ({ type: 'UpdateLead'; input: LeadInput; replace: boolean } & WriteFacts)
  | { type: 'DeleteLead'; orgId: string; actor: Actor; at: string }
  | MoveLead
  | NoteCommand

function visible(state: LeadState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError('Lead not found')
}

export const mayAccessLead = (state: Pick<LeadState, 'createdBy' | 'fields'>, actor: Actor) => mayAccess('Lead', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)

function assertMayAccessLead(state: LeadState, actor: Actor): void {
  if (!mayAccessLead(state, actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may change this lead')
}

const writable = ({ custom: _custom, ...fields }: LeadInput): Partial<LeadFields> => fields

/**
 * Conversion's events: `LeadConverted` once the fields say converted and the lead is not yet, which
 * needs an email and the ids of what the route created (a missing one is a route error: 400 on status).
 */
function conversionEvents(fields: LeadFields, already: boolean, command: WriteFacts): LeadEvent[] {
  if (fields.status !== 'converted' || already) return []
  if (!fields.email) throw new ValidationError({ email: ['Required to convert a lead.'] })
  if (!command.conversion) throw new ValidationError({ status: ['Conversion needs the account, contact and deal it creates.'] })
  return [{ type: 'LeadConverted', data: { ...command.conversion, by: command.actor.profileId, at: command.at } }]
}

const customValues = (command: WriteFacts & { input: LeadInput }, current: CustomValues, mode: CustomValuesMode): CustomValues => customValuesAfter(command.customFields, current, command.input.custom, mode)

/** A lead is found by its name: it needs a first or a last one (the original's form rule). */
function assertNamed(fields: LeadFields): void {
  if (!fields.first_name && !fields.last_name) throw new ValidationError({ first_name: ['A lead needs a first or a last name.'] })
}

function decideCreate(command: Extract<LeadCommand, { type: 'CreateLead' }>, state: LeadState): LeadEvent[] {
  if (state.exists) return []
  const fields = withCurrency({ ...replacing(emptyLead(), writable(command.input)), custom_fields: customValues(command, {}, 'create') }, command.defaultCurrency)
  assertNamed(fields)
  const converted = conversionEvents(fields, false, command)
  const created: LeadEvent = { type: 'LeadCreated', data: { lead_id: command.leadId, org_id: command.orgId, ...fields, created_by: command.actor.profileId, at: command.at } }
  return [created, ...converted]
}

function decideUpdate(command: Extract<LeadCommand, { type: 'UpdateLead' }>, state: LeadState): LeadEvent[] {
  visible(state, command.orgId)
  assertMayAccessLead(state, command.actor)
  const { input, at } = command
  const current = state.fields
  if (state.conversion && input.status !== undefined) {
    throw new ValidationError({ status: [input.status === 'converted' ? 'The lead is already converted.' : 'A converted lead cannot change status: conversion cannot be undone.'] })
  }
  const custom_fields = customValues(command, current.custom_fields, command.replace ? 'replace' : 'patch')
  // A PUT keeps what it cannot or need not send: the account conversion set, and the status when it names none.
  const requested: LeadFields = withCurrency(
    command.replace
      ? { ...replacing(emptyLead(), writable(input)), status: input.status ?? current.status, account: current.account, custom_fields }
      : { ...current, ...writable(input), custom_fields },
    // Only a request that sets the amount stamps the default: an unrelated edit leaves an older lead as it was.
    input.opportunity_amount !== undefined ? command.defaultCurrency : undefined,
  )
  assertNamed(requested)
  const converted = conversionEvents(requested, state.conversion !== null, command)
  // LeadConverted carries the status change itself.
  const next = converted.length ? { ...requested, status: current.status } : requested
  const changed = changedFields(current, next)
  const keys = Object.keys(changed) as (keyof LeadFields)[]
  const changes = Object.fromEntries(keys.map((key) => [key, { from: current[key], to: next[key] }])) as LeadFieldChanges
  const updated: LeadEvent[] = keys.length ? [{ type: 'LeadUpdated', data: { changes, at } }] : []
  return [...updated, ...converted]
}

function decideDelete(command: Extract<LeadCommand, { type: 'DeleteLead' }>, state: LeadState): LeadEvent[] {
  if (state.exists && state.orgId === command.orgId && state.deleted) return []
  visible(state, command.orgId)
  const { actor } = command
  const creator = actor.profileId !== null && state.createdBy === actor.profileId
  if (!actor.isAdmin && !actor.isSuperuser && !creator) throw new ForbiddenError('Only an admin, a superuser or the creator may delete this lead')
  return [{ type: 'LeadDeleted', data: { at: command.at } }]
}

type Decide<T extends LeadCommand['type']> = (command: Extract<LeadCommand, { type: T }>, state: LeadState) => LeadEvent[]
function decideMove(command: MoveLead, state: LeadState): LeadEvent[] {
  visible(state, command.orgId)
  assertMayAccessLead(state, command.actor)
  return decideLeadMove(command, state)
}

const recordDecisions: { [T in Exclude<LeadCommand['type'], NoteCommand['type']>]: Decide<T> } = { CreateLead: decideCreate, UpdateLead: decideUpdate, DeleteLead: decideDelete, MoveLead: decideMove }

export function decideLead(command: LeadCommand, state: LeadState): LeadEvent[] {
  if (!isNoteCommand(command)) return (recordDecisions[command.type] as Decide<typeof command.type>)(command, state)
  visible(state, command.orgId)
  return decideNote('Lead', state.notes, command, mayAccessLead(state, command.actor))
}

export const leadDecider: Decider<LeadCommand, LeadState, LeadEvent> = { initialState: initialLeadState, evolve: evolveLead, decide: decideLead }

export const leadStreams = streamCategory('lead')

/**
 * A lead's personal fields (docs/personal-data.md): the person's. The company (name, industry,
 * website), the figures, dates, status and links stay in clear.
 */
export const LEAD_PERSONAL_FIELDS = ['salutation', 'first_name', 'last_name', 'title', 'email', 'phone', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country', 'description'] as const
