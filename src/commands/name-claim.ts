import { createHash, createHmac } from 'node:crypto'
import { ValidationError } from '../errors.ts'
import { domainEventOf } from '../events/versions.ts'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import type { Decider } from './decider.ts'
import { fold } from './decider.ts'

/**
 * Unique names (per organization, case-insensitive) in an event-sourced world: a name is a tiny
 * aggregate of its own, stream `name_claim-<scope>-<org>-hmac.<keyed hash of the lower-cased name>`,
 * that at most one record holds. Its expected-revision append makes two concurrent claims of one
 * name conflict, so one of them loses even when both checked a read model that did not have it yet.
 * Claims made before the hash was keyed live under `…-<unsalted hash>` (src/privacy/claim-names.ts):
 * `legacyHolder` is who holds the name there, looked up with the claim (null when nobody does).
 */
export type NameClaimEvent = { type: 'NameClaimed'; data: { owner_id: string; name: string } } | { type: 'NameReleased'; data: { owner_id: string } }
export type NameClaimCommand = { type: 'Claim'; ownerId: string; name: string; field: string; legacyHolder?: string | null } | { type: 'Release'; ownerId: string }
export type NameClaimState = { ownerId: string | null }

export const nameClaimDecider: Decider<NameClaimCommand, NameClaimState, NameClaimEvent> = {
  initialState: () => ({ ownerId: null }),
  evolve: (_state, event) => ({ ownerId: event.type === 'NameClaimed' ? event.data.owner_id : null }),
  decide: (command, state) => {
    if (command.type === 'Release') return state.ownerId === command.ownerId ? [{ type: 'NameReleased', data: { owner_id: command.ownerId } }] : []
    // The owner may hold it already under either name (a restored tag claims the name it kept).
    const holder = state.ownerId ?? command.legacyHolder ?? null
    if (holder === command.ownerId) return []
    if (holder !== null) throw new ValidationError({ [command.field]: [`"${command.name}" is already in use.`] })
    return [{ type: 'NameClaimed', data: { owner_id: command.ownerId, name: command.name } }]
  },
}

/** What makes two names the same name: case and surrounding spaces do not count. */
export const normalizedName = (name: string): string => name.trim().toLowerCase()

/** The stream claims were made in before issue 31: named by an unsalted hash, which anyone can test a guessed email against. */
export function legacyClaimStream(scope: string, orgId: string, name: string): string {
  const hash = createHash('sha256').update(normalizedName(name)).digest('hex').slice(0, 32)
  return `name_claim-${scope}-${orgId}-${hash}`
}

/** The unsalted hash's shape (32 hex digits), which a keyed claim's `hmac.` and 64 digits never match. */
const LEGACY_SUFFIX = /-[0-9a-f]{32}$/i
export const isLegacyClaimStream = (streamName: string): boolean => LEGACY_SUFFIX.test(streamName)

/** A claim's stream: HMAC-SHA-256 under the installation's claim key of the scope, organization and name (so a name's claims in two scopes or organizations are not linkable by their stream names either). */
export function keyedClaimStream(key: Buffer, scope: string, orgId: string, name: string): string {
  const hash = createHmac('sha256', key).update(`${scope}\0${orgId}\0${normalizedName(name)}`).digest('hex')
  return `name_claim-${scope}-${orgId}-hmac.${hash}`
}

/** Who holds a name in a claim stream as read: the owner's id, or null. */
export const holderIn = (recorded: readonly RecordedEvent[]): string | null => fold(nameClaimDecider, recorded.map((event) => domainEventOf<NameClaimEvent>(event))).ownerId
