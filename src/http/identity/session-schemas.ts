import { z } from 'zod'
import { ErrorBody } from '../kernel/schemas/common.ts'

const Role = z.enum(['ADMIN', 'USER'])

export const OrgSettingsClaim = z.object({ default_currency: z.string(), currency_symbol: z.string(), default_country: z.string().nullable() })

export const CurrentOrg = OrgSettingsClaim.extend({ id: z.uuid(), name: z.string(), timezone: z.string() })

/** The original's user detail (`GET /api/auth/me/`, and `user` in sign-in answers). */
export const UserDetail = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string().describe('Display name: first and last name, else the local part of the email'),
  profile_pic: z.string(),
  is_active: z.boolean(),
  organizations: z.array(z.object({ id: z.uuid(), name: z.string(), role: Role, is_organization_admin: z.boolean(), has_sales_access: z.boolean(), has_marketing_access: z.boolean() })),
})

/** The answer of every route that issues tokens: OAuth 2 field names, and the original service's. */
export const TokenPair = z.object({
  access_token: z
    .string()
    .describe(
      'HS256 JWT for `Authorization: Bearer`. Authentication reads `sub` (user id), `org_id` and `typ: "access"`; for display, clients may read ' +
        '`token_type, jti, user_id, user_email, user_name, user_profile_pic, org_name, role, org_settings {default_currency, currency_symbol, default_country}` ' +
        '(as of issue: role and membership are re-checked on every request, not read from the token)',
    ),
  refresh_token: z.string().describe('Opaque `svc_rt_…` token for POST /api/auth/refresh-token/; single use, rotates on every refresh'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Lifetime of the access token in seconds'),
  org_id: z.uuid(),
  profile_id: z.uuid(),
  access: z.string().describe('Same as `access_token` (the original service\'s name)'),
  refresh: z.string().describe('Same as `refresh_token` (the original service\'s name)'),
  current_org: CurrentOrg,
})

/** What a sign-in or an organization switch answers: the pair, the user with their organizations, and the profile acted as. */
export const SignIn = TokenPair.extend({
  JWTtoken: z.string().describe('Same as `access_token` (the name the original\'s Google sign-in answers and its phone app stores)'),
  user: UserDetail.extend({ profileImage: z.string().describe('Same as `profile_pic` (the original\'s Google sign-in name)') }),
  organizations: z.array(CurrentOrg.extend({ role: Role })).describe('The user\'s active organizations to pick from, as the original lists them'),
  profile: z.object({ id: z.uuid(), role: Role, is_organization_admin: z.boolean() }),
})

/** Sign-in routes may name the organization to land in; without it, the user's oldest active profile is used. */
export const OptionalOrg = z.object({ org_id: z.uuid().optional().describe('Organization to sign in to (default: the oldest active profile)') })

const RawRefresh = z.string().min(1).max(200)

/** `refresh` is the original's name (the web app sends it); `refresh_token` is ours, kept for existing clients. */
export const RefreshTokenBody = z
  .object({ refresh: RawRefresh.optional(), refresh_token: RawRefresh.optional() })
  .refine((body) => body.refresh !== undefined || body.refresh_token !== undefined, { message: 'Required: refresh (or refresh_token)', path: ['refresh'] })
  .transform((body) => ({ refresh: (body.refresh ?? body.refresh_token)! }))

/** Failures of sign-in routes: 401 for a bad credential, 403 when the person may not sign in (there). */
export const signInErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody } as const
