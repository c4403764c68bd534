import t from 'tap'
import { caseDecider } from '../../src/commands/case/case.ts'
import type { CaseCommand, CaseEvent } from '../../src/commands/case/case.ts'
import type { ReceiveCaseEmail } from '../../src/commands/case/inbound.ts'
import { autoReplyVerdict } from '../../src/commands/case-mail/acknowledgement.ts'
import { dropReasonOf } from '../../src/commands/case-mail/screening.ts'
import { caseOfToken, threadMessageId, threadTokenKey } from '../../src/commands/case-mail/thread-token.ts'
import { fold } from '../../src/commands/decider.ts'
import { NotFoundError } from '../../src/errors.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const caseId = '00000000-0000-4000-8000-0000000000c1'
const at = '2026-11-22T09:00:00.000Z'
const admin = { profileId: 'admin', isAdmin: true, isSuperuser: false }
const open: CaseCommand = { type: 'CreateCase', caseId, orgId: org, actor: admin, input: { name: 'Printer', assigned_to: ['agent'] }, customFields: [], calendarVersion: 0, at }
const update = (input: object): CaseCommand => ({ type: 'UpdateCase', orgId: org, actor: admin, input, customFields: [], replace: false, at })
const receive = (day: string, overrides: Partial<ReceiveCaseEmail> = {}): CaseCommand => ({
  type: 'ReceiveCaseEmail', orgId: org, at: `${day}T10:00:00.000Z`, today: day, attachments: [],
  reopen: { is_enabled: true, reopen_window_days: 7, reopen_to_status: 'Pending' }, autoReply: { allowed: true, messageId: 'case-x.sig@acme.test' },
  message: { message_id: 'm1@customer.test', mailbox_id: 'mb', from_email: 'dana@customer.test', from_name: 'Dana', subject: 'Re', text: 'Hi', in_reply_to: null, references: [], sent_at: null, contact_id: null, requester_id: 'r1', threaded_by: 'headers' },
  ...overrides,
})
const history = (commands: CaseCommand[]): CaseEvent[] => commands.reduce<CaseEvent[]>((events, command) => [...events, ...caseDecider.decide(command, fold(caseDecider, events))], [])
const decide = (commands: CaseCommand[], command: CaseCommand) => caseDecider.decide(command, fold(caseDecider, history(commands)))

t.test('a customer message on a Pending case ends the pause in its own decision', async (t) => {
  const events = decide([open, update({ status: 'Pending' })], receive('2026-11-22'))
  t.same(events.map((e) => e.type), ['CaseEmailReceived', 'CaseUpdated', 'CaseSlaResumed', 'CaseSlaResumed'])
  t.match(events[1]!.data, { changes: { status: { from: 'Pending', to: 'Assigned' } }, by: null })
  t.match(events[0]!.data, { reopen: null, auto_reply: null }, 'a reply to an open case is not acknowledged')
})

t.test('a closed case: reopened within the window (a Pending policy reopens to the open status), not after it', async (t) => {
  const closed = [open, update({ status: 'Closed', closed_on: '2026-11-22' })]
  const within = decide(closed, receive('2026-11-29'))
  t.match(within[0]!.data, { reopen: { outcome: 'reopened', to_status: 'Assigned', days_since_close: 7 }, auto_reply: { status: 'sent', message_id: 'case-x.sig@acme.test' } })
  t.match(within[1]!.data, { changes: { status: { from: 'Closed', to: 'Assigned' }, closed_on: { from: '2026-11-22', to: null } } })
  t.ok(within.some((e) => e.type === 'CaseSlaActivated' && e.data.sla === 'resolution'), 'a new resolution instance')
  const late = decide(closed, receive('2026-11-30'))
  t.same(late.map((e) => e.type), ['CaseEmailReceived'])
  t.match(late[0]!.data, { reopen: { outcome: 'out_of_window', days_since_close: 8 }, auto_reply: null })
  const off = decide(closed, receive('2026-11-23', { reopen: { is_enabled: false, reopen_window_days: 7, reopen_to_status: 'New' } }))
  t.match(off[0]!.data, { reopen: null })
  const held = decide(closed, receive('2026-11-23', { autoReply: { allowed: false, reason: 'case_limit' } }))
  t.match(held[0]!.data, { auto_reply: { status: 'case_limit', message_id: null } })
})

t.test('opening: the case and the message in one decision; another organization or a deleted case is not found', async (t) => {
  const opening = receive('2026-11-22', { attachments: [{ attachment_id: 'a1', file_name: 'log.txt', content_type: 'text/plain', size: 3, storage_key: 'org/a1' }] })
  const events = caseDecider.decide({ ...opening, open: { ...(open as Extract<CaseCommand, { type: 'CreateCase' }>) } } as CaseCommand, caseDecider.initialState())
  t.same(events.map((e) => e.type), ['CaseCreated', 'CaseSlaActivated', 'CaseSlaActivated', 'CaseEmailReceived', 'CaseAttachmentAdded'])
  t.throws(() => decide([open], { ...(receive('2026-11-22') as ReceiveCaseEmail), orgId: 'other' }), NotFoundError)
  t.throws(() => decide([open, { type: 'DeleteCase', orgId: org, actor: admin, at }], receive('2026-11-22')), NotFoundError)
})

t.test('RFC 3834 screening, thread tokens and the rate limits (pure)', async (t) => {
  const headers = (entries: Record<string, string>) => ({ headers: new Map(Object.entries(entries)), isReport: false, messageId: 'x@y', fromEmail: 'dana@customer.test' })
  t.equal(dropReasonOf(headers({ 'auto-submitted': 'no' }), []), null, '`no` is a person')
  t.equal(dropReasonOf(headers({ 'auto-submitted': 'auto-generated' }), []), 'auto_submitted')
  t.equal(dropReasonOf(headers({ precedence: 'bulk' }), []), 'precedence_bulk')
  t.equal(dropReasonOf(headers({ 'list-id': '<a.b>' }), []), 'mailing_list')
  t.equal(dropReasonOf(headers({ 'x-autoreply': 'yes' }), []), 'x_autoreply')
  t.equal(dropReasonOf({ ...headers({}), isReport: true }, []), 'bounce')
  t.equal(dropReasonOf(headers({}), ['dana@customer.test']), 'own_mail')
  const key = threadTokenKey('server-secret')
  const id = threadMessageId(key, org, caseId, 'u1', 'acme.test')
  t.equal(caseOfToken(key, org, id), caseId)
  t.equal(caseOfToken(key, 'another-org', id), null, 'signed for another organization')
  t.equal(caseOfToken(threadTokenKey('other-server'), org, id), null)
  t.same(autoReplyVerdict({ recipient: 4, case: 2 }, 'm'), { allowed: true, messageId: 'm' })
  t.same(autoReplyVerdict({ recipient: 5, case: 0 }, 'm'), { allowed: false, reason: 'recipient_limit' })
  t.same(autoReplyVerdict({ recipient: 0, case: 3 }, 'm'), { allowed: false, reason: 'case_limit' })
})
