import type { Decider } from '../decider.ts'

/**
 * Gap-free document numbers, per organization, series and year: `INV-2026-00001`,
 * `INV-2026-00002`, …, `EST-2026-00001` for estimates and `CN-2026-00001` for credit notes (the original numbered per day across all
 * tenants at draft creation, so abandoned drafts left gaps and one tenant's numbers told another
 * how many invoices it made).
 *
 * The mechanism: one sequence stream per organization, series and year
 * (`invoice_number-<org>-INV-<year>`), whose n-th event allocates number n. An invoice's issue
 * appends InvoiceIssued to the invoice's stream and InvoiceNumberAllocated to the sequence in one
 * append (one transaction), each at the revision it was decided on: two concurrent issues read the
 * same sequence revision, one commits, the other's append fails on the expected revision and is
 * decided again on the longer sequence. So a number is taken only with its issue, and never twice.
 * The sequence remembers which records it numbered, so a retried or repeated issue allocates
 * nothing new. A year's stream holds one small event per document numbered that year; the year in
 * the number keeps numbers unique across years.
 */
export const SERIES = ['INV', 'EST', 'CN'] as const
export type Series = (typeof SERIES)[number]

type Allocation = { record_id: string; number: string; sequence: number; at: string }
export type NumberEvent = { type: 'InvoiceNumberAllocated'; data: Allocation } | { type: 'EstimateNumberAllocated'; data: Allocation } | { type: 'CreditNoteNumberAllocated'; data: Allocation }

export type NumberState = { count: number; numbered: Set<string> }

export type AllocateNumber = { type: 'AllocateNumber'; series: Series; recordId: string; year: string; at: string }

export const formatNumber = (series: Series, year: string, sequence: number): string => `${series}-${year}-${String(sequence).padStart(5, '0')}`

const ALLOCATED = { INV: 'InvoiceNumberAllocated', EST: 'EstimateNumberAllocated', CN: 'CreditNoteNumberAllocated' } as const satisfies Record<Series, NumberEvent['type']>

export const numberSequenceDecider: Decider<AllocateNumber, NumberState, NumberEvent> = {
  initialState: () => ({ count: 0, numbered: new Set() }),
  // The set grows in place: a fold starts from a fresh initial state, and copying it per event would make a year's fold quadratic.
  evolve: (state, event) => ({ count: state.count + 1, numbered: state.numbered.add(event.data.record_id) }),
  decide: (command, state) => {
    if (state.numbered.has(command.recordId)) return []
    const sequence = state.count + 1
    const data = { record_id: command.recordId, number: formatNumber(command.series, command.year, sequence), sequence, at: command.at }
    return [{ type: ALLOCATED[command.series], data }]
  },
}

/** Every numbered write of an organization's series in a year appends to one stream: concurrent ones retry (each on a longer sequence) until each has its number. */
export const SEQUENCE_RETRIES = 20

/** The organization's sequence of a series for a year (a category of its own, `invoice_number`: not an `invoice-<id>` stream). */
const SEQUENCE = 'invoice_number-'
export const numberStream = (orgId: string, series: Series, year: string): string => `${SEQUENCE}${orgId}-${series}-${year}`
export const isNumberStream = (streamName: string): boolean => streamName.startsWith(SEQUENCE)
