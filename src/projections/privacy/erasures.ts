import { sql } from 'kysely'
import type { ErasureEvent } from '../../commands/privacy/erasure.ts'
import type { Db } from '../../db/database.ts'
import type { Projector } from '../kernel/projector.ts'
import type { ErasureRow } from './tables.ts'

export type { ErasureRow } from './tables.ts'

/** The erasure receipts (issue 31), listed and shown to admins: each SubjectErased event's data, keyed by its receipt id. */
export const erasuresProjector: Projector = {
  name: 'privacy_erasures',
  version: 1,
  eventTypes: ['SubjectErased'],
  tables: ['privacy_erasures'],
  async createTables(db) {
    await sql`CREATE TABLE privacy_erasures (receipt_id uuid PRIMARY KEY, org_id uuid NOT NULL, kind text NOT NULL, subject_id uuid NOT NULL, receipt jsonb NOT NULL, erased_at timestamptz NOT NULL)`.execute(db)
    await sql`CREATE INDEX privacy_erasures_org ON privacy_erasures (org_id, erased_at DESC)`.execute(db)
  },
  async apply(trx, event) {
    const { data } = event as unknown as ErasureEvent
    await trx
      .insertInto('privacy_erasures')
      .values({ receipt_id: data.receipt_id, org_id: data.org_id, kind: data.kind, subject_id: data.subject_id, receipt: data, erased_at: new Date(data.at) })
      .onConflict((oc) => oc.column('receipt_id').doNothing())
      .execute()
  },
}

/** A page of the organization's receipts, newest first, and how many there are. */
export async function listErasures(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ count: number; rows: ErasureRow[] }> {
  const ofOrg = db.selectFrom('privacy_erasures').where('org_id', '=', orgId)
  const [rows, total] = await Promise.all([
    ofOrg.selectAll().orderBy('erased_at', 'desc').orderBy('receipt_id').limit(page.limit).offset(page.offset).execute(),
    ofOrg.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ])
  return { count: Number(total.count), rows }
}

/** One receipt of the organization, or undefined: another organization's looks exactly like a missing one. */
export function erasureOf(db: Db, orgId: string, receiptId: string): Promise<ErasureRow | undefined> {
  return db.selectFrom('privacy_erasures').selectAll().where('org_id', '=', orgId).where('receipt_id', '=', receiptId).executeTakeFirst()
}
