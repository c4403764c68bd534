import { z } from 'zod'
import { ErrorBody } from '../kernel/schemas/common.ts'

/** The answer of every route that signs someone in (OAuth 2 field names). */
export const TokenPair = z.object({
  access_token: z.string().describe('HS256 JWT for `Authorization: Bearer`; claims `sub` (user id), `org_id`, `typ: "access"`'),
  refresh_token: z.string().describe('Opaque `svc_rt_…` token for POST /api/auth/refresh-token/; single use, rotates on every refresh'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Lifetime of the access token in seconds'),
  org_id: z.uuid(),
  profile_id: z.uuid(),
})

/** Sign-in routes may name the organization to land in; without it, the user's oldest active profile is used. */
export const OptionalOrg = z.object({ org_id: z.uuid().optional().describe('Organization to sign in to (default: the oldest active profile)') })

export const RefreshTokenBody = z.object({ refresh_token: z.string().min(1).max(200) })

/** Failures of sign-in routes: 401 for a bad credential, 403 when the person may not sign in (there). */
export const signInErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody } as const
