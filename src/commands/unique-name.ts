import type { CommandRunner } from './command-runner.ts'
import { nameClaimDecider, nameClaimStream } from './name-claim.ts'

export type NameClaim = { scope: string; orgId: string; ownerId: string; name: string; field: string }

/**
 * Claims `name` for `ownerId`, then runs `action`; if the action fails the claim is released, so a
 * refused create or rename leaves the name free. (A process killed between the two steps leaves a
 * claim with no record: the name stays taken until `npm run crm -- names orphans --release`
 * frees it; see src/names/.)
 */
export async function withClaimedName<T>(run: CommandRunner, claim: NameClaim, action: () => Promise<T>): Promise<T> {
  const stream = nameClaimStream(claim.scope, claim.orgId, claim.name)
  // Most claims are of a name nobody holds yet (a taken one costs one more round trip).
  await run(nameClaimDecider, stream, { type: 'Claim', ownerId: claim.ownerId, name: claim.name, field: claim.field }, { expectNew: true })
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

/**
 * A rename: claim the new name, act, then release the old one. Same name (ignoring case) needs no
 * claim. Either side may be null for an optional unique value (a contact's email being set or cleared).
 */
export async function withRenamedClaim<T>(run: CommandRunner, claim: Omit<NameClaim, 'name'> & { name: string | null; previousName: string | null }, action: () => Promise<T>): Promise<T> {
  const { name, previousName } = claim
  if (name?.trim().toLowerCase() === previousName?.trim().toLowerCase()) return action()
  const result = name === null ? await action() : await withClaimedName(run, { ...claim, name }, action)
  if (previousName !== null) await releaseName(run, { ...claim, name: previousName })
  return result
}

/** A create whose unique value is optional: claimed only when given. */
export function withOptionalClaim<T>(run: CommandRunner, claim: Omit<NameClaim, 'name'> & { name: string | null }, action: () => Promise<T>): Promise<T> {
  return claim.name === null ? action() : withClaimedName(run, { ...claim, name: claim.name }, action)
}

/** A removal (delete, merge): act, and free the name only if the action recorded something, so a repeated delete releases nothing. */
export async function withReleasedName<T extends { events: readonly unknown[] }>(run: CommandRunner, claim: Omit<NameClaim, 'field'>, action: () => Promise<T>): Promise<T> {
  const result = await action()
  if (result.events.length) await releaseName(run, claim)
  return result
}
