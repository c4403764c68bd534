import { DomainError, ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import { referencedFromOutside } from '../../projections/pack/queries.ts'
import type { Caller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { packById } from './catalogue.ts'
import type { Pack } from './catalogue.ts'
import { SAMPLE_KINDS, sampleDataDecider, sampleDataStream } from './sample-data.ts'
import type { SampleDataEvent, SampleDataState, SampleKind, SampleRecord, SkippedItem } from './sample-data.ts'
import { creations, deleteSample, sampleTag } from './sample-records.ts'
import type { Created, Creation } from './sample-records.ts'

/** The original's apply report: what was created and skipped, each as `{type, name}` (`sample_account` …). */
export type PackReport = { created: { type: string; name: string }[]; skipped: { type: string; name: string; reason: string }[]; failed: never[] }

const requireAdmin = (caller: Caller) => {
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin can do this.')
}

async function sampleState(deps: Pick<DealDeps, 'store'>, orgId: string): Promise<SampleDataState> {
  const recorded = await deps.store.readStream(sampleDataStream(orgId))
  return fold(sampleDataDecider, recorded.map((event) => domainEventOf<SampleDataEvent>(event)))
}

/** The pack's items as creations, in the order later ones point at earlier ones (accounts first, tasks last), each with its key in the pack. */
function itemsOf(pack: Pack, make: ReturnType<typeof creations>): { key: string; creation: () => Creation }[] {
  return [
    ...pack.accounts.map((item) => ({ key: item.key, creation: () => make.account(item) })),
    ...pack.contacts.map((item) => ({ key: item.key, creation: () => make.contact(item) })),
    ...pack.deals.map((item) => ({ key: item.key, creation: () => make.deal(item) })),
    ...pack.leads.map((item) => ({ key: item.key, creation: () => make.lead(item) })),
    ...pack.tasks.map((item) => ({ key: item.key, creation: () => make.task(item) })),
  ]
}

/** Creates one item under its id, unless a first run got that far; a refusal (a name or email already taken) skips it, as the original does. */
async function createItem(deps: DealDeps, creation: Creation, id: string): Promise<'created' | { reason: string }> {
  const [existing] = await deps.store.readStream(creation.stream(id), { maxCount: 1 })
  if (existing) return 'created'
  try {
    await creation.create(id)
    return 'created'
  } catch (error) {
    if (error instanceof DomainError && error.statusCode === 400) return { reason: `could not be created (${typeof error.errors === 'string' ? error.errors : Object.keys(error.errors).join(', ')} refused)` }
    throw error
  }
}

/**
 * Applies a sample-data pack (admins): its accounts, contacts, deals, leads and tasks created by
 * their modules' use cases, then the list of what it created recorded on the organization's
 * sample-data stream. Ids derive from the organization, the pack, the application's number and
 * the item, so a retried or concurrent apply creates nothing twice. Each record carries the
 * "Sample data" tag (created when missing), as the original's. While sample records are held,
 * another apply adds nothing (`sample_data` skipped), as the original.
 */
export async function applyPack(deps: DealDeps, caller: Caller, packId: string): Promise<{ report: PackReport; position: Position | null }> {
  requireAdmin(caller)
  const pack = packById(packId)
  if (!pack) throw new NotFoundError('Unknown pack.')
  const report: PackReport = { created: [], skipped: [], failed: [] }
  const state = await sampleState(deps, caller.orgId)
  if (state.held.length) {
    report.skipped.push({ type: 'sample_data', name: pack.id, reason: 'sample data is already present; clear it first' })
    return { report, position: null }
  }
  const session = commandSession(deps.store, caller)
  const created: Created = { account: new Map(), deal: new Map(), lead: new Map() }
  const records: SampleRecord[] = []
  const skipped: SkippedItem[] = []
  let kind: SampleKind | undefined
  const tags = await sampleTag(deps, caller, session)
  for (const { key, creation } of itemsOf(pack, creations(deps, caller, session, created, tags))) {
    const item = creation()
    // Deals check their account, tasks their parent, in the read models: the records made before must show there first.
    if (item.kind !== kind) await readModelsAt(deps, session.position())
    kind = item.kind
    const id = nameBasedId(`sample-data:${caller.orgId}:${pack.id}:${state.applications}:${item.kind}:${key}`)
    const outcome = await createItem(deps, item, id)
    if (outcome === 'created') {
      records.push({ kind: item.kind, id, name: item.name })
      if (item.kind === 'account' || item.kind === 'deal' || item.kind === 'lead') created[item.kind].set(key, id)
      report.created.push({ type: `sample_${item.kind}`, name: item.name })
    } else {
      skipped.push({ kind: item.kind, name: item.name, reason: outcome.reason })
      report.skipped.push({ type: `sample_${item.kind}`, name: item.name, reason: outcome.reason })
    }
  }
  await session.run(sampleDataDecider, sampleDataStream(caller.orgId), { type: 'RecordSampleData', packId: pack.id, packVersion: pack.version, generation: state.applications, records, skipped, actorId: caller.profileId, at: deps.clock().toISOString() })
  return { report, position: session.position() }
}

export type ClearOutcome = { deleted: Partial<Record<SampleKind, number>>; retained: Partial<Record<SampleKind, number>>; position: Position | null }

/**
 * Deletes the sample records the packs created (admins), through their modules' commands, and
 * nothing else: the records are those named on the sample-data stream. Children go before their
 * parents; one a live record outside the sample set points at (a user's deal on a sample account,
 * a user's task on a sample lead, or a sample record kept for that reason) is kept and reported.
 */
export async function clearSampleData(deps: DealDeps, caller: Caller): Promise<ClearOutcome> {
  requireAdmin(caller)
  const { held } = await sampleState(deps, caller.orgId)
  const session = commandSession(deps.store, caller)
  const deleted: SampleRecord[] = []
  const retained: SampleRecord[] = []
  // Those still to go: a retained record leaves this set, so what points at it keeps it too.
  let leaving = held.map((record) => record.id)
  for (const kind of [...SAMPLE_KINDS].reverse()) {
    const ofKind = held.filter((record) => record.kind === kind)
    const referenced = await referencedFromOutside(deps.db, caller.orgId, kind, ofKind.map((record) => record.id), leaving)
    for (const record of ofKind) {
      if (referenced.has(record.id)) {
        retained.push(record)
        leaving = leaving.filter((id) => id !== record.id)
      } else if (await deleteSample(deps, caller, session, kind, record.id)) deleted.push(record)
    }
  }
  await recordCleared(deps, caller, session, deleted, retained)
  return { deleted: countByKind(deleted), retained: countByKind(retained), position: session.position() }
}

function recordCleared(deps: DealDeps, caller: Caller, session: CommandSession, deleted: SampleRecord[], retained: SampleRecord[]) {
  return session.run(sampleDataDecider, sampleDataStream(caller.orgId), { type: 'RecordSampleDataCleared', deleted, retained, actorId: caller.profileId, at: deps.clock().toISOString() })
}

const countByKind = (records: readonly SampleRecord[]): Partial<Record<SampleKind, number>> => {
  const counts: Partial<Record<SampleKind, number>> = {}
  for (const { kind } of records) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}
