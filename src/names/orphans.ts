import { normalizedName } from '../commands/name-claim.ts'
import type { NameClaimEvent } from '../commands/name-claim.ts'

/**
 * Orphan name claims, the pure part: fold the NameClaimed/NameReleased events of the log into the
 * current holder of each claim stream, then classify each held claim against the live records the
 * read models show. A claim is an orphan when its owner has no live record of its scope carrying
 * that name (a process died between claiming and recording, or between a rename and releasing
 * the old name).
 */
export type Claim = {
  streamName: string
  scope: string
  orgId: string
  name: string
  /** Null once released. */
  ownerId: string | null
  claimedAt: Date
  /** Revision of the stream's last event: a release is appended only if the stream is still there. */
  revision: bigint
}

/** The slice of a recorded event the fold needs (the port's RecordedEvent has it). */
export type ClaimEventRecord = { streamName: string; revision: bigint; createdAt: Date } & NameClaimEvent

// `name_claim-<scope>-<org uuid>-hmac.<64 hex>` (keyed), or `…-<32 hex>` for a claim made before claims were keyed
// (commands/name-claim.ts): both are claims to judge. The scope may itself hold dashes or colons, the org and hash never vary in shape.
const STREAM = /^name_claim-(.+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(?:hmac\.[0-9a-f]{64}|[0-9a-f]{32})$/i

export function parseClaimStream(streamName: string): { scope: string; orgId: string } | undefined {
  const match = STREAM.exec(streamName)
  return match ? { scope: match[1]!, orgId: match[2]!.toLowerCase() } : undefined
}

/** Folds events in log order (so in revision order per stream) into one claim per stream; streams of another shape are skipped. */
export function foldClaims(events: Iterable<ClaimEventRecord>, claims = new Map<string, Claim>()): Map<string, Claim> {
  for (const event of events) {
    const parsed = parseClaimStream(event.streamName)
    if (!parsed) continue
    const previous = claims.get(event.streamName)
    const claimed = event.type === 'NameClaimed'
    claims.set(event.streamName, {
      streamName: event.streamName,
      ...parsed,
      name: claimed ? event.data.name : (previous?.name ?? ''),
      ownerId: claimed ? event.data.owner_id : null,
      claimedAt: claimed ? event.createdAt : (previous?.claimedAt ?? event.createdAt),
      revision: event.revision,
    })
  }
  return claims
}

/**
 * What the read models show, per scope: the name each live owner holds (owner ids missing from a
 * scope's map have no live record). A scope missing altogether is one this tool does not know.
 */
export type LiveNames = ReadonlyMap<string, ReadonlyMap<string, string | null>>

export type Classified = {
  orphans: Claim[]
  /** Held by a live record carrying the name. */
  held: number
  /** Claimed within the grace period: possibly a create still in flight, never judged. */
  recent: number
  /** Held claims of scopes with no known read model, left alone. */
  unknownScopes: string[]
}

export function classifyClaims(claims: Iterable<Claim>, live: LiveNames, options: { now: Date; graceMs: number }): Classified {
  const result: Classified = { orphans: [], held: 0, recent: 0, unknownScopes: [] }
  const cutoff = options.now.getTime() - options.graceMs
  for (const claim of claims) {
    if (claim.ownerId === null) continue
    if (claim.claimedAt.getTime() > cutoff) result.recent += 1
    else if (!live.has(claim.scope)) result.unknownScopes.push(claim.scope)
    else if (holds(live.get(claim.scope)!.get(claim.ownerId), claim.name)) result.held += 1
    else result.orphans.push(claim)
  }
  result.unknownScopes = [...new Set(result.unknownScopes)].sort()
  result.orphans.sort((a, b) => a.claimedAt.getTime() - b.claimedAt.getTime() || a.streamName.localeCompare(b.streamName))
  return result
}

const holds = (recordName: string | null | undefined, claimedName: string) => typeof recordName === 'string' && normalizedName(recordName) === normalizedName(claimedName)
