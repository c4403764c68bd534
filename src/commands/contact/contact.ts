import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { assertMayDelete, assertVisible, changedFields, initialRecordState } from '../record.ts'
import type { Actor, RecordState } from '../record.ts'

/** A contact: a person, optionally at an account. Deleting is soft. */
export type ContactFields = {
  first_name: string
  last_name: string | null
  /** Unique per organization, case-insensitively, when given (a name claim of scope `contact_email`). */
  email: string | null
  phone: string | null
  title: string | null
  /** An account id of the contact's organization, checked by the route before the command. */
  account: string | null
  description: string | null
  assigned_to: string[]
  tags: string[]
}

// Events: the storage contract.
export type ContactEvent =
  | { type: 'ContactCreated'; data: ContactFields & { contact_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'ContactUpdated'; data: Partial<ContactFields> & { at: string } }
  | { type: 'ContactDeleted'; data: { at: string } }

// Fold.
export type ContactState = RecordState<ContactFields>

export const emptyContact = (): ContactFields => ({ first_name: '', last_name: null, email: null, phone: null, title: null, account: null, description: null, assigned_to: [], tags: [] })

export function evolveContact(state: ContactState, event: ContactEvent): ContactState {
  switch (event.type) {
    case 'ContactCreated': {
      const { contact_id: _id, org_id, created_by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, createdBy: created_by, deleted: false, fields }
    }
    case 'ContactUpdated': {
      const { at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'ContactDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. Time, ids, the caller and looked-up facts arrive in the command.
export type ContactCommand =
  | { type: 'CreateContact'; contactId: string; orgId: string; fields: ContactFields; actorId: string | null; at: string }
  | { type: 'UpdateContact'; orgId: string; changes: Partial<ContactFields>; at: string }
  | { type: 'DeleteContact'; orgId: string; actor: Actor; at: string }

export function decideContact(command: ContactCommand, state: ContactState): ContactEvent[] {
  switch (command.type) {
    case 'CreateContact':
      if (state.exists) return []
      return [{ type: 'ContactCreated', data: { contact_id: command.contactId, org_id: command.orgId, ...command.fields, created_by: command.actorId, at: command.at } }]
    case 'UpdateContact': {
      assertVisible(state, command.orgId)
      const changes = changedFields(state.fields, command.changes)
      return Object.keys(changes).length ? [{ type: 'ContactUpdated', data: { ...changes, at: command.at } }] : []
    }
    case 'DeleteContact':
      if (state.exists && state.orgId === command.orgId && state.deleted) return []
      assertVisible(state, command.orgId)
      assertMayDelete(state, command.actor)
      return [{ type: 'ContactDeleted', data: { at: command.at } }]
  }
}

export const contactDecider: Decider<ContactCommand, ContactState, ContactEvent> = { initialState: () => initialRecordState(emptyContact()), evolve: evolveContact, decide: decideContact }

export const contactStreams = streamCategory('contact')
export const contactStream = contactStreams.stream
