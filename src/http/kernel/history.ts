import type { FastifyRequest } from 'fastify'
import type { Actor } from '../../commands/caller.ts'
import { fold } from '../../commands/decider.ts'
import type { Decider, DomainEvent } from '../../commands/decider.ts'
import type { Db } from '../../db/database.ts'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { EventStore, RecordedEvent } from '../../eventstore/event-store.ts'
import { membersByIds } from '../../identity/users.ts'
import { domainEventOf } from '../../events/versions.ts'
import { pageOfHistory } from '../../projections/kernel/stream-history.ts'
import type { HistoryEntry, HistoryPage } from '../../projections/kernel/stream-history.ts'
import { identityOf } from './auth.ts'
import { actorOf } from './commands.ts'

/**
 * What every record's history route shares (deals, pipelines, tasks): the record's own stream,
 * once the caller may read it, and a page of entries with the actors named. History is read from
 * the stream rather than the read model, so a deleted record keeps it.
 */

/** The history routes' description of their paging. */
export const HISTORY_PAGING = 'Paginated by limit (default 50) and offset, oldest first or, with `order=desc`, newest first.'

/** What the read rule needs of a record's folded state. */
type RecordFacts = { exists: boolean; orgId: string | null; deleted: boolean }

export type ReadRule<State> = {
  /** The record's name in the 404's message: `${what} not found`. */
  what: string
  /** Whether admins may still read a deleted record's stream (everyone else gets 404). */
  deletedToAdmins: boolean
  /** The record's own rule for who may read it (403 with `refusal` otherwise); absent: every member. */
  mayRead?: { rule: (state: State, actor: Actor) => boolean; refusal: string }
}

/** The events of a record's stream; 404 when it is missing, another organization's, or deleted (but for admins with `deletedToAdmins`), 403 when its rule refuses the caller. */
export async function readableStream<State extends RecordFacts, Event extends DomainEvent>(
  store: EventStore,
  request: FastifyRequest,
  stream: string,
  decider: Pick<Decider<unknown, State, Event>, 'initialState' | 'evolve'>,
  rule: ReadRule<State>,
): Promise<RecordedEvent[]> {
  const identity = identityOf(request)
  const actor = actorOf(request)
  const events = await store.readStream(stream)
  const state = fold(decider, events.map((e) => domainEventOf<Event>(e)))
  if (!state.exists || state.orgId !== identity.orgId || (state.deleted && !(rule.deletedToAdmins && actor.isAdmin))) throw new NotFoundError(`${rule.what} not found`)
  if (rule.mayRead && !rule.mayRead.rule(state, actor)) throw new ForbiddenError(rule.mayRead.refusal)
  return events
}

export type ActorRef = { id: string; name: string | null }

/** Names for these profile ids (one query): first and last name, else the email; a profile gone from the organization keeps its id with a null name. */
export async function actorNames(db: Db, orgId: string, ids: readonly (string | null)[]): Promise<(id: string | null) => ActorRef | null> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))]
  const members = new Map((await membersByIds(db, orgId, wanted)).map((m) => [m.id, `${m.first_name} ${m.last_name}`.trim() || m.email]))
  return (id) => (id === null ? null : { id, name: members.get(id) ?? null })
}

/** One page of history entries, each with its actor named. */
export async function namedHistoryPage(db: Db, request: FastifyRequest, entries: readonly HistoryEntry[], page: HistoryPage) {
  const { results, ...rest } = pageOfHistory(entries, page)
  const actor = await actorNames(db, identityOf(request).orgId, results.map((e) => e.actor_id))
  return { ...rest, results: results.map(({ actor_id, ...entry }) => ({ ...entry, actor: actor(actor_id) })) }
}
