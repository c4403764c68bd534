import t from 'tap'
import { emptyLead, leadDecider } from '../../src/commands/lead/lead.ts'
import type { Conversion, LeadCommand, LeadEvent, LeadFields, LeadInput } from '../../src/commands/lead/lead.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'
import { leadEvent } from '../helpers/events.ts'
import type { DataOf } from '../helpers/events.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const assignee: Actor = { profileId: 'assignee', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const superuser: Actor = { profileId: 'root', isAdmin: false, isSuperuser: true }
const ids: Conversion = { account_id: 'a1', contact_id: 'c1', opportunity_id: 'o1' }

const create = (input: LeadInput, conversion?: Conversion): LeadCommand => ({ type: 'CreateLead', leadId: 'l1', orgId: org, actor: creator, at, customFields: [], input, conversion })
const patch = (input: LeadInput, actor: Actor = creator, conversion?: Conversion): LeadCommand => ({ type: 'UpdateLead', orgId: org, actor, at: later, customFields: [], input, replace: false, conversion })
const put = (input: LeadInput, conversion?: Conversion): LeadCommand => ({ type: 'UpdateLead', orgId: org, actor: creator, at: later, customFields: [], input, replace: true, conversion })
const fields = (changes: Partial<LeadFields> = {}): LeadFields => ({ ...emptyLead(), first_name: 'Ann', email: 'ann@initech.test', assigned_to: ['assignee'], ...changes })
const createdWith = (changes: Partial<LeadFields> = {}): LeadEvent => ({ type: 'LeadCreated', data: { lead_id: 'l1', org_id: org, ...fields(changes), created_by: 'creator', at } })
const created = createdWith()
const converted = (by = 'creator', when = later): LeadEvent => ({ type: 'LeadConverted', data: { ...ids, by, at: when } })
const updated = (changes: DataOf<LeadEvent, 'LeadUpdated'>['changes']) => leadEvent('LeadUpdated', { changes, at: later })

t.test('create: defaults, and created directly as converted', async (t) => {
  const s = spec(t, leadDecider)
  s.given([]).when(create({ first_name: 'Ann', email: 'ann@initech.test', assigned_to: ['assignee'] })).then([created], 'status defaults to assigned')
  s.given([created]).when(create({ first_name: 'Ann' })).then([], 'creating again decides nothing')
  s.given([]).when(create({ first_name: 'Ann', email: 'ann@initech.test', assigned_to: ['assignee'], status: 'converted' }, ids)).then([createdWith({ status: 'converted' }), { type: 'LeadConverted', data: { ...ids, by: 'creator', at } }])
  s.given([]).when(create({ first_name: 'Ann', status: 'converted' }, ids)).thenRejects(ValidationError, { errors: { email: [String] } })
  s.given([]).when(create({ first_name: 'Ann', email: 'a@b.test', status: 'converted' })).thenRejects(ValidationError, { errors: { status: [String] } })
})

t.test('conversion by a status change', async (t) => {
  const s = spec(t, leadDecider)
  s.given([created]).when(patch({ status: 'converted' }, creator, ids)).then([converted()], 'LeadConverted carries the status change')
  s.given([created]).when(patch({ status: 'converted', city: 'Austin' }, creator, ids)).then([updated({ city: { from: null, to: 'Austin' } }), converted()], 'other changes first')
  s.given([createdWith({ email: null })]).when(patch({ status: 'converted' }, creator, ids)).thenRejects(ValidationError, { errors: { email: [String] } })
  s.given([createdWith({ email: null })]).when(patch({ status: 'converted', email: 'new@initech.test' }, creator, ids)).then([updated({ email: { from: null, to: 'new@initech.test' } }), converted()], 'an email given in the same request')
  s.given([created, converted()]).when(patch({ status: 'converted' }, creator, ids)).thenRejects(ValidationError, { errors: { status: ['The lead is already converted.'] } })
  s.given([created, converted()]).when(patch({ status: 'assigned' })).thenRejects(ValidationError, { errors: { status: [String] } })
  s.given([created, converted()]).when(patch({ city: 'Austin' })).then([updated({ city: { from: null, to: 'Austin' } })], 'other fields of a converted lead still change')
  s.given([created, converted()]).when(put({ first_name: 'Ann', email: 'ann@initech.test' })).then([updated({ assigned_to: { from: ['assignee'], to: [] }, contacts: { from: ['c1'], to: [] } })], 'a PUT keeps status and account')
  s.given([created]).when(patch({ status: 'converted' }, stranger, ids)).thenRejects(ForbiddenError)
  s.given([created]).when(patch({ status: 'converted' }, assignee, ids)).then([converted('assignee')])
})

t.test('closed leads reopen; other statuses move freely', async (t) => {
  const s = spec(t, leadDecider)
  const closed = updated({ status: { from: 'assigned', to: 'closed' } })
  s.given([created]).when(patch({ status: 'closed' })).then([closed])
  s.given([created, closed]).when(patch({ status: 'in process' })).then([updated({ status: { from: 'closed', to: 'in process' } })], 'reopened')
  s.given([created, closed]).when(patch({ status: 'converted' }, admin, ids)).then([converted('admin')], 'a closed lead may be converted')
  s.given([created]).when(patch({ status: 'assigned' })).then([], 'no change, no event')
  s.given([created]).when(put({ first_name: 'Ann', email: 'ann@initech.test', assigned_to: ['assignee'] })).then([], 'a PUT naming no status keeps it')
})

t.test('access, visibility, deletion', async (t) => {
  const s = spec(t, leadDecider)
  const deleted: LeadEvent = { type: 'LeadDeleted', data: { at: later } }
  const remove = (actor: Actor, orgId = org): LeadCommand => ({ type: 'DeleteLead', orgId, actor, at: later })
  s.given([created]).when({ ...patch({ city: 'X' }), orgId: otherOrg }).thenRejects(NotFoundError)
  s.given([created, deleted]).when(patch({ city: 'X' })).thenRejects(NotFoundError)
  s.given([created]).when(patch({ city: 'X' }, stranger)).thenRejects(ForbiddenError)
  s.given([created]).when(remove(assignee)).thenRejects(ForbiddenError)
  s.given([created]).when(remove(creator)).then([deleted])
  s.given([created]).when(remove(superuser)).then([deleted])
  s.given([created]).when(remove(admin, otherOrg)).thenRejects(NotFoundError)
  s.given([created, deleted]).when(remove(creator)).then([], 'deleting twice is a no-op')
})

t.test('comments and attachments: access to add, author or admin to change', async (t) => {
  const s = spec(t, leadDecider)
  const added: LeadEvent = { type: 'LeadCommentAdded', data: { comment_id: 'k1', comment: 'hi', by: 'assignee', at } }
  const note = (type: 'AddComment' | 'EditComment' | 'DeleteComment', actor: Actor, comment = 'hi'): LeadCommand =>
    (type === 'DeleteComment' ? { type, orgId: org, actor, commentId: 'k1', at } : { type, orgId: org, actor, commentId: 'k1', comment, at }) as LeadCommand
  s.given([created]).when(note('AddComment', assignee)).then([added])
  s.given([created]).when(note('AddComment', stranger)).thenRejects(ForbiddenError)
  s.given([created, added]).when(note('EditComment', assignee, 'edited')).then([{ type: 'LeadCommentEdited', data: { comment_id: 'k1', comment: 'edited', at } }])
  s.given([created, added]).when(note('EditComment', assignee)).then([], 'the same text is no change')
  s.given([created, added]).when(note('EditComment', creator, 'x')).thenRejects(ForbiddenError)
  s.given([created, added]).when(note('DeleteComment', admin)).then([{ type: 'LeadCommentDeleted', data: { comment_id: 'k1', at } }])
  s.given([created]).when(note('DeleteComment', admin)).thenRejects(NotFoundError)
  const attachment = { attachment_id: 'f1', file_name: 'a.txt', content_type: 'text/plain', size: 1, storage_key: 'o/f1' }
  s.given([created]).when({ type: 'AddAttachment', orgId: org, actor: creator, attachment, at }).then([{ type: 'LeadAttachmentAdded', data: { ...attachment, by: 'creator', at } }])
  const attached: LeadEvent = { type: 'LeadAttachmentAdded', data: { ...attachment, by: 'creator', at } }
  s.given([created, attached]).when({ type: 'RemoveAttachment', orgId: org, actor: assignee, attachmentId: 'f1', at }).thenRejects(ForbiddenError)
  s.given([created, attached]).when({ type: 'RemoveAttachment', orgId: org, actor: creator, attachmentId: 'f1', at }).then([{ type: 'LeadAttachmentRemoved', data: { attachment_id: 'f1', at } }])
})
