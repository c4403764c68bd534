import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { OpportunityEvent } from '../../commands/opportunity/opportunity.ts'
import type { Db } from '../../db/database.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Involvement } from '../../visibility/policy.ts'

/**
 * What a deal event means to one watcher of the deals read model (the list or one pipeline's board):
 * the deal as it now is (`upsert`), its removal from the watcher's view (`delete`), or nothing.
 *
 * The row is read after the read model applied the event, so it may already include later events;
 * that is harmless because every later event is judged in turn, each against a row at least as new,
 * so the last frame about a deal always matches its final state. A `delete` goes out when the deal
 * is not (or no longer) in view but may have been: the watcher is an admin, created it, is or was
 * assigned to it (for boards: it is, was or went into the pipeline). A watcher never hears about
 * deals it could never see, not even their ids.
 */

/** The deal events that change a row of the list or a card (comments and attachments do not). */
export const DEAL_ROW_EVENTS = ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityPositioned', 'OpportunityDeleted'] as const

export type DealWatcher = { orgId: string; profileId: string | null; isAdmin: boolean; pipelineId?: string }

export type DealChange = { kind: 'upsert'; row: OpportunityView } | { kind: 'delete'; id: string } | null

/** Whether the watcher may see the deal as the row has it: the visibility policy, then the board's pipeline. */
function inView(row: OpportunityView, watcher: DealWatcher): boolean {
  if (row.is_deleted || row.org_id !== watcher.orgId) return false
  if (!mayAccess('Opportunity', { createdBy: row.created_by, assignedTo: row.assigned_to }, watcher)) return false
  return watcher.pipelineId === undefined || row.pipeline_id === watcher.pipelineId
}

/** Whether the deal may have been in the watcher's view around this event (so its removal must be told). */
function mayHaveBeenInView(row: OpportunityView, recorded: RecordedEvent, watcher: DealWatcher): boolean {
  const event = recorded as unknown as OpportunityEvent
  // The deal as the policy judged it now, before and after this event's reassignment, and at its creation.
  const then: Involvement[] = [{ createdBy: row.created_by, assignedTo: row.assigned_to }]
  if (event.type === 'OpportunityUpdated') for (const assignedTo of [event.data.changes.assigned_to?.from, event.data.changes.assigned_to?.to]) then.push({ createdBy: row.created_by, assignedTo: assignedTo ?? [] })
  if (event.type === 'OpportunityCreated') then.push({ createdBy: event.data.created_by, assignedTo: event.data.assigned_to })
  const related = then.some((involvement) => mayAccess('Opportunity', involvement, watcher))
  if (!related || watcher.pipelineId === undefined) return related
  const pipeline = watcher.pipelineId
  return (
    row.pipeline_id === pipeline ||
    (event.type === 'OpportunityStageChanged' && (event.data.from.pipeline_id === pipeline || event.data.to.pipeline_id === pipeline)) ||
    (event.type === 'OpportunityCreated' && event.data.pipeline_id === pipeline)
  )
}

export function dealChange(row: OpportunityView | undefined, recorded: RecordedEvent, watcher: DealWatcher): DealChange {
  if (!row || row.org_id !== watcher.orgId) return null
  if (inView(row, watcher)) return { kind: 'upsert', row }
  return mayHaveBeenInView(row, recorded, watcher) ? { kind: 'delete', id: row.id } : null
}

/** A deal's row with its stage, deleted or not (opportunityOf hides deleted ones). */
export async function dealRow(db: Db, orgId: string, id: string): Promise<OpportunityView | undefined> {
  const { rows } = await sql<OpportunityView>`SELECT o.*, o.closed_on::text AS closed_on, s.label AS stage_label, s.expected_days, s.warning_days
    FROM opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id WHERE o.org_id = ${orgId} AND o.id = ${id}`.execute(db as unknown as Kysely<unknown>)
  return rows[0]
}
