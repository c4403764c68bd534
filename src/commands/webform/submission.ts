import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * One submission of a web form, its own stream (a form's stream does not grow with its traffic).
 * Its id is derived from the visitor's idempotency key, so a form posted twice (a double click, a
 * retry after a timeout) is one submission: the second finds the stream written and decides nothing.
 * A submission either created (or matched) a lead, or was quarantined as spam and created nothing.
 */

/** What the visitor agreed to, as the form showed it: the wording's hash and version, not the text again. */
export type ConsentRecord = { purpose: string; legal_basis: string; text_sha256: string; version: number }
export type Answers = Record<string, string | boolean>
type Submitted = { submission_id: string; form_id: string; org_id: string; answers: Answers; source_page: string | null; at: string }

// Events: the storage contract.
export type SubmittedData = Submitted & { lead_id: string; outcome: 'created' | 'matched'; consent: ConsentRecord | null }
export type QuarantinedData = Submitted & { reason: 'honeypot' }

// Events: the storage contract.
export type SubmissionEvent =
  /** `outcome`: `created` a new lead, or `matched` the lead that already had the submitted email (no second lead, and no error that would tell a stranger the address is known). */
  | { type: 'WebFormSubmitted'; data: SubmittedData }
  | { type: 'WebFormSubmissionQuarantined'; data: QuarantinedData }

export type SubmissionState = { exists: boolean }

export type SubmissionCommand = { type: 'RecordSubmission'; submission: SubmittedData } | { type: 'QuarantineSubmission'; submission: QuarantinedData }

export const submissionDecider: Decider<SubmissionCommand, SubmissionState, SubmissionEvent> = {
  initialState: () => ({ exists: false }),
  evolve: () => ({ exists: true }),
  // Written once: a repeat (same idempotency key) decides nothing, whatever it carries.
  decide: (command, state) => {
    if (state.exists) return []
    return command.type === 'RecordSubmission' ? [{ type: 'WebFormSubmitted', data: command.submission }] : [{ type: 'WebFormSubmissionQuarantined', data: command.submission }]
  },
}

export const submissionStreams = streamCategory('webform_submission')
export const submissionStream = submissionStreams.stream
