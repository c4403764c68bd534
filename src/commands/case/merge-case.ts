import type { Deps } from '../../deps.ts'
import type { EventStore, Position } from '../../eventstore/event-store.ts'
import { decodeEvent } from '../../events/versions.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import { companion } from '../handle-command.ts'
import { noNotes } from '../notes.ts'
import { caseDecider, caseStream } from './case.ts'
import type { CaseCommand, CaseEvent, CaseState } from './case.ts'
import { aliasesOf } from './merge.ts'
import type { OtherCase } from './merge.ts'

type MergeDeps = Pick<Deps, 'store' | 'clock'>

/** A case as its stream holds it now: merges decide on both cases' own events, never on a read model that may lag. */
async function foldedCase(store: EventStore, id: string): Promise<CaseState> {
  const recorded = await store.readStream(caseStream(id))
  return fold(caseDecider, recorded.map((event) => decodeEvent(event) as CaseEvent))
}

const otherCase = (id: string, state: CaseState): OtherCase => ({ id, orgId: state.orgId, createdBy: state.createdBy, live: state.exists && !state.deleted, mergedInto: state.merges.into?.caseId ?? null })

/**
 * Merges case `sourceId` into `intoId` (commands/case/merge.ts): the duplicate's decision on the
 * survivor's facts, and the survivor's on the duplicate's comments, attachments, watchers and
 * aliases, appended together (one transaction). The survivor's stream is read after the duplicate's,
 * and both appends expect the revisions read, so neither decides on a stale other. `merged` false:
 * it was already merged there (nothing appended).
 */
export async function mergeCase(deps: MergeDeps, caller: Caller, sourceId: string, intoId: string, session: CommandSession = commandSession(deps.store, caller)): Promise<{ merged: boolean; position: Position | null }> {
  const { store, clock } = deps
  const base = { orgId: caller.orgId, actor: actorOfCaller(caller), at: clock().toISOString() }
  const merge = async () => ({ command: { type: 'MergeCase', ...base, day: base.at.slice(0, 10), into: otherCase(intoId, await foldedCase(store, intoId)) } satisfies CaseCommand })
  const absorb = async () => {
    const source = await foldedCase(store, sourceId)
    const watchers = source.watchers.map((id) => source.watches[id]!)
    return { command: { type: 'AbsorbDuplicate', ...base, source: { ...otherCase(sourceId, source), notes: source.notes, watchers, aliases: aliasesOf(source.merges) } } satisfies CaseCommand }
  }
  const { events } = await session.run(caseDecider, caseStream(sourceId), merge, { also: [companion(caseDecider, caseStream(intoId), absorb)] })
  return { merged: events.length > 0, position: session.position() }
}

/**
 * Undoes the merge of case `sourceId`: the survivor gives back what it received, and the duplicate
 * takes it back with its status and closing date from before the merge, in one append. The
 * survivor decides first, so the duplicate's stream, read after it, takes the notes as they are now.
 * Answers the survivor it left.
 */
export async function unmergeCase(deps: MergeDeps, caller: Caller, sourceId: string, session: CommandSession = commandSession(deps.store, caller)): Promise<{ from: string; position: Position | null }> {
  const { store, clock } = deps
  const base = { orgId: caller.orgId, actor: actorOfCaller(caller), at: clock().toISOString() }
  const source = await foldedCase(store, sourceId)
  const intoId = source.orgId === caller.orgId ? source.merges.into?.caseId : undefined
  // Not merged (or not the caller's): the duplicate's own decision says why (404 or 400).
  if (!intoId) {
    await session.run(caseDecider, caseStream(sourceId), { type: 'UnmergeCase', ...base, from: { ...otherCase('', caseDecider.initialState()), notes: noNotes() } })
    return { from: '', position: session.position() }
  }
  const unmerge = async () => {
    const into = await foldedCase(store, intoId)
    return { command: { type: 'UnmergeCase', ...base, from: { ...otherCase(intoId, into), notes: into.notes } } satisfies CaseCommand }
  }
  const release: CaseCommand = { type: 'ReleaseDuplicate', ...base, source: otherCase(sourceId, source) }
  await session.run(caseDecider, caseStream(intoId), release, { also: [companion(caseDecider, caseStream(sourceId), unmerge)] })
  return { from: intoId, position: session.position() }
}
