import type { Logger } from 'pino'
import { escalateBreachedCases } from '../commands/case/escalate-cases.ts'
import type { Deps } from '../deps.ts'
import type { Position } from '../eventstore/event-store.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { everyInterval } from './every-interval.ts'

export type CaseEscalatorOptions = Pick<Deps, 'db' | 'store' | 'clock'> & {
  /** Only the scheduled processes' leader (the advisory lock's holder) escalates, so one process does at a time. */
  projections: Pick<ProjectionRunner, 'isLeader'>
  logger: Logger
  intervalMs: number
}

export type EscalateOutcome = { ran: false; reason: 'not the leader' } | { ran: true; escalated: number; position: Position | null }

export type CaseEscalator = { escalate(): Promise<EscalateOutcome>; start(): void; stop(): Promise<void> }

/**
 * Case escalations (issue 32): each interval, the leader escalates the open cases the SLA clock
 * says are breached (commands/case/escalate-cases.ts): at most three times a case, an hour apart,
 * each level once whatever how often it runs or how many processes run. The clock is an input: tests move it.
 */
export function createCaseEscalator(options: CaseEscalatorOptions): CaseEscalator {
  const log = options.logger.child({ component: 'case-escalator' })

  async function escalate(): Promise<EscalateOutcome> {
    if (!options.projections.isLeader) return { ran: false, reason: 'not the leader' }
    const { escalated, position } = await escalateBreachedCases(options)
    if (escalated) log.info({ escalated }, 'escalated breached cases')
    return { ran: true, escalated, position }
  }

  return { escalate, ...everyInterval(escalate, options.intervalMs, log, 'case escalations failed; trying again at the next interval') }
}
