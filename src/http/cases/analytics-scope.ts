import type { FastifyRequest } from 'fastify'
import type { RawBuilder } from 'kysely'
import type { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { organizationById } from '../../identity/organizations.ts'
import { caseConditions } from '../../projections/case/queries.ts'
import { windowOf } from '../../projections/case/sla-analytics.ts'
import type { Window } from '../../projections/case/sla-analytics.ts'
import { anyOf } from '../../projections/kernel/records.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { identityOf } from '../kernel/auth.ts'
import type { AnalyticsQuery } from './analytics-schemas.ts'

export type AnalyticsScope = { conditions: RawBuilder<boolean>[]; window: Window }

/**
 * The cases the caller may see (an admin the organization's; a member those they created, are
 * assigned to or watch), merged duplicates left out, narrowed by the query's filters, and the window
 * in the organization's time zone.
 */
export async function scopeOf(deps: Pick<Deps, 'db' | 'clock'>, request: FastifyRequest, query: z.infer<typeof AnalyticsQuery>): Promise<AnalyticsScope> {
  const identity = identityOf(request)
  const conditions = caseConditions(viewerOfIdentity(identity), { hideMerged: true, priority: query.priority?.trim() || undefined, assignedTo: query.agent ? [query.agent] : undefined })
  if (query.team) conditions.push(anyOf('c.teams', [query.team]))
  const org = await organizationById(deps.db, identity.orgId)
  return { conditions, window: await windowOf(deps.db, { from: query.from, to: query.to }, org.timezone, deps.clock()) }
}
