import type { CommandRunner } from './command-runner.ts'
import { companion } from './handle-command.ts'
import type { Companion } from './handle-command.ts'
import { nameClaimDecider, nameClaimStream } from './name-claim.ts'

export type NameClaim = { scope: string; orgId: string; ownerId: string; name: string; field: string }

/** The record's command: the first one run through the runner the helpers below hand to their action. */
type Action<T> = (run: CommandRunner) => Promise<T>

/** The claim of `name` as a companion command, for a use case that assembles several records' commands into one append (lead conversion). */
export const nameClaim = (claim: NameClaim): Companion =>
  // Most claims are of a name nobody holds yet (a taken one costs one more round trip).
  companion(nameClaimDecider, nameClaimStream(claim.scope, claim.orgId, claim.name), { type: 'Claim', ownerId: claim.ownerId, name: claim.name, field: claim.field }, { expectNew: true })
/** The release of a name as a companion command (a tag merge frees the source's name in its own append). */
export const nameRelease = (claim: Omit<NameClaim, 'field'>): Companion => companion(nameClaimDecider, nameClaimStream(claim.scope, claim.orgId, claim.name), { type: 'Release', ownerId: claim.ownerId })

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
  const outcome = await withCompanions(run, [nameClaim(claim)], action)
  if ('result' in outcome) return outcome.result
  // Releasing is idempotent (nothing to release after an atomic append that failed), and frees what a non-atomic store kept.
  if (outcome.sent) await releaseName(run, claim)
  throw outcome.error
}

export async function releaseName(run: CommandRunner, claim: Omit<NameClaim, 'field'>): Promise<void> {
  await run(nameClaimDecider, nameClaimStream(claim.scope, claim.orgId, claim.name), { type: 'Release', ownerId: claim.ownerId })
}

/**
 * A rename: the new name claimed and the old one released in the record's own append. Same name
 * (ignoring case) needs no claim. Either side may be null for an optional unique value (a contact's
 * email being set or cleared).
 */
export async function withRenamedClaim<T>(run: CommandRunner, claim: Omit<NameClaim, 'name'> & { name: string | null; previousName: string | null }, action: Action<T>): Promise<T> {
  const { name, previousName } = claim
  if (name?.trim().toLowerCase() === previousName?.trim().toLowerCase()) return action(run)
  const companions = [...(name === null ? [] : [nameClaim({ ...claim, name })]), ...(previousName === null ? [] : [nameRelease({ ...claim, name: previousName })])]
  const outcome = await withCompanions(run, companions, action)
  if ('result' in outcome) return outcome.result
  if (outcome.sent && name !== null) await releaseName(run, { ...claim, name })
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
  const outcome = await withCompanions(run, [nameRelease(claim)], action)
  if ('result' in outcome) return outcome.result
  throw outcome.error
}
