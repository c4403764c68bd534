import type { Logger } from 'pino'
import { duePeriods } from '../commands/invoice/recurring-schedule.ts'
import { generatePeriods } from '../commands/invoice/write-recurring.ts'
import { todayOf } from '../commands/invoice/write-invoice.ts'
import type { Deps } from '../deps.ts'
import { DomainError } from '../errors.ts'
import type { Position } from '../eventstore/event-store.ts'
import { maxPosition } from '../eventstore/event-store.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { dueSchedules } from '../projections/invoice/recurring.ts'
import { everyInterval } from './every-interval.ts'

export type RecurringInvoicerOptions = Pick<Deps, 'db' | 'store' | 'clock'> & {
  /** Only the scheduled processes' leader (the advisory lock's holder) generates, so one process does at a time (and the append's checks stop a second). */
  projections: Pick<ProjectionRunner, 'isLeader'>
  logger: Logger
  intervalMs: number
}

export type GenerateOutcome = { ran: false; reason: 'not the leader' } | { ran: true; generated: number; position: Position | null }

export type RecurringInvoicer = { generate(): Promise<GenerateOutcome>; start(): void; stop(): Promise<void> }

/**
 * Recurring invoices (issue 33): each interval, the leader reads the schedules with periods due on
 * today's date (UTC) from their read model and generates every due period of each, missed ones
 * included, as drafts (write-recurring.ts `generatePeriods`, keyed by schedule and period). One
 * schedule's refusal (it changed meanwhile) leaves it to the next run and does not stop the others.
 * The clock is an input: tests move it.
 */
export function createRecurringInvoicer(options: RecurringInvoicerOptions): RecurringInvoicer {
  const log = options.logger.child({ component: 'recurring-invoices' })

  async function generate(): Promise<GenerateOutcome> {
    if (!options.projections.isLeader) return { ran: false, reason: 'not the leader' }
    const today = todayOf(options.clock())
    let generated = 0
    let position: Position | null = null
    for (const schedule of await dueSchedules(options.db, today)) {
      try {
        const outcome = await generatePeriods(options, { id: schedule.id, orgId: schedule.org_id }, duePeriods(schedule, schedule.next_period, today))
        generated += outcome.generated
        if (outcome.position) position = position ? maxPosition(position, outcome.position) : outcome.position
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        log.info({ recurring_id: schedule.id, reason: error.message }, 'a recurring invoice was left to the next run')
      }
    }
    if (generated) log.info({ generated }, 'generated recurring invoices')
    return { ran: true, generated, position }
  }

  return { generate, ...everyInterval(generate, options.intervalMs, log, 'recurring invoices failed; trying again at the next interval') }
}
