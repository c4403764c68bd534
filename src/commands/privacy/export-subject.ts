import type { Deps } from '../../deps.ts'
import { GoneError, NotFoundError } from '../../errors.ts'
import { personalValues } from '../../privacy/seal.ts'
import { isSealingStore } from '../../privacy/sealing-store.ts'
import type { Caller } from '../caller.ts'
import { eventsOfSubject, receiptOf } from './subjects.ts'
import type { SubjectRef } from './subjects.ts'

/** One event's share of a subject-access export: where and when it was written, by whom, and the person's data in it. */
export type ExportedEntry = { stream: string; revision: number; type: string; at: string; by: string | null; fields: Record<string, unknown> }
export type SubjectExport = { kind: string; subject_id: string; exported_at: string; events: ExportedEntry[] }

/**
 * Everything personal the log holds about a person (GDPR Articles 15 and 20; issue 31): every
 * personal field of every event of theirs, by path, with when and by whom it was written. An
 * erased person is gone (410): there is nothing left to hand over.
 */
export async function exportSubject(deps: Pick<Deps, 'store' | 'clock'>, caller: Caller, subject: SubjectRef): Promise<SubjectExport> {
  const { store } = deps
  if (!isSealingStore(store)) throw new Error('Expected the sealing event store (src/privacy/sealing-store.ts): it knows which fields are personal')
  const receipt = await receiptOf(store, subject)
  if (receipt && receipt.org_id !== caller.orgId) throw new NotFoundError()
  if (receipt) throw new GoneError(`This ${subject.kind} was erased on ${receipt.at}: nothing personal is left to export`)
  const events = await eventsOfSubject(store, caller.orgId, subject)
  const entries = events.flatMap((event) => {
    const spec = store.personal(event.type)
    const fields = spec ? personalValues(event.data, spec.fields) : {}
    if (Object.keys(fields).length === 0) return []
    const at = (event.data as { at?: unknown }).at
    return [{ stream: event.streamName, revision: Number(event.revision), type: event.type, at: typeof at === 'string' ? at : event.createdAt.toISOString(), by: event.metadata.actorId ?? null, fields }]
  })
  return { kind: subject.kind, subject_id: subject.id, exported_at: deps.clock().toISOString(), events: entries }
}
