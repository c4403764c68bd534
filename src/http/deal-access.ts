import type { FastifyRequest } from 'fastify'
import { mayAccess } from '../commands/opportunity/rules.ts'
import type { Actor } from '../commands/opportunity/rules.ts'
import type { Db } from '../db/database.ts'
import { ForbiddenError, orNotFound } from '../errors.ts'
import { isAdmin } from '../identity/identity.ts'
import { opportunityOf } from '../projections/opportunities.ts'
import type { OpportunityView } from '../projections/opportunities.ts'
import { identityOf } from './plugins/auth.ts'

/** The caller as the record rules see them. The superuser flag is looked up only where a rule reads it (delete). */
export function actorOf(request: FastifyRequest): Actor {
  const identity = identityOf(request)
  return { profileId: identity.profileId, isAdmin: isAdmin(identity), isSuperuser: false }
}

/** A live deal of the caller's organization (404 otherwise) that the caller may see and edit: admin, creator or assignee (403 otherwise). */
export async function visibleDeal(db: Db, request: FastifyRequest, id: string, forbidden = 'Only an admin, the creator or an assignee may see or change this opportunity'): Promise<OpportunityView> {
  const deal = await orNotFound(opportunityOf(db, identityOf(request).orgId, id))
  if (!mayAccess({ createdBy: deal.created_by, assignedTo: deal.assigned_to }, actorOf(request))) throw new ForbiddenError(forbidden)
  return deal
}
