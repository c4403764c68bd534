import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * One submission of a web form, its own stream (a form's stream does not grow with its traffic).
 * Its id is derived from the visitor's idempotency key, so a form posted twice (a double click, a
 * retry after a timeout) is one submission: the second finds the stream written and decides nothing.
 * A submission either created (or matched) its form's record, or was quarantined as spam and created
 * nothing until an admin released it.
 */

/** What the visitor agreed to, as the form showed it: the wording's hash and version, not the text again. */
export type ConsentRecord = { purpose: string; legal_basis: string; text_sha256: string; version: number }
export type Answers = Record<string, string | boolean>
type Submitted = { submission_id: string; form_id: string; org_id: string; answers: Answers; source_page: string | null; at: string }

/**
 * The record a submission made, by its form's target: a lead (`lead_id`: every event from before
 * other targets existed has it), a contact (`contact_id`), or a case (`case_id`) with its
 * submitter's contact (`contact_id`, null when the form asks for no name). `outcome` is the
 * target record's: `created`, or `matched` the lead or contact that already had the submitted email
 * (no second record, and no error that would tell a stranger the address is known); a case is always created.
 */
export type Made = { lead_id?: string; contact_id?: string | null; case_id?: string; outcome: 'created' | 'matched' }

// Events: the storage contract.
export type SubmittedData = Submitted & Made & { consent: ConsentRecord | null }
/** `consent`: what the visitor ticked, kept so a release records it (absent on quarantines from before releases existed). */
export type QuarantinedData = Submitted & { reason: 'honeypot'; consent?: ConsentRecord | null }
export type ReleasedData = Made & { consent: ConsentRecord | null; released_by: string | null; at: string }

// Events: the storage contract.
export type SubmissionEvent =
  | { type: 'WebFormSubmitted'; data: SubmittedData }
  | { type: 'WebFormSubmissionQuarantined'; data: QuarantinedData }
  /** An admin judged a quarantined submission genuine: its record was created then, from the quarantined answers. */
  | { type: 'WebFormSubmissionReleased'; data: ReleasedData }

export type SubmissionState = { exists: boolean; orgId: string | null; formId: string | null; quarantined: QuarantinedData | null; released: ReleasedData | null }

export type SubmissionCommand =
  | { type: 'RecordSubmission'; submission: SubmittedData }
  | { type: 'QuarantineSubmission'; submission: QuarantinedData }
  | { type: 'ReleaseSubmission'; orgId: string; formId: string; release: ReleasedData }

const initialState = (): SubmissionState => ({ exists: false, orgId: null, formId: null, quarantined: null, released: null })

function evolve(state: SubmissionState, event: SubmissionEvent): SubmissionState {
  switch (event.type) {
    case 'WebFormSubmitted':
      return { ...state, exists: true, orgId: event.data.org_id, formId: event.data.form_id }
    case 'WebFormSubmissionQuarantined':
      return { ...state, exists: true, orgId: event.data.org_id, formId: event.data.form_id, quarantined: event.data }
    case 'WebFormSubmissionReleased':
      return { ...state, released: event.data }
  }
}

/**
 * Whether a submission of this form may be released: 404 for none (another organization's, or
 * another form's, looks the same), 400 for one that was never quarantined; false when already released.
 */
export function releasable(state: SubmissionState, orgId: string, formId: string): boolean {
  if (!state.exists || state.orgId !== orgId || state.formId !== formId) throw new NotFoundError('Submission not found')
  if (!state.quarantined) throw new ValidationError({ submission: ['Only a quarantined submission can be released; this one was accepted.'] })
  return state.released === null
}

export const submissionDecider: Decider<SubmissionCommand, SubmissionState, SubmissionEvent> = {
  initialState,
  evolve,
  decide: (command, state) => {
    switch (command.type) {
      // Written once: a repeat (same idempotency key) decides nothing, whatever it carries.
      case 'RecordSubmission':
        return state.exists ? [] : [{ type: 'WebFormSubmitted', data: command.submission }]
      case 'QuarantineSubmission':
        return state.exists ? [] : [{ type: 'WebFormSubmissionQuarantined', data: command.submission }]
      // Released once: a second release (or two at once) decides nothing and answers the first's record.
      case 'ReleaseSubmission':
        return releasable(state, command.orgId, command.formId) ? [{ type: 'WebFormSubmissionReleased', data: command.release }] : []
    }
  },
}

export const submissionStreams = streamCategory('webform_submission')
export const submissionStream = submissionStreams.stream
