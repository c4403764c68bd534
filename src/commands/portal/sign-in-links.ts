import { createHmac, randomInt, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import { UnauthorizedError } from '../../errors.ts'
import { MAGIC_LINK_TTL_MINUTES, MAX_CODE_ATTEMPTS } from '../../identity/magic-links.ts'
import { hashSecret, newSecret, secretsEqual } from '../../identity/secrets.ts'
import { contactByEmail, contactOf } from '../../projections/contact/contacts.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'

/** Portal link tokens' prefix: a leaked one is told from a staff magic link (`svc_ml_`) at a glance. */
export const PORTAL_LINK_PREFIX = 'svc_pl_'

export type NewPortalLink = { email: string; token: string; code: string; contact: ContactRow }

const INVALID_LINK = 'This sign-in link is invalid, expired or already used'
const INVALID_CODE = 'Invalid or expired code'

export type PortalLinkDeps = { db: Db; clock: () => Date; codeKey: string }

/**
 * The portal's passwordless sign-in (docs/portal.md), the staff magic links' rules (identity/
 * magic-links.ts) for a customer: a link token and a 6-digit code, single use, 15 minutes, stored
 * only as hashes (the code's keyed by a server secret), bound to one organization and one contact,
 * and spending one spends every live link of that contact. The code path closes after
 * MAX_CODE_ATTEMPTS wrong codes until the links expire.
 */
export function createPortalLinks({ db, clock, codeKey }: PortalLinkDeps) {
  const codeHash = (linkId: string, code: string) => createHmac('sha256', codeKey).update(`portal-link-code:${linkId}:${code}`).digest()

  /** A new link for the live contact with this email in an active organization, or null when there is none (the caller answers the same either way). */
  async function create(orgId: string, email: string): Promise<NewPortalLink | null> {
    if (!(await isActiveOrganization(db, orgId))) return null
    const contact = await contactByEmail(db, orgId, email)
    if (!contact?.email) return null
    const id = randomUUID()
    const secret = newSecret(PORTAL_LINK_PREFIX)
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0')
    const expiresAt = new Date(clock().getTime() + MAGIC_LINK_TTL_MINUTES * 60_000)
    await db.insertInto('portal_links').values({ id, org_id: orgId, contact_id: contact.id, token_hash: secret.hash, code_hash: codeHash(id, code), expires_at: expiresAt, used_at: null }).execute()
    return { email: contact.email, token: secret.raw, code, contact }
  }

  /** The contact a live link of this organization signs in; the link (and the contact's other live links) spent. */
  async function verifyToken(orgId: string, raw: string): Promise<ContactRow> {
    const now = clock()
    return db.transaction().execute(async (trx) => {
      const link = await trx.selectFrom('portal_links').select(['contact_id']).where('org_id', '=', orgId).where('token_hash', '=', hashSecret(raw)).where('used_at', 'is', null).where('expires_at', '>', now).forUpdate().executeTakeFirst()
      if (!link) throw new UnauthorizedError(INVALID_LINK)
      return consume(trx, orgId, link.contact_id, now, INVALID_LINK)
    })
  }

  /** The code of the contact's newest live link; a wrong one counts against it, committed though the request fails. */
  async function verifyCode(orgId: string, email: string, code: string): Promise<ContactRow> {
    const now = clock()
    const outcome = await db.transaction().execute(async (trx) => {
      const contact = await contactByEmail(trx, orgId, email)
      if (!contact) return null
      const live = await trx.selectFrom('portal_links').select(['id', 'code_hash', 'attempts']).where('org_id', '=', orgId).where('contact_id', '=', contact.id).where('used_at', 'is', null).where('expires_at', '>', now).orderBy('created_at', 'desc').forUpdate().execute()
      const newest = live[0]
      if (!newest || live.reduce((sum, link) => sum + link.attempts, 0) >= MAX_CODE_ATTEMPTS) return null
      if (!secretsEqual(codeHash(newest.id, code), newest.code_hash)) {
        await trx.updateTable('portal_links').set({ attempts: sql`attempts + 1` }).where('id', '=', newest.id).execute()
        return null
      }
      return consume(trx, orgId, contact.id, now, INVALID_CODE)
    })
    if (!outcome) throw new UnauthorizedError(INVALID_CODE)
    return outcome
  }

  async function consume(trx: Db, orgId: string, contactId: string, now: Date, refusal: string): Promise<ContactRow> {
    const contact = await contactOf(trx, orgId, contactId)
    if (!contact || !(await isActiveOrganization(trx, orgId))) throw new UnauthorizedError(refusal)
    await trx.updateTable('portal_links').set({ used_at: now }).where('org_id', '=', orgId).where('contact_id', '=', contactId).where('used_at', 'is', null).execute()
    return contact
  }

  return { create, verifyToken, verifyCode }
}

/** Whether the organization is active: a deactivated one's customers can neither sign in nor use a token they hold. */
export async function isActiveOrganization(db: Db, orgId: string): Promise<boolean> {
  const org = await db.selectFrom('organizations').select('is_active').where('id', '=', orgId).executeTakeFirst()
  return org?.is_active === true
}
