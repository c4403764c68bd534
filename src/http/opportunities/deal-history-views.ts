import type { Db } from '../../db/database.ts'
import type { EventStore } from '../../eventstore/event-store.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { membersByIds } from '../../identity/users.ts'
import { dealAsOf, opportunityViewAsOf } from '../../projections/deal-history.ts'
import type { OpportunityView } from '../../projections/opportunities.ts'
import { stageOf } from '../../projections/pipelines.ts'

/** What the history routes and the detail's `as_of` need that touches the database or the log. */

export type ActorRef = { id: string; name: string | null }

/** Names for these profile ids (one query): first and last name, else the email; a profile gone from the organization keeps its id with a null name. */
export async function actorNames(db: Db, orgId: string, ids: readonly (string | null)[]): Promise<(id: string | null) => ActorRef | null> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))]
  const members = new Map((await membersByIds(db, orgId, wanted)).map((m) => [m.id, `${m.first_name} ${m.last_name}`.trim() || m.email]))
  return (id) => (id === null ? null : { id, name: members.get(id) ?? null })
}

/**
 * The deal as it stood at `at`, as a read-model row (for `opportunitiesOf`), or undefined when it
 * did not exist yet then, was deleted by then, or belongs to another organization.
 */
export async function opportunityAsOf(deps: { db: Db; store: EventStore }, orgId: string, id: string, at: Date): Promise<OpportunityView | undefined> {
  const asOf = dealAsOf(await deps.store.readStream(opportunityStreams.stream(id)), at)
  if (!asOf || asOf.state.orgId !== orgId) return undefined
  return opportunityViewAsOf(id, asOf, await stageOf(deps.db, orgId, asOf.state.placement.stage_id))
}
