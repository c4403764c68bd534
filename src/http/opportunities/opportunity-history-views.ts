import type { Db } from '../../db/database.ts'
import type { EventStore } from '../../eventstore/event-store.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { dealAsOf, opportunityViewAsOf } from '../../projections/opportunity/opportunity-history.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import { stageOf } from '../../projections/pipeline/pipelines.ts'

/** What the deal detail's `as_of` needs that touches the database or the log. */

/**
 * The deal as it stood at `at`, as a read-model row (for `opportunitiesOf`), or undefined when it
 * did not exist yet then, was deleted by then, or belongs to another organization.
 */
export async function opportunityAsOf(deps: { db: Db; store: EventStore }, orgId: string, id: string, at: Date): Promise<OpportunityView | undefined> {
  const asOf = dealAsOf(await deps.store.readStream(opportunityStreams.stream(id)), at)
  if (!asOf || asOf.state.orgId !== orgId) return undefined
  return opportunityViewAsOf(id, asOf, await stageOf(deps.db, orgId, asOf.state.placement.stage_id))
}
