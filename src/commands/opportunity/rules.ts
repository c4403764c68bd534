import { ForbiddenError, ValidationError } from '../../errors.ts'
import type { Stage, StageKind } from '../pipeline/stage-rules.ts'
import type { DealFields, OpportunityState } from './opportunity.ts'
import type { Actor } from '../caller.ts'
import { mayAccess } from '../../visibility/policy.ts'

/** The pure rules of a deal (§2.1, §3.1, §4.4) that more than one command checks. */


/** Who may read, edit and move a deal: whoever may see it (visibility/policy.ts; §4.4, §4.7). */
export function assertMayAccess(state: OpportunityState, actor: Actor): void {
  if (!mayAccess('Opportunity', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may change this opportunity')
}

/** Who may delete: an admin, a superuser or the creator (§4.4.4); an assignee may not. */
export function assertMayDelete(state: OpportunityState, actor: Actor): void {
  const creator = actor.profileId !== null && state.createdBy === actor.profileId
  if (!actor.isAdmin && !actor.isSuperuser && !creator) throw new ForbiddenError('Only an admin, a superuser or the creator may delete this opportunity')
}

const isZero = (amount: string) => /^0*(\.0*)?$/.test(amount)

/** §2.1 rules 2 and 3: won or lost needs closed_on; won needs an amount, and 0 counts as missing. */
export function checkClosingRules(fields: Pick<DealFields, 'closed_on' | 'amount'>, kind: StageKind): void {
  const errors: Record<string, string[]> = {}
  if (kind !== 'open' && fields.closed_on === null) errors.closed_on = [`Required when the stage is ${kind}.`]
  if (kind === 'won' && (fields.amount === null || isZero(fields.amount))) errors.amount = ['Required (and above 0) when the stage is won.']
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

/** §2.1: a probability of 0 or unset takes the stage's default (100 won, 0 lost, the seeded open default); any other value stays. */
export function probabilityFor(probability: number | null, stage: Pick<Stage, 'probability'>): number | null {
  return probability === null || probability === 0 ? (stage.probability ?? probability) : probability
}
