import { NotFoundError } from '../../errors.ts'
import type { CasePriority, CaseType } from '../case/fields.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * An inbound mailbox (the original's InboundMailbox): an address of the organization whose mail
 * becomes cases, with the defaults a new case takes. Its signing secret is not in these events: it
 * lives in `case_mailbox_secrets` (a credential does not belong in an append-only log), and the
 * address is unique per organization through a name claim.
 */
export const MAILBOX_PROVIDERS = ['ses', 'mailgun', 'postmark', 'imap'] as const
export type MailboxProvider = (typeof MAILBOX_PROVIDERS)[number]

export type MailboxFields = {
  address: string
  provider: MailboxProvider
  default_priority: CasePriority
  default_case_type: CaseType | null
  default_assignee: string | null
  is_active: boolean
}

// Events: the storage contract (never change a type name or data shape).
export type MailboxEvent =
  | { type: 'CaseMailboxCreated'; data: MailboxFields & { mailbox_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'CaseMailboxUpdated'; data: Partial<MailboxFields> & { at: string } }
  | { type: 'CaseMailboxDeleted'; data: { at: string } }

export type MailboxState = { exists: boolean; orgId: string | null; deleted: boolean; fields: MailboxFields | null }
const initialMailboxState = (): MailboxState => ({ exists: false, orgId: null, deleted: false, fields: null })

function evolveMailbox(state: MailboxState, event: MailboxEvent): MailboxState {
  switch (event.type) {
    case 'CaseMailboxCreated': {
      const { mailbox_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, deleted: false, fields }
    }
    case 'CaseMailboxUpdated': {
      const { at: _at, ...changes } = event.data
      return { ...state, fields: state.fields && { ...state.fields, ...changes } }
    }
    case 'CaseMailboxDeleted':
      return { ...state, deleted: true }
  }
}

export type MailboxCommand =
  | { type: 'CreateMailbox'; mailboxId: string; orgId: string; fields: MailboxFields; actorId: string | null; at: string }
  | { type: 'UpdateMailbox'; orgId: string; changes: Partial<MailboxFields>; at: string }
  | { type: 'DeleteMailbox'; orgId: string; at: string }

function live(state: MailboxState, orgId: string): MailboxFields {
  if (!state.exists || state.orgId !== orgId || state.deleted || !state.fields) throw new NotFoundError('Mailbox not found')
  return state.fields
}

function decideMailbox(command: MailboxCommand, state: MailboxState): MailboxEvent[] {
  switch (command.type) {
    case 'CreateMailbox':
      return state.exists ? [] : [{ type: 'CaseMailboxCreated', data: { mailbox_id: command.mailboxId, org_id: command.orgId, ...command.fields, created_by: command.actorId, at: command.at } }]
    case 'UpdateMailbox': {
      const current = live(state, command.orgId)
      const changed = Object.fromEntries(Object.entries(command.changes).filter(([key, value]) => value !== undefined && current[key as keyof MailboxFields] !== value))
      return Object.keys(changed).length ? [{ type: 'CaseMailboxUpdated', data: { ...changed, at: command.at } }] : []
    }
    case 'DeleteMailbox':
      if (state.exists && state.orgId === command.orgId && state.deleted) return []
      live(state, command.orgId)
      return [{ type: 'CaseMailboxDeleted', data: { at: command.at } }]
  }
}

export const mailboxDecider: Decider<MailboxCommand, MailboxState, MailboxEvent> = { initialState: initialMailboxState, evolve: evolveMailbox, decide: decideMailbox }

/** Addresses are unique per organization, case-insensitively (name claims of this scope). */
export const MAILBOX_ADDRESS_SCOPE = 'case_mailbox'
export const mailboxStreams = streamCategory('case_mailbox')
