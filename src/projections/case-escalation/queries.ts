import type { Db } from '../../db/database.ts'
import type { EscalationPolicyRow } from './tables.ts'

export type { EscalationPolicyRow } from './tables.ts'

const PRIORITY_ORDER = ['Low', 'Normal', 'High', 'Urgent']

/** The organization's policies, by priority (the original's ordering). */
export async function escalationPoliciesOf(db: Db, orgId: string): Promise<EscalationPolicyRow[]> {
  const rows = await db.selectFrom('case_escalation_policies').selectAll().where('org_id', '=', orgId).execute()
  return rows.sort((a, b) => PRIORITY_ORDER.indexOf(a.priority) - PRIORITY_ORDER.indexOf(b.priority))
}

export function escalationPolicyOf(db: Db, orgId: string, id: string): Promise<EscalationPolicyRow | undefined> {
  return db.selectFrom('case_escalation_policies').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}
