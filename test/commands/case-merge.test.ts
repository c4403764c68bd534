import t from 'tap'
import { caseDecider } from '../../src/commands/case/case.ts'
import type { CaseCommand, CaseEvent, CaseState } from '../../src/commands/case/case.ts'
import { emptyCase, summaryOf } from '../../src/commands/case/fields.ts'
import type { CaseFields } from '../../src/commands/case/fields.ts'
import type { OtherCase, Watch } from '../../src/commands/case/merge.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { fold } from '../../src/commands/decider.ts'
import { noNotes } from '../../src/commands/notes.ts'
import type { Notes } from '../../src/commands/notes.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { eventsOf } from '../helpers/events.ts'
import { spec } from '../helpers/given-when-then.ts'

// Merge and unmerge (commands/case/merge.ts): every transition the original allows and refuses, and the fold that restores both cases.
const caseEvent = eventsOf<CaseEvent>()
const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }

const fields: CaseFields = { ...emptyCase(), name: 'Printer on fire' }
const createdAs = (id: string, by = 'creator', orgId = org) => caseEvent('CaseCreated', { case_id: id, org_id: orgId, ...fields, sla_first_response_hours: 8, sla_resolution_hours: 48, created_by: by, at })
const comment = caseEvent('CaseCommentAdded', { comment_id: 'k1', comment: 'Smoke', by: 'creator', at })
const attachment = caseEvent('CaseAttachmentAdded', { attachment_id: 'f1', file_name: 'a.txt', content_type: 'text/plain', size: 1, storage_key: 'k', by: 'creator', at })
const watch = (profile_id: string) => caseEvent('CaseWatched', { profile_id, subscribed_via: 'manual', by: profile_id, at })
const watcher = (profile_id: string): Watch => ({ profile_id, subscribed_via: 'manual', since: at })
/** The duplicate: a comment, an attachment, two watchers. */
const source = [createdAs('s1'), comment, attachment, watch('w1'), watch('w2')]
/** The survivor, watched by w2 already. */
const target = [createdAs('t1'), watch('w2')]

const other = (id: string, history: readonly CaseEvent[]): OtherCase => {
  const state = fold(caseDecider, history)
  return { id, orgId: state.orgId, createdBy: state.createdBy, live: state.exists && !state.deleted, mergedInto: state.merges.into?.caseId ?? null }
}
const merge = (into: OtherCase, actor = creator): CaseCommand => ({ type: 'MergeCase', orgId: org, actor, at: later, day: '2026-11-23', into })
const absorb = (history: readonly CaseEvent[], actor = creator): CaseCommand => {
  const state = fold(caseDecider, history)
  return { type: 'AbsorbDuplicate', orgId: org, actor, at: later, source: { ...other('s1', history), notes: state.notes, watchers: state.watchers.map((id) => state.watches[id]!), aliases: Object.values(state.merges.absorbed).flatMap((a) => a.aliases) } }
}
const unmerge = (from: OtherCase, notes: Notes, actor = creator): CaseCommand => ({ type: 'UnmergeCase', orgId: org, actor, at: later, from: { ...from, notes } })
const release = (actor = creator): CaseCommand => ({ type: 'ReleaseDuplicate', orgId: org, actor, at: later, source: other('s1', source) })

const merged = caseEvent('CaseMerged', { into_case_id: 't1', comment_ids: ['k1'], attachment_ids: ['f1'], watchers: [watcher('w1'), watcher('w2')], aliases: [], by: 'creator', at: later })
const duplicate = caseEvent('CaseUpdated', { changes: { status: { from: 'New', to: 'Duplicate' }, closed_on: { from: null, to: '2026-11-23' } }, case: summaryOf({ ...fields, status: 'Duplicate' }), by: 'creator', at: later })
const absorbed = caseEvent('CaseDuplicateAbsorbed', { source_case_id: 's1', comments: [{ id: 'k1', by: 'creator', text: 'Smoke', removed: false }], attachments: [{ id: 'f1', by: 'creator', removed: false }], watchers: [watcher('w1')], aliases: ['s1'], by: 'creator', at: later })
const mergedSource = [...source, merged, duplicate]
const mergedTarget = [...target, absorbed]

t.test('merge: the duplicate gives up its notes and watchers and becomes Duplicate, closed on the day; the survivor takes them', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given(source).when(merge(other('t1', target))).then([merged, duplicate])
  kase.given(target).when(absorb(source)).then([absorbed], 'w2 watched it already: only w1 is new to it')
  kase.given(source).when(merge(other('t1', target), admin)).then([{ ...merged, data: { ...merged.data, by: 'admin' } }, { ...duplicate, data: { ...duplicate.data, by: 'admin' } }], 'an admin merges any two')
  kase.given(mergedSource).when(merge(other('t1', mergedTarget))).then([], 'merged there already: nothing (already_merged)')
  kase.given(mergedTarget).when(absorb(source)).then([], 'absorbed already: nothing')
})

t.test('merge: refused into itself, across organizations, into a gone or merged case, twice elsewhere, by a creator of one only', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given(source).when(merge(other('s1', source))).thenRejects(ValidationError, { errors: 'Cannot merge a ticket into itself.' })
  kase.given(source).when(merge(other('t1', [createdAs('t1', 'creator', otherOrg)]))).thenRejects(NotFoundError)
  kase.given(source).when(merge(other('t1', []))).thenRejects(NotFoundError)
  kase.given(source).when(merge(other('t1', [...target, caseEvent('CaseDeleted', { by: 'creator', at })]))).thenRejects(NotFoundError)
  kase.given([createdAs('s1', 'creator', otherOrg)]).when(merge(other('t1', target))).thenRejects(NotFoundError)
  kase.given([createdAs('s1', 'creator', otherOrg)]).when(merge(other('s1', [createdAs('s1', 'creator', otherOrg)]))).thenRejects(NotFoundError, undefined)
  kase.given(source).when(merge(other('t1', [createdAs('t1', 'admin')]))).thenRejects(ForbiddenError, { message: /creator of both/ })
  kase.given(source).when(merge(other('t1', target), stranger)).thenRejects(ForbiddenError)
  kase.given(mergedSource).when(merge(other('t2', [createdAs('t2')]))).thenRejects(ValidationError, { errors: 'Source ticket is already merged into a different ticket.' })
  const chained = other('t1', [...target, caseEvent('CaseMerged', { into_case_id: 'x', comment_ids: [], attachment_ids: [], watchers: [], aliases: [], by: 'creator', at })])
  kase.given(source).when(merge(chained)).thenRejects(ValidationError, { errors: 'Target ticket has already been merged elsewhere.' })
  kase.given([...target, caseEvent('CaseMerged', { into_case_id: 'x', comment_ids: [], attachment_ids: [], watchers: [], aliases: [], by: 'creator', at })]).when(absorb(source)).thenRejects(ValidationError)
  kase.given([...target, caseEvent('CaseDeleted', { by: 'creator', at })]).when(absorb(source)).thenRejects(NotFoundError)
})

t.test('a merged duplicate is read-only until unmerged (404 still for another organization)', async (t) => {
  const kase = spec(t, caseDecider)
  kase.given(mergedSource).when({ type: 'UpdateCase', orgId: org, actor: creator, input: { name: 'X' }, replace: false, customFields: [], at: later }).thenRejects(ValidationError, { errors: /unmerge it first/ })
  kase.given(mergedSource).when({ type: 'DeleteCase', orgId: org, actor: admin, at: later }).thenRejects(ValidationError)
  kase.given(mergedSource).when({ type: 'WatchCase', orgId: org, actor: creator, at: later }).thenRejects(ValidationError)
  kase.given(mergedSource).when({ type: 'AddComment', orgId: org, actor: creator, commentId: 'k9', comment: 'x', at: later }).thenRejects(ValidationError)
  kase.given(mergedSource).when({ type: 'UpdateCase', orgId: otherOrg, actor: admin, input: { name: 'X' }, replace: false, customFields: [], at: later }).thenRejects(NotFoundError)
})

t.test('a merge of a merge: the aliases the duplicate holds follow it to the new survivor', async (t) => {
  const kase = spec(t, caseDecider)
  const holding = [...source, caseEvent('CaseDuplicateAbsorbed', { source_case_id: 'a0', comments: [], attachments: [], watchers: [], aliases: ['a0'], by: 'creator', at })]
  kase.given(holding).when(merge(other('t1', target))).then([{ ...merged, data: { ...merged.data, aliases: ['a0'] } }, duplicate])
  kase.given(target).when(absorb(holding)).then([{ ...absorbed, data: { ...absorbed.data, aliases: ['s1', 'a0'] } }])
})

t.test('unmerge: refused when not merged, across organizations, by a creator of one only, or while the survivor is merged itself', async (t) => {
  const kase = spec(t, caseDecider)
  const into = other('t1', mergedTarget)
  kase.given(source).when(unmerge(into, noNotes())).thenRejects(ValidationError, { errors: 'This ticket is not currently merged.' })
  kase.given([createdAs('s1', 'creator', otherOrg)]).when(unmerge(into, noNotes())).thenRejects(NotFoundError)
  kase.given(mergedSource).when(unmerge(into, noNotes(), stranger)).thenRejects(ForbiddenError, { message: /unmerge/ })
  kase.given(mergedSource).when(unmerge({ ...into, mergedInto: 'x' }, noNotes())).thenRejects(ValidationError, { errors: /unmerge that one first/ })
  kase.given(mergedSource).when(unmerge(other('t2', [createdAs('t2')]), noNotes())).thenRejects(NotFoundError, undefined)
  kase.given(target).when(release()).then([], 'nothing absorbed from it: nothing to give back')
  kase.given([createdAs('t1', 'creator', otherOrg)]).when(release()).thenRejects(NotFoundError)
})

t.test('unmerge: both cases get back exactly what the merge moved, with the edits since; the duplicate its status and date', async (t) => {
  const kase = spec(t, caseDecider)
  const edited = caseEvent('CaseCommentEdited', { comment_id: 'k1', comment: 'Fire', at: later })
  const unwatched = caseEvent('CaseUnwatched', { profile_id: 'w1', by: 'w1', at: later })
  const survivorNow = [...mergedTarget, edited, unwatched]
  const notesNow = fold(caseDecider, survivorNow).notes
  const back = caseEvent('CaseUnmerged', { from_case_id: 't1', comments: [{ id: 'k1', by: 'creator', text: 'Fire', removed: false }], attachments: [{ id: 'f1', by: 'creator', removed: false }], watchers: [watcher('w1'), watcher('w2')], aliases: [], by: 'admin', at: later })
  const reopened = caseEvent('CaseUpdated', { changes: { status: { from: 'Duplicate', to: 'New' }, closed_on: { from: '2026-11-23', to: null } }, case: summaryOf(fields), by: 'admin', at: later })
  kase.given(mergedSource).when(unmerge(other('t1', survivorNow), notesNow, admin)).then([back, reopened])
  const released = caseEvent('CaseDuplicateReleased', { source_case_id: 's1', comment_ids: ['k1'], attachment_ids: ['f1'], watchers: [], aliases: ['s1'], by: 'admin', at: later })
  kase.given(survivorNow).when(release(admin)).then([released], 'w1 stopped watching it meanwhile: nothing of theirs to take back')
  kase.given([...mergedTarget, caseEvent('CaseDeleted', { by: 'creator', at: later })]).when(release(admin)).then([{ ...released, data: { ...released.data, watchers: ['w1'] } }], 'a deleted survivor still gives back: no merge is ever stuck')

  const restored = (history: readonly CaseEvent[]): Partial<CaseState> => {
    const { notes, watchers, watches, fields, merges } = fold(caseDecider, history)
    return { notes, watchers, watches, fields, merges }
  }
  const plain = fold(caseDecider, mergedTarget).notes
  t.same(restored([...mergedSource, { ...back, data: { ...back.data, comments: [{ id: 'k1', by: 'creator', text: 'Smoke', removed: false }], by: 'creator' } }, { ...reopened, data: { ...reopened.data, by: 'creator' } }]), restored(source), 'merged then unmerged: the duplicate folds to what it was')
  t.same(restored([...mergedTarget, { ...released, data: { ...released.data, watchers: ['w1'] } }]), restored(target), 'and the survivor too')
  t.equal(plain.comments.length, 1, 'the survivor held the moved comment meanwhile')
})
