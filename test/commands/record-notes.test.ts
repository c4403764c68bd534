import t from 'tap'
import { accountDecider, emptyAccount } from '../../src/commands/account/account.ts'
import type { AccountEvent } from '../../src/commands/account/account.ts'
import { accountMailDecider } from '../../src/commands/account/email.ts'
import type { RecordAccountEmail } from '../../src/commands/account/email.ts'
import { contactDecider, emptyContact } from '../../src/commands/contact/contact.ts'
import type { ContactEvent } from '../../src/commands/contact/contact.ts'
import { ForbiddenError, NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const author = { profileId: 'p1', isAdmin: false, isSuperuser: false }
const member = { profileId: 'p2', isAdmin: false, isSuperuser: false }
const admin = { profileId: 'p3', isAdmin: true, isSuperuser: false }
const created: AccountEvent = { type: 'AccountCreated', data: { account_id: 'a1', org_id: org, ...emptyAccount(), name: 'Initech', created_by: 'p9', at } }
const deleted: AccountEvent = { type: 'AccountDeleted', data: { at } }
const commented: AccountEvent = { type: 'AccountCommentAdded', data: { comment_id: 'c1', comment: 'Called', by: 'p1', at } }
const file = { attachment_id: 'f1', file_name: 'a.txt', content_type: 'text/plain', size: 1, storage_key: `${org}/f1` }
const attached: AccountEvent = { type: 'AccountAttachmentAdded', data: { ...file, by: 'p1', at } }

t.test('account notes: any member adds; the author or an admin changes', async (t) => {
  const account = spec(t, accountDecider)
  account.given([created]).when({ type: 'AddComment', orgId: org, actor: author, commentId: 'c1', comment: 'Called', at }).then([commented], 'not the creator, still a member')
  account.given([created, commented]).when({ type: 'AddComment', orgId: org, actor: author, commentId: 'c1', comment: 'Called', at }).then([], 'the same comment id again is a no-op')
  account.given([created]).when({ type: 'AddComment', orgId: otherOrg, actor: admin, commentId: 'c1', comment: 'x', at }).thenRejects(NotFoundError)
  account.given([created, deleted]).when({ type: 'AddComment', orgId: org, actor: admin, commentId: 'c1', comment: 'x', at }).thenRejects(NotFoundError)
  account.given([created, commented]).when({ type: 'EditComment', orgId: org, actor: author, commentId: 'c1', comment: 'Called twice', at }).then([{ type: 'AccountCommentEdited', data: { comment_id: 'c1', comment: 'Called twice', at } }])
  account.given([created, commented]).when({ type: 'EditComment', orgId: org, actor: author, commentId: 'c1', comment: 'Called', at }).then([], 'the same text is no change')
  account.given([created, commented]).when({ type: 'EditComment', orgId: org, actor: member, commentId: 'c1', comment: 'x', at }).thenRejects(ForbiddenError)
  account.given([created, commented]).when({ type: 'DeleteComment', orgId: org, actor: admin, commentId: 'c1', at }).then([{ type: 'AccountCommentDeleted', data: { comment_id: 'c1', at } }])
  account.given([created]).when({ type: 'DeleteComment', orgId: org, actor: admin, commentId: 'c1', at }).thenRejects(NotFoundError)
  account.given([created]).when({ type: 'AddAttachment', orgId: org, actor: author, attachment: file, at }).then([attached])
  account.given([created, attached]).when({ type: 'RemoveAttachment', orgId: org, actor: member, attachmentId: 'f1', at }).thenRejects(ForbiddenError)
  account.given([created, attached]).when({ type: 'RemoveAttachment', orgId: org, actor: author, attachmentId: 'f1', at }).then([{ type: 'AccountAttachmentRemoved', data: { attachment_id: 'f1', at } }])
  account.given([created, attached, { type: 'AccountAttachmentRemoved', data: { attachment_id: 'f1', at } }]).when({ type: 'RemoveAttachment', orgId: org, actor: author, attachmentId: 'f1', at }).then([], 'removing twice is a no-op')
})

t.test('notes leave the record as it was: a later update or delete decides as before', async (t) => {
  const account = spec(t, accountDecider)
  account.given([created, commented, attached]).when({ type: 'UpdateAccount', orgId: org, changes: { name: 'Initech' }, at }).then([])
  account.given([created, commented]).when({ type: 'DeleteAccount', orgId: org, actor: admin, at }).then([deleted])
})

t.test('contact notes use the Contact prefix on the contact stream', async (t) => {
  const contactCreated: ContactEvent = { type: 'ContactCreated', data: { contact_id: 'k1', org_id: org, ...emptyContact(), first_name: 'Peter', created_by: 'p9', at } }
  const contact = spec(t, contactDecider)
  contact.given([contactCreated]).when({ type: 'AddComment', orgId: org, actor: member, commentId: 'c1', comment: 'Met', at }).then([{ type: 'ContactCommentAdded', data: { comment_id: 'c1', comment: 'Met', by: 'p2', at } }])
  contact.given([contactCreated]).when({ type: 'AddAttachment', orgId: otherOrg, actor: admin, attachment: file, at }).thenRejects(NotFoundError)
})

t.test('mail sent from an account is recorded on a live account only', async (t) => {
  const send: RecordAccountEmail = { type: 'RecordAccountEmail', orgId: org, actorId: 'p2', emailId: 'm1', subject: 'Hello', body: 'Hi there', recipients: ['k1', 'k2'], at }
  const mail = spec(t, accountMailDecider)
  const sent: AccountEvent = { type: 'AccountEmailSent', data: { email_id: 'm1', subject: 'Hello', body: 'Hi there', recipients: ['k1', 'k2'], by: 'p2', at } }
  mail.given([created]).when(send).then([sent])
  mail.given([created, sent]).when({ ...send, emailId: 'm2' }).then([{ ...sent, data: { ...sent.data, email_id: 'm2' } }], 'each send is a fact of its own')
  mail.given([created]).when({ ...send, recipients: [] }).then([], 'nothing went out, nothing to record')
  mail.given([created, deleted]).when(send).thenRejects(NotFoundError)
  mail.given([created]).when({ ...send, orgId: otherOrg }).thenRejects(NotFoundError)
  t.same(accountDecider.evolve(accountDecider.evolve(accountDecider.initialState(), created), sent as never).deleted, false, "the record's fold passes sent mail by")
})
