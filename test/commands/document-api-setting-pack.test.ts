import t from 'tap'
import { apiSettingDecider } from '../../src/commands/api-setting/api-setting.ts'
import type { ApiSettingEvent } from '../../src/commands/api-setting/api-setting.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { documentDecider } from '../../src/commands/document/document.ts'
import type { DocumentEvent, DocumentFile } from '../../src/commands/document/document.ts'
import { sampleDataDecider } from '../../src/commands/pack/sample-data.ts'
import type { SampleDataEvent, SampleRecord } from '../../src/commands/pack/sample-data.ts'
import { ForbiddenError, NotFoundError } from '../../src/errors.ts'
import { sniffContentType } from '../../src/files/sniff.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const uploader: Actor = { profileId: 'p-up', isAdmin: false, isSuperuser: false }
const sharee: Actor = { profileId: 'p-share', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'p-admin', isAdmin: true, isSuperuser: false }

t.test('document decider', async (t) => {
  const document = spec(t, documentDecider)
  const file: DocumentFile = { file_name: 'plan.pdf', content_type: 'application/pdf', size: 10, storage_key: `${org}/f1` }
  const newFile: DocumentFile = { ...file, file_name: 'plan-v2.pdf', storage_key: `${org}/f2` }
  const fields = { title: 'Plan', status: 'active' as const, shared_to: ['p-share'], teams: [] }
  const uploaded: DocumentEvent = { type: 'DocumentUploaded', data: { document_id: 'd1', org_id: org, ...fields, file, created_by: 'p-up', at } }
  const upload = { type: 'UploadDocument' as const, documentId: 'd1', orgId: org, actor: uploader, fields, file, at }
  document.given([]).when(upload).then([uploaded])
  document.given([uploaded]).when(upload).then([], 'uploading the same document again is a no-op')

  const change = (actor: Actor, changes: object, more: object = {}) => ({ type: 'ChangeDocument' as const, orgId: org, actor, changes, at, ...more })
  document.given([uploaded]).when(change(uploader, { title: 'Plan B', status: 'inactive' })).then([{ type: 'DocumentUpdated', data: { title: 'Plan B', status: 'inactive', by: 'p-up', at } }])
  document.given([uploaded]).when(change(admin, { shared_to: [], teams: ['t1'] })).then([{ type: 'DocumentUpdated', data: { shared_to: [], teams: ['t1'], by: 'p-admin', at } }], 'an admin may change shares')
  document.given([uploaded]).when(change(uploader, { title: 'Plan', shared_to: ['p-share'] })).then([], 'no change, no event (the same share set)')
  document.given([uploaded]).when(change(uploader, {}, { file: newFile })).then([{ type: 'DocumentFileReplaced', data: { file: newFile, previous_storage_key: file.storage_key, by: 'p-up', at } }], 'a new file replaces the bytes, keeping the record')
  document.given([uploaded]).when(change(sharee, { title: 'Mine now' })).thenRejects(ForbiddenError)
  document.given([uploaded]).when({ ...change(uploader, { title: 'X' }), orgId: otherOrg }).thenRejects(NotFoundError)

  const deleted: DocumentEvent = { type: 'DocumentDeleted', data: { storage_key: file.storage_key, by: 'p-up', at } }
  const remove = (actor: Actor) => ({ type: 'DeleteDocument' as const, orgId: org, actor, at })
  document.given([uploaded]).when(remove(sharee)).thenRejects(ForbiddenError)
  document.given([uploaded]).when(remove(uploader)).then([deleted])
  document.given([uploaded, deleted]).when(remove(uploader)).then([], 'deleting twice is a no-op')
  document.given([uploaded, deleted]).when(change(uploader, { title: 'Back' })).thenRejects(NotFoundError)
  document.given([uploaded, { type: 'DocumentFileReplaced', data: { file: newFile, previous_storage_key: file.storage_key, by: 'p-up', at } }]).when(remove(admin)).then([{ type: 'DocumentDeleted', data: { storage_key: newFile.storage_key, by: 'p-admin', at } }], 'the delete names the current file')
})

t.test('API setting decider', async (t) => {
  const setting = spec(t, apiSettingDecider)
  const fields = { title: 'Site', website: 'https://acme.example.com', lead_assigned_to: ['p1'], tags: [] }
  const created: ApiSettingEvent = { type: 'ApiSettingCreated', data: { api_setting_id: 's1', org_id: org, ...fields, key_hash: 'ab12', key_prefix: 'svc_site_abcdef', created_by: 'p-admin', at } }
  const create = { type: 'CreateApiSetting' as const, apiSettingId: 's1', orgId: org, fields, key: { hash: 'ab12', prefix: 'svc_site_abcdef' }, actorId: 'p-admin', at }
  setting.given([]).when(create).then([created], 'the key is recorded as its hash and prefix only')
  setting.given([created]).when(create).then([], 'creating again is a no-op')
  const change = (changes: object, orgId = org) => ({ type: 'ChangeApiSetting' as const, orgId, changes, actorId: 'p-admin', at })
  setting.given([created]).when(change({ website: null, lead_assigned_to: ['p1'] })).then([{ type: 'ApiSettingUpdated', data: { website: null, by: 'p-admin', at } }])
  setting.given([created]).when(change({ title: 'Site' })).then([], 'no change, no event')
  setting.given([created]).when(change({ title: 'X' }, otherOrg)).thenRejects(NotFoundError)
  const deleted: ApiSettingEvent = { type: 'ApiSettingDeleted', data: { by: 'p-admin', at } }
  setting.given([created]).when({ type: 'DeleteApiSetting', orgId: org, actorId: 'p-admin', at }).then([deleted])
  setting.given([created, deleted]).when({ type: 'DeleteApiSetting', orgId: org, actorId: 'p-admin', at }).then([], 'deleting twice is a no-op')
  setting.given([created, deleted]).when(change({ title: 'X' })).thenRejects(NotFoundError)
})

t.test('sample data decider', async (t) => {
  const sample = spec(t, sampleDataDecider)
  const records: SampleRecord[] = [{ kind: 'account', id: 'a1', name: 'Lumen' }, { kind: 'task', id: 't1', name: 'Call' }]
  const record = (generation: number) => ({ type: 'RecordSampleData' as const, packId: 'p', packVersion: 1, generation, records, skipped: [], actorId: 'p-admin', at })
  const applied: SampleDataEvent = { type: 'SampleDataApplied', data: { pack_id: 'p', pack_version: 1, generation: 0, records, skipped: [], by: 'p-admin', at } }
  sample.given([]).when(record(0)).then([applied])
  sample.given([applied]).when(record(0)).then([], 'the same application recorded twice (a retry, a concurrent apply) is a no-op')
  sample.given([]).when({ ...record(0), records: [] }).then([], 'an application that created nothing records nothing')
  const clear = { type: 'RecordSampleDataCleared' as const, deleted: [records[1]!], retained: [records[0]!], actorId: 'p-admin', at }
  const cleared: SampleDataEvent = { type: 'SampleDataCleared', data: { deleted: [records[1]!], retained: [records[0]!], by: 'p-admin', at } }
  sample.given([applied]).when(clear).then([cleared])
  sample.given([]).when(clear).then([], 'nothing held, nothing to clear')
  sample.given([applied, cleared]).when({ ...clear, deleted: [records[0]!], retained: [] }).then([{ type: 'SampleDataCleared', data: { deleted: [records[0]!], retained: [], by: 'p-admin', at } }], 'a retained record stays held and a later clear deletes it')
  sample.given([applied, cleared, { type: 'SampleDataCleared', data: { deleted: [records[0]!], retained: [], by: 'p-admin', at } }]).when(record(1)).then([{ type: 'SampleDataApplied', data: { ...applied.data, generation: 1 } }], 'after a clear, the next application has the next number')
})

t.test('a document\'s content type is read from its bytes, not from the client', async (t) => {
  const bytes = (...values: number[]) => Buffer.from(values)
  t.equal(sniffContentType(Buffer.from('%PDF-1.7\n'), 'x.txt'), 'application/pdf')
  t.equal(sniffContentType(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0), 'x.pdf'), 'image/png')
  t.equal(sniffContentType(bytes(0x50, 0x4b, 0x03, 0x04, 1), 'Report.XLSX'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'a zip named as an office format')
  t.equal(sniffContentType(bytes(0x50, 0x4b, 0x03, 0x04, 1), 'a.exe'), 'application/zip')
  t.equal(sniffContentType(Buffer.from('name,amount\nAcme,1\n'), 'a.csv'), 'text/csv')
  t.equal(sniffContentType(Buffer.from('<html><script>alert(1)</script>'), 'a.html'), 'text/plain', 'markup is text, never text/html')
  t.equal(sniffContentType(Buffer.from('héllo wörld'), 'a'), 'text/plain')
  t.equal(sniffContentType(bytes(0, 1, 2, 0xff), 'a.txt'), 'application/octet-stream', 'binary named .txt')
  t.equal(sniffContentType(Buffer.alloc(0), 'empty.txt'), 'application/octet-stream')
})
