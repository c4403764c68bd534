import { z } from 'zod'
import { handleCommand } from '../commands/handle-command.ts'
import { nameClaimDecider } from '../commands/name-claim.ts'
import { PreconditionFailedError, ProjectionLagError } from '../errors.ts'
import { START } from '../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../eventstore/event-store.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { CLAIM_SCOPES, liveNamesOf } from './claim-scopes.ts'
import { classifyClaims, foldClaims } from './orphans.ts'
import type { Claim, ClaimEventRecord, Classified } from './orphans.ts'
import { delay, nextHiddenRetryMs } from '../eventstore/wakeup.ts'
import type { Db } from '../db/database.ts'

/**
 * Finding and releasing orphan name claims (see orphans.ts) against the real log and read models.
 * Works with either event store adapter: it only reads the log through the port, filtered by type.
 */
export type OrphanDeps = { db: Db; store: EventStore; projections: Pick<ProjectionRunner, 'waitFor'> }
export type OrphanOptions = { orgId?: string; now: Date; graceMs: number; settleTimeoutMs?: number }

const CLAIM_EVENT_TYPES = ['NameClaimed', 'NameReleased']
const PAGE = 1000
/** How long a scan waits for committed claims hidden behind an older open transaction. */
const HIDDEN_WAIT_MS = 5000

export class ReadModelsBehindError extends Error {}

const ClaimEventData = z.discriminatedUnion('type', [
  z.object({ type: z.literal('NameClaimed'), data: z.object({ owner_id: z.string(), name: z.string() }) }),
  z.object({ type: z.literal('NameReleased'), data: z.object({ owner_id: z.string() }) }),
])

/** Events are read back from jsonb: checked, not cast (an event of another shape under these types is skipped). */
function claimEvents(events: readonly RecordedEvent[]): ClaimEventRecord[] {
  return events.flatMap((e) => {
    const parsed = ClaimEventData.safeParse(e)
    return parsed.success ? [{ ...parsed.data, streamName: e.streamName, revision: e.revision, createdAt: e.createdAt }] : []
  })
}

/** Every claim stream of the log (of one organization when given), folded to its current holder, and how far the log was read. */
export async function scanClaims(store: EventStore, orgId?: string): Promise<{ claims: Claim[]; end: Position }> {
  const claims = new Map<string, Claim>()
  let cursor = START
  let hiddenRetryMs = 0
  const deadline = Date.now() + HIDDEN_WAIT_MS
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: PAGE, eventTypes: CLAIM_EVENT_TYPES })
    foldClaims(claimEvents(page.events), claims)
    cursor = page.scannedTo
    // Committed claims can hide behind an older open transaction (of any database of the cluster):
    // wait for them a little, or a claim made a moment ago would be missing from the scan.
    if (page.isEnd && !(page.moreHidden && Date.now() < deadline)) break
    if (page.isEnd) await delay((hiddenRetryMs = nextHiddenRetryMs(hiddenRetryMs, 100)))
  }
  const all = [...claims.values()]
  return { claims: orgId ? all.filter((c) => c.orgId === orgId.toLowerCase()) : all, end: cursor }
}

/**
 * The held claims older than the grace period whose owner has no live record of that name.
 * The read models must first have applied the whole log read: a record they have not seen yet
 * would otherwise look missing.
 */
export async function findOrphanClaims(deps: OrphanDeps, options: OrphanOptions): Promise<Classified> {
  const { claims, end } = await scanClaims(deps.store, options.orgId)
  const timeoutMs = options.settleTimeoutMs ?? 15_000
  // Nothing held, nothing to check: no need for the read models (nor for a server running them).
  if (claims.some((c) => c.ownerId !== null)) await deps.projections.waitFor(end, timeoutMs).catch((error: unknown) => {
    if (!(error instanceof ProjectionLagError)) throw error
    throw new ReadModelsBehindError(`The read models have not applied the log up to where the claims were read within ${timeoutMs} ms; run this while the server (which applies them) is up`)
  })
  const live = new Map<string, Map<string, string | null>>()
  for (const [scope, model] of CLAIM_SCOPES) {
    const owners = claims.filter((c) => c.scope === scope && c.ownerId !== null).map((c) => c.ownerId!)
    live.set(scope, await liveNamesOf(deps.db, model, owners))
  }
  return classifyClaims(claims, live, { now: options.now, graceMs: options.graceMs })
}

export type ReleaseOutcome = { claim: Claim; released: boolean; reason?: string }

/**
 * Releases each orphan through the normal command path, at the revision it was read at: a claim
 * that changed since (released, re-claimed) is left alone and reported.
 */
export async function releaseOrphans(store: EventStore, orphans: readonly Claim[], reason = 'orphan name claim released by the operator (names orphans --release)'): Promise<ReleaseOutcome[]> {
  const outcomes: ReleaseOutcome[] = []
  for (const claim of orphans) {
    const metadata = { actorId: null, orgId: claim.orgId, reason }
    try {
      const result = await handleCommand(store, nameClaimDecider, claim.streamName, { type: 'Release', ownerId: claim.ownerId! }, { metadata, ifRevision: claim.revision })
      outcomes.push(result.events.length ? { claim, released: true } : { claim, released: false, reason: 'no longer held by this owner' })
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error
      outcomes.push({ claim, released: false, reason: 'the claim changed since it was read; left alone' })
    }
  }
  return outcomes
}
