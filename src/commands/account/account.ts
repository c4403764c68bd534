import { streamCategory } from '../streams.ts'
import { recordDecider } from '../record.ts'
import type { RecordCommand, RecordEvent, RecordState } from '../record.ts'
import type { AccountEmailSent } from './email.ts'

/** An account: a customer organization that contacts and deals belong to. Deleting is soft. */
export type AccountFields = {
  name: string
  email: string | null
  phone: string | null
  website: string | null
  industry: string | null
  /** Whole, non-negative (issue 22: the original's account form). */
  number_of_employees: number | null
  /** A non-negative decimal with at most two places, as a string: money is never a float. */
  annual_revenue: string | null
  /** ISO 4217 code of `annual_revenue`. */
  currency: string | null
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

// Events: the storage contract (never change a type name or data shape). Commands name the decisions.
export const accountNames = {
  events: { created: 'AccountCreated', updated: 'AccountUpdated', deleted: 'AccountDeleted', idKey: 'account_id' },
  commands: { create: 'CreateAccount', update: 'UpdateAccount', delete: 'DeleteAccount', idKey: 'accountId' },
  // AccountCommentAdded … AccountAttachmentRemoved (commands/notes.ts).
  notes: 'Account',
} as const
/** Also the account's sent mail (email.ts), decided by a decider of its own on the same stream; the record's fold passes it by. */
export type AccountEvent = RecordEvent<AccountFields, typeof accountNames> | AccountEmailSent
export type AccountCommand = RecordCommand<AccountFields, typeof accountNames>
export type AccountState = RecordState<AccountFields>

export const emptyAccount = (): AccountFields => ({
  name: '', email: null, phone: null, website: null, industry: null, number_of_employees: null, annual_revenue: null, currency: null, address_line: null, city: null, state: null, postcode: null, country: null, description: null, is_active: true, assigned_to: [], tags: [],
})

export const accountDecider = recordDecider(emptyAccount, accountNames)

export const accountStreams = streamCategory('account')
export const accountStream = accountStreams.stream

/** Account names are unique per organization, case-insensitively (name claims of this scope). */
export const ACCOUNT_NAME_SCOPE = 'account'
