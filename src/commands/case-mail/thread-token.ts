import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * The token in the Message-ID of every mail we send about a case (`case-<case id>.<signature>@<domain>`),
 * so a reply's In-Reply-To or References names its case even when no stored message matches. The
 * signature is an HMAC of the organization and the case under a key derived from the server's
 * secret: a token forged, or taken from another organization's mail, names no case.
 */
const TOKEN = /^case-([0-9a-f-]{36})\.([0-9a-f]{24})@/i

/** The key of thread tokens, derived so the server's own secret signs nothing but its tokens. */
export const threadTokenKey = (serverSecret: string): Buffer => createHmac('sha256', serverSecret).update('case-thread-token').digest()

const signatureOf = (key: Buffer, orgId: string, caseId: string): string => createHmac('sha256', key).update(`${orgId}:${caseId.toLowerCase()}`).digest('hex').slice(0, 24)

/** A Message-ID (without angle brackets) for a mail about the case; `unique` tells two mails of one case apart. */
export function threadMessageId(key: Buffer, orgId: string, caseId: string, unique: string, domain: string): string {
  return `case-${caseId}.${signatureOf(key, orgId, caseId)}@${unique}.${domain}`
}

/** Whether a Message-ID has our token's shape, whoever signed it (a mail of ours coming back, or a forgery). */
export const looksLikeThreadToken = (messageId: string): boolean => TOKEN.test(messageId)

/** The case a Message-ID's token names, when it is signed for this organization; else null. */
export function caseOfToken(key: Buffer, orgId: string, messageId: string): string | null {
  const match = TOKEN.exec(messageId)
  if (!match) return null
  const [, caseId, signature] = match as unknown as [string, string, string]
  const expected = Buffer.from(signatureOf(key, orgId, caseId))
  const given = Buffer.from(signature.toLowerCase())
  return expected.length === given.length && timingSafeEqual(expected, given) ? caseId.toLowerCase() : null
}
