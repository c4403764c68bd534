import type { FastifyInstance } from 'fastify'
import type { Role } from '../../src/db/database.ts'
import type { Db } from '../../src/db/database.ts'
import { addProfile, bootstrapOrganization, ensureUser } from '../../src/identity/memberships.ts'

export type Member = {
  userId: string
  profileId: string
  orgId: string
  email: string
  /** A JWT access token, as interactive sign-in would issue it. */
  token: string
  /** Headers for `app.inject`. */
  headers: { authorization: string }
}

export type Org = { orgId: string; admin: Member; addMember(email: string, role?: Role): Promise<Member> }

function member(app: FastifyInstance, ids: { userId: string; profileId: string; orgId: string; email: string }): Member {
  const token = app.jwt.sign({ sub: ids.userId, org_id: ids.orgId, typ: 'access' })
  return { ...ids, token, headers: { authorization: `Bearer ${token}` } }
}

/** An organization with an admin, through the same code the `bootstrap` CLI uses. */
export async function givenOrganization(app: FastifyInstance, db: Db, name = 'Acme', adminEmail = `admin@${name.toLowerCase().replace(/\W/g, '')}.test`): Promise<Org> {
  const created = await bootstrapOrganization(db, { name, email: adminEmail })
  return {
    orgId: created.org_id,
    admin: member(app, { userId: created.user_id, profileId: created.profile_id, orgId: created.org_id, email: adminEmail }),
    async addMember(email, role = 'USER') {
      const userId = await ensureUser(db, email)
      const profileId = await addProfile(db, userId, created.org_id, role)
      return member(app, { userId, profileId, orgId: created.org_id, email })
    },
  }
}
