import { randomUUID } from 'node:crypto'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { publishedWebForm } from '../../projections/webform/webforms.ts'
import type { WebFormRow } from '../../projections/webform/webforms.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { nameBasedId } from '../name-based-id.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { CONSENT_REFUSED, consentRecordOf, isTicked, readAnswers, rawAnswers } from './answers.ts'
import { submissionDecider, submissionStream } from './submission.ts'
import { recordOf, targeted } from './target-record.ts'
import { HONEYPOT_FIELD } from './webform.ts'

/** What a visitor's browser (or a site's server) posts, and where from: no request, so a test or an importer can submit too. */
export type Submission = {
  orgId: string
  formId: string
  /** The posted body: the answers by field key, the honeypot, `consent`. */
  body: Readonly<Record<string, unknown>>
  /** The client's key for this submission: a repeat with the same key is the same submission. */
  idempotencyKey?: string
  /** The page the form was on (no query string: it may carry someone's data); null when unknown. */
  sourcePage: string | null
  /** The origin the browser says the post came from; null for a server-to-server post. */
  origin: string | null
  requestId?: string
}

export type SubmissionResult = { submissionId: string; form: WebFormRow; position: Position | null }

/**
 * Submits a published form: the spam checks in order (the honeypot quarantines: an event, no
 * record), the answers read against the fields, the consent required when the form asks for it,
 * then the form's record (a lead, a contact or a case) made through the same use case as the API
 * (target-record.ts), and the submission recorded. The record's id derives from the submission's,
 * and that from the idempotency key, so a repeat creates nothing and answers the same submission.
 */
export async function submitWebForm(deps: DealDeps, submission: Submission): Promise<SubmissionResult> {
  const form = await publishedWebForm(deps.db, submission.orgId, submission.formId)
  if (!form) throw new NotFoundError('Web form not found')
  if (submission.origin !== null && form.allowed_origins.length > 0 && !form.allowed_origins.includes(submission.origin)) {
    throw new ForbiddenError('This form may not be posted from this site')
  }
  const caller: Caller = { orgId: form.org_id, profileId: null, isAdmin: false, requestId: submission.requestId }
  const session = commandSession(deps.store, caller)
  const key = submission.idempotencyKey
  const submissionId = key ? nameBasedId(`webform-submission:${form.id}:${key}`) : randomUUID()
  const earlier = await deps.store.readStream(submissionStream(submissionId))
  if (earlier.length) return { submissionId, form, position: earlier[0]!.position }
  const at = deps.clock().toISOString()
  const common = { submission_id: submissionId, form_id: form.id, org_id: form.org_id, source_page: submission.sourcePage, at }
  // The consent as the visitor gave it (null: not asked, or not ticked), recorded with an accepted submission and kept with a quarantined one for its release.
  const consent = form.consent && isTicked(submission.body.consent) ? consentRecordOf(form.consent) : null
  if (isFilled(submission.body[HONEYPOT_FIELD])) {
    await session.run(submissionDecider, submissionStream(submissionId), { type: 'QuarantineSubmission', submission: { ...common, answers: rawAnswers(form.fields, submission.body), reason: 'honeypot', consent } })
    return { submissionId, form, position: session.position() }
  }
  // Refused together, so the visitor sees every problem at once.
  const consentRefused: Record<string, string[]> = form.consent && !consent ? CONSENT_REFUSED : {}
  const answers = readAnswers(form.fields, submission.body, consentRefused)
  const made = await recordOf(deps, caller, session, targeted(form), answers, submissionId)
  await session.run(submissionDecider, submissionStream(submissionId), { type: 'RecordSubmission', submission: { ...common, answers, ...made, consent } })
  return { submissionId, form, position: session.position() }
}

/** The honeypot holds anything at all: people never see it, so only a bot writes in it. */
const isFilled = (value: unknown): boolean => value !== undefined && value !== null && value !== false && String(value).trim() !== ''
