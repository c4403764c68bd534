import type { CustomValues } from '../custom-field/values.ts'

/** A case's fields and the values they take (the original's Case model, common/utils.py choices), shared by its decisions. */

/** The original's STATUS_CHOICE, PRIORITY_CHOICE and CASE_TYPE, exact strings. */
export const CASE_STATUSES = ['New', 'Assigned', 'Pending', 'Closed', 'Rejected', 'Duplicate'] as const
export const CASE_PRIORITIES = ['Low', 'Normal', 'High', 'Urgent'] as const
export const CASE_TYPES = ['Question', 'Incident', 'Problem'] as const
export type CaseStatus = (typeof CASE_STATUSES)[number]
export type CasePriority = (typeof CASE_PRIORITIES)[number]
export type CaseType = (typeof CASE_TYPES)[number]

/** A ticket is open while somebody still owes the customer something (the original's OPEN_STATUSES); the others are ways of being done with it. */
export const OPEN_STATUSES: readonly CaseStatus[] = ['New', 'Assigned', 'Pending']
/** The status whose time does not count against the SLA: waiting on the customer. */
export const PAUSING_STATUS: CaseStatus = 'Pending'

export type CaseFields = {
  name: string
  status: CaseStatus
  priority: CasePriority
  case_type: CaseType | null
  /** YYYY-MM-DD: required to enter Closed, cleared on leaving it. */
  closed_on: string | null
  description: string | null
  /** Set on creation only (the original's serializer makes it read-only on an instance). */
  account: string | null
  contacts: string[]
  teams: string[]
  assigned_to: string[]
  tags: string[]
  /** The case above this one in a problem → incident tree (at most three levels), checked by the use case's facts. */
  parent: string | null
  is_problem: boolean
  custom_fields: CustomValues
}

export const emptyCase = (): CaseFields => ({
  name: '', status: 'New', priority: 'Normal', case_type: null, closed_on: null, description: null, account: null, contacts: [], teams: [], assigned_to: [], tags: [], parent: null, is_problem: false, custom_fields: {},
})

/** What a reader of one event (a notifier, a webhook consumer) needs without folding the stream: the case after the event. */
export type CaseSummary = Pick<CaseFields, 'name' | 'status' | 'priority' | 'assigned_to' | 'account' | 'parent'>
export const summaryOf = (fields: CaseFields): CaseSummary => ({ name: fields.name, status: fields.status, priority: fields.priority, assigned_to: fields.assigned_to, account: fields.account, parent: fields.parent })
