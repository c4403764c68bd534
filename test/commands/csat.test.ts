import t from 'tap'
import { csatDecider, csatToken, csatTokenCase } from '../../src/commands/case/csat.ts'
import type { CsatEvent } from '../../src/commands/case/csat.ts'
import { ConflictError, GoneError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const caseId = '00000000-0000-4000-8000-0000000000c1'
const org = '00000000-0000-4000-8000-00000000000a'
const contact = '00000000-0000-4000-8000-0000000000d1'
const sentAt = '2026-11-22T09:00:00.000Z'
const sent: CsatEvent = { type: 'CsatSurveySent', data: { case_id: caseId, org_id: org, contact_id: contact, expires_at: '2026-12-22T09:00:00.000Z', at: sentAt } }
const answered = (rating: number, comment: string, at: string): CsatEvent => ({ type: 'CsatSurveyAnswered', data: { contact_id: contact, rating, comment, at } })
const answer = (rating: number, comment: string, at: string) => ({ type: 'AnswerCsatSurvey' as const, rating, comment, at })

t.test('csat decider: one survey per case, ratings 1 to 5, a link that expires, an answer changeable for a day', async (t) => {
  const csat = spec(t, csatDecider)
  csat.given([]).when({ type: 'SendCsatSurvey', orgId: org, caseId, contactId: contact, at: sentAt }).then([sent], 'expires 30 days after sending')
  csat.given([sent]).when({ type: 'SendCsatSurvey', orgId: org, caseId, contactId: contact, at: '2026-11-25T09:00:00.000Z' }).then([], 'one survey per case: a second send records nothing')
  csat.given([]).when(answer(5, '', sentAt)).thenRejects(NotFoundError)
  csat.given([sent]).when(answer(4, ' Quick fix ', '2026-11-23T10:00:00.000Z')).then([answered(4, 'Quick fix', '2026-11-23T10:00:00.000Z')], 'the comment trimmed')
  for (const rating of [0, 6, 3.5, Number.NaN]) csat.given([sent]).when(answer(rating, '', '2026-11-23T10:00:00.000Z')).thenRejects(ValidationError)
  csat.given([sent]).when(answer(5, '', '2026-12-22T09:00:00.000Z')).thenRejects(GoneError)
  csat.given([sent]).when(answer(1, '', '2026-12-22T08:59:59.000Z')).then([answered(1, '', '2026-12-22T08:59:59.000Z')], 'a second before, still open')
  const first = answered(2, 'Slow', '2026-11-23T10:00:00.000Z')
  csat.given([sent, first]).when(answer(2, 'Slow', '2026-11-23T11:00:00.000Z')).then([], 'the same answer again records nothing')
  csat.given([sent, first]).when(answer(3, 'Better now', '2026-11-24T09:59:59.000Z')).then([answered(3, 'Better now', '2026-11-24T09:59:59.000Z')], 'changed within the day')
  csat.given([sent, first, answered(3, 'Better now', '2026-11-24T09:00:00.000Z')]).when(answer(5, '', '2026-11-24T10:00:00.000Z')).thenRejects(ConflictError)
})

t.test('csat link tokens: the case they name, only with the server secret', async (t) => {
  const token = csatToken('secret', caseId)
  t.equal(csatTokenCase('secret', token), caseId)
  t.equal(csatTokenCase('another secret', token), null, 'signed under another key')
  t.equal(csatTokenCase('secret', `${caseId}.${'A'.repeat(43)}`), null, 'forged')
  t.equal(csatTokenCase('secret', token.replace('c1', 'c2')), null, 'another case')
  for (const malformed of ['', 'x', `${token}.more`, 'not-a-uuid.sig']) t.equal(csatTokenCase('secret', malformed), null, `malformed ${JSON.stringify(malformed)}`)
})
