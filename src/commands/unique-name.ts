import type { EventStore } from '../eventstore/event-store.ts'
import { isSealingStore } from '../privacy/sealing-store.ts'
import type { ClaimNames, ClaimStreams } from '../privacy/claim-names.ts'
import type { CommandRunner } from './command-runner.ts'
import type { Companion } from './handle-command.ts'
import { holderIn, nameClaimDecider } from './name-claim.ts'

export type NameClaim = { scope: string; orgId: string; ownerId: string; name: string; field: string }

/** The record's command: the first one run through the runner the helpers below hand to their action. */
type Action<T> = (run: CommandRunner) => Promise<T>

function claimNamesOf(store: EventStore): ClaimNames {
  if (!isSealingStore(store)) throw new Error('Expected the sealing event store (src/privacy/sealing-store.ts): it names the claim streams')
  return store.claimNames
}

/** The streams of a name's claim: the keyed one, and the unsalted one while the installation has claims of that shape. */
export const claimStreamsOf = (store: EventStore, claim: Pick<NameClaim, 'scope' | 'orgId' | 'name'>): Promise<ClaimStreams> => claimNamesOf(store).streamsOf(claim.scope, claim.orgId, claim.name)

/** Who holds a name now (the owner's id), read from the claim's own streams: exact, where a read model may lag. */
export async function claimHolder(store: EventStore, scope: string, orgId: string, name: string): Promise<string | null> {
  const { keyed, legacy } = await claimStreamsOf(store, { scope, orgId, name })
  const [now, before] = await Promise.all([store.readStream(keyed), legacy ? store.readStream(legacy) : []])
  return holderIn(now) ?? holderIn(before)
}

/**
 * The claim of `name` as a companion command, for a use case that assembles several records' commands into one append (lead conversion).
 * `made` learns the keyed stream once prepared: where a failed action's claim is released.
 */
export const nameClaim = (claim: NameClaim, made?: (stream: string) => void): Companion => ({
  // Most claims are of a name nobody holds yet (a taken one costs one more round trip).
  expectNew: true,
  async prepare(store) {
    const { keyed, legacy } = await claimStreamsOf(store, claim)
    made?.(keyed)
    // An older claim under the unsalted name still blocks the name; the append is guarded on it.
    const before = legacy ? await store.readStream(legacy) : null
    const command = { type: 'Claim' as const, ownerId: claim.ownerId, name: claim.name, field: claim.field, legacyHolder: before && holderIn(before) }
    const guard = legacy ? { streamName: legacy, revision: before?.at(-1)?.revision ?? ('no_stream' as const) } : undefined
    return { streamName: keyed, guard, decide: (recorded) => nameClaimDecider.decide(command, { ownerId: holderIn(recorded) }) }
  },
})

/** A release under one of the name's streams (the keyed one, or the unsalted one while claims of that shape exist). */
const releaseUnder = (claim: Omit<NameClaim, 'field'>, which: keyof ClaimStreams): Companion => ({
  async prepare(store) {
    const streamName = (await claimStreamsOf(store, claim))[which]
    return streamName === null ? null : { streamName, decide: (recorded) => nameClaimDecider.decide({ type: 'Release', ownerId: claim.ownerId }, { ownerId: holderIn(recorded) }) }
  },
})

/** The release of a name as companion commands, under both of its streams (a tag merge frees the source's name in its own append). */
export const nameRelease = (claim: Omit<NameClaim, 'field'>): Companion[] => [releaseUnder(claim, 'keyed'), releaseUnder(claim, 'legacy')]

/**
 * Runs `action` with a runner whose first command carries `companions` into its own append (on
 * PostgreSQL one transaction: the store holds the record's event and the claim, or neither).
 * Answers the action's result and whether that first command was sent.
 */
async function withCompanions<T>(run: CommandRunner, companions: readonly Companion[], action: Action<T>): Promise<{ result: T } | { error: unknown; sent: boolean }> {
  let sent = false
  const first: CommandRunner = (decider, streamName, command, options) => {
    if (sent) return run(decider, streamName, command, options)
    sent = true
    return run(decider, streamName, command, { ...options, also: [...(options?.also ?? []), ...companions] })
  }
  try {
    const result = await action(first)
    // The record's command must run through `first`: an action that ran none would have written no claim.
    if (!sent) throw new Error('Expected the action to run its record\'s command through the runner it was given')
    return { result }
  } catch (error) {
    return { error, sent }
  }
}

/**
 * Claims `name` for `ownerId` in the same append as the action's first command (the record's
 * create or rename), so a failed or interrupted write never leaves the name taken with no record.
 * A claim the name's holder refuses is a 400 under `field` before anything is written. If a later
 * command of the action fails, the claim is released again. (On KurrentDB the claim and the record
 * are two appends: a process killed between them leaves a claim, which the orphan sweeper frees.)
 */
export async function withClaimedName<T>(run: CommandRunner, claim: NameClaim, action: Action<T>): Promise<T> {
  let claimed: string | undefined
  const outcome = await withCompanions(run, [nameClaim(claim, (stream) => (claimed = stream))], action)
  if ('result' in outcome) return outcome.result
  // Releasing is idempotent (nothing to release after an atomic append that failed), and frees what a non-atomic store kept.
  if (outcome.sent && claimed) await releaseClaim(run, claimed, claim.ownerId)
  throw outcome.error
}

/** Frees the claim a failed action made (only ever under the keyed name: the unsalted one is never claimed again). */
async function releaseClaim(run: CommandRunner, streamName: string, ownerId: string): Promise<void> {
  await run(nameClaimDecider, streamName, { type: 'Release', ownerId })
}

/**
 * A rename: the new name claimed and the old one released in the record's own append. Same name
 * (ignoring case) needs no claim. Either side may be null for an optional unique value (a contact's
 * email being set or cleared).
 */
export async function withRenamedClaim<T>(run: CommandRunner, claim: Omit<NameClaim, 'name'> & { name: string | null; previousName: string | null }, action: Action<T>): Promise<T> {
  const { name, previousName } = claim
  if (name?.trim().toLowerCase() === previousName?.trim().toLowerCase()) return action(run)
  let claimed: string | undefined
  const companions = [...(name === null ? [] : [nameClaim({ ...claim, name }, (stream) => (claimed = stream))]), ...(previousName === null ? [] : nameRelease({ ...claim, name: previousName }))]
  const outcome = await withCompanions(run, companions, action)
  if ('result' in outcome) return outcome.result
  if (outcome.sent && claimed) await releaseClaim(run, claimed, claim.ownerId)
  throw outcome.error
}

/** A create whose unique value is optional: claimed only when given. */
export function withOptionalClaim<T>(run: CommandRunner, claim: Omit<NameClaim, 'name'> & { name: string | null }, action: Action<T>): Promise<T> {
  return claim.name === null ? action(run) : withClaimedName(run, { ...claim, name: claim.name }, action)
}

/**
 * A removal (delete, merge): the name freed in the record's own append. The release decides
 * nothing when the owner no longer holds the name, so a repeated delete releases nothing.
 */
export async function withReleasedName<T>(run: CommandRunner, claim: Omit<NameClaim, 'field'>, action: Action<T>): Promise<T> {
  const outcome = await withCompanions(run, nameRelease(claim), action)
  if ('result' in outcome) return outcome.result
  throw outcome.error
}
