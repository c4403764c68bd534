import { createHash } from 'node:crypto'
import { ValidationError } from '../errors.ts'
import { domainEventOf } from '../events/versions.ts'
import type { EventStore } from '../eventstore/event-store.ts'
import type { Decider } from './decider.ts'
import { fold } from './decider.ts'

/**
 * Unique names (per organization, case-insensitive) in an event-sourced world: a name is a tiny
 * aggregate of its own, stream `name_claim-<scope>-<org>-<hash of the lower-cased name>`, that at
 * most one record holds. Its expected-revision append makes two concurrent claims of one name
 * conflict, so one of them loses even when both checked a read model that did not have it yet.
 */
export type NameClaimEvent = { type: 'NameClaimed'; data: { owner_id: string; name: string } } | { type: 'NameReleased'; data: { owner_id: string } }
export type NameClaimCommand = { type: 'Claim'; ownerId: string; name: string; field: string } | { type: 'Release'; ownerId: string }
export type NameClaimState = { ownerId: string | null }

export const nameClaimDecider: Decider<NameClaimCommand, NameClaimState, NameClaimEvent> = {
  initialState: () => ({ ownerId: null }),
  evolve: (_state, event) => ({ ownerId: event.type === 'NameClaimed' ? event.data.owner_id : null }),
  decide: (command, state) => {
    if (command.type === 'Release') return state.ownerId === command.ownerId ? [{ type: 'NameReleased', data: { owner_id: command.ownerId } }] : []
    if (state.ownerId === command.ownerId) return []
    if (state.ownerId !== null) throw new ValidationError({ [command.field]: [`"${command.name}" is already in use.`] })
    return [{ type: 'NameClaimed', data: { owner_id: command.ownerId, name: command.name } }]
  },
}

/** What makes two names the same name: case and surrounding spaces do not count. */
export const normalizedName = (name: string): string => name.trim().toLowerCase()

export function nameClaimStream(scope: string, orgId: string, name: string): string {
  const key = createHash('sha256').update(normalizedName(name)).digest('hex').slice(0, 32)
  return `name_claim-${scope}-${orgId}-${key}`
}

/** Who holds a name now (the owner's id), read from the claim's own stream: exact, where a read model may lag. */
export async function claimHolder(store: EventStore, scope: string, orgId: string, name: string): Promise<string | null> {
  const recorded = await store.readStream(nameClaimStream(scope, orgId, name))
  return fold(nameClaimDecider, recorded.map((event) => domainEventOf<NameClaimEvent>(event))).ownerId
}
