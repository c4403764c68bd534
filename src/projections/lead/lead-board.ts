import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { boardCards, cardIn, neighbourOrderIn } from '../kernel/record-board.ts'
import type { BoardColumn, BoardSource } from '../kernel/record-board.ts'
import { COLUMNS } from './leads.ts'
import type { LeadRow } from './leads.ts'
import type { Db } from '../../db/database.ts'

/**
 * The lead board's queries over the leads read model (http/leads/lead-board.ts), on the shared board
 * queries (kernel/record-board.ts): the pipeline board (a column per stage) and the status board (a column per
 * status) differ only in the column expression.
 */
const LEADS: BoardSource = { table: 'leads', alias: 'l', columns: COLUMNS }

/**
 * A pipeline board's column of a lead: its stage, or, for a lead never moved, `inboxStageId` (the
 * default lead pipeline's first open stage, which shows the leads not yet placed; null elsewhere).
 */
export const stageColumn = (inboxStageId: string | null): BoardColumn => sql<string | null>`coalesce(l.stage_id, ${inboxStageId}::uuid)::text`
/** A status board's column of a lead: its status. */
export const statusColumn: BoardColumn = sql<string>`l.status`

export type BoardLead = LeadRow & { column_key: string }

export const boardLeads = (db: Db, conditions: RawBuilder<boolean>[], column: BoardColumn, keys: readonly string[], perColumn: number) => boardCards<LeadRow>(db, LEADS, conditions, column, keys, perColumn)

export const leadCardOf = (db: Db, orgId: string, column: BoardColumn, id: string) => cardIn(db, LEADS, orgId, column, id)

export const leadNeighbourOrder = (db: Db, orgId: string, column: { expression: BoardColumn; key: string }, order: number | null, direction: 'next' | 'previous', exceptId: string) =>
  neighbourOrderIn(db, LEADS, orgId, column, order, direction, exceptId)
