import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { assertMayDelete, assertVisible, changedFields, initialRecordState } from '../record.ts'
import type { Actor, RecordState } from '../record.ts'

/** An account: a customer organization that contacts and deals belong to. Deleting is soft. */
export type AccountFields = {
  name: string
  email: string | null
  phone: string | null
  website: string | null
  industry: string | null
  address_line: string | null
  city: string | null
  state: string | null
  postcode: string | null
  country: string | null
  description: string | null
  is_active: boolean
  /** Profile ids of the account's organization, checked by the route before the command. */
  assigned_to: string[]
  /** Tag ids of the account's organization, checked by the route before the command. */
  tags: string[]
}

// Events: the storage contract.
export type AccountEvent =
  | { type: 'AccountCreated'; data: AccountFields & { account_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'AccountUpdated'; data: Partial<AccountFields> & { at: string } }
  | { type: 'AccountDeleted'; data: { at: string } }

// Fold.
export type AccountState = RecordState<AccountFields>

export const emptyAccount = (): AccountFields => ({
  name: '', email: null, phone: null, website: null, industry: null, address_line: null, city: null, state: null, postcode: null, country: null, description: null, is_active: true, assigned_to: [], tags: [],
})

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountCreated': {
      const { account_id: _id, org_id, created_by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, createdBy: created_by, deleted: false, fields }
    }
    case 'AccountUpdated': {
      const { at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'AccountDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. Time, ids, the caller and looked-up facts arrive in the command.
export type AccountCommand =
  | { type: 'CreateAccount'; accountId: string; orgId: string; fields: AccountFields; actorId: string | null; at: string }
  /** PUT sends every field, PATCH only the named ones; both decide only what differs. */
  | { type: 'UpdateAccount'; orgId: string; changes: Partial<AccountFields>; at: string }
  | { type: 'DeleteAccount'; orgId: string; actor: Actor; at: string }

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'CreateAccount':
      if (state.exists) return []
      return [{ type: 'AccountCreated', data: { account_id: command.accountId, org_id: command.orgId, ...command.fields, created_by: command.actorId, at: command.at } }]
    case 'UpdateAccount': {
      assertVisible(state, command.orgId)
      const changes = changedFields(state.fields, command.changes)
      return Object.keys(changes).length ? [{ type: 'AccountUpdated', data: { ...changes, at: command.at } }] : []
    }
    case 'DeleteAccount':
      if (state.exists && state.orgId === command.orgId && state.deleted) return []
      assertVisible(state, command.orgId)
      assertMayDelete(state, command.actor)
      return [{ type: 'AccountDeleted', data: { at: command.at } }]
  }
}

export const accountDecider: Decider<AccountCommand, AccountState, AccountEvent> = { initialState: () => initialRecordState(emptyAccount()), evolve: evolveAccount, decide: decideAccount }

export const accountStreams = streamCategory('account')
export const accountStream = accountStreams.stream
