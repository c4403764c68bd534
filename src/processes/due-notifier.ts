import type { Logger } from 'pino'
import { raiseTimeNotifications } from '../commands/notification/raise-time-notifications.ts'
import type { Deps } from '../deps.ts'
import type { Position } from '../eventstore/event-store.ts'
import { dueTaskCauses, redDealCauses } from '../projections/notification/notification-causes.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { everyInterval } from './every-interval.ts'

export type DueNotifierOptions = Pick<Deps, 'db' | 'store' | 'clock'> & {
  /** Only the scheduled processes' leader (the advisory lock's holder) notifies, so one process does at a time. */
  projections: Pick<ProjectionRunner, 'isLeader'>
  logger: Logger
  intervalMs: number
}

export type NotifyOutcome = { ran: false; reason: 'not the leader' } | { ran: true; raised: number; position: Position | null }

export type DueNotifier = { notify(): Promise<NotifyOutcome>; start(): void; stop(): Promise<void> }

/**
 * Notifications no request causes (issue 19): a task of a member's due today or overdue (in the
 * organization's calendar), a deal of theirs that turned red (§3.2). Each interval, the leader reads
 * the causes from the tasks and deals read models and raises one notification per cause and person
 * under an id derived from both (commands/notification/raise-time-notifications.ts), so a second
 * run, or a second process, raises nothing again. The clock is an input: tests move it.
 */
export function createDueNotifier(options: DueNotifierOptions): DueNotifier {
  const log = options.logger.child({ component: 'due-notifier' })

  async function notify(): Promise<NotifyOutcome> {
    if (!options.projections.isLeader) return { ran: false, reason: 'not the leader' }
    const now = options.clock()
    const causes = [...(await dueTaskCauses(options.db, now)), ...(await redDealCauses(options.db, now))]
    const { raised, position } = await raiseTimeNotifications(options, causes)
    if (raised) log.info({ raised }, 'raised due and red-deal notifications')
    return { ran: true, raised, position }
  }

  return { notify, ...everyInterval(notify, options.intervalMs, log, 'due notifications failed; trying again at the next interval') }
}
