import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { ForbiddenError } from '../../errors.ts'
import { isAdmin } from '../../identity/identity.ts'
import type { Identity } from '../../identity/identity.ts'
import { updateMember } from '../../identity/member-updates.ts'
import { belongsElsewhere, memberByEitherId, memberByUserId } from '../../identity/users.ts'
import type { MemberRow } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { FullName, PersonName, Phone, Profile, RoleEnum, namesOf, profileBody } from './schemas.ts'

const EditUser = z
  .object({ first_name: PersonName.optional(), last_name: PersonName.optional(), name: FullName.optional(), phone: Phone.optional(), role: RoleEnum.optional() })
  .transform(namesOf)
const ByEitherId = IdParams.extend({ id: IdParams.shape.id.describe('Profile id, or user id (the original names a member by user id)') })

const Status = z.object({ status: z.enum(['Active', 'Inactive'], { error: 'Expected "Active" or "Inactive".' }) })

const notFound = { 404: ErrorBody }

/**
 * Who may edit a profile: an admin, or the user themselves for their name and phone. A name is
 * the user's, shared by every organization they belong to, so an admin may not rename a user who
 * also belongs elsewhere (that would reach into another organization).
 */
async function checkEdit(db: Db, identity: Identity, target: MemberRow, body: z.infer<typeof EditUser>): Promise<void> {
  const self = identity.profileId === target.id
  if (!isAdmin(identity) && !self) throw new ForbiddenError('Only an admin or the user themselves may edit this profile')
  if (!isAdmin(identity) && body.role !== undefined && body.role !== target.role) throw new ForbiddenError('Only an admin may change a role')
  const renames = (body.first_name ?? target.first_name) !== target.first_name || (body.last_name ?? target.last_name) !== target.last_name
  if (renames && !self && (await belongsElsewhere(db, target.user_id, identity.orgId))) {
    throw new ForbiddenError('This user also belongs to another organization; only they can change their name')
  }
}

/** One member of the organization, by profile id (`/api/user/{id}/`) or, for status, by user id. */
export function userRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  // Membership and organization rows are cached per process: every write here says so once committed.
  const lookups = lookupsOf(deps)
  return async (app) => {
    app.get(
      '/api/user/:id/',
      {
        schema: {
          tags: ['users'],
          summary: 'One member, by profile or user id (admins, or the member themselves)',
          params: ByEitherId,
          response: { 200: z.object({ error: z.literal(false), profile_obj: Profile }), ...authErrors, ...notFound },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        const member = await memberByEitherId(db, identity.orgId, request.params.id)
        if (!isAdmin(identity) && identity.profileId !== member.id) throw new ForbiddenError('Only an admin or the user themselves may view this profile')
        return { error: false as const, profile_obj: profileBody(member) }
      },
    )

    app.route({
      method: ['PUT', 'PATCH'],
      url: '/api/user/:id/',
      schema: {
        tags: ['users'],
        summary: 'Edit a member, by profile or user id',
        description:
          'PUT and PATCH both change only the fields sent. Admins may edit `first_name`, `last_name` (or the whole `name`), `phone` and `role`; a member may edit their own name and phone ' +
          '(sending their current role is accepted, changing it is 403). An admin may not rename a user who also belongs to another organization (403). ' +
          'Demoting the last active admin is 400 on `role`.',
        params: ByEitherId,
        body: EditUser,
        response: { 200: Message, 400: ErrorBody, ...authErrors, ...notFound },
      },
      handler: async (request) => {
        const identity = identityOf(request)
        const member = await memberByEitherId(db, identity.orgId, request.params.id)
        await checkEdit(db, identity, member, request.body)
        await updateMember(db, identity.orgId, member.id, request.body, clock())
        lookups.changed()
        return { error: false as const, message: 'User updated' }
      },
    })

    app.delete(
      '/api/user/:id/',
      {
        schema: {
          tags: ['users'],
          summary: 'Deactivate a member, by profile or user id (admins)',
          description:
            'A soft delete: the profile stays (it keeps its history) but is inactive, so its access tokens and personal access tokens stop working until it is reactivated ' +
            'with POST /api/user/{user_id}/status/. Deactivating an inactive member is a no-op. Deactivating the last active admin is 400.',
          params: ByEitherId,
          response: { 200: Message, 400: ErrorBody, ...authErrors, ...notFound },
        },
      },
      async (request) => {
        const identity = requireAdmin(request)
        const member = await memberByEitherId(db, identity.orgId, request.params.id)
        await updateMember(db, identity.orgId, member.id, { is_active: false }, clock())
        lookups.changed()
        return { error: false as const, message: 'User deactivated' }
      },
    )

    app.post(
      '/api/user/:id/status/',
      {
        schema: {
          tags: ['users'],
          summary: "Activate or deactivate a member, by USER id (admins)",
          description: 'Acts on the profile of that user in the caller\'s organization; another organization\'s user is 404. Deactivating the last active admin is 400.',
          params: IdParams,
          body: Status,
          response: { 200: Message, 400: ErrorBody, ...authErrors, ...notFound },
        },
      },
      async (request) => {
        const identity = requireAdmin(request)
        const member = await memberByUserId(db, identity.orgId, request.params.id)
        const active = request.body.status === 'Active'
        await updateMember(db, identity.orgId, member.id, { is_active: active }, clock())
        lookups.changed()
        return { error: false as const, message: active ? 'User activated' : 'User deactivated' }
      },
    )
  }
}
