import t from 'tap'
import { nameClaimDecider } from '../../src/commands/name-claim.ts'
import { tagDecider } from '../../src/commands/tag/tag.ts'
import type { TagEvent } from '../../src/commands/tag/tag.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const created: TagEvent = { type: 'TagCreated', data: { tag_id: 't1', org_id: org, name: 'VIP', color: null, description: '', created_by: 'p1', at } }

t.test('tag decider', async (t) => {
  const tag = spec(t, tagDecider)
  tag.given([]).when({ type: 'CreateTag', tagId: 't1', orgId: org, name: 'VIP', color: null, actorId: 'p1', at }).then([created])
  tag.given([created]).when({ type: 'CreateTag', tagId: 't1', orgId: org, name: 'VIP', color: null, actorId: 'p1', at }).then([], 'creating again is a no-op')
  tag.given([created]).when({ type: 'UpdateTag', orgId: org, name: 'Key account', at }).then([{ type: 'TagUpdated', data: { name: 'Key account', at } }])
  tag.given([created]).when({ type: 'UpdateTag', orgId: org, name: 'VIP', color: null, at }).then([], 'no change, no event')
  tag.given([created]).when({ type: 'UpdateTag', orgId: otherOrg, name: 'X', at }).thenRejects(NotFoundError)
  tag.given([]).when({ type: 'DeleteTag', orgId: org, at }).thenRejects(NotFoundError)
  tag.given([created]).when({ type: 'DeleteTag', orgId: org, at }).then([{ type: 'TagDeleted', data: { at } }])
  tag.given([created, { type: 'TagDeleted', data: { at } }]).when({ type: 'DeleteTag', orgId: org, at }).then([], 'deleting twice is a no-op')
  tag.given([created, { type: 'TagDeleted', data: { at } }]).when({ type: 'UpdateTag', orgId: org, name: 'X', at }).thenRejects(NotFoundError)
  tag.given([created, { type: 'TagDeleted', data: { at } }]).when({ type: 'RestoreTag', orgId: org, at }).then([{ type: 'TagRestored', data: { at } }])
  tag.given([created]).when({ type: 'UpdateTag', orgId: org, description: 'Key customers', at }).then([{ type: 'TagUpdated', data: { description: 'Key customers', at } }])
  tag.given([created]).when({ type: 'MergeTag', orgId: org, intoTagId: 't2', at }).then([{ type: 'TagMerged', data: { into_tag_id: 't2', at } }])
  tag.given([created, { type: 'TagDeleted', data: { at } }]).when({ type: 'MergeTag', orgId: org, intoTagId: 't2', at }).thenRejects(NotFoundError)
})

t.test('tag decider: archiving (the original is_active)', async (t) => {
  const tag = spec(t, tagDecider)
  const archived: TagEvent = { type: 'TagArchived', data: { at } }
  const merged: TagEvent = { type: 'TagMerged', data: { into_tag_id: 't2', at } }
  tag.given([created]).when({ type: 'ArchiveTag', orgId: org, at }).then([archived])
  tag.given([created, archived]).when({ type: 'ArchiveTag', orgId: org, at }).then([], 'archiving twice is a no-op')
  tag.given([created, { type: 'TagDeleted', data: { at } }]).when({ type: 'ArchiveTag', orgId: org, at }).then([], 'a deleted tag is off already')
  tag.given([created]).when({ type: 'ArchiveTag', orgId: otherOrg, at }).thenRejects(NotFoundError)
  tag.given([]).when({ type: 'ArchiveTag', orgId: org, at }).thenRejects(NotFoundError)
  tag.given([created, archived]).when({ type: 'RestoreTag', orgId: org, at }).then([{ type: 'TagUnarchived', data: { at } }], 'restore turns an archived tag back on')
  tag.given([created, archived, { type: 'TagUnarchived', data: { at } }]).when({ type: 'RestoreTag', orgId: org, at }).then([], 'an active tag needs no restore')
  tag.given([created]).when({ type: 'RestoreTag', orgId: org, at }).then([])
  tag.given([created, archived]).when({ type: 'UpdateTag', orgId: org, name: 'Former VIP', at }).then([{ type: 'TagUpdated', data: { name: 'Former VIP', at } }], 'an archived tag may be renamed')
  tag.given([created, archived]).when({ type: 'MergeTag', orgId: org, intoTagId: 't2', at }).then([merged], 'an archived tag may be merged away')
  tag.given([created, merged]).when({ type: 'RestoreTag', orgId: org, at }).then([{ type: 'TagUnarchived', data: { at } }], 'a merged tag is archived, not gone')
  tag.given([created, merged]).when({ type: 'ArchiveTag', orgId: org, at }).then([], 'a merged tag is off already')
})

t.test('name claim decider', async (t) => {
  const claim = spec(t, nameClaimDecider)
  const claimed = { type: 'NameClaimed', data: { owner_id: 'a', name: 'VIP' } } as const
  claim.given([]).when({ type: 'Claim', ownerId: 'a', name: 'VIP', field: 'name' }).then([claimed])
  claim.given([claimed]).when({ type: 'Claim', ownerId: 'a', name: 'vip', field: 'name' }).then([], 'the holder claiming again is a no-op')
  claim.given([claimed]).when({ type: 'Claim', ownerId: 'b', name: 'vip', field: 'name' }).thenRejects(ValidationError, { errors: { name: [/already in use/] } })
  claim.given([claimed]).when({ type: 'Release', ownerId: 'b' }).then([], 'only the holder releases')
  claim.given([claimed]).when({ type: 'Release', ownerId: 'a' }).then([{ type: 'NameReleased', data: { owner_id: 'a' } }])
  claim.given([claimed, { type: 'NameReleased', data: { owner_id: 'a' } }]).when({ type: 'Claim', ownerId: 'b', name: 'VIP', field: 'name' }).then([{ type: 'NameClaimed', data: { owner_id: 'b', name: 'VIP' } }])
  // A claim made before claims were keyed lives in another stream: its holder comes with the command.
  claim.given([]).when({ type: 'Claim', ownerId: 'b', name: 'vip', field: 'name', legacyHolder: 'a' }).thenRejects(ValidationError, { errors: { name: [/already in use/] } })
  claim.given([]).when({ type: 'Claim', ownerId: 'a', name: 'vip', field: 'name', legacyHolder: 'a' }).then([], 'held under the unsalted name already: nothing to claim')
  claim.given([]).when({ type: 'Claim', ownerId: 'a', name: 'VIP', field: 'name', legacyHolder: null }).then([claimed], 'free under both names')
})
