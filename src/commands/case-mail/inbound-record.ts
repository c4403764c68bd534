import { ConflictError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import { streamCategory } from '../streams.ts'
import type { DropReason } from './screening.ts'

/**
 * One stream per inbound message of an organization, named after its Message-ID: the message's
 * outcome (on which case, or why it was dropped), appended with the case's events or alone. Being
 * the first append of its stream is what makes a delivery idempotent: a provider's retry, or two
 * deliveries racing, find it written and answer what it says.
 */
export type InboundOutcome = { case_id: string; created_case: boolean } | { dropped: DropReason }

// Events: the storage contract (never change a type name or data shape).
export type InboundRecordEvent =
  | { type: 'InboundMailAccepted'; data: { org_id: string; mailbox_id: string; message_id: string; case_id: string; created_case: boolean; at: string } }
  /** The sender and subject are kept for the audit trail, sealed under this stream's own key. */
  | { type: 'InboundMailDropped'; data: { org_id: string; mailbox_id: string; message_id: string; reason: DropReason; from_email: string; subject: string; at: string } }

export type RecordInbound = { type: 'RecordInbound'; event: InboundRecordEvent }

export const inboundRecordDecider: Decider<RecordInbound, { recorded: boolean }, InboundRecordEvent> = {
  initialState: () => ({ recorded: false }),
  evolve: () => ({ recorded: true }),
  decide: (command, state) => {
    if (state.recorded) throw new ConflictError('This message was already received')
    return [command.event]
  },
}

export const outcomeOf = (event: InboundRecordEvent): InboundOutcome => (event.type === 'InboundMailAccepted' ? { case_id: event.data.case_id, created_case: event.data.created_case } : { dropped: event.data.reason })

export const inboundRecordStreams = streamCategory('inbound_mail')
/** Message-IDs compare case-sensitively in their local part, but mailers rewrite case often enough that one per organization, lower-cased, is the safer key. */
export const inboundRecordStream = (orgId: string, messageId: string): string => inboundRecordStreams.stream(nameBasedId(`inbound-mail:${orgId}:${messageId.toLowerCase()}`))
