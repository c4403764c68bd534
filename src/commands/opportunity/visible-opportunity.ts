import type { Db } from '../../db/database.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import { opportunityOf } from '../../projections/opportunity/opportunities.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { mayAccess } from '../../visibility/policy.ts'

/** A live deal of the caller's organization (404 otherwise) that the caller may see and edit: admin, creator or assignee (403 otherwise). */
export async function visibleDeal(db: Db, caller: Caller, id: string, forbidden = 'Only an admin, the creator or an assignee may see or change this opportunity'): Promise<OpportunityView> {
  const deal = await orNotFound(opportunityOf(db, caller.orgId, id))
  if (!mayAccess('Opportunity', { createdBy: deal.created_by, assignedTo: deal.assigned_to }, actorOfCaller(caller))) throw new ForbiddenError(forbidden)
  return deal
}
