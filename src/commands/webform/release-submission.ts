import type { Position } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import { webFormOf } from '../../projections/webform/webforms.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { CONSENT_REFUSED, readAnswers } from './answers.ts'
import { releasable, submissionDecider, submissionStream } from './submission.ts'
import type { SubmissionEvent } from './submission.ts'
import { recordOf, targeted } from './target-record.ts'

/**
 * Releases a quarantined submission (admins): an admin judged it genuine, so its answers make the
 * form's record now, through the same use cases as an accepted submission, under the admin's name.
 * The quarantined answers were kept as sent, so they are read against the form's fields as they
 * are now, and its consent as the visitor gave it (400 naming what no longer fits). Releasing twice
 * makes one record: its ids derive from the submission's, and the second release decides nothing.
 */
export async function releaseSubmission(deps: DealDeps, caller: Caller, formId: string, submissionId: string): Promise<{ position: Position | null }> {
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin may do this')
  const form = await orNotFound(webFormOf(deps.db, caller.orgId, formId))
  const stream = submissionStream(submissionId)
  const state = fold(submissionDecider, (await deps.store.readStream(stream)).map((event) => domainEventOf<SubmissionEvent>(event)))
  if (!releasable(state, caller.orgId, form.id)) return { position: null }
  const quarantined = state.quarantined!
  const consent = quarantined.consent ?? null
  const answers = readAnswers(form.fields, quarantined.answers, form.consent && !consent ? CONSENT_REFUSED : {})
  const session = commandSession(deps.store, caller)
  const made = await recordOf(deps, caller, session, targeted(form), answers, submissionId)
  await session.run(submissionDecider, stream, { type: 'ReleaseSubmission', orgId: caller.orgId, formId: form.id, release: { ...made, consent, released_by: caller.profileId, at: deps.clock().toISOString() } })
  return { position: session.position() }
}
