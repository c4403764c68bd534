import type { Db } from '../../db/database.ts'
import { caseOfMessages } from '../../projections/case-mail/queries.ts'
import { survivingCase } from '../../projections/case/merges.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { ParsedInbound } from './parse-mail.ts'
import { caseOfToken } from './thread-token.ts'

export type Thread = { caseId: string; name: string; by: 'token' | 'headers' }

/**
 * The live case of the organization a message continues, in the order:
 * 1. a token of ours (`case-<id>.<hmac>@…`) in In-Reply-To or References, signed for this
 *    organization (another's, or a forged one, names nothing);
 * 2. a message we stored, named by In-Reply-To or References (the newest that reached a case).
 * 3. either way, a case merged into another stands for its survivor (one lookup of the aliases,
 *    merges of merges included), so a reply to a duplicate lands on the case that absorbed it.
 * No subject fallback: the original's
 * `[Case #xxxxxxxx]` matched an unsigned 8-hex prefix within the first 200 cases it read, so it
 * missed in a large organization and let anyone who saw a prefix write into that case; a reply
 * that keeps either header is threaded by the steps above.
 */
export async function threadOf(db: Db, key: Buffer, orgId: string, mail: Pick<ParsedInbound, 'inReplyTo' | 'references'>): Promise<Thread | null> {
  const ids = [...new Set([mail.inReplyTo, ...[...mail.references].reverse()].filter((id): id is string => !!id))]
  const live = async (caseId: string) => caseOf(db, orgId, (await survivingCase(db, orgId, caseId)) ?? caseId)
  for (const id of ids) {
    const tokenCase = caseOfToken(key, orgId, id)
    const row = tokenCase ? await live(tokenCase) : undefined
    if (row) return { caseId: row.id, name: row.name, by: 'token' }
  }
  const stored = await caseOfMessages(db, orgId, ids)
  const row = stored ? await live(stored) : undefined
  return row ? { caseId: row.id, name: row.name, by: 'headers' } : null
}
