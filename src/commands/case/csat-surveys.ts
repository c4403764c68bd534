import type { Deps } from '../../deps.ts'
import { GoneError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { MailTransport } from '../../identity/mail.ts'
import { organizationById } from '../../identity/organizations.ts'
import { membersByIds } from '../../identity/users.ts'
import { casesDueSurvey, csatSurveyOf } from '../../projections/case/csat.ts'
import type { CaseCsatRow } from '../../projections/case/csat.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { SURVEY_DAYS, csatDecider, csatStreams, csatToken, csatTokenCase, editableUntil } from './csat.ts'

/** How long after closing a survey waits (the original's 30 minutes): a case closed and reopened at once is not surveyed. */
export const SEND_DELAY_MS = 30 * 60_000
/** Cases closed longer ago than this are not surveyed, so switching surveys on does not mail the whole history. */
const SEND_WITHIN_MS = 7 * 24 * 3_600_000
const BATCH = 200

/** The organization's own system caller for survey events: no member acts. */
const systemCaller = (orgId: string): Caller => ({ orgId, profileId: null, isAdmin: false })

/** The web app's survey page for a case (the origin of the magic links, which reach the same app). */
export const surveyLink = (config: Deps['config'], caseId: string): string => `${new URL(config.magicLinkBaseUrl).origin}/csat/${csatToken(config.jwtSecret, caseId)}`

/**
 * Sends the surveys due now (the scheduled sender, processes/csat-sender.ts): records each survey
 * (one per case: a second process, or a second run, records nothing and so mails nothing), then
 * mails its link to the case's contact. A mail that fails after its survey was recorded is not
 * retried (at most one mail per case).
 */
export async function sendDueSurveys(deps: Pick<Deps, 'db' | 'store' | 'clock' | 'config'> & { mail: MailTransport }): Promise<{ sent: number; position: Position | null }> {
  const now = deps.clock()
  const due = await casesDueSurvey(deps.db, { after: new Date(now.getTime() - SEND_WITHIN_MS), before: new Date(now.getTime() - SEND_DELAY_MS) }, BATCH)
  let sent = 0
  let position: Position | null = null
  for (const { case_id: caseId, org_id: orgId, contact_id: contactId, email, name } of due) {
    const session = commandSession(deps.store, systemCaller(orgId))
    const { events } = await session.run(csatDecider, csatStreams.stream(caseId), { type: 'SendCsatSurvey', orgId, caseId, contactId, at: now.toISOString() })
    if (!events.length) continue
    position = session.position()
    sent += 1
    await deps.mail.send({ to: email, subject: `How did we do with "${name}"?`, text: `Your case "${name}" was closed. Tell us how we did (1 to 5), within ${SURVEY_DAYS} days:\n\n${surveyLink(deps.config, caseId)}\n` })
  }
  return { sent, position }
}

type LinkDeps = Pick<Deps, 'db' | 'store' | 'clock' | 'config'>

/** The survey a public link names, still open: 400 for a malformed or forged token, 410 for a survey gone or expired. */
async function surveyOfLink(deps: LinkDeps, token: string): Promise<CaseCsatRow> {
  const caseId = csatTokenCase(deps.config.jwtSecret, token)
  if (!caseId) throw new ValidationError('Invalid survey link.')
  const survey = await csatSurveyOf(deps.db, caseId)
  if (!survey) throw new GoneError('Survey link is no longer valid.')
  if (deps.clock().getTime() >= survey.expires_at.getTime()) throw new GoneError('Survey link has expired.')
  return survey
}

export type SurveyAnswer = { rating: number | null; comment: string; responded_at: string | null; edit_window_closes_at: string | null }
const answerOf = (rating: number | null, comment: string | null, firstAt: Date | null): SurveyAnswer => ({ rating, comment: comment ?? '', responded_at: firstAt?.toISOString() ?? null, edit_window_closes_at: firstAt ? editableUntil(firstAt.toISOString()) : null })

/** What the public survey page shows: the case's subject and closing date, the organization, the agent, and the answer so far. */
export async function openSurvey(deps: LinkDeps, token: string): Promise<SurveyAnswer & { case_subject: string; case_closed_on: string | null; org_name: string; agent_name: string }> {
  const survey = await surveyOfLink(deps, token)
  const row = await caseOf(deps.db, survey.org_id, survey.case_id)
  if (!row) throw new GoneError('Survey link is no longer valid.')
  const [org, agents] = await Promise.all([organizationById(deps.db, survey.org_id), membersByIds(deps.db, survey.org_id, row.assigned_to.slice(0, 1))])
  return { case_subject: row.name, case_closed_on: row.closed_on, org_name: org.name, agent_name: agents[0]?.email ?? 'your support team', ...answerOf(survey.rating, survey.comment, survey.first_answered_at) }
}

/** Records the answer given through the public link (csat.ts: 1 to 5, changeable for a day after the first answer). */
export async function answerSurvey(deps: LinkDeps, token: string, answer: { rating: number; comment: string }): Promise<{ answer: SurveyAnswer; position: Position | null }> {
  const survey = await surveyOfLink(deps, token)
  const now = deps.clock()
  const session = commandSession(deps.store, systemCaller(survey.org_id))
  await session.run(csatDecider, csatStreams.stream(survey.case_id), { type: 'AnswerCsatSurvey', rating: answer.rating, comment: answer.comment, at: now.toISOString() })
  return { answer: answerOf(answer.rating, answer.comment.trim(), survey.first_answered_at ?? now), position: session.position() }
}
