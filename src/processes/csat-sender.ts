import type { Logger } from 'pino'
import { sendDueSurveys } from '../commands/case/csat-surveys.ts'
import type { Deps } from '../deps.ts'
import type { Position } from '../eventstore/event-store.ts'
import type { MailTransport } from '../identity/mail.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { everyInterval } from './every-interval.ts'

export type CsatSenderOptions = Pick<Deps, 'db' | 'store' | 'clock' | 'config'> & {
  /** Only the scheduled processes' leader (the advisory lock's holder) sends, so one process does at a time (and the survey's stream stops a second). */
  projections: Pick<ProjectionRunner, 'isLeader'>
  /** Null where mail cannot leave (production without SMTP): then no survey is recorded either. */
  mail: MailTransport | null
  logger: Logger
  intervalMs: number
}

export type SendOutcome = { ran: false; reason: 'not the leader' | 'no mail transport' } | { ran: true; sent: number; position: Position | null }

export type CsatSender = { send(): Promise<SendOutcome>; start(): void; stop(): Promise<void> }

/**
 * Satisfaction surveys (issue 32): each interval, the leader records and mails a survey for each
 * case closed at least half an hour ago and not surveyed yet (commands/case/csat-surveys.ts), once
 * per case whatever how often it runs or how many processes run. The clock is an input: tests move it.
 */
export function createCsatSender(options: CsatSenderOptions): CsatSender {
  const log = options.logger.child({ component: 'csat-sender' })
  const { mail } = options

  async function send(): Promise<SendOutcome> {
    if (!options.projections.isLeader) return { ran: false, reason: 'not the leader' }
    if (!mail) return { ran: false, reason: 'no mail transport' }
    const { sent, position } = await sendDueSurveys({ ...options, mail })
    if (sent) log.info({ sent }, 'sent satisfaction surveys')
    return { ran: true, sent, position }
  }

  return { send, ...everyInterval(send, options.intervalMs, log, 'satisfaction surveys failed; trying again at the next interval') }
}
