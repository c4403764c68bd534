import type { Logger } from 'pino'
import { timesheetDecider, timesheetStream } from '../commands/time-entry/time-entry.ts'
import { commandSession } from '../commands/command-session.ts'
import type { Deps } from '../deps.ts'
import type { Position } from '../eventstore/event-store.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { staleTimers } from '../projections/time-entry/time-entries.ts'
import { everyInterval } from './every-interval.ts'

/** How long a timer may run before the service stops it: the original's 12 hours (an overnight timer, not a long lunch). */
export const AUTO_STOP_AFTER_MS = 12 * 3_600_000

export type TimerAutoStopOptions = Pick<Deps, 'db' | 'store' | 'clock'> & {
  /** Only the scheduled processes' leader (the advisory lock's holder) stops timers, so one process does at a time. */
  projections: Pick<ProjectionRunner, 'isLeader'>
  logger: Logger
  intervalMs: number
}

export type AutoStopOutcome = { ran: false; reason: 'not the leader' } | { ran: true; stopped: number; position: Position | null }

/**
 * Stops forgotten timers (the original's auto_stop_stale_timers): each running for 12 hours is
 * stopped now, marked `auto_stopped`, on behalf of no member. Idempotent: a timer stopped or
 * deleted meanwhile (the read model it is found in may lag) decides nothing, so a second run or a
 * second process appends nothing new. The clock is an input, so tests move it.
 */
export function createTimerAutoStop(options: TimerAutoStopOptions): { stopStale(): Promise<AutoStopOutcome>; start(): void; stop(): Promise<void> } {
  const log = options.logger.child({ component: 'timer-auto-stop' })

  async function stopStale(): Promise<AutoStopOutcome> {
    if (!options.projections.isLeader) return { ran: false, reason: 'not the leader' }
    const now = options.clock()
    let stopped = 0
    let position: Position | null = null
    for (const timer of await staleTimers(options.db, new Date(now.getTime() - AUTO_STOP_AFTER_MS))) {
      const session = commandSession(options.store, { orgId: timer.org_id, profileId: null, isAdmin: true })
      const { events } = await session.run(timesheetDecider, timesheetStream(timer.profile_id), { type: 'StopTimer', orgId: timer.org_id, entryId: timer.id, by: null, at: now.toISOString(), auto: true })
      stopped += events.length
      position = session.position() ?? position
    }
    if (stopped) log.info({ stopped }, 'stopped forgotten timers')
    return { ran: true, stopped, position }
  }

  return { stopStale, ...everyInterval(stopStale, options.intervalMs, log, 'timer auto-stop failed; trying again at the next interval') }
}
