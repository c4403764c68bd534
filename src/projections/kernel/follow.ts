import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Database } from '../../db/database.ts'
import { databaseUnavailable } from '../../db/database-unavailable.ts'
import { comparePositions } from '../../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { createWakeup, delay, nextHiddenRetryMs } from '../../eventstore/wakeup.ts'
import { applyBatch, applyBatches } from './apply.ts'
import type { BatchOutcome, Fence } from './apply.ts'
import type { Projector } from './projector.ts'

/** How long a projector's checkpoint may lag behind events that are none of its business. */
export const CHECKPOINT_IDLE_MS = 200
const MAX_ERROR_BACKOFF_MS = 30_000

export type FollowOptions = {
  db: Kysely<Database>
  store: EventStore
  projectors: readonly Projector[]
  batchSize: number
  pollMs: number
  log: Logger
  /**
   * The projector's stored position, after building its tables; undefined while its new version
   * is built beside the old one's tables (asked again after `pollMs`).
   */
  prepare(projector: Projector, signal: AbortSignal): Promise<Position | undefined>
  /** Runs first in every page's transaction: throws when this process may no longer commit (see leases.ts leaseFence). */
  fence?: Fence
  /**
   * What to announce if a page commits and leaves the named read models at these positions (every
   * one this loop follows that the page moves): a statement for the page's transaction, and what to
   * call once it committed; undefined for nothing to announce.
   */
  announce?(reaching: ReadonlyMap<string, Position>): Announcement | undefined
  /** Every projector has applied (or had nothing to apply) up to `position`. */
  reached(name: string, position: Position): void
  failed(name: string, error: unknown): void
  recovered(name: string): void
}

/** One projector's progress: `cursor` is how far it has seen the log, `saved` its stored checkpoint (which lags while only other projectors' events go by). */
type Lane = {
  projector: Projector
  types: ReadonlySet<string>
  cursor?: Position
  saved?: Position
  savedAt: number
  retryAt: number
  backoffMs: number
  /** Its last failure was the database being out of reach: it retries as soon as any page commits again. */
  unreachable: boolean
}

type Work = { lane: Lane; events: RecordedEvent[]; to: Position }

export type Announcement = { statement: string; committed(): void }

const minPosition = (positions: Position[]) => positions.reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b))

/**
 * Keeps every projector up with the log with ONE reader: each wake-up reads a page once (the union
 * of the projectors' event types, from the least advanced one), hands each projector its share,
 * and commits every share in one transaction with the checkpoints. One read and one commit per
 * append, instead of one of each per projector, is what a write's read-your-writes wait costs.
 * A failing projector is isolated: its page is retried projector by projector, and it alone backs
 * off and resumes from its stored checkpoint while the others go on.
 */
export async function followLog(options: FollowOptions, signal: AbortSignal): Promise<void> {
  const { store, batchSize, pollMs, log } = options
  const lanes: Lane[] = options.projectors.map((projector) => ({ projector, types: new Set(projector.eventTypes), savedAt: 0, retryAt: 0, backoffMs: 0, unreachable: false }))
  const wakeup = createWakeup(store.onAppended)
  let hiddenRetryMs = 0

  const fail = (lane: Lane, error: unknown) => {
    lane.backoffMs = Math.min(MAX_ERROR_BACKOFF_MS, Math.max(100, lane.backoffMs * 2))
    lane.retryAt = Date.now() + lane.backoffMs
    lane.unreachable = databaseUnavailable(error)
    lane.cursor = lane.saved = undefined
    options.failed(lane.projector.name, error)
    log.error({ err: error, projector: lane.projector.name, retryInMs: lane.backoffMs }, 'projection failed; retrying')
  }
  const moveTo = (lane: Lane, position: Position) => {
    lane.cursor = position
    options.reached(lane.projector.name, position)
  }
  const recovered = (lane: Lane) => {
    lane.backoffMs = 0
    options.recovered(lane.projector.name)
  }
  /**
   * A page went through the projector: it is well (a fresh start or rebuild alone proves nothing),
   * and the database answers: the lanes that failed only for want of it retry now rather than at
   * the end of a backoff grown through the outage (up to MAX_ERROR_BACKOFF_MS), which kept idle read
   * models reported as failing for that long after writes had resumed.
   */
  const settle = (lane: Lane, outcome: BatchOutcome) => {
    lane.saved = outcome.position
    lane.savedAt = Date.now()
    recovered(lane)
    moveTo(lane, outcome.position)
    for (const other of lanes) {
      if (!other.unreachable) continue
      other.unreachable = false
      other.retryAt = Math.min(other.retryAt, Date.now())
    }
  }

  /**
   * One projector at a time: a rebuild holds a connection for its swap transaction while it reads
   * the log's tail through another, so rebuilds side by side could take every pooled connection
   * and wait on each other forever (seen with 13 projectors on a pool of 10).
   */
  async function prepareDue(): Promise<void> {
    for (const lane of lanes.filter((l) => !l.cursor && l.retryAt <= Date.now())) {
      // The term ended (its units change hands): the rest is for whoever applies them next.
      if (signal.aborted) return
      try {
        const position = await options.prepare(lane.projector, signal)
        if (position === undefined) {
          lane.retryAt = Date.now() + pollMs
          continue
        }
        // Neither reached nor recovered yet: that is for the first page read after it (below).
        lane.cursor = lane.saved = position
        lane.savedAt = Date.now()
      } catch (error) {
        if (!signal.aborted) fail(lane, error)
      }
    }
  }

  /**
   * Commits the shares together; when that fails, one by one, so only a failing projector is held
   * back. `announcement` goes in the shared transaction when every share applies (then each lane
   * is where the announcement says), never in the one-by-one retries.
   */
  async function write(work: readonly Work[], announcement?: Announcement): Promise<void> {
    if (work.length === 0) return
    const batch = work.map(({ lane, events, to }) => ({ projector: lane.projector, expectedFrom: lane.saved!, events, to }))
    try {
      let announced = false
      const closing = announcement && ((outcomes: readonly BatchOutcome[]) => {
        announced = outcomes.every((o) => o.applied)
        return announced ? announcement.statement : undefined
      })
      const outcomes = await applyBatches(options.db, batch, options.fence, closing)
      if (announced) announcement!.committed()
      work.forEach(({ lane }, i) => settle(lane, outcomes[i]!))
      return
    } catch (error) {
      if (work.length === 1) return fail(work[0]!.lane, error)
    }
    for (const [i, { lane }] of work.entries()) {
      const { projector, expectedFrom, events, to } = batch[i]!
      await applyBatch(options.db, projector, expectedFrom, events, to, options.fence).then(
        (outcome) => settle(lane, outcome),
        (error: unknown) => fail(lane, error),
      )
    }
  }

  const idleElapsed = (lane: Lane) => Date.now() - lane.savedAt >= CHECKPOINT_IDLE_MS
  const unsaved = (lane: Lane) => lane.cursor !== undefined && comparePositions(lane.cursor, lane.saved!) > 0

  try {
    while (!signal.aborted) {
      await prepareDue()
      const ready = lanes.filter((lane) => lane.cursor)
      if (ready.length === 0) {
        await delay(Math.max(1, Math.min(...lanes.map((lane) => lane.retryAt)) - Date.now()), signal)
        continue
      }
      wakeup.arm()
      const from = minPosition(ready.map((lane) => lane.cursor!))
      const eventTypes = [...new Set(ready.flatMap((lane) => lane.projector.eventTypes))]
      let page
      try {
        page = await store.readAll({ after: from, maxCount: batchSize, eventTypes })
      } catch (error) {
        for (const lane of ready) fail(lane, error)
        continue
      }
      const work: Work[] = []
      // Most lanes apply none of a page's few event types: they skip the scan of its events.
      const pageTypes = [...new Set(page.events.map((e) => e.type))]
      for (const lane of ready) {
        const cursor = lane.cursor!
        if (comparePositions(page.scannedTo, cursor) <= 0) continue
        const events = pageTypes.some((type) => lane.types.has(type)) ? page.events.filter((e) => lane.types.has(e.type) && comparePositions(e.position, cursor) > 0) : []
        // A share of nothing changes no row: it only moves the cursor, and the checkpoint follows at
        // most every CHECKPOINT_IDLE_MS (a restart re-scans that stretch; a follower process, which
        // learns progress from checkpoints, may wait up to that much longer).
        if (events.length === 0 && !idleElapsed(lane)) lane.cursor = page.scannedTo
        else work.push({ lane, events, to: page.scannedTo })
      }
      // Every ready lane is at the page's end once it commits: those with a share, and those without.
      await write(work, options.announce?.(new Map(ready.map((lane) => [lane.projector.name, page.scannedTo]))))
      for (const lane of ready) {
        if (!lane.cursor) continue
        recovered(lane)
        moveTo(lane, lane.cursor)
      }
      if (!page.isEnd) continue
      hiddenRetryMs = page.moreHidden ? nextHiddenRetryMs(hiddenRetryMs, pollMs) : 0
      // At the end of the log, checkpoints left behind by a stretch of other projectors' events are
      // saved once idle: follower processes read progress from checkpoints, and would wait otherwise.
      const behind = lanes.filter(unsaved)
      const sleepMs = hiddenRetryMs || pollMs
      const idleLeft = Math.min(...behind.map((lane) => CHECKPOINT_IDLE_MS - (Date.now() - lane.savedAt)))
      await wakeup.sleep(behind.length ? Math.max(0, Math.min(sleepMs, idleLeft)) : sleepMs, signal)
      await write(lanes.filter((lane) => unsaved(lane) && idleElapsed(lane)).map((lane) => ({ lane, events: [], to: lane.cursor! })))
    }
  } finally {
    wakeup.close()
  }
}
