import { ValidationError } from '../../errors.ts'
import { mostSpecificRule } from './rules.ts'
import type { MatchedCase, RuleMatch } from './rules.ts'

/**
 * The approval gate on closing (the original's Case.clean): a case entering Closed needs an
 * approved request under the rule that gates it, the most specific active pre-close rule matching
 * the case as it would be closed. The facts (the rules, the approvals the case holds) are looked up
 * by the use case that closes; the case's decider checks them.
 */
export type ApprovalGate = { rules: readonly RuleMatch[]; approvedRuleIds: readonly string[] }

export function checkApprovalGate(gate: ApprovalGate, closing: MatchedCase): void {
  const rule = mostSpecificRule(gate.rules, closing)
  if (rule && !gate.approvedRuleIds.includes(rule.id)) throw new ValidationError({ status: [`An approval is required before this case can be closed (rule: ${rule.name}).`] })
}
