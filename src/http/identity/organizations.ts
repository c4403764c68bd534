import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Identity } from '../../identity/identity.ts'
import { bootstrapOrganization } from '../../identity/memberships.ts'
import { currencySymbol, organizationById, organizationSettings, organizationsOfUser, selectableTimezones, updateOrganization } from '../../identity/organizations.ts'
import type { OrganizationSettingsRow } from '../../identity/organizations.ts'
import { requireUser } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { Currency, OrgName, Organization, Phone, RoleEnum, Timezone, organizationBody } from './schemas.ts'

const Membership = z.object({
  id: z.uuid().describe("The caller's profile id in that organization"),
  role: RoleEnum,
  is_current: z.boolean().describe('Whether this is the organization of the credential used'),
  org: Organization,
})

const CreateOrganization = z.object({ name: OrgName, default_currency: Currency.optional(), timezone: Timezone.optional().describe('The organization\'s time zone (default UTC), as the original\'s phone app sends it') })

const blank = (v: unknown) => (v === null ? '' : v)
/** A settings text: trimmed, blank (or null) clears it. */
const SettingText = (max: number) => z.preprocess(blank, z.string().trim().max(max, `At most ${max} characters.`)).optional()
const CountryCode = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z]{2}$/, 'Expected an ISO 3166-1 alpha-2 country code, such as "FR".')
const orBlank = <T extends z.ZodType>(schema: T) => z.preprocess(blank, z.union([z.literal(''), schema]))

const Settings = z.object({
  id: z.uuid(),
  name: z.string(),
  company_name: z.string().describe('Legal company name, for invoices and documents'),
  logo: z.string().nullable().describe('Not stored yet: null'),
  logo_url: z.string().nullable().describe('Not stored yet: null'),
  address_line: z.string(),
  city: z.string(),
  state: z.string(),
  postcode: z.string(),
  country: z.string().describe('ISO 3166-1 alpha-2 code, or blank'),
  phone: z.string(),
  email: z.string(),
  website: z.string(),
  tax_id: z.string().describe('Tax ID, VAT or registration number'),
  default_currency: z.string(),
  default_country: z.string().nullable().describe('ISO 3166-1 alpha-2 code, or null'),
  currency_symbol: z.string().describe("The default currency's symbol, e.g. $, €, £, ₹"),
  timezone: z.string(),
  csat_enabled: z.boolean().describe('Whether satisfaction surveys are sent when a case closes'),
  auto_close_children_on_parent_close: z.boolean().describe("Whether closing a parent case offers to close its open children by default"),
  vertical: z.string().describe('The vertical pack applied (read-only; packs are not built yet: blank)'),
  terminology: z.record(z.string(), z.string()).describe('Label overrides of the vertical pack (read-only; empty)'),
  member_count: z.number().int().describe('Active members of the organization'),
  created_at: z.string(),
})
const settingsBody = (row: OrganizationSettingsRow): z.infer<typeof Settings> => ({
  id: row.id,
  name: row.name,
  company_name: row.company_name,
  logo: null,
  logo_url: null,
  address_line: row.address_line,
  city: row.city,
  state: row.state,
  postcode: row.postcode,
  country: row.country,
  phone: row.phone,
  email: row.email,
  website: row.website,
  tax_id: row.tax_id,
  default_currency: row.default_currency,
  default_country: row.default_country,
  currency_symbol: currencySymbol(row.default_currency),
  timezone: row.timezone,
  csat_enabled: row.csat_enabled,
  auto_close_children_on_parent_close: row.auto_close_children_on_parent_close,
  vertical: '',
  terminology: {},
  member_count: row.member_count,
  created_at: row.created_at.toISOString(),
})
const SettingsChanges = z.object({
  name: OrgName.optional(),
  default_currency: Currency.optional(),
  timezone: Timezone.optional(),
  company_name: SettingText(255),
  address_line: SettingText(255),
  city: SettingText(100),
  state: SettingText(100),
  postcode: SettingText(20),
  country: orBlank(CountryCode).optional(),
  phone: z.preprocess(blank, Phone.max(25, 'At most 25 characters.')).optional(),
  email: orBlank(z.email('Enter a valid email address.').max(254)).optional(),
  website: orBlank(z.url({ protocol: /^https?$/, error: 'Enter a valid URL, such as "https://example.com".' }).max(200)).optional(),
  tax_id: SettingText(50),
  default_country: z.preprocess((v) => (v === '' ? null : v), CountryCode.nullable()).optional(),
  csat_enabled: formBoolean(z.boolean()).optional(),
  auto_close_children_on_parent_close: formBoolean(z.boolean()).optional(),
})
const Timezones = z.object({
  timezones: z.array(
    z.object({
      name: z.string().describe('IANA name'),
      offset_minutes: z.number().int().describe('Minutes east of UTC now (it moves with daylight saving)'),
      offset: z.string().describe('The same as ±HH:MM'),
      label: z.string().describe('For a select, e.g. "America/New York (UTC-05:00)"'),
    }),
  ),
})
const OrganizationChanges = SettingsChanges.pick({ name: true, default_currency: true, timezone: true }).extend({ is_active: formBoolean(z.boolean()).optional() })

const OrgAnswer = z.object({ error: z.literal(false), org: Organization })
const OrgWritten = OrgAnswer.extend({ message: z.string() })
const notFound = { 404: ErrorBody }

/** `{id}` must be the organization of the credential: any other id answers 404, exactly like a missing one. */
function currentOrganization(identity: Identity, id: string): string {
  if (id.toLowerCase() !== identity.orgId) throw new NotFoundError()
  return identity.orgId
}

/** Organizations (issue 3). Plain table writes: identity state is not event-sourced. */
export function organizationRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  // Membership and organization rows are cached per process: every write here says so once committed.
  const lookups = lookupsOf(deps)
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
        const created = await bootstrapOrganization(db, { name: request.body.name, email: identity.email, defaultCurrency: request.body.default_currency, timezone: request.body.timezone })
        return { error: false as const, message: 'Organization created', org: organizationBody(await organizationById(db, created.org_id)) }
      },
    )

    app.get(
      '/api/org/timezones/',
      {
        schema: {
          tags: ['organizations'],
          summary: 'The time zones to offer for an organization, by name, each with its UTC offset now',
          description: 'Region zones (Europe/Paris) and UTC; legacy names (US/Eastern, Etc/GMT+5) are left out here but still accepted where a time zone is set.',
          response: { 200: Timezones, ...authErrors },
        },
      },
      async () => ({ timezones: selectableTimezones(clock()) }),
    )

    app.get(
      '/api/org/settings/',
      { schema: { tags: ['organizations'], summary: "The caller's organization settings", description: 'Any member; personal access tokens and the organization API key may read them too.', response: { 200: Settings, ...authErrors } } },
      async (request) => settingsBody(await organizationSettings(db, identityOf(request).orgId)),
    )

    app.patch(
      '/api/org/settings/',
      {
        schema: {
          tags: ['organizations'],
          summary: "Change the caller's organization settings (admins)",
          description: 'Only the fields sent change. A blank (or null) text clears it; `is_active` and the read-only fields (member_count, currency_symbol, vertical, …) are ignored.',
          body: SettingsChanges,
          response: { 200: Settings, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const { orgId } = requireAdmin(request)
        await updateOrganization(db, orgId, request.body, clock())
        lookups.changed()
        return settingsBody(await organizationSettings(db, orgId))
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
        const updated = await updateOrganization(db, orgId, request.body, clock())
        lookups.changed()
        return { error: false as const, message: 'Organization updated', org: organizationBody(updated) }
      },
    })
  }
}
