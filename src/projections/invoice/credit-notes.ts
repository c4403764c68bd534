import { sql } from 'kysely'
import type { CreditNoteData, CreditNoteLine } from '../../commands/invoice/credit-notes.ts'
import { invoiceStreams } from '../../commands/invoice/invoice.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

/**
 * The credit notes: one row per credit note, its amounts as issued. Its number and its issue are
 * two events of one append, the number's first (a companion's write precedes the main one): each
 * upserts its own columns, so the row is whole whatever the order, and applying either twice
 * changes nothing. A row is a credit note once its CreditNoteIssued has been applied (`invoice_id`).
 */
export type CreditNoteRow = Omit<CreditNoteData, 'credit_note_id' | 'by' | 'at'> & {
  id: string
  invoice_id: string
  credit_note_number: string | null
  lines: CreditNoteLine[]
  created_by: string | null
  created_at: Date
}
type CreditNoteTables = { credit_notes: Partial<CreditNoteRow> & { id: string } }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CreditNoteTables {}
}

const AMOUNTS = ['subtotal', 'discount_amount', 'taxable_amount', 'tax_amount', 'shipping_amount', 'total_amount'] as const

async function createTables(db: Db): Promise<void> {
  const money = sql.join(AMOUNTS.map((column) => sql`${sql.id(column)} numeric`))
  await sql`CREATE TABLE credit_notes (
    id uuid PRIMARY KEY, credit_note_number text, invoice_id uuid, org_id uuid, currency text, reason text,
    lines jsonb, tax_breakdown jsonb, ${money}, created_by uuid, created_at timestamptz)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id, created_at, id)`.execute(db)
}

type Applied = { type: 'CreditNoteIssued'; data: CreditNoteData } | { type: 'CreditNoteNumberAllocated'; data: { record_id: string; number: string } }

async function apply(db: Db, streamName: string, event: Applied): Promise<void> {
  if (event.type === 'CreditNoteNumberAllocated') {
    await db.insertInto('credit_notes').values({ id: event.data.record_id, credit_note_number: event.data.number }).onConflict((oc) => oc.column('id').doUpdateSet({ credit_note_number: event.data.number })).execute()
    return
  }
  const { credit_note_id, by, at, lines, tax_breakdown, ...rest } = event.data
  // pg sends a JS array as a Postgres array; jsonb wants the JSON text.
  const issued = { ...rest, invoice_id: invoiceStreams.idOf(streamName), lines: JSON.stringify(lines) as unknown as CreditNoteLine[], tax_breakdown: JSON.stringify(tax_breakdown) as unknown as CreditNoteRow['tax_breakdown'], created_by: by, created_at: new Date(at) }
  await db.insertInto('credit_notes').values({ id: credit_note_id, ...issued }).onConflict((oc) => oc.column('id').doUpdateSet(issued)).execute()
}

export const creditNotesProjector: Projector = {
  name: 'credit_notes',
  version: 1,
  eventTypes: ['CreditNoteIssued', 'CreditNoteNumberAllocated'],
  tables: ['credit_notes'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, recorded.streamName, domainEventOf<Applied>(recorded)),
}

const issuedNotes = (db: Db, orgId: string) => db.selectFrom('credit_notes').selectAll().where('org_id', '=', orgId).where('invoice_id', 'is not', null)

/** The credit notes of an invoice of the organization, oldest first. */
export const creditNotesOf = (db: Db, orgId: string, invoiceId: string): Promise<CreditNoteRow[]> =>
  issuedNotes(db, orgId).where('invoice_id', '=', invoiceId).orderBy('created_at').orderBy('id').execute() as Promise<CreditNoteRow[]>

/** A credit note of the organization, or undefined (whether the caller may see its invoice is the route's check). */
export const creditNoteOf = (db: Db, orgId: string, id: string): Promise<CreditNoteRow | undefined> => issuedNotes(db, orgId).where('id', '=', id).executeTakeFirst() as Promise<CreditNoteRow | undefined>
