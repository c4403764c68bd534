import type { Db } from '../../db/database.ts'
import type { RoutingRuleRow } from './tables.ts'

export type { RoutingRuleRow } from './tables.ts'

/** The organization's routing rules in the order they are tried: `priority_order`, then the oldest first. */
export function routingRulesOf(db: Db, orgId: string): Promise<RoutingRuleRow[]> {
  return db.selectFrom('case_routing_rules').selectAll().where('org_id', '=', orgId).orderBy('priority_order').orderBy('created_at').orderBy('id').execute()
}

export function routingRuleOf(db: Db, orgId: string, id: string): Promise<RoutingRuleRow | undefined> {
  return db.selectFrom('case_routing_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** Since `since`: how many cases each rule routed, and how many distinct cases any rule routed. */
export async function routedSince(db: Db, orgId: string, since: Date): Promise<{ byRule: Map<string, number>; cases: number }> {
  const recent = db.selectFrom('case_routings').where('org_id', '=', orgId).where('routed_at', '>=', since)
  const [byRule, cases] = await Promise.all([
    recent.select(['rule_id', db.fn.countAll<string>().as('n')]).groupBy('rule_id').execute(),
    recent.select((eb) => eb.fn.count<string>('case_id').distinct().as('n')).executeTakeFirstOrThrow(),
  ])
  return { byRule: new Map(byRule.map((row) => [row.rule_id, Number(row.n)])), cases: Number(cases.n) }
}
