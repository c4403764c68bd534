import type { CommandRunner } from './command-runner.ts'
import { nameClaimDecider, nameClaimStream } from './name-claim.ts'

export type NameClaim = { scope: string; orgId: string; ownerId: string; name: string; field: string }

/**
 * Claims `name` for `ownerId`, then runs `action`; if the action fails the claim is released, so a
 * refused create or rename leaves the name free. (A process killed between the two steps leaves a
 * claim with no record: the name stays taken until released by hand; see the README.)
 */
export async function withClaimedName<T>(run: CommandRunner, claim: NameClaim, action: () => Promise<T>): Promise<T> {
  const stream = nameClaimStream(claim.scope, claim.orgId, claim.name)
  await run(nameClaimDecider, stream, { type: 'Claim', ownerId: claim.ownerId, name: claim.name, field: claim.field })
  try {
    return await action()
  } catch (error) {
    await run(nameClaimDecider, stream, { type: 'Release', ownerId: claim.ownerId })
    throw error
  }
}

export async function releaseName(run: CommandRunner, claim: Omit<NameClaim, 'field'>): Promise<void> {
  await run(nameClaimDecider, nameClaimStream(claim.scope, claim.orgId, claim.name), { type: 'Release', ownerId: claim.ownerId })
}

/** A rename: claim the new name, act, then release the old one. Same name (ignoring case) needs no claim. */
export async function withRenamedClaim<T>(run: CommandRunner, claim: NameClaim & { previousName: string }, action: () => Promise<T>): Promise<T> {
  if (claim.name.trim().toLowerCase() === claim.previousName.trim().toLowerCase()) return action()
  const result = await withClaimedName(run, claim, action)
  await releaseName(run, { ...claim, name: claim.previousName })
  return result
}
