import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db, Role } from '../db/database.ts'

export const DEFAULT_CURRENCY = 'USD'

/** The user with this email (compared case-insensitively), created if missing; race-safe on the unique index. */
export async function ensureUser(db: Db, email: string): Promise<string> {
  const inserted = await db
    .insertInto('users')
    .values({ id: randomUUID(), email: email.trim() })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returning('id')
    .executeTakeFirst()
  if (inserted) return inserted.id
  const existing = await db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', email.trim().toLowerCase()).executeTakeFirstOrThrow()
  return existing.id
}

export async function addProfile(db: Db, userId: string, orgId: string, role: Role): Promise<string> {
  const id = randomUUID()
  await db.insertInto('profiles').values({ id, user_id: userId, org_id: orgId, role }).execute()
  return id
}

export type Bootstrapped = { org_id: string; user_id: string; profile_id: string }

/** A new organization with its first admin, all or nothing. */
export async function bootstrapOrganization(db: Db, input: { name: string; email: string; defaultCurrency?: string; timezone?: string }): Promise<Bootstrapped> {
  return db.transaction().execute(async (trx) => {
    const orgId = randomUUID()
    await trx.insertInto('organizations').values({ id: orgId, name: input.name.trim(), default_currency: input.defaultCurrency ?? DEFAULT_CURRENCY, ...(input.timezone && { timezone: input.timezone }), api_key_hash: null, api_key_prefix: null, api_key_created_at: null }).execute()
    const userId = await ensureUser(trx, input.email)
    const profileId = await addProfile(trx, userId, orgId, 'ADMIN')
    return { org_id: orgId, user_id: userId, profile_id: profileId }
  })
}
