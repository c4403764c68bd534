import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Decider } from '../decider.ts'
import { ConflictError, GoneError, NotFoundError, ValidationError } from '../../errors.ts'
import { streamCategory } from '../streams.ts'

/**
 * Satisfaction surveys (CSAT, issue 32; the original's CsatSurvey): one per case, on the stream
 * csat-<case id>, so a second survey for a case cannot be recorded. Sent to a contact of a closed
 * case; answered through its public link with a rating of 1 to 5 and a comment, which may be changed
 * for EDIT_WINDOW_HOURS after the first answer; the link expires SURVEY_DAYS after sending.
 *
 * The link's token is `<case id>.<HMAC-SHA256 of it>` under a key derived from the server's secret:
 * unguessable, checked in constant time, stored nowhere (the log holds no token). Its expiry is the
 * survey's, recorded when it was sent.
 */
export const SURVEY_DAYS = 30
export const EDIT_WINDOW_HOURS = 24
const HOUR_MS = 3_600_000

// Events: the storage contract (never change a type name or data shape).
export type CsatEvent =
  | { type: 'CsatSurveySent'; data: { case_id: string; org_id: string; contact_id: string; expires_at: string; at: string } }
  | { type: 'CsatSurveyAnswered'; data: { contact_id: string; rating: number; comment: string; at: string } }

export type CsatCommand =
  | { type: 'SendCsatSurvey'; orgId: string; caseId: string; contactId: string; at: string }
  | { type: 'AnswerCsatSurvey'; rating: number; comment: string; at: string }

export type CsatState = {
  survey: { orgId: string; contactId: string; expiresAt: string } | null
  answer: { rating: number; comment: string; firstAt: string } | null
}

export const csatStreams = streamCategory('csat')

/** When the answer given first at `firstAt` can no longer be changed. */
export const editableUntil = (firstAt: string): string => new Date(Date.parse(firstAt) + EDIT_WINDOW_HOURS * HOUR_MS).toISOString()

function decideAnswer(command: Extract<CsatCommand, { type: 'AnswerCsatSurvey' }>, state: CsatState): CsatEvent[] {
  const { survey, answer } = state
  if (!survey) throw new NotFoundError('Survey link is no longer valid.')
  if (Date.parse(command.at) >= Date.parse(survey.expiresAt)) throw new GoneError('Survey link has expired.')
  if (!Number.isInteger(command.rating) || command.rating < 1 || command.rating > 5) throw new ValidationError({ rating: ['rating must be an integer 1-5'] })
  if (answer && Date.parse(command.at) >= Date.parse(editableUntil(answer.firstAt))) throw new ConflictError('Survey is locked. Edit window has closed.')
  const comment = command.comment.trim()
  if (answer && answer.rating === command.rating && answer.comment === comment) return []
  return [{ type: 'CsatSurveyAnswered', data: { contact_id: survey.contactId, rating: command.rating, comment, at: command.at } }]
}

export const csatDecider: Decider<CsatCommand, CsatState, CsatEvent> = {
  initialState: () => ({ survey: null, answer: null }),
  evolve: (state, event) => {
    if (event.type === 'CsatSurveySent') return { ...state, survey: { orgId: event.data.org_id, contactId: event.data.contact_id, expiresAt: event.data.expires_at } }
    return { ...state, answer: { rating: event.data.rating, comment: event.data.comment, firstAt: state.answer?.firstAt ?? event.data.at } }
  },
  decide: (command, state) => {
    if (command.type === 'AnswerCsatSurvey') return decideAnswer(command, state)
    // One survey per case: a second send (a second process, a reopened and closed case) records nothing.
    if (state.survey) return []
    const expiresAt = new Date(Date.parse(command.at) + SURVEY_DAYS * 24 * HOUR_MS).toISOString()
    return [{ type: 'CsatSurveySent', data: { case_id: command.caseId, org_id: command.orgId, contact_id: command.contactId, expires_at: expiresAt, at: command.at } }]
  },
}

const signature = (secret: string, caseId: string) => {
  const key = createHmac('sha256', secret).update('crm csat survey links').digest()
  return createHmac('sha256', key).update(caseId).digest('base64url')
}

export const csatToken = (secret: string, caseId: string): string => `${caseId}.${signature(secret, caseId)}`

/** The case a token names, or null when it is malformed or forged. */
export function csatTokenCase(secret: string, token: string): string | null {
  const [caseId, given, ...rest] = token.split('.')
  if (rest.length || !caseId || !given || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(caseId)) return null
  const expected = Buffer.from(signature(secret, caseId))
  const actual = Buffer.from(given)
  return actual.length === expected.length && timingSafeEqual(actual, expected) ? caseId : null
}
