import type { SubjectErasedData } from '../../commands/privacy/erasure.ts'

/** The erasure receipts read model (erasures.ts): one row per erased person, the receipt as recorded. */
export type ErasureRow = { receipt_id: string; org_id: string; kind: string; subject_id: string; receipt: SubjectErasedData; erased_at: Date }

export type ErasureTables = { privacy_erasures: ErasureRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends ErasureTables {}
}
