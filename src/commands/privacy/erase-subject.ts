import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { NotFoundError } from '../../errors.ts'
import type { Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { personalValues, presentFields } from '../../privacy/seal.ts'
import { isSealingStore } from '../../privacy/sealing-store.ts'
import type { PersonalSpecs, SealingStore } from '../../privacy/sealing-store.ts'
import { erasesSubjects, holdsNone } from '../../projections/privacy/erasing.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { nameClaimDecider, normalizedName } from '../name-claim.ts'
import { PERSON_CLAIMS } from './person-claims.ts'
import { MEMBER_KIND, eraseMemberProfile } from './erase-member.ts'
import { erasureDecider, erasureStream } from './erasure.ts'
import type { SubjectErasedData } from './erasure.ts'
import { eventsOfSubject, receiptOf, subjectOf } from './subjects.ts'
import type { SubjectRef } from './subjects.ts'

export type ErasureDeps = Pick<Deps, 'db' | 'store' | 'projections' | 'clock' | 'config'> & { files: FileStore }
export type Erasure = { receipt: SubjectErasedData; created: boolean; position: Position | null }

const DAY_MS = 86_400_000

/** A personal path's field: `changes.email.to` → `email`. */
const fieldOf = (path: string) => path.replace(/^changes\./, '').replace(/\.(from|to)$/, '')

/** What the person's events held: the kinds of personal fields, and how many events held any. */
function personalContent(events: readonly RecordedEvent[], personal: PersonalSpecs): { fields: string[]; events: number; types: Set<string> } {
  const fields = new Set<string>()
  const types = new Set<string>()
  let count = 0
  for (const event of events) {
    const spec = personal(event.type)
    const present = spec ? presentFields(event.data, spec.fields) : []
    if (present.length === 0) continue
    count++
    types.add(event.type)
    for (const path of present) fields.add(fieldOf(path))
  }
  return { fields: [...fields].sort(), events: count, types }
}

/**
 * Frees every unique name the person held (their email, now and before: the decider releases only
 * what they still hold), read from their events before the key was destroyed, so that the address
 * may be used again and the claim no longer names them.
 */
async function releaseClaims(session: CommandSession, store: SealingStore, orgId: string, subject: SubjectRef, events: readonly RecordedEvent[]): Promise<void> {
  const claims = PERSON_CLAIMS[subject.kind]
  if (!claims) return
  const names = new Set<string>()
  for (const event of events) {
    const values = Object.entries(personalValues(event.data, store.personal(event.type)?.fields ?? []))
    for (const [path, value] of values) if (fieldOf(path) === claims.field && typeof value === 'string' && value.trim()) names.add(normalizedName(value))
  }
  for (const name of names) {
    // Under both names: a claim made before claims were keyed is freed too (its stream's name stays in the log).
    const { keyed, legacy } = await store.claimNames.streamsOf(claims.scope, orgId, name)
    for (const stream of legacy ? [keyed, legacy] : [keyed]) await session.run(nameClaimDecider, stream, { type: 'Release', ownerId: subject.id })
  }
}

/** The files attached to the person's record (their `storage_key`s): their bytes never entered the log, so no key covers them. */
const attachedFiles = (events: readonly RecordedEvent[]): string[] =>
  events.flatMap((event) => {
    const key = (event.data as { storage_key?: unknown }).storage_key
    return event.type.endsWith('AttachmentAdded') && typeof key === 'string' ? [key] : []
  })

/** Erasures one at a time, across processes: the receipt is recorded once, with what the first one found. */
async function oneAtATime<T>(db: Db, work: () => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(hashtext('crm_erasure'))`.execute(connection)
    try {
      return await work()
    } finally {
      await sql`SELECT pg_advisory_unlock(hashtext('crm_erasure'))`.execute(connection)
    }
  })
}

/**
 * Erases a person (issue 31, docs/personal-data.md): destroys their data key, so every personal
 * field of theirs in the log (and in its backups once they expire) is ciphertext nobody can read,
 * releases their email claims, deletes the files attached to their record, and records the receipt,
 * the erasure event, which each read model that held their data handles by blanking its rows
 * (projections/privacy/erasing.ts): the caller waits for the read models to reach it. A second
 * erasure of the same person answers the first receipt. Records that point at the person (deals,
 * tasks) keep working; the person's own record stays, its personal fields blank.
 */
export async function eraseSubject(deps: ErasureDeps, caller: Caller, input: SubjectRef): Promise<Erasure> {
  const { store, db } = deps
  if (!isSealingStore(store)) throw new Error('Expected the sealing event store (src/privacy/sealing-store.ts): without it there is no key to destroy')
  const answered = async (): Promise<Erasure | undefined> => {
    const receipt = await receiptOf(store, input)
    if (!receipt) return undefined
    if (receipt.org_id !== caller.orgId) throw new NotFoundError()
    return { receipt, created: false, position: null }
  }
  const earlier = await answered()
  if (earlier) return earlier
  const member = input.kind === MEMBER_KIND
  if (!member) await eventsOfSubject(store, caller.orgId, input)
  return oneAtATime(db, async () => {
    const meanwhile = await answered()
    if (meanwhile) return meanwhile
    const session = commandSession(store, caller)
    const at = deps.clock()
    const erased = member ? { fields: await eraseMemberProfile(db, caller.orgId, input.id, caller.profileId, at), events: 0, read_models: [], files_deleted: 0 } : await erasePerson(deps, store, session, caller, input)
    const receipt: SubjectErasedData = {
      receipt_id: randomUUID(),
      org_id: caller.orgId,
      kind: input.kind,
      subject_id: input.id,
      ...erased,
      key_backups_expire_at: new Date(at.getTime() + deps.config.backupRetentionDays * DAY_MS).toISOString(),
      by: caller.profileId,
      at: at.toISOString(),
    }
    await session.run(erasureDecider, erasureStream(input.kind, input.id), { type: 'RecordErasure', receipt }, { expectNew: true })
    return { receipt, created: true, position: session.position() }
  })
}

type Erased = Pick<SubjectErasedData, 'fields' | 'events' | 'read_models' | 'read_models_holding_none' | 'files_deleted'>

/** A person of the log (a contact, a lead): their key destroyed, their claims released, their files deleted; the read models that held their data, which blank it on the receipt's event. */
async function erasePerson(deps: ErasureDeps, store: SealingStore, session: CommandSession, caller: Caller, input: SubjectRef): Promise<Erased> {
  // Read again under the lock, the last moment they are readable: what the receipt counts and the claims to release.
  const events = await eventsOfSubject(store, caller.orgId, input)
  const content = personalContent(events, store.personal)
  await store.subjectKeys.destroy(subjectOf(input))
  await releaseClaims(session, store, caller.orgId, input, events)
  const files = attachedFiles(events)
  for (const key of files) await deps.files.remove(key)
  const readers = deps.projections.projectors.filter((projector) => projector.eventTypes.some((type) => content.types.has(type) || store.personal(type)?.elsewhere === true))
  const named = (projectors: typeof readers) => projectors.map((projector) => projector.name)
  return { fields: content.fields, events: content.events, read_models: named(readers.filter(erasesSubjects)), read_models_holding_none: named(readers.filter(holdsNone)), files_deleted: files.length }
}
