import { createHmac, randomInt, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../db/database.ts'
import { UnauthorizedError } from '../errors.ts'
import { MAGIC_LINK_PREFIX, hashSecret, newSecret, secretsEqual } from './secrets.ts'
import { activeSubject, signInSubject, userByEmail } from './sessions.ts'
import type { SessionSubject } from './sessions.ts'

export const MAGIC_LINK_TTL_MINUTES = 15
/** Wrong codes a user may enter across their live links before the code path closes until they expire. */
export const MAX_CODE_ATTEMPTS = 5

export type NewMagicLink = { email: string; token: string; code: string }

const INVALID_LINK = 'This sign-in link is invalid, expired or already used'
const INVALID_CODE = 'Invalid or expired code'

export type MagicLinkDeps = {
  db: Db
  clock: () => Date
  /**
   * Keys the code hash. A 6-digit code has a million values, so a plain hash would fall to a
   * lookup table if the table leaked; keyed by a server secret, a leaked row reveals nothing.
   */
  codeKey: string
}

export function createMagicLinks({ db, clock, codeKey }: MagicLinkDeps) {
  const codeHash = (linkId: string, code: string) => createHmac('sha256', codeKey).update(`magic-link-code:${linkId}:${code}`).digest()

  /** A new link and code for the user with this email, or null when no user may sign in with it. */
  async function create(email: string): Promise<NewMagicLink | null> {
    const user = await userByEmail(db, email)
    if (!user || !(await activeSubject(db, user.id))) return null
    const id = randomUUID()
    const secret = newSecret(MAGIC_LINK_PREFIX)
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0')
    const expiresAt = new Date(clock().getTime() + MAGIC_LINK_TTL_MINUTES * 60_000)
    await db.insertInto('magic_links').values({ id, user_id: user.id, token_hash: secret.hash, code_hash: codeHash(id, code), expires_at: expiresAt, used_at: null }).execute()
    return { email: user.email, token: secret.raw, code }
  }

  /**
   * Consumes a live link (and the user's other live links) and runs `grant` for the membership it
   * signs in to, in one transaction: a refusal, such as an org the user is not in, leaves the link
   * usable, and a link is never spent without a session to show for it.
   */
  async function verifyToken<T>(raw: string, orgId: string | undefined, grant: (trx: Db, subject: SessionSubject) => Promise<T>): Promise<T> {
    const now = clock()
    return db.transaction().execute(async (trx) => {
      const link = await trx.selectFrom('magic_links').select(['id', 'user_id']).where('token_hash', '=', hashSecret(raw)).where('used_at', 'is', null).where('expires_at', '>', now).forUpdate().executeTakeFirst()
      if (!link) throw new UnauthorizedError(INVALID_LINK)
      return consume(trx, link.user_id, orgId, now, grant)
    })
  }

  /** The code of the user's newest live link; a wrong one counts against every live link of the user. */
  async function verifyCode<T>(email: string, code: string, orgId: string | undefined, grant: (trx: Db, subject: SessionSubject) => Promise<T>): Promise<T> {
    const now = clock()
    const outcome = await db.transaction().execute(async (trx) => {
      const user = await userByEmail(trx, email)
      if (!user) return { granted: false as const }
      const live = await trx.selectFrom('magic_links').select(['id', 'code_hash', 'attempts']).where('user_id', '=', user.id).where('used_at', 'is', null).where('expires_at', '>', now).orderBy('created_at', 'desc').forUpdate().execute()
      const newest = live[0]
      const attempts = live.reduce((sum, link) => sum + link.attempts, 0)
      if (!newest || attempts >= MAX_CODE_ATTEMPTS) return { granted: false as const }
      if (!secretsEqual(codeHash(newest.id, code), newest.code_hash)) {
        // Committed even though the request fails: that is what makes the limit hold.
        await trx.updateTable('magic_links').set({ attempts: sql`attempts + 1` }).where('id', '=', newest.id).execute()
        return { granted: false as const }
      }
      return { granted: true as const, value: await consume(trx, user.id, orgId, now, grant) }
    })
    if (!outcome.granted) throw new UnauthorizedError(INVALID_CODE)
    return outcome.value
  }

  async function consume<T>(trx: Db, userId: string, orgId: string | undefined, now: Date, grant: (trx: Db, subject: SessionSubject) => Promise<T>): Promise<T> {
    const subject = await signInSubject(trx, userId, orgId)
    await trx.updateTable('magic_links').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute()
    return grant(trx, subject)
  }

  return { create, verifyToken, verifyCode }
}
