import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import type { EventStore } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Caller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import { fold } from '../decider.ts'
import type { PreparedCommand } from '../handle-command.ts'
import { dealPipelines } from './kinds.ts'
import type { PipelineKind } from './kinds.ts'
import type { PipelineEvent, PipelineFacts, PipelineState } from './pipeline.ts'

/** Fresh ids for the stages a new pipeline of this kind is seeded with. */
export const newStageIds = (kind: PipelineKind = dealPipelines) => kind.rules.seed.map(() => randomUUID())

/**
 * The caller's organization's default pipeline id (of deals, or of the kind given), creating the
 * pipeline on first use (§2.2). Its stream id is derived from the org id, so concurrent first
 * requests append to the same new stream; the loser's retry finds it created and decides nothing.
 * Either way the caller then waits until the read models hold it (which also covers tables still
 * being built at startup), so what it reads next about the pipeline is there.
 */
export async function ensureDefaultPipeline(deps: Pick<Deps, 'store' | 'projections' | 'config' | 'clock'>, caller: Caller, kind: PipelineKind = dealPipelines): Promise<string> {
  const { store, clock } = deps
  const { orgId } = caller
  const id = kind.defaultId(orgId)
  const stream = kind.streams.stream(id)
  // A default pipeline cannot be deleted: once this process saw it in the read models, it stays there.
  const known = knownDefaults(store)
  if (known.has(stream)) return id
  let last = (await store.readStream(stream, { fromRevision: 0n, maxCount: 1 })).at(-1)
  if (!last) {
    const at = clock().toISOString()
    const result = await commandSession(store, caller).run(kind.decider, stream, { type: 'CreatePipeline', pipelineId: id, orgId, name: kind.defaultName, isDefault: true, stageIds: newStageIds(kind), actorId: null, at })
    if (result.position) {
      await readModelsAt(deps, result.position, new Set(result.eventTypes))
      return remember(known, stream, id)
    }
    last = (await store.readStream(stream, { fromRevision: 0n, maxCount: 1 })).at(-1)
  }
  // Only the read models of its first event: what this reads, and all a cold server need catch up on.
  if (last) await readModelsAt(deps, last.position, new Set([last.type]))
  return last ? remember(known, stream, id) : id
}

/** Default pipeline streams known to exist in the read models, per event store (so per app); bounded, oldest forgotten first. */
const KNOWN_DEFAULTS_MAX = 10_000
const knownByStore = new WeakMap<EventStore, Set<string>>()
function knownDefaults(store: EventStore): Set<string> {
  let known = knownByStore.get(store)
  if (!known) knownByStore.set(store, (known = new Set()))
  return known
}
function remember(known: Set<string>, stream: string, id: string): string {
  if (known.size >= KNOWN_DEFAULTS_MAX) known.delete(known.values().next().value!)
  known.add(stream)
  return id
}

/**
 * A command decided against a pipeline of this kind folded from its stream (`{id, state}`: the
 * deciders stay pure), with the guard that fails the append if that stream moves meanwhile: how a
 * deal or lead enters a stage, so no stage being counted (locked) can gain one.
 *
 * The folded pipeline is kept per process and used as it was last read: every create and move
 * needs it, and pipelines rarely change. A stale copy cannot commit anything: its revision is the
 * guard's, so the append fails when the stream has moved (here or in another process), the copy
 * is dropped (`refresh`) and the command is decided again on the stream as stored; a command
 * refused on the kept copy is decided again on a fresh read before the refusal is believed.
 */
export async function withPipelineOf<C>(store: EventStore, kind: PipelineKind, pipelineId: string, command: (pipeline: PipelineFacts) => C): Promise<PreparedCommand<C>> {
  const streamName = kind.streams.stream(pipelineId)
  const cache = foldedPipelines(store)
  const kept = cache.get(streamName)
  if (kept) return { command: command({ id: pipelineId, state: kept.state }), guard: { streamName, revision: kept.revision }, refresh: () => cache.delete(streamName) }
  const events = await store.readStream(streamName)
  const folded: FoldedPipeline = { state: fold(kind.decider, events.map((e) => domainEventOf<PipelineEvent>(e))), revision: events.at(-1)?.revision ?? 'no_stream' }
  // A pipeline not there (yet) is not kept: the next command reads again.
  if (folded.revision !== 'no_stream') keep(cache, streamName, folded)
  return { command: command({ id: pipelineId, state: folded.state }), guard: { streamName, revision: folded.revision } }
}

type FoldedPipeline = { state: PipelineState; revision: bigint | 'no_stream' }
/** Pipelines folded by this process, per event store (so per app); bounded, least recently used forgotten first. */
const FOLDED_PIPELINES_MAX = 10_000
const foldedByStore = new WeakMap<EventStore, Map<string, FoldedPipeline>>()
function foldedPipelines(store: EventStore): Map<string, FoldedPipeline> {
  let folded = foldedByStore.get(store)
  if (!folded) foldedByStore.set(store, (folded = new Map()))
  return folded
}
function keep(cache: Map<string, FoldedPipeline>, streamName: string, folded: FoldedPipeline): void {
  cache.delete(streamName)
  if (cache.size >= FOLDED_PIPELINES_MAX) cache.delete(cache.keys().next().value!)
  cache.set(streamName, folded)
}
