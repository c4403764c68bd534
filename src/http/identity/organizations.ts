import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Identity } from '../../identity/identity.ts'
import { bootstrapOrganization } from '../../identity/memberships.ts'
import { TIMEZONES, organizationById, organizationsOfUser, updateOrganization } from '../../identity/organizations.ts'
import { requireUser } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { Currency, OrgName, Organization, RoleEnum, Timezone, organizationBody } from './schemas.ts'

const Membership = z.object({
  id: z.uuid().describe("The caller's profile id in that organization"),
  role: RoleEnum,
  is_current: z.boolean().describe('Whether this is the organization of the credential used'),
  org: Organization,
})

const CreateOrganization = z.object({ name: OrgName, default_currency: Currency.optional() })

const Settings = Organization.pick({ id: true, name: true, default_currency: true, timezone: true })
const settingsBody = ({ id, name, default_currency, timezone }: z.infer<typeof Organization>) => ({ id, name, default_currency, timezone })
const SettingsChanges = z.object({ name: OrgName.optional(), default_currency: Currency.optional(), timezone: Timezone.optional() })
const OrganizationChanges = SettingsChanges.extend({ is_active: formBoolean(z.boolean()).optional() })

const OrgAnswer = z.object({ error: z.literal(false), org: Organization })
const OrgWritten = OrgAnswer.extend({ message: z.string() })
const notFound = { 404: ErrorBody }

/** `{id}` must be the organization of the credential: any other id answers 404, exactly like a missing one. */
function currentOrganization(identity: Identity, id: string): string {
  if (id.toLowerCase() !== identity.orgId) throw new NotFoundError()
  return identity.orgId
}

/** Organizations (issue 3). Plain table writes: identity state is not event-sourced. */
export function organizationRoutes({ db, clock }: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/org/',
      {
        schema: {
          tags: ['organizations'],
          summary: "The organizations the caller's user belongs to, with their role",
          description: 'Only active memberships of active organizations are listed. The organization API key, which belongs to no user, gets 403.',
          response: { 200: z.object({ error: z.literal(false), profile_org_list: z.array(Membership) }), ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        const rows = await organizationsOfUser(db, requireUser(identity).userId)
        const list = rows.map(({ profile_id, role, ...org }) => ({ id: profile_id, role, is_current: org.id === identity.orgId, org: organizationBody(org) }))
        return { error: false as const, profile_org_list: list }
      },
    )

    app.post(
      '/api/org/',
      {
        schema: {
          tags: ['organizations'],
          summary: 'Create an organization; the caller becomes its ADMIN',
          description:
            'Needs an interactive sign-in (JWT): a personal access token is bound to one organization and may not found others. ' +
            'The credential keeps acting in its current organization; switch with POST /api/auth/switch-org/.',
          body: CreateOrganization,
          response: { 200: OrgWritten, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        if (identity.credential !== 'jwt' || !identity.email) throw new ForbiddenError('Creating an organization requires an interactive sign-in')
        // The same all-or-nothing path as the bootstrap CLI; the email (unique) leads back to the caller's user.
        const created = await bootstrapOrganization(db, { name: request.body.name, email: identity.email, defaultCurrency: request.body.default_currency })
        return { error: false as const, message: 'Organization created', org: organizationBody(await organizationById(db, created.org_id)) }
      },
    )

    app.get('/api/org/timezones/', { schema: { tags: ['organizations'], summary: 'IANA time zone names accepted for an organization', response: { 200: z.object({ timezones: z.array(z.string()) }), ...authErrors } } }, async () => ({
      timezones: [...TIMEZONES],
    }))

    app.get(
      '/api/org/settings/',
      { schema: { tags: ['organizations'], summary: "The caller's organization settings", description: 'Any member; personal access tokens and the organization API key may read them too.', response: { 200: Settings, ...authErrors } } },
      async (request) => settingsBody(organizationBody(await organizationById(db, identityOf(request).orgId))),
    )

    app.patch(
      '/api/org/settings/',
      { schema: { tags: ['organizations'], summary: "Change the caller's organization settings (admins)", body: SettingsChanges, response: { 200: Settings, 400: ErrorBody, ...authErrors } } },
      async (request) => {
        const { orgId } = requireAdmin(request)
        return settingsBody(organizationBody(await updateOrganization(db, orgId, request.body, clock())))
      },
    )

    app.get(
      '/api/org/:id/',
      { schema: { tags: ['organizations'], summary: "The caller's current organization", description: 'Any other id, including another organization the user belongs to, is 404.', params: IdParams, response: { 200: OrgAnswer, ...authErrors, ...notFound } } },
      async (request) => {
        const orgId = currentOrganization(identityOf(request), request.params.id)
        return { error: false as const, org: organizationBody(await organizationById(db, orgId)) }
      },
    )

    app.route({
      method: ['PUT', 'PATCH'],
      url: '/api/org/:id/',
      schema: {
        tags: ['organizations'],
        summary: "Change the caller's current organization (admins)",
        description:
          'PUT and PATCH both change only the fields sent. Any id other than the current organization is 404. `is_active: false` is refused (400): ' +
          'deactivating the organization you act in would lock out every member, you included, with no way back through the API.',
        params: IdParams,
        body: OrganizationChanges,
        response: { 200: OrgWritten, 400: ErrorBody, ...authErrors, ...notFound },
      },
      handler: async (request) => {
        const orgId = currentOrganization(identityOf(request), request.params.id)
        requireAdmin(request)
        if (request.body.is_active === false) throw new ValidationError({ is_active: ['You cannot deactivate the organization you are signed in to.'] })
        return { error: false as const, message: 'Organization updated', org: organizationBody(await updateOrganization(db, orgId, request.body, clock())) }
      },
    })
  }
}
