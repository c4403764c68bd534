import { randomUUID } from 'node:crypto'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { companion } from '../handle-command.ts'
import type { CreditedQuantity } from './credit-notes.ts'
import { invoiceDecider, invoiceStream } from './invoice.ts'
import { SEQUENCE_RETRIES, numberSequenceDecider, numberStream } from './number-sequence.ts'
import { todayOf, visibleInvoice } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

/**
 * Issues a credit note against an invoice the caller may act on (admin, creator or assignee): the
 * quantities named, or all that is left (a full credit). The credit note and the organization's
 * next credit note number (its own series, CN-<year>-<n>) are one append, as an invoice's issue and
 * its number are (number-sequence.ts): concurrent credit notes retry on the longer sequence, so the
 * series stays gap-free, and a refused one takes no number.
 */
export async function issueCreditNote(deps: InvoiceDeps, caller: Caller, invoiceId: string, input: { reason: string; lines?: readonly CreditedQuantity[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ id: string; position: Position | null }> {
  await visibleInvoice(deps, caller, invoiceId)
  const id = randomUUID()
  const now = deps.clock()
  const year = todayOf(now).slice(0, 4)
  const numbering = companion(numberSequenceDecider, numberStream(caller.orgId, 'CN', year), { type: 'AllocateNumber', series: 'CN', recordId: id, year, at: now.toISOString() })
  const command = { type: 'IssueCreditNote', creditNoteId: id, reason: input.reason, lines: input.lines, orgId: caller.orgId, actor: actorOfCaller(caller), at: now.toISOString() } as const
  await session.run(invoiceDecider, invoiceStream(invoiceId), command, { also: [numbering], maxRetries: SEQUENCE_RETRIES })
  return { id, position: session.position() }
}
